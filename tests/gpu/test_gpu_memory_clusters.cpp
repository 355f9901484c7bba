// Clusters of more than 16 programs on the GPU against the interpreter: their
// reductions exchange through a global workspace (program tickets, arrival counters,
// two slot sets in loops) and must give the interpreter's bits for an ordered integer
// combine (persistent loops with a custom and a plain reduction per row: in
// test_gpu_cluster_combine.cpp); sibling reductions in loops; back-to-back launches of other grids
// and cluster sizes find the workspace zeroed again; a cluster the GPU cannot hold at
// once is a UserError, not a hang. Label: gpu (skips without a driver).
#include "cluster_combine_kernels.hpp"
#include "cluster_loop_kernels.hpp"
#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
using difftest::gpu_matches_interp;

TEST_CASE("gpu: memory clusters of 32 to 1024 combine in the interpreter's order, launch after launch") {
  for (int round = 0; round < 2; ++round)
    for (auto [c, clusters] : {std::pair{32, 3}, std::pair{64, 5}, std::pair{256, 2}, std::pair{1024, 1},
                               std::pair{32, 40}}) {
      CAPTURE(round);
      CAPTURE(c);
      std::vector<int32_t> out(size_t(3) * clusters * c);
      gpu_matches_interp(cluster_combine::ordered_combine_kernel(), Grid(clusters * c),
                         Config{num_warps(2), cluster(c)}, difftest::Tolerance{0, 0}, out);
      // A kernel whose blocks are laid out differently (its counters where the last
      // one's slots were) in between: each kernel leaves the workspace zeroed. (1024 of
      // its programs do not fit on an H200 at once: 528 at 122 registers.)
      if (c > 256) continue;
      int rows = 3 * clusters, n = 100 * c + 7;
      auto x = ref::random_vec<float>(size_t(rows) * n, c + round, -2, 2);
      std::vector<float> y(x.size()), colsum(size_t(clusters) * n);
      gpu_matches_interp(cluster_loops::rows_loop_kernel<float>(), Grid(clusters * c),
                         Config{{"B", 128}, num_warps(4), cluster(c)}, difftest::Tolerance{1e-6, 1e-5}, y, colsum, x,
                         rows, n);
    }
}

TEST_CASE("gpu: memory clusters with sibling reductions in one exchange per loop iteration") {
  difftest::Tolerance tol{1e-6, 1e-5};
  for (auto [rows, n, c, b, clusters] : {std::tuple{23, 40000, 32, 2048, 4}, std::tuple{6, 70001, 64, 1024, 3}}) {
    CAPTURE(c);
    auto x = ref::random_vec<float>(size_t(rows) * n, 3 + n, -2, 2);
    std::vector<float> y(x.size()), colsum(size_t(clusters) * n);
    gpu_matches_interp(cluster_loops::rows_loop_kernel<float>(), Grid(clusters * c),
                       Config{{"B", b}, num_warps(4), cluster(c)}, tol, y, colsum, x, rows, n);
  }
}

TEST_CASE("gpu: a memory cluster larger than the GPU holds at once is a UserError") {
  if (!difftest::have_gpu()) return;
  auto out = to_device(std::vector<int32_t>(size_t(3) * 1024));
  // 1024 threads per program: at most 2 per SM, far fewer than 1024 at once.
  try {
    cluster_combine::ordered_combine_kernel().launch(Grid(1024), Config{num_warps(32), cluster(1024)}, out);
    cuda::synchronize();
    FAIL("launched a cluster of 1024 programs of 32 warps");
  } catch (const UserError& e) {
    std::string msg = e.what();
    CHECK(msg.find("clusters of 1024 programs exchange through memory, so all of a cluster's programs must run at "
                   "once, but the GPU holds") != std::string::npos);
    CHECK(msg.find("Use a smaller cluster, fewer warps or less shared memory") != std::string::npos);
  }
}
