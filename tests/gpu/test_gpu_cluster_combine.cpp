// Custom cluster reductions on the GPU against the interpreter: several values per
// program in one exchange combined by the program's function (the tree of rank pairs,
// lower rank left, so a non-commutative integer combine matches exactly), inside
// persistent loops (alternating slot sets) next to a plain cluster_sum, clusters of 2 to
// 16, programs without columns. Label: gpu (skips without a driver).
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

TEST_CASE_TEMPLATE("gpu: cluster_reduce of (max, sum of exponentials) in persistent clusters", T, float, bfloat16) {
  difftest::Tolerance tol{1e-6, 1e-4};
  for (auto [rows, n, c, b, clusters] : {std::tuple{37, 1000, 4, 256, 5}, std::tuple{9, 77, 16, 8, 2},
                                         std::tuple{64, 3000, 8, 512, 9}, std::tuple{21, 16384, 16, 1024, 3}}) {
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
