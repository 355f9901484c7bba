// Cluster reductions combine numbers (one per program, or tiles element by element),
// not booleans.
// expect: cluster_sum: needs numbers
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("cluster_sum_of_bools", [](Ptr<f32> out, Ptr<const f32> in) {
  auto s = cluster_sum(load(in + arange(0, 16)) > 0.0f);  // <- error
  store(out + arange(0, 16), s.cast<f32>());
});
