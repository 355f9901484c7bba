#pragma once
// Persistent clusters: cluster reductions inside a loop whose bounds every program of
// the cluster shares. Shared by the interpreter test (tests/dsl/test_cluster.cpp) and the
// GPU differential test (tests/gpu/test_gpu_cluster_loops.cpp).
#include <tilefuse/tilefuse.hpp>

namespace cluster_loops {

using namespace tilefuse;

// Cluster c handles rows c, c + clusters, ...; its C programs hold B columns each. Per row
// y = (x - max(x)) / (sum(x^2) + 1) (max and sum are sibling cluster reductions: one
// exchange); per column each program adds up its cluster's rows in registers and writes
// them once, to row c of colsum.
template <class T>
const auto& rows_loop_kernel() {
  static auto k = kernel("cluster_rows_loop", {"y", "colsum", "x", "n_rows", "n"},
      [](Ptr<f32> y, Ptr<f32> colsum, Ptr<const T> x, I32 n_rows, I32 n, Meta<"B"> B) {
        auto cols = cluster_rank() * B + arange(0, B);
        auto mask = cols < n;
        auto acc = zeros<f32>({B});
        for_range(cluster_id(), n_rows, num_programs(0) / cluster_size(), [&](I32 r) {
          auto off = r.cast<i64>() * n + cols;
          auto v = load(x + off, mask, 0.0f).template cast<f32>();
          auto mx = cluster_max(max(where(mask, v, -3.0e38f), 0));
          auto ss = cluster_sum(sum(v * v, 0));
          store(y + off, (v - mx) / (ss + 1.0f), mask);
          acc = acc + v;
        });
        store(colsum + cluster_id().cast<i64>() * n + cols, acc, mask);
      });
  return k;
}

// The same in plain C++ (clusters = the grid's clusters).
inline void rows_loop_reference(std::vector<float>& y, std::vector<float>& colsum, const std::vector<float>& x,
                                int rows, int n, int clusters) {
  for (int r = 0; r < rows; ++r) {
    float mx = -3.0e38f;
    double ss = 0;
    for (int c = 0; c < n; ++c) {
      mx = std::max(mx, x[size_t(r) * n + c]);
      ss += double(x[size_t(r) * n + c]) * x[size_t(r) * n + c];
    }
    for (int c = 0; c < n; ++c) {
      y[size_t(r) * n + c] = float((x[size_t(r) * n + c] - mx) / (ss + 1.0));
      colsum[size_t(r % clusters) * n + c] += x[size_t(r) * n + c];
    }
  }
}

}  // namespace cluster_loops
