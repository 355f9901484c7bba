// Persistent clusters on the GPU against the interpreter: cluster reductions inside a
// loop with cluster-uniform bounds (two sets of slots and mbarriers, alternating), sibling
// reductions grouped in the loop, clusters of 2 to 16 programs, rows fewer or more than
// the clusters, loads staged by num_stages. Label: gpu (skips without a driver).
#include "cluster_loop_kernels.hpp"
#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
using difftest::gpu_matches_interp;

TEST_CASE_TEMPLATE("gpu: cluster reductions inside loops with cluster-uniform bounds", T, float, bfloat16) {
  difftest::Tolerance tol = std::is_same_v<T, float> ? difftest::Tolerance{1e-6, 1e-5} : difftest::Tolerance{1e-5, 1e-3};
  for (auto [rows, n, c, b, clusters] : {std::tuple{37, 1000, 4, 256, 5}, std::tuple{3, 4096, 2, 2048, 7},
                                         std::tuple{64, 3000, 8, 512, 9}, std::tuple{21, 16384, 16, 1024, 3}}) {
    for (int stages : {1, 2}) {
      CAPTURE(rows);
      CAPTURE(c);
      CAPTURE(stages);
      auto x = ref::random_vec<T>(size_t(rows) * n, 3 + n, -2, 2);
      std::vector<float> y(x.size()), colsum(size_t(clusters) * n);
      gpu_matches_interp(cluster_loops::rows_loop_kernel<T>(), Grid(clusters * c),
                         Config{{"B", b}, num_warps(4), num_stages(stages), cluster(c)}, tol, y, colsum, x, rows, n);
    }
  }
}
