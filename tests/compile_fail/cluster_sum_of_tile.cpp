// Cluster reductions combine one number per program of a cluster, not a tile.
// expect: cluster_sum: combines one number per program; reduce the tile first
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

auto k = kernel("cluster_sum_of_tile", [](Ptr<f32> out, Ptr<const f32> in) {
  auto s = cluster_sum(load(in + arange(0, 16)));  // <- error
  store(out, s);
});
