// Reductions take a tile; a scalar has nothing to reduce.
// expect: sum: needs a tile, not a scalar
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("sum_of_scalar", [](Ptr<f32> out, F32 x) {
  auto s = sum(x, 0);  // <- error
  store(out, s);
});
