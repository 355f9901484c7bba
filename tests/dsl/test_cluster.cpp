// Thread-block clusters on the interpreter: cluster_rank/cluster_id, and
// cluster_sum/max/min combining one value per program of a cluster, against plain C++
// on rows split over the programs of each cluster (odd lengths, masked tails, programs
// with no columns at all).
#include <algorithm>
#include <limits>

#include "../gpu/cluster_combine_kernels.hpp"
#include "../gpu/cluster_loop_kernels.hpp"
#include "dsl_test_util.hpp"

using namespace tilefuse;
using dsltest::first_mismatch;

namespace {

// Row r of x[rows, n] is split over the C programs of cluster r, B columns each.
// Every program writes [sum, max, min, count, rank, id] of the whole row.
auto& row_stats_kernel() {
  static auto k = kernel("row_stats", {"out", "counts", "x", "n"},
                         [](Ptr<f32> out, Ptr<i32> counts, Ptr<const f32> x, I32 n, Meta<"B"> B) {
                           auto cols = cluster_rank() * B + arange(0, B);
                           auto mask = cols < n;
                           auto v = load(x + cluster_id() * n + cols, mask, 0.0f);
                           auto big = std::numeric_limits<float>::max();
                           auto s = cluster_sum(sum(v, 0));
                           auto mx = cluster_max(max(where(mask, v, -big), 0));
                           auto mn = cluster_min(min(where(mask, v, big), 0));
                           auto cnt = cluster_sum(sum(mask, 0));
                           auto o = out + program_id(0) * 3;
                           store(o, s);
                           store(o + 1, mx);
                           store(o + 2, mn);
                           auto c = counts + program_id(0) * 3;
                           store(c, cnt);
                           store(c + 1, cluster_rank());
                           store(c + 2, cluster_id());
                         });
  return k;
}

}  // namespace

TEST_CASE("cluster_sum/max/min combine one value per program of each cluster") {
  struct Case { int rows, n, cluster, block; };
  // 16 x 8 = 128 columns for 77: ranks 10..15 see no column at all.
  for (Case c : {Case{3, 100, 2, 64}, Case{2, 250, 4, 64}, Case{2, 77, 16, 8}, Case{5, 33, 1, 64}}) {
    CAPTURE(c.n);
    CAPTURE(c.cluster);
    auto x = dsltest::rand_f(size_t(c.rows) * c.n, 40 + c.n);
    int programs = c.rows * c.cluster;
    std::vector<float> out(programs * 3, -1.0f);
    std::vector<int32_t> counts(programs * 3, -1);
    row_stats_kernel().launch(grid(programs), Config{{"B", c.block}, num_warps(2), cluster(c.cluster)}, out, counts,
                              x, c.n);
    std::vector<double> want_f;
    std::vector<int32_t> want_i;
    for (int p = 0; p < programs; ++p) {
      int row = p / c.cluster;
      auto first = x.begin() + size_t(row) * c.n;
      double s = 0;
      for (auto it = first; it != first + c.n; ++it) s += *it;
      want_f.insert(want_f.end(), {s, *std::max_element(first, first + c.n), *std::min_element(first, first + c.n)});
      want_i.insert(want_i.end(), {c.n, p % c.cluster, row});
    }
    CHECK(first_mismatch(out, want_f, 1e-5, 1e-5) == "");
    CHECK(first_mismatch(counts, want_i) == "");
  }
}

TEST_CASE("cluster_size, and a failing program of a cluster stops its cluster with the error") {
  int seen = 0;
  auto k = kernel("cluster_oob", {"out", "in"}, [&](Ptr<f32> out, Ptr<const f32> in, Meta<"B"> B) {
    seen = cluster_size();
    auto offs = program_id(0) * B + arange(0, B);
    auto total = cluster_sum(sum(load(in + offs), 0));  // unmasked: program 3 reads past the end
    store(out + program_id(0), total);
  });
  std::vector<float> in(3 * 16 + 5, 1.0f), out(4);
  try {
    k.launch(grid(4), Config{{"B", 16}, cluster(4)}, out, in);
    FAIL("no error");
  } catch (const UserError& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("out-of-bounds load in kernel 'cluster_oob'") != std::string::npos);
    CHECK(msg.find("program id (3, 0, 0)") != std::string::npos);
  }
  CHECK(seen == 4);
}

TEST_CASE("the programs of a cluster take turns on the interpreter: atomics stay atomic") {
  // Every program adds 1 to all 512 counters twice around a cluster reduction; the
  // interpreter runs a cluster's programs on threads, but one at a time.
  auto k = kernel("cluster_atomics", {"counts", "out"}, [](Ptr<i32> counts, Ptr<f32> out, Meta<"B"> B) {
    auto idx = arange(0, B);
    atomic_add(counts + idx, 1);
    auto total = cluster_sum(scalar<f32>(1.0));
    atomic_add(counts + idx, 1);
    store(out + program_id(0), total);
  });
  std::vector<int32_t> counts(512, 0);
  std::vector<float> out(64, 0.0f);
  k.launch(grid(64), Config{{"B", 512}, cluster(4)}, counts, out);
  CHECK(first_mismatch(counts, std::vector<int32_t>(512, 128)) == "");
  CHECK(first_mismatch(out, std::vector<float>(64, 4.0f)) == "");
}

TEST_CASE("cluster reductions inside a loop with cluster-uniform bounds: persistent clusters over rows") {
  for (auto [rows, n, c, b, clusters] : {std::tuple{13, 1000, 4, 256, 3}, std::tuple{5, 37, 2, 32, 4},
                                         std::tuple{9, 300, 8, 64, 1}}) {
    CAPTURE(rows);
    CAPTURE(c);
    std::vector<float> x(size_t(rows) * n);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 37 + 11) % 101) / 25.0f - 2.0f;
    std::vector<float> y(x.size()), colsum(size_t(clusters) * n), want_y(x.size()), want_sum(colsum.size());
    cluster_loops::rows_loop_kernel<float>().launch(Grid(clusters * c), Config{{"B", b}, cluster(c)}, y, colsum, x,
                                                    rows, n);
    cluster_loops::rows_loop_reference(want_y, want_sum, x, rows, n, clusters);
    CHECK(first_mismatch(y, want_y, 1e-5, 1e-6) == "");
    CHECK(first_mismatch(colsum, want_sum, 1e-5, 1e-4) == "");
  }
}

TEST_CASE("cluster_reduce: several values in one exchange with a combine function") {
  // Integers, a combine that is not commutative: the tree of rank pairs, lower rank left.
  for (int c : {1, 2, 4, 16, 64, 512}) {  // more than 16: memory clusters on the GPU
    CAPTURE(c);
    std::vector<int32_t> out(size_t(3) * 2 * c, -1);
    cluster_combine::ordered_combine_kernel().launch(grid(2 * c), Config{cluster(c)}, out);
    CHECK(first_mismatch(out, cluster_combine::ordered_combine_reference(2 * c, c)) == "");
  }
  // The online softmax in persistent clusters; 16 x 8 columns for 77: ranks 10..15 hold none.
  struct Case { int rows, n, cluster, block, clusters; };
  for (Case k : {Case{5, 100, 2, 64, 2}, Case{3, 77, 16, 8, 2}, Case{4, 250, 4, 64, 3}, Case{3, 3001, 64, 64, 2}}) {
    CAPTURE(k.n);
    CAPTURE(k.cluster);
    auto x = dsltest::rand_f(size_t(k.rows) * k.n, 7 + k.n);
    for (size_t i = 0; i < x.size(); ++i) x[i] *= 8.0f;
    std::vector<float> y(x.size(), -1.0f), total(k.rows, -1.0f), want_y(x.size()), want_total(k.rows);
    cluster_combine::online_softmax_kernel<float>().launch(
        grid(k.clusters * k.cluster), Config{{"B", k.block}, num_warps(2), cluster(k.cluster)}, y, total, x, k.rows,
        k.n);
    cluster_combine::online_softmax_reference(want_y, want_total, x, k.rows, k.n);
    CHECK(first_mismatch(y, want_y, 1e-5, 1e-6) == "");
    CHECK(first_mismatch(total, want_total, 1e-5, 1e-5) == "");
  }
}

TEST_CASE("cluster_sum/max of a tile: every program gets the element-wise result, in loops too") {
  struct Case { int groups, cluster, clusters, rows, cols, br, bc; };
  for (Case k : {Case{5, 2, 2, 7, 13, 8, 16}, Case{3, 4, 3, 16, 32, 16, 32}, Case{2, 8, 1, 3, 5, 4, 8},
                 Case{4, 1, 2, 9, 9, 16, 16}}) {
    CAPTURE(k.cluster);
    CAPTURE(k.rows);
    size_t n = size_t(k.groups) * k.cluster * k.rows * k.cols;
    auto x = dsltest::rand_f(n, 17 + k.cols);
    for (auto& v : x) v *= 3.0f;
    std::vector<float> sum(n, -1.0f), mx(n, -1.0f), want_sum(n), want_mx(n);
    std::vector<int32_t> isum(n, -1), want_isum(n);
    cluster_combine::tile_reduce_kernel<float>().launch(
        grid(k.clusters * k.cluster), Config{{"BR", k.br}, {"BC", k.bc}, num_warps(2), cluster(k.cluster)}, sum, mx,
        isum, x, k.groups, k.rows, k.cols);
    cluster_combine::tile_reduce_reference(want_sum, want_mx, want_isum, x, k.groups, k.cluster, k.rows, k.cols);
    CHECK(first_mismatch(sum, want_sum, 1e-5, 1e-6) == "");
    CHECK(first_mismatch(mx, want_mx) == "");
    CHECK(first_mismatch(isum, want_isum) == "");
  }
}
