// dot multiplies matrices: rank-1 operands are a compile error.
// expect: dot: both operands must be rank-2 tiles
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("dot_rank1", [](Ptr<f32> out, Ptr<const f32> a, Ptr<const f32> b, Meta<"B"> B) {
  auto offs = arange(0, B);
  auto x = load(a + offs);
  auto y = load(b + offs);
  auto c = dot(x, y);  // <- error
  store(out + offs, sum(c, 0));
});
