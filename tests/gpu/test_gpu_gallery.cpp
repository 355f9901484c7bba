// Every gallery kernel on the GPU against the interpreter, at odd shapes and for each
// dtype it supports. Label: gpu (skips without a driver).
#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using difftest::gpu_matches_interp;

template <class T>
difftest::Tolerance tol() {
  if constexpr (std::is_same_v<T, float>) return {1e-6, 1e-5};
  else if constexpr (std::is_same_v<T, half>) return {1e-4, 2e-3};
  else return {1e-3, 1.6e-2};
}

TEST_CASE_TEMPLATE("gpu: softmax (one tile and looped)", T, float, half, bfloat16) {
  for (auto [rows, cols, block, warps] : {std::tuple{7, 1, 16, 1}, std::tuple{33, 1000, 1024, 4},
                                          std::tuple{5, 5000, 8192, 16}, std::tuple{3, 3333, 512, 4}}) {
    CAPTURE(cols);
    auto x = ref::random_vec<T>(rows * cols, cols, -8, 8);
    std::vector<T> y(x.size());
    Config cfg{{"BLOCK", block}, num_warps(warps)};
    if (block < cols)
      gpu_matches_interp(tk::softmax_looped_kernel<T>(), Grid(rows), cfg, tol<T>(), y, x, rows, cols, int64_t(cols), int64_t(cols));
    else
      gpu_matches_interp(tk::softmax_row_kernel<T>(), Grid(rows), cfg, tol<T>(), y, x, rows, cols, int64_t(cols), int64_t(cols));
  }
}

TEST_CASE_TEMPLATE("gpu: softmax with several rows per program", T, float, bfloat16) {
  for (auto [rows, cols, per, warps] : {std::tuple{37, 1000, 4, 4}, std::tuple{9, 77, 2, 1}, std::tuple{16, 4096, 2, 8}}) {
    CAPTURE(cols);
    auto x = ref::random_vec<T>(rows * cols, cols + 3, -8, 8);
    std::vector<T> y(x.size());
    Config cfg{{"BLOCK", tk::next_pow2(cols)}, {"ROWS", per}, num_warps(warps)};
    gpu_matches_interp(tk::softmax_rows_kernel<T>(), Grid((rows + per - 1) / per), cfg, tol<T>(), y, x, rows, cols,
                       int64_t(cols), int64_t(cols));
  }
}

TEST_CASE_TEMPLATE("gpu: rmsnorm with and without residual", T, float, half, bfloat16) {
  for (auto [rows, cols, block, residual] : {std::tuple{9, 77, 128, 0}, std::tuple{4, 4096, 4096, 1}, std::tuple{3, 1000, 256, 1}}) {
    CAPTURE(cols);
    auto x = ref::random_vec<T>(rows * cols, 1), r = ref::random_vec<T>(rows * cols, 2);
    auto w = ref::random_vec<T>(cols, 3, 0.5, 1.5);
    std::vector<T> y(x.size()), s(x.size());
    Config cfg{{"BLOCK", block}, {"RESIDUAL", residual}, num_warps(4)};
    if (block < cols)
      gpu_matches_interp(tk::rmsnorm_looped_kernel<T>(), Grid(rows), cfg, tol<T>(), y, s, x, r, w, cols, int64_t(cols), 1e-6f);
    else
      gpu_matches_interp(tk::rmsnorm_row_kernel<T>(), Grid(rows), cfg, tol<T>(), y, s, x, r, w, cols, int64_t(cols), 1e-6f);
  }
}

TEST_CASE_TEMPLATE("gpu: layernorm", T, float, bfloat16) {
  for (auto [rows, cols, block] : {std::tuple{6, 123, 128}, std::tuple{3, 2000, 512}}) {
    auto x = ref::random_vec<T>(rows * cols, 4, 1, 5);
    auto w = ref::random_vec<T>(cols, 5, 0.5, 1.5), b = ref::random_vec<T>(cols, 6);
    std::vector<T> y(x.size());
    std::vector<float> mean(rows), rstd(rows);  // the row statistics, written with STATS
    for (int stats : {0, 1}) {
      Config cfg = Config{{"BLOCK", block}, num_warps(4)}.set("STATS", stats);
      if (block < cols)
        gpu_matches_interp(tk::layernorm_looped_kernel<T>(), Grid(rows), cfg, tol<T>(), y, mean, rstd, x, w, b, cols,
                           int64_t(cols), 1e-5f);
      else
        for (int shifted : {0, 1})
          gpu_matches_interp(tk::layernorm_row_kernel<T>(), Grid(rows), Config(cfg).set("SHIFTED", shifted), tol<T>(),
                             y, mean, rstd, x, w, b, cols, int64_t(cols), 1e-5f);
    }
  }
}

TEST_CASE_TEMPLATE("gpu: flash attention forward", T, half, bfloat16) {
  for (auto [n, d, causal, bm, bn, warps] : {std::tuple{77, 64, false, 64, 32, 4}, std::tuple{100, 64, true, 32, 32, 4},
                                             std::tuple{45, 128, true, 16, 16, 1}, std::tuple{130, 128, false, 64, 64, 8}}) {
    CAPTURE(n);
    CAPTURE(d);
    CAPTURE(causal);
    int bh = 2;
    size_t sz = size_t(bh) * n * d;
    auto q = ref::random_vec<T>(sz, 7, -1, 1), k = ref::random_vec<T>(sz, 8, -1, 1), v = ref::random_vec<T>(sz, 9, -1, 1);
    std::vector<T> o(sz);
    std::vector<float> lse(bh * n);
    for (auto [stages, ahead, lag] : {std::tuple{1, 0, 0}, std::tuple{3, 0, 0}, std::tuple{2, 1, 0},
                                      std::tuple{3, 1, 0}, std::tuple{1, 0, 1}, std::tuple{2, 0, 1}, std::tuple{3, 0, 1}}) {
      CAPTURE(stages);
      CAPTURE(ahead);
      CAPTURE(lag);
      Config cfg{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"HEAD_DIM", d}, {"CAUSAL", causal}, {"QK_AHEAD", ahead},
                 {"PV_LAG", lag}, num_warps(warps), num_stages(stages)};
      gpu_matches_interp(tk::attention_fwd_kernel<T>(), Grid((n + bm - 1) / bm, bh), cfg, {2e-3, 2e-2}, o, lse, q, k, v,
                         n, int64_t(n) * d, int64_t(d), 1.0f / std::sqrt(float(d)));
    }
  }
}

TEST_CASE_TEMPLATE("gpu: matmul with epilogues on tensor cores, odd M, N, K, transposed B", T, half, bfloat16) {
  for (auto [m, n, k, bm, bn, bk, warps, trans, act] :
       {std::tuple{37, 45, 53, 32, 32, 16, 4, false, 0}, std::tuple{130, 70, 100, 64, 64, 32, 4, true, 2},
        std::tuple{200, 129, 64, 128, 128, 32, 8, false, 3}, std::tuple{17, 300, 33, 16, 128, 64, 2, true, 1},
        std::tuple{64, 64, 256, 64, 64, 64, 8, false, 0}}) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    auto a = ref::random_vec<T>(size_t(m) * k, 21, -1, 1), b = ref::random_vec<T>(size_t(k) * n, 22, -1, 1);
    auto bias = ref::random_vec<T>(n, 23, -1, 1);
    auto res = ref::random_vec<float>(size_t(m) * n, 24, -1, 1);
    std::vector<float> c(size_t(m) * n);
    for (int stages : {1, 2, 3, 4}) {  // cp.async pipelines: same result, masked tails, K shorter than S tiles
      CAPTURE(stages);
      Config cfg{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"GROUP_M", 4}, {"B_TRANS", trans}, {"ACT", act},
                 {"BIAS", act != 0}, {"RESIDUAL", act == 3}, {"SCALE", trans}, num_warps(warps), num_stages(stages)};
      int64_t tiles = int64_t((m + bm - 1) / bm) * ((n + bn - 1) / bn);
      gpu_matches_interp(tk::matmul_kernel<T, float>(), Grid(tiles), cfg, {1e-3, 1e-3}, c, a, b, bias, res, m, n, k,
                         int64_t(k), int64_t(trans ? k : n), int64_t(n), 0.75f);
    }
  }
}

TEST_CASE("gpu: matmul results are bit-identical across num_stages, a zero-trip K loop leaves the epilogue of 0") {
  if (!difftest::have_gpu()) return;
  int m = 77, n = 96, k = 200;
  auto a = ref::random_vec<half>(size_t(m) * k, 31, -1, 1), b = ref::random_vec<half>(size_t(k) * n, 32, -1, 1);
  auto bias = ref::random_vec<half>(n, 33, -1, 1);
  std::vector<float> unused(1);
  auto da = tilefuse::to_device(a), db = tilefuse::to_device(b), dbias = tilefuse::to_device(bias);
  std::vector<std::vector<float>> outs;
  for (int stages : {1, 2, 3, 5}) {
    DeviceBuffer<float> c(size_t(m) * n);
    Config cfg{{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"BLOCK_K", 32}, num_warps(4), num_stages(stages)};
    tk::matmul(c, da, db, m, n, k, {}, nullptr, nullptr, cfg);
    outs.push_back(c.to_host());
  }
  for (size_t i = 1; i < outs.size(); ++i) CHECK(outs[i] == outs[0]);
  // K = 0 through the kernel itself: no iteration, prologue copies predicated off.
  std::vector<float> c(size_t(m) * n, 5.0f);
  Config cfg{{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"BLOCK_K", 32}, {"BIAS", 1}, num_warps(4), num_stages(3)};
  gpu_matches_interp(tk::matmul_kernel<half, float>(), Grid(2 * 3), cfg, {1e-6, 1e-6}, c, a, b, bias, c, m, n, 0,
                     int64_t(k), int64_t(n), int64_t(n), 1.0f);
}

TEST_CASE_TEMPLATE("gpu: fused and unfused log(relu(x + b))", T, float, bfloat16) {
  int rows = 37, cols = 1001;
  int64_t n = int64_t(rows) * cols;
  auto x = ref::random_vec<T>(n, 10), b = ref::random_vec<T>(cols, 11);
  std::vector<T> y(n), t(n), u(n);
  Config cfg{{"BLOCK", 1024}, num_warps(4)};
  Grid g((n + 1023) / 1024);
  gpu_matches_interp(tk::bias_relu_log_kernel<T>(), tk::bias_grid(cfg, rows, cols), cfg, tol<T>(), y, x, b, n, cols);
  gpu_matches_interp(tk::add_bias_kernel<T>(), tk::bias_grid(cfg, rows, cols), cfg, tol<T>(), t, x, b, n, cols);
  gpu_matches_interp(tk::relu_kernel<T>(), g, cfg, tol<T>(), u, t, n);
  gpu_matches_interp(tk::log_kernel<T>(), g, cfg, tol<T>(), y, u, n);
}

// Rows split over thread-block clusters (sm_90+): GPU against the interpreter, which
// runs the programs of each cluster on threads of their own.
TEST_CASE_TEMPLATE("gpu: rows split over thread-block clusters", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  if (!gpu_has_clusters()) {
    MESSAGE("cluster test skipped: the GPU has no thread-block clusters (needs sm_90)");
    return;
  }
  for (auto [rows, cols, block, warps, cl] : {std::tuple{3, 1000, 256, 2, 4}, std::tuple{2, 600, 128, 4, 8},
                                              std::tuple{2, 70001, 8192, 8, 16}, std::tuple{3, 40000, 16384, 16, 4}}) {
    CAPTURE(cols);
    CAPTURE(cl);
    auto x = ref::random_vec<T>(rows * cols, cols, -8, 8);
    for (int c = 0; c < cols; c += 7) x[c] = T(-inf);
    auto r = ref::random_vec<T>(rows * cols, 2), w = ref::random_vec<T>(cols, 3, 0.5, 1.5);
    auto b = ref::random_vec<T>(cols, 4), xf = ref::random_vec<T>(rows * cols, 5, 1, 5);
    std::vector<T> y(x.size()), s(x.size());
    Config cfg{{"BLOCK", block}, num_warps(warps), cluster(cl)};
    Grid g(rows * cl);
    gpu_matches_interp(tk::softmax_row_kernel<T>(), g, cfg, tol<T>(), y, x, rows, cols, int64_t(cols), int64_t(cols));
    for (int reload : {0, 1}) {
      for (int residual : {0, 1})
        gpu_matches_interp(tk::rmsnorm_row_kernel<T>(), g,
                           Config(cfg).set("RESIDUAL", residual).set("RELOAD", reload), tol<T>(), y, s, xf, r, w, cols,
                           int64_t(cols), 1e-6f);
      std::vector<float> mean(rows), rstd(rows);  // written by each row's first program
      for (int shifted : {0, 1})
        gpu_matches_interp(tk::layernorm_row_kernel<T>(), g,
                           Config(cfg).set("SHIFTED", shifted).set("RELOAD", reload).set("STATS", 1), tol<T>(), y, mean,
                           rstd, xf, w, b, cols, int64_t(cols), 1e-5f);
    }
  }
}

namespace {

// One bf16 GEMM through matmul() on the GPU (random inputs, the epilogue the case asks
// for, an optional launch config) against plain C++.
struct GemmCase {
  int m, n, k;
  bool b_trans;
  tk::Activation act;
  bool bias, res;
};
void check_gpu_matmul(const GemmCase& c, float alpha, uint32_t seed, tk::ConfigOverride cfg = {}) {
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  auto a = ref::random_vec<bfloat16>(size_t(c.m) * c.k, seed, -1, 1);
  auto b = ref::random_vec<bfloat16>(size_t(c.k) * c.n, seed + 1, -1, 1);
  auto bias = ref::random_vec<bfloat16>(c.n, seed + 2, -1, 1);
  auto res = ref::random_vec<float>(size_t(c.m) * c.n, seed + 3, -1, 1);
  auto da = tilefuse::to_device(a), db = tilefuse::to_device(b), dbias = tilefuse::to_device(bias);
  auto dres = tilefuse::to_device(res);
  DeviceBuffer<float> out(size_t(c.m) * c.n);
  tk::MatmulOptions o{c.b_trans, alpha, c.act};
  if (c.bias && c.res) tk::matmul(out, da, db, c.m, c.n, c.k, o, dbias, dres, cfg);
  else if (c.bias) tk::matmul(out, da, db, c.m, c.n, c.k, o, dbias, nullptr, cfg);
  else if (c.res) tk::matmul(out, da, db, c.m, c.n, c.k, o, nullptr, dres, cfg);
  else tk::matmul(out, da, db, c.m, c.n, c.k, o, nullptr, nullptr, cfg);
  auto want = ref::matmul(ref::to_float(a), ref::to_float(b), c.m, c.n, c.k, c.b_trans, alpha, static_cast<int>(c.act),
                          c.bias ? ref::to_float(bias) : std::vector<float>{}, c.res ? res : std::vector<float>{});
  CHECK(ref::max_rel_err(out.to_host(), want, 1e-3, 1e-3) <= 1.0);
}

}  // namespace

// Split-K through matmul()'s host function: forced (odd N and K, short last slice, every
// epilogue) and by the rule (M = 64 and M = 7: 64-row wgmma and 16-row mma.sync tiles), against plain C++.
TEST_CASE("gpu: matmul splits K where few output tiles would leave the GPU idle") {
  if (!difftest::have_gpu()) return;
  struct Case { GemmCase g; const char* forced; };
  Case cases[] = {{{70, 1000, 3000, false, tk::Activation::gelu_tanh, true, true}, "3"},
                  {{33, 517, 1999, true, tk::Activation::none, false, false}, "5"},
                  {{64, 4096, 4096, false, tk::Activation::silu, true, false}, ""},
                  {{7, 4096, 3000, true, tk::Activation::gelu_tanh, true, true}, ""}};  // 16-row tiles, split
  for (auto& c : cases) {
    if (*c.forced) setenv("TILEFUSE_SPLIT_K", c.forced, 1);
    check_gpu_matmul(c.g, 0.75f, 61);
    unsetenv("TILEFUSE_SPLIT_K");
  }
}

// The two ways of adding the slices, chosen by SPLIT_CLUSTER in the launch config: one
// kernel whose clusters of S programs add their tiles through distributed shared memory
// (S = 2, 4, 8; wgmma 64-row and mma.sync 16-row tiles), and partials added by a second
// kernel; odd sizes, a slice left empty (8 slices of K = 200), every epilogue.
TEST_CASE("gpu: split-K slices added in a cluster or by a second kernel agree with plain C++") {
  if (!difftest::have_gpu()) return;
  struct Case { GemmCase g; int bm, splits; };
  Case cases[] = {{{50, 1000, 2000, false, tk::Activation::gelu_tanh, true, true}, 64, 4},
                  {{7, 517, 1999, true, tk::Activation::silu, true, false}, 16, 2},
                  {{64, 4096, 4096, false, tk::Activation::none, false, false}, 64, 8},
                  {{13, 300, 200, true, tk::Activation::relu, false, true}, 16, 8}};
  for (auto& c : cases)
    for (int cluster : {1, 0}) {
      CAPTURE(c.splits);
      CAPTURE(cluster);
      check_gpu_matmul(c.g, 1.25f, 71,
                       Config{{"BLOCK_M", c.bm}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"SPLIT_K", c.splits},
                              {"SPLIT_CLUSTER", cluster}, num_warps(4), num_stages(4)});
    }
}

// The tiles of the last partial wave split (SPLIT_TAIL, gemm_split_tail.hpp): their
// slices counted in concurrently on the GPU, the last adding the partials. 128x128 tiles
// (132 whole + the rest split, rounded up to whole columns; the last row of tiles shifted
// up at M = 1100 without a residual) and 128x256 ones; odd N and K, both B layouts, every
// epilogue; and the heuristic's own choice at 1100x2048x4096 (128x128 tiles, 132 whole + 18
// in 7 slices). Against plain C++.
TEST_CASE("gpu: matmul splits the tiles of the last partial wave, after the whole tiles") {
  if (!difftest::have_gpu()) return;
  auto tail = [](int bn, int warps, int stages, int splits) {
    return Config{{"BLOCK_M", 128}, {"BLOCK_N", bn}, {"BLOCK_K", 64}, {"GROUP_M", 16}, {"SPLIT_K", splits},
                  {"SPLIT_TAIL", 1}, num_warps(warps), num_stages(stages)};
  };
  struct Case { GemmCase g; tk::ConfigOverride cfg; };
  Case cases[] = {{{640, 4096, 1024, false, tk::Activation::none, false, false}, tail(128, 8, 6, 4)},
                  {{1100, 2000, 999, true, tk::Activation::gelu_tanh, true, false}, tail(128, 8, 6, 4)},
                  {{1100, 2000, 999, false, tk::Activation::silu, false, true}, tail(128, 8, 6, 3)},
                  {{1024, 5000, 1000, false, tk::Activation::relu, true, false}, tail(256, 8, 4, 4)},
                  {{1100, 2048, 4096, false, tk::Activation::none, false, false}, {}}};
  for (auto& c : cases) check_gpu_matmul(c.g, 0.5f, 81, c.cfg);
}

// The last column of tiles moved left to end at N rounded up to 16 bytes (EDGE_SHIFT_N, on
// by default; off with a residual): N a multiple of 8 but not of the tile (TMA copies of
// B and C from a column that is not a multiple of 64), both B layouts, 128x256 and 128x128
// tiles, the columns shared with the neighbouring tile written twice. Against plain C++.
TEST_CASE("gpu: matmul's last column of tiles moved left to end at N agrees with plain C++") {
  if (!difftest::have_gpu()) return;
  GemmCase cases[] = {{300, 1000, 520, false, tk::Activation::none, false, false},
                      {260, 3000, 1000, true, tk::Activation::gelu_tanh, true, false},
                      {130, 744, 777, false, tk::Activation::silu, true, true},
                      {129, 264, 64, false, tk::Activation::relu, false, false}};
  for (auto& c : cases)
    for (int bn : {256, 128})
      for (int shift_n : {1, 0}) {
        CAPTURE(bn);
        CAPTURE(shift_n);
        check_gpu_matmul(c, 1.5f, 91,
                         Config{{"BLOCK_M", 128}, {"BLOCK_N", bn}, {"BLOCK_K", 64}, {"EDGE_SHIFT_N", shift_n},
                                num_warps(8), num_stages(4)});
      }
}
