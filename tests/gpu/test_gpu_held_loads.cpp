// Loads kept in shared memory (Cache::KeepInShared) on the GPU against the interpreter
// (which ignores the hint): in place, several readers per tile, masked lanes filled with
// a non-zero value, the source overwritten before the first reader, loads in both arms
// of a branch and read in a loop, and the softmax, RMSNorm and LayerNorm row programs
// with HELD chunks (cross-entropy's: test_gpu_cross_entropy). Label: gpu (skips without a driver).
#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "held_kernels.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using difftest::gpu_matches_interp;

using difftest::row_tolerance;

TEST_CASE_TEMPLATE("gpu: held tiles read by several ops, written over in place", T, float, bfloat16) {
  for (auto [rows, cols, block, chunks, warps] :
       {std::tuple{7, 1000, 256, 4, 2}, std::tuple{5, 8192, 4096, 2, 8}, std::tuple{3, 24, 32, 1, 1}}) {
    CAPTURE(cols);
    auto xy = ref::random_vec<T>(size_t(rows) * cols, 7 + cols, -4, 4);
    gpu_matches_interp(held::held_rows_kernel<T>(), Grid(rows),
                       Config{{"BLOCK", block}, {"CHUNKS", chunks}, num_warps(warps)}, row_tolerance<T>(), xy,
                       int32_t(cols));
  }
}

TEST_CASE_TEMPLATE("gpu: a held tile's source overwritten before its first reader", T, float, bfloat16) {
  for (int n : {1000, 4096, 37}) {
    CAPTURE(n);
    auto x = ref::random_vec<T>(size_t(n), 31 + n, -3, 3);
    std::vector<float> out(x.size(), 5.0f);
    gpu_matches_interp(held::held_overwrite_kernel<T>(), Grid((n + 1023) / 1024), Config{{"BLOCK", 1024}, num_warps(4)},
                       row_tolerance<T>(), out, x, int32_t(n));
  }
}

TEST_CASE("gpu: a held tile read in a branch not taken, and beside a load checked per run") {
  int programs = 3, block = 1024;
  auto x = ref::random_vec<float>(size_t(programs) * 2 * block, 41, -3, 3);
  auto y = ref::random_vec<float>(x.size(), 42, -3, 3);
  for (int flag : {0, 1})
    for (int n : {1023, 517}) {
      CAPTURE(flag);
      CAPTURE(n);
      std::vector<float> out(x.size(), 9.0f);
      gpu_matches_interp(held::held_branch_only_kernel(), Grid(programs), Config{{"BLOCK", block}, num_warps(4)},
                         row_tolerance<float>(), out, x, y, int32_t(n), int32_t(flag));
    }
}

TEST_CASE_TEMPLATE("gpu: held tiles in the arms of a branch, read in a loop", T, float, half) {
  for (int cols : {1000, 512, 77}) {
    CAPTURE(cols);
    int rows = 6;
    auto x = ref::random_vec<T>(size_t(rows) * cols, 11 + cols, -3, 3);
    std::vector<float> out(x.size(), -1.0f);
    for (int reps : {0, 3})
      gpu_matches_interp(held::held_branch_kernel<T>(), Grid(rows), Config{{"BLOCK", 1024}, num_warps(4)},
                         row_tolerance<T>(), out, x, int32_t(cols), int32_t(reps));
  }
}

TEST_CASE_TEMPLATE("gpu: softmax with HELD chunks on clusters", T, float, bfloat16) {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  auto tol = row_tolerance<T>();
  struct Case { int64_t rows, cols; Config cfg; };
  // The heuristic's configs (HELD on 16-bit rows), odd row counts, and HELD forced at
  // widths whose runs are not aligned (the hint then falls back to registers).
  for (auto& s : {Case{5, 65536, tk::softmax_heuristic(65536, dtype_v<T>, true)},
                  Case{3, 131072, tk::softmax_heuristic(131072, dtype_v<T>, true)},
                  Case{4, 65536, Config{{"BLOCK", 4096}, {"CHUNKS", 4}, {"HELD", 3}, num_warps(8), cluster(4)}},
                  Case{3, 65533, Config{{"BLOCK", 8192}, {"HELD", 1}, num_warps(8), cluster(8)}}}) {
    CAPTURE(s.cols);
    CAPTURE(s.cfg.str());
    auto x = ref::random_vec<T>(size_t(s.rows) * s.cols, 5 + s.cols, -6, 6);
    std::vector<T> y(x.size());
    gpu_matches_interp(tk::softmax_row_kernel<T>(), Grid(s.rows * s.cfg.cluster), s.cfg, tol, y, x,
                       int32_t(s.rows), int32_t(s.cols), s.cols, s.cols);
  }
}

TEST_CASE_TEMPLATE("gpu: RMSNorm with HELD chunks on clusters (ignored with RESIDUAL)", T, float, bfloat16) {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  auto tol = row_tolerance<T>();
  for (auto [rows, cols, cfg] :
       {std::tuple{5, 65536, Config{{"BLOCK", 8192}, {"HELD", 1}, num_warps(8), cluster(8)}},
        std::tuple{3, 131072, Config{{"BLOCK", 8192}, {"CHUNKS", 2}, {"HELD", 2}, num_warps(8), cluster(8)}},
        std::tuple{4, 40000, Config{{"BLOCK", 2048}, {"CHUNKS", 5}, {"HELD", 3}, {"RELOAD", 1}, num_warps(4), cluster(4)}}}) {
    CAPTURE(cols);
    CAPTURE(cfg.str());
    auto x = ref::random_vec<T>(size_t(rows) * cols, 21 + cols, -3, 3), r = ref::random_vec<T>(x.size(), 22);
    auto w = ref::random_vec<T>(cols, 23, 0.5, 1.5);
    std::vector<T> y(x.size()), so(x.size());
    for (int res : {0, 1})
      gpu_matches_interp(tk::rmsnorm_row_kernel<T>(), Grid(rows * cfg.cluster), Config(cfg).set("RESIDUAL", res), tol,
                         y, so, x, r, w, int32_t(cols), int64_t(cols), 1e-6f);
  }
}

TEST_CASE_TEMPLATE("gpu: LayerNorm with HELD chunks on clusters, both algorithms", T, float, bfloat16) {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  for (auto [rows, cols, cfg] :
       {std::tuple{5, 65536, Config{{"BLOCK", 4096}, {"CHUNKS", 2}, {"HELD", 2}, num_warps(4), cluster(8)}},
        std::tuple{3, 40000, Config{{"BLOCK", 2048}, {"CHUNKS", 5}, {"HELD", 3}, {"RELOAD", 1}, num_warps(4), cluster(4)}}}) {
    CAPTURE(cols);
    CAPTURE(cfg.str());
    auto x = ref::random_vec<T>(size_t(rows) * cols, 51 + cols, -3, 5);
    auto w = ref::random_vec<T>(cols, 52, 0.5, 1.5), b = ref::random_vec<T>(cols, 53);
    std::vector<T> y(x.size());
    std::vector<float> mean(rows), rstd(rows);
    for (int shifted : {0, 1})
      gpu_matches_interp(tk::layernorm_row_kernel<T>(), Grid(rows * cfg.cluster),
                         Config(cfg).set("SHIFTED", shifted).set("STATS", 1), row_tolerance<T>(), y, mean, rstd, x, w, b,
                         int32_t(cols), int64_t(cols), 1e-5f);
  }
}
