// A floating-point pointer offset would be truncated silently; it is rejected instead.
// expect: a pointer offset must be an integer tile or scalar
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("pointer_plus_float", [](Ptr<f32> out, Ptr<const f32> in, Meta<"B"> B) {
  auto offs = arange(0, B);
  auto p = in + 1.5;  // <- error
  store(out + offs, load(p + offs));
});
