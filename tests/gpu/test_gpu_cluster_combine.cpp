// Custom cluster reductions on the GPU against the interpreter: several values per
// program in one exchange combined by the program's function (the tree of rank pairs,
// lower rank left, so a non-commutative integer combine matches exactly), inside
// persistent loops (alternating slot sets) next to a plain cluster_sum, clusters of 2 to
// 16, programs without columns; tiles combined element by element through distributed
// shared memory. Label: gpu (skips without a driver).
#include "cluster_combine_kernels.hpp"
#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
using difftest::gpu_matches_interp;

TEST_CASE("gpu: cluster_reduce with a non-commutative integer combine, clusters of 2 to 16") {
  for (int c : {2, 4, 8, 16}) {
    CAPTURE(c);
    std::vector<int32_t> out(size_t(3) * 3 * c);
    gpu_matches_interp(cluster_combine::ordered_combine_kernel(), Grid(3 * c), Config{num_warps(2), cluster(c)},
                       difftest::Tolerance{0, 0}, out);
  }
}

// Clusters of more than 16 exchange through memory (lower_cluster_memory.cpp): there the
// loop alternates two slot sets in a global workspace.
TEST_CASE_TEMPLATE("gpu: cluster_reduce of (max, sum of exponentials) in persistent clusters", T, float, bfloat16) {
  difftest::Tolerance tol{1e-6, 1e-4};
  for (auto [rows, n, c, b, clusters] : {std::tuple{37, 1000, 4, 256, 5}, std::tuple{9, 77, 16, 8, 2},
                                         std::tuple{64, 3000, 8, 512, 9}, std::tuple{21, 16384, 16, 1024, 3},
                                         std::tuple{37, 10000, 32, 512, 3}, std::tuple{9, 77, 64, 8, 2},
                                         std::tuple{5, 300001, 128, 4096, 2}}) {
    for (int stages : {1, 2}) {
      CAPTURE(rows);
      CAPTURE(c);
      CAPTURE(stages);
      auto x = ref::random_vec<T>(size_t(rows) * n, 5 + n, -8, 8);
      std::vector<float> y(x.size()), total(rows);
      gpu_matches_interp(cluster_combine::online_softmax_kernel<T>(), Grid(clusters * c),
                         Config{{"B", b}, num_warps(4), num_stages(stages), cluster(c)}, tol, y, total, x, rows, n);
    }
  }
}

TEST_CASE_TEMPLATE("gpu: cluster_sum/max of tiles in persistent clusters of 2 to 8", T, float, bfloat16) {
  for (auto [groups, c, clusters, rows, cols, br, bc, warps] :
       {std::tuple{5, 2, 2, 7, 13, 8, 16, 1}, std::tuple{7, 4, 3, 61, 100, 64, 128, 4},
        std::tuple{3, 8, 2, 16, 64, 16, 64, 8}, std::tuple{4, 4, 4, 1, 3, 1, 4, 1}}) {
    CAPTURE(c);
    CAPTURE(rows);
    CAPTURE(warps);
    size_t n = size_t(groups) * c * rows * cols;
    auto x = ref::random_vec<T>(n, 9 + cols, -4, 4);
    std::vector<float> sum(n), mx(n);
    std::vector<int32_t> isum(n);
    gpu_matches_interp(cluster_combine::tile_reduce_kernel<T>(), Grid(clusters * c),
                       Config{{"BR", br}, {"BC", bc}, num_warps(warps), cluster(c)}, difftest::Tolerance{1e-5, 1e-5},
                       sum, mx, isum, x, groups, rows, cols);
  }
}
