// Storing an f32 tile through Ptr<bf16> needs an explicit .cast<bf16>().
// expect: store: the value's dtype differs from the pointee type
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("store_without_cast", [](Ptr<bf16> out, Ptr<const f32> in, Meta<"B"> B) {
  auto offs = arange(0, B);
  auto x = load(in + offs);
  store(out + offs, x * 2.0f);  // <- error
});
