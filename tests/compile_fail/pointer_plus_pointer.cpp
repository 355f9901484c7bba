// Adding two pointers has no meaning; only pointer + integer offset is defined.
// expect: pointer + pointer is not defined
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("pointer_plus_pointer", [](Ptr<f32> out, Ptr<const f32> in, Meta<"B"> B) {
  auto offs = arange(0, B);
  auto p = in + offs;
  auto q = p + in;  // <- error
  store(out + offs, load(q));
});
