// Row programs holding CHUNKS tiles of BLOCK columns, on the GPU against the
// interpreter: odd widths, clusters, residual and both LayerNorm algorithms, and the
// heuristic's configs. Label: gpu (skips without a driver).
#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using difftest::gpu_matches_interp;

TEST_CASE_TEMPLATE("gpu: chunked row programs", T, float, bfloat16) {
  difftest::Tolerance tol = std::is_same_v<T, float> ? difftest::Tolerance{1e-6, 1e-5} : difftest::Tolerance{1e-3, 1.6e-2};
  struct Case { int64_t rows, cols; Config cfg; };
  for (auto& s : {Case{9, 5000, tk::softmax_heuristic(5000, dtype_v<T>, true)},
                  Case{5, 4099, tk::softmax_heuristic(4099, dtype_v<T>, true)},
                  Case{4, 3001, Config{{"BLOCK", 512}, {"CHUNKS", 3}, num_warps(4), cluster(2)}},
                  Case{3, 300, Config{{"BLOCK", 64}, {"CHUNKS", 5}, num_warps(1)}},
                  // Tail tiles: the norms' 2 x (8192 + 8) at 16385 (bf16), softmax's 4 x (4 x 1024 +
                  // 8) (and at 4099 above: 4 x 1024 + 8), 4 x (2 x 1024 + 64) by hand.
                  Case{3, 16385, tk::chunked_row_heuristic(16385, dtype_v<T>, true, tk::RowTails::clusters)},
                  Case{3, 16385, tk::softmax_heuristic(16385, dtype_v<T>, true)},
                  Case{4, 8400, Config{{"BLOCK", 1024}, {"CHUNKS", 2}, {"TAIL", 64}, num_warps(4), cluster(4)}}}) {
    CAPTURE(s.cols);
    CAPTURE(s.cfg.str());
    auto x = ref::random_vec<T>(s.rows * s.cols, 3 + s.cols, -5, 5), r = ref::random_vec<T>(s.rows * s.cols, 4);
    auto w = ref::random_vec<T>(s.cols, 5, 0.5, 1.5), b = ref::random_vec<T>(s.cols, 6);
    std::vector<T> y(x.size()), so(x.size());
    Grid g(s.rows * s.cfg.cluster);
    int32_t n = static_cast<int32_t>(s.cols);
    gpu_matches_interp(tk::softmax_row_kernel<T>(), g, s.cfg, tol, y, x, int32_t(s.rows), n, s.cols, s.cols);
    for (int res : {0, 1})
      gpu_matches_interp(tk::rmsnorm_row_kernel<T>(), g, Config(s.cfg).set("RESIDUAL", res), tol, y, so, x, r, w, n,
                         s.cols, 1e-6f);
    std::vector<float> mean(s.rows), rstd(s.rows);  // written with STATS
    for (int shifted : {0, 1})
      gpu_matches_interp(tk::layernorm_row_kernel<T>(), g, Config(s.cfg).set("SHIFTED", shifted).set("STATS", 1), tol,
                         y, mean, rstd, x, w, b, n, s.cols, 1e-5f);
  }
}

TEST_CASE_TEMPLATE("gpu: softmax with persistent clusters looping over the rows", T, float, bfloat16) {
  difftest::Tolerance tol = std::is_same_v<T, float> ? difftest::Tolerance{1e-6, 1e-5} : difftest::Tolerance{1e-3, 1.6e-2};
  for (auto [rows, cols, block, chunks, cl, clusters] :
       {std::tuple{37, 5000, 1024, 3, 2, 5}, std::tuple{9, 65536, 8192, 1, 8, 2}, std::tuple{4, 4099, 512, 3, 4, 7}}) {
    for (int stages : {1, 2}) {
      CAPTURE(cols);
      CAPTURE(stages);
      auto x = ref::random_vec<T>(size_t(rows) * cols, 41 + cols, -5, 5);
      std::vector<T> y(x.size());
      Config cfg{{"BLOCK", block}, {"CHUNKS", chunks}, {"PERSISTENT", 1}, num_warps(4), num_stages(stages), cluster(cl)};
      gpu_matches_interp(tk::softmax_row_kernel<T>(), Grid(clusters * cl), cfg, tol, y, x, int32_t(rows),
                         int32_t(cols), int64_t(cols), int64_t(cols));
    }
  }
}

// The heuristics' 16-bit programs of wide cluster rows: LayerNorm's 4 held chunks of 4096
// on 8 warps (one program per row at 16384 columns, clusters of 4 at 65536) and of 8192 at
// 262144 (8 programs of 64 KB), RMSNorm's 2 x 8192 programs and softmax's 4 x 8192 held ones
// (on 8 programs) on rows of 262144.
TEST_CASE("gpu: the heuristics' wide cluster programs") {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  using T = bfloat16;
  difftest::Tolerance tol{1e-3, 1.6e-2};
  for (int64_t cols : {int64_t(16384), int64_t(15000), int64_t(65536), int64_t(262144)}) {
    CAPTURE(cols);
    int64_t rows = 2;
    auto x = ref::random_vec<T>(rows * cols, 7 + cols, -5, 5);
    auto w = ref::random_vec<T>(cols, 8, 0.5, 1.5), b = ref::random_vec<T>(cols, 9);
    std::vector<T> y(x.size());
    std::vector<float> mean(rows), rstd(rows);
    int32_t n = static_cast<int32_t>(cols);
    Config ln = tk::layernorm_heuristic(cols, dtype_v<T>, true).set("SHIFTED", 1).set("STATS", 1);
    CAPTURE(ln.str());
    REQUIRE(ln.get("BLOCK") == (cols == 65536 ? 4096 : 8192));  // (one program of 2 x 8192 at 15000-16384)
    gpu_matches_interp(tk::layernorm_row_kernel<T>(), Grid(rows * ln.cluster), ln, tol, y, mean, rstd, x, w, b, n,
                       cols, 1e-5f);
    if (cols < 262144) continue;
    Config sm = tk::softmax_heuristic(cols, dtype_v<T>, true), rms = tk::rmsnorm_heuristic(cols, dtype_v<T>, true);
    CAPTURE(sm.str());
    REQUIRE((sm.get("CHUNKS") == 4 && sm.get("HELD") == 4 && sm.cluster == 8));
    gpu_matches_interp(tk::softmax_row_kernel<T>(), Grid(rows * sm.cluster), sm, tol, y, x, int32_t(rows), n, cols,
                       cols);
    std::vector<T> so(x.size());
    gpu_matches_interp(tk::rmsnorm_row_kernel<T>(), Grid(rows * rms.cluster), Config(rms).set("RESIDUAL", 0), tol, y,
                       so, x, x, w, n, cols, 1e-6f);
  }
}

// Random rows (x, a residual r, weight w, bias b) and the norms' cluster programs run on
// them by the GPU and by the interpreter.
template <class T>
struct NormRows {
  int64_t rows, cols;
  difftest::Tolerance tol;
  std::vector<T> x, r, w, b, y, so;
  std::vector<float> mean, rstd;
  NormRows(int64_t rows_, int64_t cols_, int seed, difftest::Tolerance t)
      : rows(rows_), cols(cols_), tol(t), x(ref::random_vec<T>(rows * cols, seed + cols, -5, 5)),
        r(ref::random_vec<T>(rows * cols, seed + 1 + cols, -2, 2)), w(ref::random_vec<T>(cols, seed + 2, 0.5, 1.5)),
        b(ref::random_vec<T>(cols, seed + 3)), y(x.size()), so(x.size()), mean(rows), rstd(rows) {}
  void rmsnorm(const Config& c, bool residual) {
    CAPTURE(c.str());
    gpu_matches_interp(tk::rmsnorm_row_kernel<T>(), Grid(rows * c.cluster), Config(c).set("RESIDUAL", residual), tol,
                       y, so, x, residual ? r : x, w, int32_t(cols), cols, 1e-6f);
  }
  void layernorm(const Config& c) {
    Config k = Config(c).set("SHIFTED", 1).set("STATS", 1);
    CAPTURE(k.str());
    gpu_matches_interp(tk::layernorm_row_kernel<T>(), Grid(rows * k.cluster), k, tol, y, mean, rstd, x, w, b,
                       int32_t(cols), cols, 1e-5f);
  }
};

TEST_CASE("gpu: the f32 norms' wide cluster programs (held chunks)") {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  using T = float;
  // LayerNorm's held chunks of 4096 at 8192 and 16384 columns per program; RMSNorm's held
  // chunks of 8192 and the residual RMSNorm's RELOAD at 16384; widths that are not a power
  // of two (262140: still whole 16-byte runs, held; 262143: rows off 16 bytes, the chunks
  // in registers).
  for (int64_t cols : {int64_t(65536), int64_t(262144), int64_t(262140), int64_t(262143)}) {
    CAPTURE(cols);
    const bool held = cols % 4 == 0;
    NormRows<T> t(3, cols, 27, difftest::Tolerance{1e-4, 1e-4});
    Config ln = tk::layernorm_heuristic(cols, dtype_v<T>, true);
    REQUIRE(ln.get("BLOCK") == 4096);
    REQUIRE(ln.has("HELD") == held);
    t.layernorm(ln);
    if (cols < 262140) continue;
    Config rms = tk::rmsnorm_heuristic(cols, dtype_v<T>, true);
    REQUIRE(rms.get("CHUNKS") == 2);
    REQUIRE(rms.has("HELD") == held);
    t.rmsnorm(rms, false);
    Config add = tk::add_rmsnorm_heuristic(cols, dtype_v<T>, true, false);
    REQUIRE(add.get("RELOAD") == 1);
    t.rmsnorm(add, true);
  }
}

TEST_CASE("gpu: 16-bit rows on clusters of 8 programs instead of 16 (eight_program_cluster)") {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  using T = bfloat16;
  for (int64_t cols : {int64_t(100000), int64_t(131072), int64_t(151936)}) {
    CAPTURE(cols);
    NormRows<T> t(3, cols, 17, difftest::Tolerance{1e-3, 1.6e-2});
    Config rms = tk::rmsnorm_heuristic(cols, dtype_v<T>, true);
    Config ln = tk::layernorm_heuristic(cols, dtype_v<T>, true);
    REQUIRE(rms.cluster == 8);
    REQUIRE(rms.get("RELOAD") == 1);
    REQUIRE(ln.cluster == (cols == 131072 ? 4 : 8));  // 4 x 64 KB held at 131072 (held_64k_programs)
    t.rmsnorm(rms, false);
    t.rmsnorm(tk::add_rmsnorm_heuristic(cols, dtype_v<T>, true, false), true);
    t.layernorm(ln);
    Config sm = tk::softmax_heuristic(cols, dtype_v<T>, true);
    CAPTURE(sm.str());
    REQUIRE(sm.cluster == (cols == 131072 ? 4 : 16));  // 4 x 8192 held at 131072 (hold_64k_per_program)
    gpu_matches_interp(tk::softmax_row_kernel<T>(), Grid(3 * sm.cluster), sm, t.tol, t.y, t.x, int32_t(3),
                       int32_t(cols), cols, cols);
  }
}

// 16-bit rows of 8-byte runs a little past 262144 columns: the power of two's 16 programs
// with a tail each (row_tail_config), for RMSNorm and LayerNorm.
TEST_CASE("gpu: the norms' tails past 16 programs of 16384 (rows of 8-byte runs)") {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  for (int64_t cols : {int64_t(262148), int64_t(262660)}) {
    CAPTURE(cols);
    NormRows<bfloat16> t(2, cols, 37, difftest::Tolerance{1e-3, 1.6e-2});
    Config rms = tk::rmsnorm_heuristic(cols, DType::bf16, true), ln = tk::layernorm_heuristic(cols, DType::bf16, true);
    REQUIRE((rms.has("TAIL") && ln.has("TAIL")));
    t.rmsnorm(rms, false);
    t.layernorm(ln);
  }
}
