// Bitwise operators need integer or bool operands.
// expect: bitwise operators (& | ^ << >>) need integer or bool operands
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("bitwise_on_float", [](Ptr<f32> out, Ptr<const f32> in, Meta<"B"> B) {
  auto offs = arange(0, B);
  auto x = load(in + offs);
  auto y = x & x;  // <- error
  store(out + offs, y);
});
