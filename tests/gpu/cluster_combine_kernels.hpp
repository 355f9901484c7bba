#pragma once
// Custom cluster reductions (cluster_reduce with a combine function): several values per
// program combined over the cluster in one exchange; cluster reductions of whole tiles.
// Shared by the interpreter test
// (tests/dsl/test_cluster.cpp) and the GPU differential test
// (tests/gpu/test_gpu_cluster_combine.cpp), with plain C++ references.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include <tilefuse/tilefuse.hpp>

namespace cluster_combine {

using namespace tilefuse;

// Persistent clusters over rows (cluster c: rows c, c + clusters, ...), B columns per
// program. Per row, one exchange of (max, sum of exp(x - max)) from each program's own
// pair gives the softmax y = exp(x - M) / S; a plain cluster_sum right after adds up
// the row, written by rank 0 to total[row].
template <class T>
const auto& online_softmax_kernel() {
  static auto k = kernel("cluster_online_softmax", {"y", "total", "x", "n_rows", "n"},
      [](Ptr<f32> y, Ptr<f32> total, Ptr<const T> x, I32 n_rows, I32 n, Meta<"B"> B) {
        auto cols = cluster_rank() * B + arange(0, B);
        auto mask = cols < n;
        for_range(cluster_id(), n_rows, num_programs(0) / cluster_size(), [&](I32 r) {
          auto off = r.cast<i64>() * n + cols;
          auto v = load(x + off, mask, -inf).template cast<f32>();
          auto m = maximum(max(v, 0), -std::numeric_limits<float>::max());  // a program with no columns: s = 0
          auto s = sum(exp(v - m), 0);
          auto [row_max, row_sum] = cluster_reduce(std::array{m, s}, [](auto a, auto b) {
            auto mx = maximum(a[0], b[0]);
            return std::array{mx, a[1] * exp(a[0] - mx) + b[1] * exp(b[0] - mx)};
          });
          auto t = cluster_sum(sum(where(mask, v, 0.0f), 0));
          store(y + off, exp(v - row_max) / row_sum, mask);
          store(total + r, t, cluster_rank() == 0);
        });
      });
  return k;
}

inline void online_softmax_reference(std::vector<float>& y, std::vector<float>& total, const std::vector<float>& x,
                                     int rows, int n) {
  for (int r = 0; r < rows; ++r) {
    const float* row = x.data() + size_t(r) * n;
    double mx = *std::max_element(row, row + n), s = 0, t = 0;
    for (int c = 0; c < n; ++c) s += std::exp(double(row[c]) - mx), t += row[c];
    for (int c = 0; c < n; ++c) y[size_t(r) * n + c] = float(std::exp(double(row[c]) - mx) / s);
    total[r] = float(t);
  }
}

// A combine that is neither commutative nor the same for each value, on integers (exact
// on both executors): {3 a0 + b0, 2 a1 - b1, a2 + b2} over ranks paired as a tree, the
// lower rank on the left. Every program writes what it got to out[pid * 3 + k].
inline const auto& ordered_combine_kernel() {
  static auto k = kernel("cluster_ordered_combine", {"out"}, [](Ptr<i32> out) {
    auto pid = program_id(0);
    std::array<I32, 3> v{pid * 5 + 1, (pid * 7) % 11, cluster_rank() + 1};
    auto got = cluster_reduce(v, [](auto a, auto b) { return std::array{a[0] * 3 + b[0], a[1] * 2 - b[1], a[2] + b[2]}; });
    for (int i = 0; i < 3; ++i) store(out + pid * 3 + i, got[i]);
  });
  return k;
}

inline std::vector<int32_t> ordered_combine_reference(int programs, int cluster) {
  std::vector<int32_t> out;
  for (int c = 0; c < programs / cluster; ++c) {
    std::vector<std::array<int32_t, 3>> acc;
    for (int r = 0; r < cluster; ++r) {
      int pid = c * cluster + r;
      acc.push_back({pid * 5 + 1, (pid * 7) % 11, r + 1});
    }
    for (int step = 1; step < cluster; step *= 2)
      for (int r = 0; r + step < cluster; r += 2 * step) {
        auto a = acc[r], b = acc[r + step];
        acc[r] = {a[0] * 3 + b[0], a[1] * 2 - b[1], a[2] + b[2]};
      }
    for (int r = 0; r < cluster; ++r) out.insert(out.end(), acc[0].begin(), acc[0].end());
  }
  return out;
}

// Tiles combined element by element: in persistent clusters (cluster c takes groups c,
// c + clusters, ...), program r of a group loads its [rows, cols] block x[g, r] into a
// [BR, BC] tile (zero outside) and writes what the cluster's cluster_sum, cluster_max
// and integer cluster_sum (of trunc(100 x)) give it to sum/mx/isum[g, r]: every program
// must get the whole result.
template <class T>
const auto& tile_reduce_kernel() {
  static auto k = kernel("cluster_tile_reduce", {"sum", "mx", "isum", "x", "groups", "rows", "cols"},
      [](Ptr<f32> sum_out, Ptr<f32> max_out, Ptr<i32> isum_out, Ptr<const T> x, I32 groups, I32 rows, I32 cols,
         Meta<"BR"> BR, Meta<"BC"> BC) {
        auto r = arange(0, BR);
        auto c = arange(0, BC);
        auto mask = (r < rows).col() && (c < cols).row();
        auto inner = r.col().template cast<i64>() * cols + c.row();
        for_range(cluster_id(), groups, num_programs(0) / cluster_size(), [&](I32 g) {
          auto base = (g * cluster_size() + cluster_rank()).template cast<i64>() * rows * cols;
          auto v = load(x + base + inner, mask, 0.0f).template cast<f32>();
          store(sum_out + base + inner, cluster_sum(v), mask);
          store(max_out + base + inner, cluster_max(v), mask);
          store(isum_out + base + inner, cluster_sum((v * 100.0f).template cast<i32>()), mask);
        });
      });
  return k;
}

template <class T>
void tile_reduce_reference(std::vector<float>& sum, std::vector<float>& mx, std::vector<int32_t>& isum,
                           const std::vector<T>& x, int groups, int cluster, int rows, int cols) {
  const size_t block = size_t(rows) * cols;
  for (int g = 0; g < groups; ++g)
    for (size_t e = 0; e < block; ++e) {
      double s = 0, m = -INFINITY;
      int64_t is = 0;
      for (int r = 0; r < cluster; ++r) {
        double v = float(x[(size_t(g) * cluster + r) * block + e]);
        s += v;
        m = std::max(m, v);
        is += int32_t(float(v) * 100.0f);
      }
      for (int r = 0; r < cluster; ++r) {
        size_t at = (size_t(g) * cluster + r) * block + e;
        sum[at] = float(s);
        mx[at] = float(m);
        isum[at] = int32_t(is);
      }
    }
}

}  // namespace cluster_combine
