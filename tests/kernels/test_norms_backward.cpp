// RMSNorm / LayerNorm backward on the interpreter against double-precision references
// written from the chain rule (and, once each, against central finite differences of
// the forward), at odd widths, with persistent programs that do not divide the rows.
#include <doctest/doctest.h>

#include <functional>
#include <span>
#include <string>

#include <tilefuse/kernels/kernels.hpp>
#include <tilefuse/kernels/tuned.hpp>

#include "reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using ref::rtol;
using ref::error_of;

namespace {

template <class T>
constexpr double atol() {
  return std::is_same_v<T, float> ? 1e-4 : 1e-2;
}

struct Grads {
  std::vector<double> dx, dw, db;
};

// RMSNorm: y_j = x_j r w_j with r = (sum x^2 / n + eps)^-1/2, so dr/dx_i = -r^3 x_i / n and
// dx_i = dy_i w_i r + sum_j dy_j w_j x_j dr/dx_i. dres (may be empty) is added to dx.
Grads rmsnorm_grads(const std::vector<float>& dy, const std::vector<float>& x, const std::vector<float>& w,
                    const std::vector<float>& dres, int64_t rows, int64_t n, double eps) {
  Grads g{std::vector<double>(rows * n), std::vector<double>(n, 0.0), {}};
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = &x[r * n];
    const float* dyr = &dy[r * n];
    double ss = 0, s_gx = 0;
    for (int64_t j = 0; j < n; ++j) ss += double(xr[j]) * xr[j];
    double rs = 1.0 / std::sqrt(ss / n + eps);
    for (int64_t j = 0; j < n; ++j) s_gx += double(dyr[j]) * w[j] * xr[j];
    for (int64_t i = 0; i < n; ++i) {
      double dr_dxi = -rs * rs * rs * xr[i] / n;
      g.dx[r * n + i] = double(dyr[i]) * w[i] * rs + s_gx * dr_dxi + (dres.empty() ? 0.0 : dres[r * n + i]);
      g.dw[i] += double(dyr[i]) * xr[i] * rs;
    }
  }
  return g;
}

// LayerNorm: xhat_j = (x_j - mu) r, dmu/dx_i = 1/n, dr/dx_i = -r^3 (x_i - mu) / n, so
// dx_i = sum_j g_j [(delta_ij - 1/n) r + (x_j - mu) dr/dx_i] with g = dy w.
Grads layernorm_grads(const std::vector<float>& dy, const std::vector<float>& x, const std::vector<float>& w,
                      int64_t rows, int64_t n, double eps) {
  Grads g{std::vector<double>(rows * n), std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = &x[r * n];
    const float* dyr = &dy[r * n];
    double mu = 0, var = 0, sum_g = 0, sum_g_xc = 0;
    for (int64_t j = 0; j < n; ++j) mu += xr[j];
    mu /= n;
    for (int64_t j = 0; j < n; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    double rs = 1.0 / std::sqrt(var / n + eps);
    for (int64_t j = 0; j < n; ++j) {
      sum_g += double(dyr[j]) * w[j];
      sum_g_xc += double(dyr[j]) * w[j] * (xr[j] - mu);
    }
    for (int64_t i = 0; i < n; ++i) {
      double dr_dxi = -rs * rs * rs * (xr[i] - mu) / n;
      g.dx[r * n + i] = (double(dyr[i]) * w[i] - sum_g / n) * rs + sum_g_xc * dr_dxi;
      g.dw[i] += double(dyr[i]) * (xr[i] - mu) * rs;
      g.db[i] += dyr[i];
    }
  }
  return g;
}

// Central differences of L = sum(dy * forward(x)) with respect to each element of `v`.
std::vector<double> finite_diff(std::vector<float>& v, const std::function<double()>& loss) {
  std::vector<double> d(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    float keep = v[i];
    float h = 1e-3f * std::max(1.0f, std::fabs(keep));
    v[i] = keep + h;
    double up = loss();
    v[i] = keep - h;
    double down = loss();
    v[i] = keep;
    d[i] = (up - down) / (double(keep + h) - double(keep - h));
  }
  return d;
}

double dot(const std::vector<float>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Configs: the heuristic, and 3 persistent programs (rows not a multiple of 3) either
// with the whole row in one tile or looping over 64-column chunks, one row per step or
// several (row counts not a multiple of ROWS: the last step is partly masked).
std::vector<tk::ConfigOverride> configs(int64_t cols) {
  std::vector<tk::ConfigOverride> c = {std::nullopt};
  c.push_back(Config{{"BLOCK", tk::next_pow2(cols)}, {"PROGRAMS_PER_SM", 3}, num_warps(2)});
  c.push_back(Config{{"BLOCK", tk::next_pow2(cols)}, {"ROWS", 4}, {"PROGRAMS_PER_SM", 2}, num_warps(2)});
  c.push_back(Config{{"BLOCK", tk::next_pow2(cols)}, {"ROWS", 2}, {"PREFETCH", 1}, {"PROGRAMS_PER_SM", 2}, num_warps(2)});
  if (cols > 64) {
    c.push_back(Config{{"BLOCK", 64}, {"PROGRAMS_PER_SM", 3}, num_warps(2)});
    c.push_back(Config{{"BLOCK", 64}, {"ROWS", 2}, {"PROGRAMS_PER_SM", 2}, num_warps(2)});
  }
  return c;
}

// The residual RMSNorm backward under `cfg` (the heuristic when empty) against the
// double-precision reference: dh and dW.
template <class T>
void check_add_rmsnorm_backward(const std::vector<T>& h, const std::vector<T>& dy, const std::vector<T>& dres,
                                const std::vector<T>& w, int64_t rows, int64_t cols, tk::ConfigOverride cfg) {
  std::vector<T> dh(h.size()), dw(cols);
  tk::add_rmsnorm_backward(dh, dw, dy, dres, h, w, rows, cols, 1e-6f, cfg);
  Grads want = rmsnorm_grads(ref::to_float(dy), ref::to_float(h), ref::to_float(w), ref::to_float(dres), rows, cols,
                             1e-6);
  CHECK(ref::max_rel_err(dh, want.dx, atol<T>(), rtol<T>()) <= 1.0);
  CHECK(ref::max_rel_err(dw, want.dw, atol<T>(), rtol<T>()) <= 1.0);
}

// LayerNorm backward under `cfg`, its statistics recomputed and the forward's (saved by
// tk::layernorm with a random bias), against the double-precision reference.
template <class T>
void check_layernorm_backward(const std::vector<T>& x, const std::vector<T>& dy, const std::vector<T>& w, int64_t rows,
                              int64_t cols, const Config& cfg, uint32_t bias_seed) {
  std::vector<T> dx(x.size()), dw(cols), db(cols), y(x.size());
  std::vector<float> mean(rows), rstd(rows);
  tk::layernorm(y, mean, rstd, x, w, ref::random_vec<T>(cols, bias_seed), rows, cols);
  Grads want = layernorm_grads(ref::to_float(dy), ref::to_float(x), ref::to_float(w), rows, cols, 1e-5);
  for (bool saved : {false, true}) {
    CAPTURE(saved);
    if (saved) tk::layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, rows, cols, cfg);
    else tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols, 1e-5f, cfg);
    CHECK(ref::max_rel_err(dx, want.dx, atol<T>(), 2 * rtol<T>()) <= 1.0);
    CHECK(ref::max_rel_err(dw, want.dw, atol<T>(), 2 * rtol<T>()) <= 1.0);
    CHECK(ref::max_rel_err(db, want.db, atol<T>(), rtol<T>()) <= 1.0);
  }
}

}  // namespace

TEST_CASE("the chain-rule references agree with finite differences of the forward") {
  int64_t rows = 3, n = 7;
  auto x = ref::random_vec<float>(rows * n, 1, -2.0f, 2.0f);
  auto dy = ref::random_vec<float>(rows * n, 2);
  auto w = ref::random_vec<float>(n, 3, 0.5f, 1.5f);
  auto b = ref::random_vec<float>(n, 4);
  std::vector<double> y;
  auto rms_loss = [&] { ref::rmsnorm(y, x, w, rows, n, 1e-6); return dot(dy, y); };
  Grads rg = rmsnorm_grads(dy, x, w, {}, rows, n, 1e-6);
  CHECK(ref::max_rel_err(ref::to_float(rg.dx), finite_diff(x, rms_loss), 1e-4, 1e-3) <= 1.0);
  CHECK(ref::max_rel_err(ref::to_float(rg.dw), finite_diff(w, rms_loss), 1e-4, 1e-3) <= 1.0);
  auto ln_loss = [&] { ref::layernorm(y, x, w, b, rows, n, 1e-5); return dot(dy, y); };
  Grads lg = layernorm_grads(dy, x, w, rows, n, 1e-5);
  CHECK(ref::max_rel_err(ref::to_float(lg.dx), finite_diff(x, ln_loss), 1e-4, 1e-3) <= 1.0);
  CHECK(ref::max_rel_err(ref::to_float(lg.dw), finite_diff(w, ln_loss), 1e-4, 1e-3) <= 1.0);
  CHECK(ref::max_rel_err(ref::to_float(lg.db), finite_diff(b, ln_loss), 1e-4, 1e-3) <= 1.0);
}

TEST_CASE_TEMPLATE("rmsnorm backward matches the reference", T, float, half, bfloat16) {
  struct Shape { int64_t rows, cols; };
  for (Shape s : {Shape{5, 1}, Shape{7, 7}, Shape{5, 300}, Shape{2, 4099}}) {
    for (auto& cfg : configs(s.cols)) {
      if (cfg && s.cols == 4099 && cfg->get("BLOCK") == 64) continue;  // slow on the interpreter, nothing new
      CAPTURE(s.cols);
      CAPTURE((cfg ? cfg->str() : std::string("heuristic")));
      auto x = ref::random_vec<T>(s.rows * s.cols, 10 + s.cols);
      auto dy = ref::random_vec<T>(s.rows * s.cols, 11 + s.cols);
      auto w = ref::random_vec<T>(s.cols, 12, 0.5f, 1.5f);
      std::vector<T> dx(x.size()), dw(s.cols);
      tk::rmsnorm_backward(dx, dw, dy, x, w, s.rows, s.cols, 1e-6f, cfg);
      Grads want = rmsnorm_grads(ref::to_float(dy), ref::to_float(x), ref::to_float(w), {}, s.rows, s.cols, 1e-6);
      CHECK(ref::max_rel_err(dx, want.dx, atol<T>(), rtol<T>()) <= 1.0);
      CHECK(ref::max_rel_err(dw, want.dw, atol<T>(), rtol<T>()) <= 1.0);
    }
  }
}

TEST_CASE_TEMPLATE("add_rmsnorm backward adds the residual stream's gradient", T, float, bfloat16) {
  int64_t rows = 7, cols = 300;
  for (auto& cfg : configs(cols)) {
    CAPTURE((cfg ? cfg->str() : std::string("heuristic")));
    auto h = ref::random_vec<T>(rows * cols, 20);
    auto dy = ref::random_vec<T>(rows * cols, 21);
    auto dres = ref::random_vec<T>(rows * cols, 22);
    auto w = ref::random_vec<T>(cols, 23, 0.5f, 1.5f);
    check_add_rmsnorm_backward(h, dy, dres, w, rows, cols, cfg);
  }
}

TEST_CASE_TEMPLATE("layernorm backward matches the reference", T, float, half, bfloat16) {
  struct Shape { int64_t rows, cols; };
  for (Shape s : {Shape{5, 1}, Shape{7, 7}, Shape{5, 300}, Shape{2, 4099}}) {
    for (auto& cfg : configs(s.cols)) {
      if (cfg && s.cols == 4099 && cfg->get("BLOCK") == 64) continue;
      CAPTURE(s.cols);
      CAPTURE((cfg ? cfg->str() : std::string("heuristic")));
      auto x = ref::random_vec<T>(s.rows * s.cols, 30 + s.cols, 2.0f, 6.0f);  // non-zero mean
      auto dy = ref::random_vec<T>(s.rows * s.cols, 31 + s.cols);
      auto w = ref::random_vec<T>(s.cols, 32, 0.5f, 1.5f);
      std::vector<T> dx(x.size()), dw(s.cols), db(s.cols);
      tk::layernorm_backward(dx, dw, db, dy, x, w, s.rows, s.cols, 1e-5f, cfg);
      Grads want = layernorm_grads(ref::to_float(dy), ref::to_float(x), ref::to_float(w), s.rows, s.cols, 1e-5);
      CHECK(ref::max_rel_err(dx, want.dx, atol<T>(), 2 * rtol<T>()) <= 1.0);
      CHECK(ref::max_rel_err(dw, want.dw, atol<T>(), 2 * rtol<T>()) <= 1.0);
      CHECK(ref::max_rel_err(db, want.db, atol<T>(), rtol<T>()) <= 1.0);
    }
  }
}

// A training step: the forward saves each row's mean and rstd, the backward uses them.
// The statistics are checked against double sums; the gradients against the chain rule,
// for every backward config (one tile, several rows per step, prefetching, looped) and
// for persistent clusters.
TEST_CASE_TEMPLATE("layernorm backward from the forward's saved mean and rstd", T, float, half, bfloat16) {
  struct Shape { int64_t rows, cols; };
  for (Shape s : {Shape{5, 1}, Shape{7, 7}, Shape{5, 300}, Shape{2, 4099}}) {
    CAPTURE(s.cols);
    auto x = ref::random_vec<T>(s.rows * s.cols, 80 + s.cols, 2.0f, 6.0f);  // non-zero mean
    auto dy = ref::random_vec<T>(s.rows * s.cols, 81 + s.cols);
    auto w = ref::random_vec<T>(s.cols, 82, 0.5f, 1.5f), b = ref::random_vec<T>(s.cols, 83);
    std::vector<T> y(x.size());
    std::vector<float> mean(s.rows, -1.0f), rstd(s.rows, -1.0f);
    tk::layernorm(y, mean, rstd, x, w, b, s.rows, s.cols);
    std::vector<double> want_y;
    ref::layernorm(want_y, ref::to_float(x), ref::to_float(w), ref::to_float(b), s.rows, s.cols, 1e-5);
    CHECK(ref::max_rel_err(y, want_y, atol<T>(), rtol<T>()) <= 1.0);
    ref::RowStats want_stats = ref::layernorm_stats(ref::to_float(x), s.rows, s.cols, 1e-5);
    for (int64_t r = 0; r < s.rows; ++r) {
      CHECK(mean[r] == doctest::Approx(want_stats.mean[r]).epsilon(1e-5));
      CHECK(rstd[r] == doctest::Approx(want_stats.rstd[r]).epsilon(1e-4));
    }
    Grads want = layernorm_grads(ref::to_float(dy), ref::to_float(x), ref::to_float(w), s.rows, s.cols, 1e-5);
    std::vector<tk::ConfigOverride> cfgs = configs(s.cols);
    cfgs.push_back(Config{{"BLOCK", tk::next_pow2(s.cols)}, {"PROGRAMS_PER_SM", 2}, num_warps(2), num_stages(2)});
    // Persistent clusters of 4 programs (3 clusters looping over the rows; the last
    // program partly or wholly masked).
    cfgs.push_back(Config{{"BLOCK", tk::next_pow2((s.cols + 3) / 4)}, {"PROGRAMS_PER_SM", 12}, num_warps(2), cluster(4)});
    // The same with the statistics read where used instead of a row ahead.
    cfgs.push_back(Config{{"BLOCK", tk::next_pow2((s.cols + 3) / 4)}, {"PROGRAMS_PER_SM", 12}, {"STATS_AHEAD", 0},
                          num_warps(2), cluster(4)});
    for (auto& cfg : cfgs) {
      if (cfg && s.cols == 4099 && cfg->get("BLOCK") == 64) continue;  // slow on the interpreter
      CAPTURE((cfg ? cfg->str() : std::string("heuristic")));
      std::vector<T> dx(x.size()), dw(s.cols), db(s.cols);
      tk::layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, s.rows, s.cols, cfg);
      CHECK(ref::max_rel_err(dx, want.dx, atol<T>(), 2 * rtol<T>()) <= 1.0);
      CHECK(ref::max_rel_err(dw, want.dw, atol<T>(), 2 * rtol<T>()) <= 1.0);
      CHECK(ref::max_rel_err(db, want.db, atol<T>(), rtol<T>()) <= 1.0);
    }
  }
}

TEST_CASE("layernorm's saved statistics: the looped and split-row forwards, and bad buffers") {
  int64_t rows = 3, cols = 5000;
  auto x = ref::random_vec<float>(rows * cols, 90, 1.0f, 4.0f);
  auto w = ref::random_vec<float>(cols, 91, 0.5f, 1.5f), b = ref::random_vec<float>(cols, 92);
  std::vector<double> want_y;
  ref::layernorm(want_y, x, w, b, rows, cols, 1e-5);
  std::vector<float> y0(x.size()), m0(rows), r0(rows);
  tk::layernorm(y0, m0, r0, x, w, b, rows, cols);  // the heuristic: one tile
  for (Config cfg : {Config{{"BLOCK", 1024}, num_warps(4)}, Config{{"BLOCK", 1024}, {"SPLIT", 1}, num_warps(4)}}) {
    CAPTURE(cfg.str());
    std::vector<float> y(x.size()), mean(rows), rstd(rows);
    tk::layernorm(y, mean, rstd, x, w, b, rows, cols, 1e-5f, cfg);
    CHECK(ref::max_rel_err(y, want_y, 1e-4, 1e-5) <= 1.0);
    for (int64_t r = 0; r < rows; ++r) {
      CHECK(mean[r] == doctest::Approx(m0[r]).epsilon(1e-6));
      CHECK(rstd[r] == doctest::Approx(r0[r]).epsilon(1e-5));
    }
  }
  // The plain forward ignores a config asking for statistics (it has nowhere to put them).
  std::vector<float> y(x.size());
  tk::layernorm(y, x, w, b, rows, cols, 1e-5f, Config{{"BLOCK", 1024}, {"STATS", 1}, num_warps(4)});
  CHECK(ref::max_rel_err(y, want_y, 1e-4, 1e-5) <= 1.0);
  std::vector<float> short_stats(rows - 1), dx(x.size()), dw(cols), db(cols);
  std::string m = error_of([&] { tk::layernorm(y, short_stats, r0, x, w, b, rows, cols); });
  CHECK(m.find("layernorm: mean has 2 elements, but rows = 3 needs 3") != std::string::npos);
  CHECK(m.find("Pass mean with at least rows = 3 elements") != std::string::npos);
  m = error_of([&] { tk::layernorm_backward(dx, dw, db, x, x, w, m0, short_stats, rows, cols); });
  CHECK(m.find("layernorm_backward: rstd has 2 elements, but rows = 3 needs 3") != std::string::npos);
}

TEST_CASE("norm backward: the looped program over a 4099-column row") {
  int64_t rows = 3, cols = 4099;
  Config cfg{{"BLOCK", 1024}, {"PROGRAMS_PER_SM", 2}, num_warps(4)};
  auto x = ref::random_vec<float>(rows * cols, 40, 1.0f, 4.0f);
  auto dy = ref::random_vec<float>(rows * cols, 41);
  auto w = ref::random_vec<float>(cols, 42, 0.5f, 1.5f);
  std::vector<float> dx(x.size()), dw(cols), db(cols);
  tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols, 1e-6f, cfg);
  Grads want = rmsnorm_grads(dy, x, w, {}, rows, cols, 1e-6);
  CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 1e-5) <= 1.0);
  CHECK(ref::max_rel_err(dw, want.dw, 1e-4, 1e-5) <= 1.0);
  tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols, 1e-5f, cfg);
  want = layernorm_grads(dy, x, w, rows, cols, 1e-5);
  CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 2e-5) <= 1.0);
  CHECK(ref::max_rel_err(dw, want.dw, 1e-4, 2e-5) <= 1.0);
  CHECK(ref::max_rel_err(db, want.db, 1e-4, 1e-5) <= 1.0);
}

TEST_CASE("norm backward: several rows per step, steps not dividing the rows, rows not dividing the programs") {
  // 13 rows in steps of 4 (4 steps, the last with one row) over 3 programs: one program
  // takes two steps, one of them partly masked; a looped variant over 3 chunks; and the
  // prefetching programs (the last prefetch of each program is masked off).
  int64_t rows = 13, cols = 150;
  auto x = ref::random_vec<float>(rows * cols, 60, 1.0f, 4.0f);
  auto dy = ref::random_vec<float>(rows * cols, 61);
  auto dres = ref::random_vec<float>(rows * cols, 62);
  auto w = ref::random_vec<float>(cols, 63, 0.5f, 1.5f);
  for (Config cfg : {Config{{"BLOCK", 256}, {"ROWS", 4}, {"PROGRAMS_PER_SM", 3}, num_warps(4)},
                     Config{{"BLOCK", 64}, {"ROWS", 4}, {"PROGRAMS_PER_SM", 3}, num_warps(2)},
                     Config{{"BLOCK", 256}, {"ROWS", 16}, {"PROGRAMS_PER_SM", 5}, num_warps(4)},
                     Config{{"BLOCK", 256}, {"ROWS", 2}, {"PREFETCH", 1}, {"PROGRAMS_PER_SM", 3}, num_warps(4)},
                     Config{{"BLOCK", 256}, {"ROWS", 4}, {"PREFETCH", 1}, {"PROGRAMS_PER_SM", 5}, num_warps(4)}}) {
    CAPTURE(cfg.str());
    std::vector<float> dx(x.size()), dw(cols), db(cols);
    tk::add_rmsnorm_backward(dx, dw, dy, dres, x, w, rows, cols, 1e-6f, cfg);
    Grads want = rmsnorm_grads(dy, x, w, dres, rows, cols, 1e-6);
    CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 1e-5) <= 1.0);
    CHECK(ref::max_rel_err(dw, want.dw, 1e-4, 1e-5) <= 1.0);
    tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols, 1e-5f, cfg);
    want = layernorm_grads(dy, x, w, rows, cols, 1e-5);
    CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 2e-5) <= 1.0);
    CHECK(ref::max_rel_err(dw, want.dw, 1e-4, 2e-5) <= 1.0);
    CHECK(ref::max_rel_err(db, want.db, 1e-4, 1e-5) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("norm backward with rows indexed from their aligned start (ALIGN_ROWS), every alignment remainder",
                   T, bfloat16, float) {
  // Widths of every remainder mod 8; 21 rows over 3 programs per "SM" (the interpreter's
  // count in all), rounded to a multiple of the rows' alignment period, so each program
  // takes rows of one offset and several of them; with PREFETCH, the residual, and rows
  // fewer than the period (one row per program, no rounding).
  for (int64_t cols : {int64_t(7), int64_t(300), int64_t(301), int64_t(1022), int64_t(1029)}) {
    for (int64_t rows : {int64_t(21), int64_t(5)}) {
      for (bool residual : {false, true}) {
        for (bool prefetch : {false, true}) {
          CAPTURE(cols);
          CAPTURE(rows);
          CAPTURE(residual);
          CAPTURE(prefetch);
          Config cfg{{"BLOCK", cols < 300 ? 16 : 2048}, {"ALIGN_ROWS", 1}, {"PREFETCH", prefetch},
                     {"PROGRAMS_PER_SM", 3}, num_warps(2)};
          auto x = ref::random_vec<T>(rows * cols, 70 + cols);
          auto dy = ref::random_vec<T>(rows * cols, 71 + cols);
          auto dres = ref::random_vec<T>(rows * cols, 72 + cols);
          auto w = ref::random_vec<T>(cols, 73, 0.5f, 1.5f);
          std::vector<T> dx(x.size()), dw(cols);
          if (residual) tk::add_rmsnorm_backward(dx, dw, dy, dres, x, w, rows, cols, 1e-6f, cfg);
          else tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols, 1e-6f, cfg);
          Grads want = rmsnorm_grads(ref::to_float(dy), ref::to_float(x), ref::to_float(w),
                                     residual ? ref::to_float(dres) : std::vector<float>{}, rows, cols, 1e-6);
          CHECK(ref::max_rel_err(dx, want.dx, atol<T>(), rtol<T>()) <= 1.0);
          CHECK(ref::max_rel_err(dw, want.dw, atol<T>(), rtol<T>()) <= 1.0);
          if (residual) continue;
          check_layernorm_backward(x, dy, w, rows, cols, cfg, 74);
        }
      }
    }
  }
  // Rows of one buffer at another offset (dx one element in): no common alignment, so the
  // programs index the rows plainly and the result is the same.
  int64_t rows = 9, cols = 301;
  auto x = ref::random_vec<T>(rows * cols, 80), dy = ref::random_vec<T>(rows * cols, 81);
  auto w = ref::random_vec<T>(cols, 82, 0.5f, 1.5f);
  std::vector<T> dx_store(rows * cols + 1), dw(cols);
  tk::rmsnorm_backward(std::span<T>(dx_store.data() + 1, rows * cols), dw, dy, x, w, rows, cols, 1e-6f,
                       Config{{"BLOCK", 512}, {"ALIGN_ROWS", 1}, {"PROGRAMS_PER_SM", 2}, num_warps(2)});
  Grads want = rmsnorm_grads(ref::to_float(dy), ref::to_float(x), ref::to_float(w), {}, rows, cols, 1e-6);
  CHECK(ref::max_rel_err(std::vector<T>(dx_store.begin() + 1, dx_store.end()), want.dx, atol<T>(), rtol<T>()) <= 1.0);
  CHECK(ref::max_rel_err(dw, want.dw, atol<T>(), rtol<T>()) <= 1.0);
}

TEST_CASE("norm backward: persistent cluster programs, the last program of each cluster partly masked") {
  // 13 rows of 300 columns over clusters of 4 programs x 128 columns (the last program
  // partly masked); 1, 2 or 13 clusters (PROGRAMS_PER_SM counts programs in all on the
  // interpreter), each looping over its rows.
  int64_t rows = 13, cols = 300;
  auto x = ref::random_vec<float>(rows * cols, 70, 1.0f, 4.0f);
  auto dy = ref::random_vec<float>(rows * cols, 71);
  auto dres = ref::random_vec<float>(rows * cols, 72);
  auto w = ref::random_vec<float>(cols, 73, 0.5f, 1.5f);
  // Also programs of 3 chunks of 32 columns (CHUNKS): 384 positions for 300.
  std::vector<Config> cfgs;
  for (int programs : {4, 8, 64})
    cfgs.push_back(Config{{"BLOCK", 128}, {"PROGRAMS_PER_SM", programs}, num_warps(2), num_stages(2), cluster(4)});
  cfgs.push_back(Config{{"BLOCK", 32}, {"CHUNKS", 3}, {"PROGRAMS_PER_SM", 8}, num_warps(1), num_stages(2), cluster(4)});
  for (const Config& cfg : cfgs) {
    CAPTURE(cfg.str());
    std::vector<float> dx(x.size()), dw(cols), db(cols);
    tk::add_rmsnorm_backward(dx, dw, dy, dres, x, w, rows, cols, 1e-6f, cfg);
    Grads want = rmsnorm_grads(dy, x, w, dres, rows, cols, 1e-6);
    CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 1e-5) <= 1.0);
    CHECK(ref::max_rel_err(dw, want.dw, 1e-4, 1e-5) <= 1.0);
    tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols, 1e-5f, cfg);
    want = layernorm_grads(dy, x, w, rows, cols, 1e-5);
    CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 2e-5) <= 1.0);
    CHECK(ref::max_rel_err(dw, want.dw, 1e-4, 2e-5) <= 1.0);
    CHECK(ref::max_rel_err(db, want.db, 1e-4, 1e-5) <= 1.0);
  }
  // A cluster config must cover the row.
  std::vector<float> dx(x.size()), dw(cols);
  std::string m = error_of([&] {
    tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols, 1e-6f, Config{{"BLOCK", 64}, num_warps(2), cluster(4)});
  });
  CHECK(m.find("rmsnorm_backward: the config {BLOCK=64 num_warps=2 num_stages=1 cluster=4} covers 256 columns per row "
               "((BLOCK x CHUNKS + TAIL) x cluster), but rows have 300") != std::string::npos);
}

// RMSNorm (with and without the residual) and LayerNorm (both ways) backward of random
// rows of `cols` under `cfg`, against the double-precision references; `seed` varies them.
template <class T>
void check_norm_backwards(int64_t rows, int64_t cols, const Config& cfg, uint32_t seed) {
  auto x = ref::random_vec<T>(rows * cols, seed + cols, -2.0f, 3.0f);
  auto dy = ref::random_vec<T>(rows * cols, seed + 1 + cols);
  auto dres = ref::random_vec<T>(rows * cols, seed + 2 + cols);
  auto w = ref::random_vec<T>(cols, seed + 3, 0.5f, 1.5f);
  check_add_rmsnorm_backward(x, dy, dres, w, rows, cols, cfg);
  std::vector<T> dx(x.size()), dw(cols);
  tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols, 1e-6f, cfg);
  Grads want = rmsnorm_grads(ref::to_float(dy), ref::to_float(x), ref::to_float(w), {}, rows, cols, 1e-6);
  CHECK(ref::max_rel_err(dx, want.dx, atol<T>(), rtol<T>()) <= 1.0);
  CHECK(ref::max_rel_err(dw, want.dw, atol<T>(), rtol<T>()) <= 1.0);
  check_layernorm_backward(x, dy, w, rows, cols, cfg, seed + 4);
}

TEST_CASE_TEMPLATE("norm backward: cluster programs on rows indexed from their aligned start (ALIGN_ROWS)", T, bfloat16,
                   half, float) {
  // Clusters of 4 programs x 128 positions over rows of every remainder mod 8 (each row
  // starts up to 7 positions into its aligned span; 509 + 7 still fits 512); 21 rows over
  // 1, 8 or 24 clusters asked: the host makes them a multiple of the rows' alignment
  // period (8 for odd 16-bit widths) or one row each, so every cluster's rows share one
  // offset and dW/dB (accumulated by position) land on their columns. Also the residual,
  // LayerNorm recomputing or reading its statistics, and 5 rows (fewer than the period).
  for (int64_t cols : {int64_t(509), int64_t(507), int64_t(506), int64_t(500), int64_t(385)}) {
    for (int64_t rows : {int64_t(21), int64_t(5)}) {
      for (int programs : {4, 32, 96}) {
        CAPTURE(cols);
        CAPTURE(rows);
        CAPTURE(programs);
        // 4 x 128 positions, or (32 programs asked) 4 x 3 chunks of 64 (CHUNKS: 768).
        Config cfg{{"BLOCK", 128}, {"ALIGN_ROWS", 1}, {"PROGRAMS_PER_SM", programs}, num_warps(2), num_stages(2),
                   cluster(4)};
        if (programs == 32) cfg.set("BLOCK", 64).set("CHUNKS", 3);
        CAPTURE(cfg.str());
        check_norm_backwards<T>(rows, cols, cfg, 90);
      }
    }
  }
}

TEST_CASE_TEMPLATE("norm backward: cluster programs with a tail tile (TAIL), aligned starts or not", T, bfloat16, float) {
  // Each of 4 programs holds 64 positions (one tile, or 2 chunks of 32) and then a tail of
  // 8: 288 positions for rows of 257-263 columns (up to 7 more positions from an aligned
  // start), so only the last programs' tails hold the row's end (or one program, 256 +
  // 16); 21 rows (or 5) over 1, 8 or 24 clusters asked. A mutation placing the tails anywhere else, dropping them from
  // a sum or from dW, fails these.
  for (int64_t cols : {int64_t(263), int64_t(261), int64_t(258), int64_t(260), int64_t(257)}) {
    for (int64_t rows : {int64_t(21), int64_t(5)}) {
      for (int programs : {4, 32, 96}) {
        for (int align : {0, 1, 2}) {
          Config cfg{{"BLOCK", 64}, {"TAIL", 8}, {"ALIGN_ROWS", align != 0}, {"PROGRAMS_PER_SM", programs},
                     num_warps(1), num_stages(2), cluster(4)};
          if (programs == 32) cfg.set("BLOCK", 32).set("CHUNKS", 2);
          // 2: programs of one row each (clusters of one) holding 256 positions and a tail of 16.
          if (align == 2) cfg = Config{{"BLOCK", 256}, {"TAIL", 16}, {"ALIGN_ROWS", 1}, {"PROGRAMS_PER_SM", programs},
                                       num_warps(2), num_stages(2)};
          CAPTURE(cols);
          CAPTURE(rows);
          CAPTURE(cfg.str());
          check_norm_backwards<T>(rows, cols, cfg, 190);
        }
      }
    }
  }
  // A TAIL that is not a power of two is a user error naming it.
  std::vector<float> x(4 * 100, 1.0f), dx(x.size()), dw(100);
  std::string m = error_of([&] {
    tk::rmsnorm_backward(dx, dw, x, x, dw, 4, 100, 1e-6f,
                         Config{{"BLOCK", 32}, {"TAIL", 6}, num_warps(1), cluster(4)});
  });
  CHECK(m.find("TAIL = 6 in a row program: it must be 0 or a power of two") != std::string::npos);
  // A tail config that does not cover the row is a user error, on a cluster of one too
  // (such configs never loop); TAIL=0 there is no tail: the plain programs, looping.
  for (int cl : {1, 2}) {
    m = error_of([&] {
      tk::rmsnorm_backward(dx, dw, x, x, dw, 4, 100, 1e-6f, Config{{"BLOCK", 32}, {"TAIL", 8}, num_warps(1), cluster(cl)});
    });
    CHECK(m.find("covers " + std::to_string(40 * cl) + " columns per row ((BLOCK x CHUNKS + TAIL) x cluster), but rows "
                 "have 100") != std::string::npos);
  }
  auto xs = ref::random_vec<float>(4 * 100, 7, 1.0f, 2.0f), dys = ref::random_vec<float>(4 * 100, 8);
  auto ws = ref::random_vec<float>(100, 9, 0.5f, 1.5f);
  tk::rmsnorm_backward(dx, dw, dys, xs, ws, 4, 100, 1e-6f, Config{{"BLOCK", 32}, {"TAIL", 0}, num_warps(1)});
  Grads want = rmsnorm_grads(dys, xs, ws, {}, 4, 100, 1e-6);
  CHECK(ref::max_rel_err(dx, want.dx, 1e-5, 1e-5) <= 1.0);
  CHECK(ref::max_rel_err(dw, want.dw, 1e-5, 1e-5) <= 1.0);
}

TEST_CASE("norm backward: aligned clusters, the cluster count and where rows are indexed from their aligned start") {
  // A multiple of the period, rounded down; up to it where fewer fit; one row each needs none.
  CHECK(tk::aligned_cluster_count(66, 4096, 8) == 64);
  CHECK(tk::aligned_cluster_count(3, 4096, 8) == 8);
  CHECK(tk::aligned_cluster_count(3, 5, 8) == 5);
  CHECK(tk::aligned_cluster_count(66, 40, 8) == 66);
  CHECK(tk::aligned_cluster_count(66, 4096, 1) == 66);
  // By default cluster programs on odd 16-bit widths index rows from their aligned start
  // where that measured faster: clusters of up to 4 programs, any for the residual RMSNorm;
  // the config is then the aligned span's (16383 columns span 16390 positions: 2 x (8192 +
  // a tail of 8), not the width's 2 x 8192), and one-row programs with a tail (4097: 4096 +
  // 16 on a cluster of one). Rows of 2 mod 4, f32, one-tile programs and wider clusters
  // keep the width's own config and starts.
  using K = tk::NormBackwardKind;
  struct Case { int64_t cols; DType dtype; K kind; bool aligned; };
  for (Case k : {Case{16387, DType::bf16, K::rms, true}, Case{16383, DType::bf16, K::rms, true},
                 Case{16387, DType::f16, K::layer_saved, true}, Case{20001, DType::bf16, K::layer, true},
                 Case{32771, DType::bf16, K::rms, true}, Case{32771, DType::bf16, K::rms_residual, true},
                 Case{65537, DType::bf16, K::rms, false},
                 Case{65537, DType::bf16, K::layer_saved, false}, Case{16386, DType::bf16, K::rms, false},
                 Case{16387, DType::f32, K::rms, false}, Case{4097, DType::bf16, K::rms, true},
                 Case{4097, DType::bf16, K::layer_saved, true}}) {
    CAPTURE(k.cols);
    CAPTURE(int(k.kind));
    Config c = tk::norm_backward_config(k.cols, k.dtype, k.kind, true, true);
    int64_t span = k.aligned ? tk::aligned_row_span(k.cols, k.dtype) : k.cols;
    CHECK(c == tk::norm_backward_heuristic(span, k.dtype, k.kind, true, k.aligned));
    tk::set_norm_backward_align(c, true, k.cols, k.dtype, k.kind);
    CHECK(c.has("ALIGN_ROWS") == k.aligned);
    if (k.aligned) CHECK((c.get("ALIGN_PERIOD") == 8 && tk::row_cover(c) >= span));
    // Rows whose buffers do not share their offsets keep their own starts.
    Config plain = tk::norm_backward_config(k.cols, k.dtype, k.kind, true, false);
    tk::set_norm_backward_align(plain, false, k.cols, k.dtype, k.kind);
    CHECK(!plain.has("ALIGN_ROWS"));
  }
  // ALIGN_ROWS=1 asked for is kept where the config covers the aligned span, dropped where not.
  Config c = tk::norm_backward_heuristic(16386, DType::bf16, K::rms, true).set("ALIGN_ROWS", 1);  // 2 x (8192 + 8)
  tk::set_norm_backward_align(c, true, 16386, DType::bf16, K::rms);
  CHECK((c.cluster == 2 && c.get("TAIL") == 8 && c.get("ALIGN_ROWS") == 1 && c.get("ALIGN_PERIOD") == 4));
  c = tk::norm_backward_heuristic(16383, DType::bf16, K::rms, true).set("ALIGN_ROWS", 1);  // 2 x 8192 < 16390
  tk::set_norm_backward_align(c, true, 16383, DType::bf16, K::rms);
  CHECK(!c.has("ALIGN_ROWS"));
  // ALIGN_ROWS=0 asked for is honoured.
  c = tk::norm_backward_heuristic(16394, DType::bf16, K::rms, true).set("ALIGN_ROWS", 0);
  tk::set_norm_backward_align(c, true, 16387, DType::bf16, K::rms);
  CHECK(!c.has("ALIGN_ROWS"));
}

TEST_CASE("norm backward heuristic: cluster programs hold chunks covering their share of a row") {
  using K = tk::NormBackwardKind;
  // 20001 bf16 columns on 4 programs: 3 x 2048 each (one 16-byte run per thread of 8 warps
  // per chunk), not one 8192 tile with 39% of its positions past the row.
  Config c = tk::norm_backward_heuristic(20001, DType::bf16, K::rms, true);
  CHECK((c.cluster == 4 && c.num_warps == 8 && c.get("BLOCK") == 2048 && c.get("CHUNKS") == 3 && !c.has("TAIL")));
  CHECK(tk::row_cover(c) >= 20001);
  // f32: 5 x 1024 (runs of 4 elements).
  c = tk::norm_backward_heuristic(20001, DType::f32, K::rms, true);
  CHECK((c.cluster == 4 && c.get("BLOCK") == 1024 && c.get("CHUNKS") == 5));
  // Powers of two keep their one tile.
  c = tk::norm_backward_heuristic(16384, DType::bf16, K::rms, true);
  CHECK((c.cluster == 2 && c.get("BLOCK") == 8192 && !c.has("CHUNKS")));
  for (int64_t cols : {int64_t(20001), int64_t(32771), int64_t(65537), int64_t(100000)})
    for (K kind : {K::rms, K::rms_residual, K::layer, K::layer_saved})
      for (DType dt : {DType::bf16, DType::f32}) {
        CAPTURE(cols);
        c = tk::norm_backward_heuristic(cols, dt, kind, true);
        CHECK(tk::row_cover(c) >= cols);
        CHECK(c.get("BLOCK") >= 32 * c.num_warps * (16 / byte_size(dt)));
        CHECK((c.has("CHUNKS") ? c.get("CHUNKS") : 1) <= 8);
      }
}

TEST_CASE("norm backward heuristic: rows a little past a power of two take its programs and a tail tile each") {
  using K = tk::NormBackwardKind;
  // 16387 bf16 columns (16394 positions from their aligned starts): 16384's 2 x 8192, now
  // on 8 warps (16 spill with the tail), and a tail of one 16-byte run each.
  for (int64_t positions : {int64_t(16385), int64_t(16387), int64_t(16394)}) {
    CAPTURE(positions);
    Config c = tk::norm_backward_heuristic(positions, DType::bf16, K::rms, true);
    CHECK((c.cluster == 2 && c.get("BLOCK") == 8192 && c.get("TAIL") == 8 && c.num_warps == 8 &&
           c.get("PROGRAMS_PER_SM") == 1 && !c.has("CHUNKS")));
    CHECK(tk::row_cover(c) >= positions);
  }
  // Clusters of 4 and 8 keep their warps; f32's run is 4 elements; the tail is a power of
  // two large enough for the program's share of the overhang (32800 - 32768 over 4: 8).
  Config c = tk::norm_backward_heuristic(32778, DType::bf16, K::rms, true);
  CHECK((c.cluster == 4 && c.num_warps == 8 && c.get("TAIL") == 8));
  c = tk::norm_backward_heuristic(32800, DType::bf16, K::rms_residual, true);
  CHECK((c.cluster == 4 && c.get("TAIL") == 8 && tk::row_cover(c) >= 32800));
  c = tk::norm_backward_heuristic(32900, DType::bf16, K::rms, true);
  CHECK((c.cluster == 4 && c.get("TAIL") == 64 && tk::row_cover(c) >= 32900));
  c = tk::norm_backward_heuristic(65537, DType::f32, K::layer_saved, true);
  CHECK((c.cluster == 8 && c.get("TAIL") == 4));
  // Past one 16-byte run per warp of tail, chunks again (20001: a tail of 512 would be needed).
  c = tk::norm_backward_heuristic(20001, DType::bf16, K::layer_saved, true);
  CHECK((!c.has("TAIL") && c.has("CHUNKS")));
  // Powers of two, rows of under 2048 positions and looped rows take none.
  for (int64_t cols : {int64_t(16384), int64_t(1999), int64_t(300000)})
    CHECK(!tk::norm_backward_heuristic(cols, DType::bf16, K::rms, true).has("TAIL"));
  // Rows of one program (2048-8192 positions): the power of two and a tail on clusters of
  // one, about 16 values per thread: f32 any kind; 16-bit from aligned starts any kind,
  // from own starts the plain RMSNorm only.
  c = tk::norm_backward_heuristic(4099, DType::f32, K::layer_saved, true);
  CHECK((c.cluster == 1 && c.get("BLOCK") == 4096 && c.get("TAIL") == 4 && c.num_warps == 8 &&
         c.get("PROGRAMS_PER_SM") == 2 && tk::norm_backward_cluster_programs(c)));
  c = tk::norm_backward_heuristic(8195, DType::f32, K::rms, true);
  CHECK((c.get("BLOCK") == 8192 && c.num_warps == 16 && c.get("PROGRAMS_PER_SM") == 1));
  c = tk::norm_backward_heuristic(2051, DType::bf16, K::rms, true);
  CHECK((c.get("BLOCK") == 2048 && c.get("TAIL") == 8 && c.num_warps == 4 && c.get("PROGRAMS_PER_SM") == 4));
  for (K kind : {K::rms_residual, K::layer, K::layer_saved}) {
    CHECK(!tk::norm_backward_heuristic(4099, DType::bf16, kind, true).has("TAIL"));
    CHECK(tk::norm_backward_heuristic(4106, DType::bf16, kind, true, true).get("TAIL") == 16);
  }
  // Through the host's choice: odd 16-bit widths whose buffers share their offsets run from
  // their aligned starts with a tail; 2 mod 4 only the plain RMSNorm takes one.
  c = tk::norm_backward_config(4099, DType::bf16, K::layer, true, true);
  tk::set_norm_backward_align(c, true, 4099, DType::bf16, K::layer);
  CHECK((c.get("TAIL") == 16 && c.get("ALIGN_ROWS") == 1 && c.get("ALIGN_PERIOD") == 8));
  CHECK(!tk::norm_backward_config(4098, DType::bf16, K::layer_saved, true, true).has("TAIL"));
  CHECK(tk::norm_backward_config(4098, DType::bf16, K::rms, true, true).get("TAIL") == 8);
  // Without clusters (the GPU before sm_90) the one-tile programs as before.
  CHECK(!tk::norm_backward_heuristic(4099, DType::f32, K::rms, false).has("TAIL"));
  // Without clusters (sm_80) none either.
  CHECK(!tk::norm_backward_heuristic(16387, DType::bf16, K::rms, false).has("TAIL"));
}

TEST_CASE("norm backward tune space: chunked cluster programs where a power-of-two tile leaves positions idle") {
  tuning::Space s = tk::norm_backward_space();
  std::vector<std::string> names{"n_rows", "n_cols"};
  auto kept = [&](int64_t cols) {
    tuning::Key key{4096, cols};
    tuning::KeyView kv{names, key};
    std::vector<Config> out;
    for (const Config& c : s.configs())
      if (c.cluster > 1 && s.check(c, kv).empty()) out.push_back(c);
    return out;
  };
  // 16387 columns: chunked configs survive (4 x 3 x 2048 among them), none covers less
  // than the row or holds more chunks than it needs.
  auto odd = kept(16387);
  bool has_heuristic_spread = false;
  for (const Config& c : odd) {
    CAPTURE(c.str());
    CHECK(tk::row_cover(c) >= 16387);
    int64_t chunks = c.has("CHUNKS") ? c.get("CHUNKS") : 1;
    if (chunks > 1) CHECK((chunks - 1) * c.get("BLOCK") * c.cluster < 16387);
    has_heuristic_spread |= c.cluster == 4 && chunks == 3 && c.get("BLOCK") == 2048 && c.num_warps == 8;
  }
  CHECK(has_heuristic_spread);
  // ... and tails: 2 x (8192 + 8) on 8 warps (the heuristic's) among them.
  bool has_tail_spread = false;
  for (const Config& c : odd)
    has_tail_spread |= c.cluster == 2 && c.has("TAIL") && c.get("TAIL") == 8 && c.get("BLOCK") == 8192 &&
                       c.num_warps == 8;
  CHECK(has_tail_spread);
  // 16384: a power of two needs no chunks, nor a tail.
  for (const Config& c : kept(16384)) CHECK((!c.has("CHUNKS") && !c.has("TAIL")));
}

TEST_CASE("norm backward heuristic: one tile up to 8K columns, several rows per step for short rows") {
  Config c = tk::norm_backward_heuristic(1024, DType::bf16);
  CHECK(c.get("BLOCK") == 1024);
  CHECK(c.get("ROWS") == 2);
  // The next step's rows: staged through shared memory, except for 16-bit LayerNorm.
  CHECK(c.get("PREFETCH") == 0);
  CHECK(c.num_stages == 2);
  c = tk::norm_backward_heuristic(1024, DType::bf16, tk::NormBackwardKind::rms_residual);
  CHECK((c.get("PREFETCH") == 0 && c.num_stages == 2));
  c = tk::norm_backward_heuristic(5000, DType::f32, tk::NormBackwardKind::layer);
  CHECK((c.get("PREFETCH") == 0 && c.num_stages == 2));
  c = tk::norm_backward_heuristic(5000, DType::bf16, tk::NormBackwardKind::layer);
  CHECK((c.get("PREFETCH") == 1 && c.num_stages == 1));
  CHECK(c.get("BLOCK") == 8192);
  CHECK(!tk::row_uses_loop(c, 5000));
  c = tk::norm_backward_heuristic(65536, DType::bf16);
  CHECK(tk::row_uses_loop(c, 65536));
  CHECK(c.get("ROWS") == 4);
  CHECK(c.cluster == 1);
  // With clusters: persistent clusters up to 16 tiles, each row read once.
  c = tk::norm_backward_heuristic(16384, DType::bf16, tk::NormBackwardKind::rms, true);
  CHECK((c.cluster == 2 && c.get("BLOCK") == 8192 && c.num_warps == 16 && c.num_stages == 2));
  c = tk::norm_backward_heuristic(65536, DType::bf16, tk::NormBackwardKind::rms_residual, true);
  CHECK((c.cluster == 8 && c.get("BLOCK") == 8192 && c.get("PROGRAMS_PER_SM") == 2));
  c = tk::norm_backward_heuristic(16384, DType::bf16, tk::NormBackwardKind::layer, true);
  CHECK((c.cluster == 8 && c.get("BLOCK") == 2048 && c.num_warps == 4));
  c = tk::norm_backward_heuristic(32768, DType::bf16, tk::NormBackwardKind::layer, true);  // 4+ tiles: 8192 each
  CHECK((c.cluster == 4 && c.get("BLOCK") == 8192 && c.num_warps == 8 && c.get("PROGRAMS_PER_SM") == 2));
  c = tk::norm_backward_heuristic(32768, DType::f32, tk::NormBackwardKind::layer, true);
  CHECK((c.cluster == 8 && c.get("BLOCK") == 4096));
  // LayerNorm from saved statistics: staged like RMSNorm; RMSNorm's cluster spread,
  // reading the statistics where used for 16-bit rows of 2 tiles; f32 rows of 2 tiles
  // keep LayerNorm's spread (no 16-warp programs).
  c = tk::norm_backward_heuristic(4096, DType::bf16, tk::NormBackwardKind::layer_saved);
  CHECK((c.get("PREFETCH") == 0 && c.num_stages == 2));
  // A third stage for 16-bit rows filling their tile partly (RMSNorm, saved LayerNorm).
  CHECK(tk::norm_backward_heuristic(5000, DType::bf16, tk::NormBackwardKind::layer_saved).num_stages == 3);
  CHECK(tk::norm_backward_heuristic(3000, DType::f16, tk::NormBackwardKind::rms).num_stages == 3);
  CHECK(tk::norm_backward_heuristic(5000, DType::bf16, tk::NormBackwardKind::rms_residual).num_stages == 2);
  CHECK(tk::norm_backward_heuristic(5000, DType::f32, tk::NormBackwardKind::rms).num_stages == 2);
  CHECK(tk::norm_backward_heuristic(4096, DType::bf16, tk::NormBackwardKind::rms).num_stages == 2);
  // 16-bit rows off 16 bytes: the next rows in registers where that measured faster
  // (RMSNorm at odd widths, saved LayerNorm at any, the residual RMSNorm at 2 mod 4).
  auto in_registers = [](const Config& k) { return k.get("PREFETCH") == 1 && k.num_stages == 1; };
  CHECK(in_registers(tk::norm_backward_heuristic(4097, DType::bf16, tk::NormBackwardKind::rms)));
  CHECK(in_registers(tk::norm_backward_heuristic(2049, DType::f16, tk::NormBackwardKind::rms)));
  CHECK_FALSE(in_registers(tk::norm_backward_heuristic(4100, DType::bf16, tk::NormBackwardKind::rms)));
  CHECK(in_registers(tk::norm_backward_heuristic(4097, DType::bf16, tk::NormBackwardKind::layer_saved)));
  CHECK(in_registers(tk::norm_backward_heuristic(4100, DType::bf16, tk::NormBackwardKind::layer_saved)));
  CHECK(in_registers(tk::norm_backward_heuristic(4098, DType::bf16, tk::NormBackwardKind::rms_residual)));
  CHECK_FALSE(in_registers(tk::norm_backward_heuristic(4097, DType::bf16, tk::NormBackwardKind::rms_residual)));
  CHECK_FALSE(in_registers(tk::norm_backward_heuristic(4097, DType::f32, tk::NormBackwardKind::rms)));
  c = tk::norm_backward_heuristic(16384, DType::bf16, tk::NormBackwardKind::layer_saved, true);
  CHECK((c.cluster == 2 && c.get("BLOCK") == 8192 && c.num_warps == 16 && c.get("STATS_AHEAD") == 0));
  c = tk::norm_backward_heuristic(16384, DType::f32, tk::NormBackwardKind::layer_saved, true);
  CHECK((c.cluster == 8 && c.get("BLOCK") == 2048 && c.num_warps == 4 && !c.has("STATS_AHEAD")));
  c = tk::norm_backward_heuristic(30011, DType::bf16, tk::NormBackwardKind::layer_saved, true);
  CHECK((c.cluster == 4 && c.get("BLOCK") == 8192 && c.num_warps == 8));
  c = tk::norm_backward_heuristic(300000, DType::bf16, tk::NormBackwardKind::rms, true);
  CHECK((c.cluster == 1 && tk::row_uses_loop(c, 300000)));
  CHECK(tk::norm_backward_heuristic(8192, DType::bf16, tk::NormBackwardKind::rms, true).cluster == 1);
  CHECK(tk::norm_partials_config(1).get("PARTS") >= 1);
  CHECK(tk::norm_partials_config(1000).get("PARTS") <= 256);
}

TEST_CASE("norm backward: buffers smaller than the shape and empty shapes are user errors") {
  int64_t rows = 2, cols = 7;
  std::vector<float> x(rows * cols, 1.5f), dy(rows * cols, 0.5f), dx(rows * cols), w(cols, 1.0f), dw(cols), db(cols);
  std::vector<float> short_rows(rows * cols - 1, 1.0f), short_cols(cols - 1, 1.0f);
  std::string m = error_of([&] { tk::rmsnorm_backward(short_rows, dw, dy, x, w, rows, cols); });
  CHECK(m.find("rmsnorm_backward: dx has 13 elements, but rows x cols = 2 x 7 needs 14") != std::string::npos);
  CHECK(m.find("Pass dx with at least rows x cols = 2 x 7 elements") != std::string::npos);
  m = error_of([&] { tk::rmsnorm_backward(dx, dw, short_rows, x, w, rows, cols); });
  CHECK(m.find("rmsnorm_backward: dy has 13 elements, but rows x cols = 2 x 7 needs 14") != std::string::npos);
  m = error_of([&] { tk::rmsnorm_backward(dx, short_cols, dy, x, w, rows, cols); });
  CHECK(m.find("rmsnorm_backward: dw has 6 elements, but cols = 7 needs 7") != std::string::npos);
  CHECK(m.find("Pass dw with at least cols = 7 elements") != std::string::npos);
  m = error_of([&] { tk::add_rmsnorm_backward(dx, dw, dy, short_rows, x, w, rows, cols); });
  CHECK(m.find("add_rmsnorm_backward: dres_out has 13 elements, but rows x cols = 2 x 7 needs 14") !=
        std::string::npos);
  m = error_of([&] { tk::layernorm_backward(dx, dw, db, dy, short_rows, w, rows, cols); });
  CHECK(m.find("layernorm_backward: x has 13 elements, but rows x cols = 2 x 7 needs 14") != std::string::npos);
  m = error_of([&] { tk::layernorm_backward(dx, dw, db, dy, x, short_cols, rows, cols); });
  CHECK(m.find("layernorm_backward: weight has 6 elements, but cols = 7 needs 7") != std::string::npos);
  m = error_of([&] { tk::layernorm_backward(dx, dw, short_cols, dy, x, w, rows, cols); });
  CHECK(m.find("layernorm_backward: db has 6 elements, but cols = 7 needs 7") != std::string::npos);
  m = error_of([&] { tk::layernorm_backward(dx, dw, db, dy, x, w, 0, cols); });
  CHECK(m.find("layernorm_backward: rows and cols must be positive, got 0 x 7") != std::string::npos);
  CHECK(m.find("Pass the shape [rows, cols] of x") != std::string::npos);
}

TEST_CASE("tuned norm backward entry points run the heuristic on host buffers") {
  int64_t rows = 5, cols = 37;
  auto x = ref::random_vec<float>(rows * cols, 50, 1.0f, 3.0f);
  auto dy = ref::random_vec<float>(rows * cols, 51);
  auto dres = ref::random_vec<float>(rows * cols, 52);
  auto w = ref::random_vec<float>(cols, 53, 0.5f, 1.5f);
  std::vector<float> dx(x.size()), dw(cols), db(cols);
  tk::tuned_add_rmsnorm_backward(dx, dw, dy, dres, x, w, rows, cols);
  Grads want = rmsnorm_grads(dy, x, w, dres, rows, cols, 1e-6);
  CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 1e-5) <= 1.0);
  CHECK(ref::max_rel_err(dw, want.dw, 1e-4, 1e-5) <= 1.0);
  tk::tuned_rmsnorm_backward(dx, dw, dy, x, w, rows, cols);
  want = rmsnorm_grads(dy, x, w, {}, rows, cols, 1e-6);
  CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 1e-5) <= 1.0);
  tk::tuned_layernorm_backward(dx, dw, db, dy, x, w, rows, cols);
  want = layernorm_grads(dy, x, w, rows, cols, 1e-5);
  CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 2e-5) <= 1.0);
  CHECK(ref::max_rel_err(db, want.db, 1e-4, 1e-5) <= 1.0);
  // The training pair: the tuned forward saving the statistics, the tuned backward reading them.
  auto b = ref::random_vec<float>(cols, 54);
  std::vector<float> y(x.size()), mean(rows), rstd(rows);
  std::vector<double> want_y;
  tk::tuned_layernorm(y, mean, rstd, x, w, b, rows, cols);
  ref::layernorm(want_y, x, w, b, rows, cols, 1e-5);
  CHECK(ref::max_rel_err(y, want_y, 1e-4, 1e-5) <= 1.0);
  std::fill(dx.begin(), dx.end(), 0.0f);
  tk::tuned_layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, rows, cols);
  CHECK(ref::max_rel_err(dx, want.dx, 1e-4, 2e-5) <= 1.0);
  CHECK(ref::max_rel_err(dw, want.dw, 1e-4, 2e-5) <= 1.0);
  CHECK(ref::max_rel_err(db, want.db, 1e-4, 1e-5) <= 1.0);
}
