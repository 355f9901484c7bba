#pragma once
// Plain C++ references for the gallery kernels (double accumulation), and helpers
// for random inputs and tolerant comparison.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <string>

#include <tilefuse/ir/errors.hpp>
#include <tilefuse/ir/half.hpp>

namespace ref {

// Relative tolerance of a result computed in T from f32 math: f32 rounding, or the
// output's rounding to f16/bf16.
template <class T>
constexpr double rtol() {
  if constexpr (std::is_same_v<T, float>) return 1e-5;
  else if constexpr (std::is_same_v<T, tilefuse::half>) return 2e-3;
  else return 1e-2;
}

// The text of the UserError f() throws, or "<no error>".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const tilefuse::UserError& e) {
    return e.what();
  }
  return "<no error>";
}

template <class T>
std::vector<T> random_vec(size_t n, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = T(d(g));
  return v;
}

template <class T>
float f(T x) { return static_cast<float>(x); }

inline void softmax(std::vector<double>& out, const std::vector<float>& x, int64_t rows, int64_t cols) {
  out.assign(rows * cols, 0);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(x[r * cols + c]));
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(double(x[r * cols + c]) - m);
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = std::exp(double(x[r * cols + c]) - m) / s;
  }
}

// Softmax outputs of random logits in [-4, 4), rounded to T: the y a softmax backward receives.
template <class T>
std::vector<T> softmax_of_random(int64_t rows, int64_t cols, uint32_t seed) {
  auto x = random_vec<float>(rows * cols, seed, -4, 4);
  std::vector<double> y;
  softmax(y, x, rows, cols);
  std::vector<T> out(y.size());
  for (size_t i = 0; i < y.size(); ++i) out[i] = T(float(y[i]));
  return out;
}

inline void rmsnorm(std::vector<double>& out, const std::vector<float>& x, const std::vector<float>& w, int64_t rows,
                    int64_t cols, double eps) {
  out.assign(rows * cols, 0);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) ss += double(x[r * cols + c]) * x[r * cols + c];
    double rstd = 1.0 / std::sqrt(ss / cols + eps);
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = x[r * cols + c] * rstd * w[c];
  }
}

// Each row's mean and rstd = 1 / sqrt(var + eps), in double (what LayerNorm's forward saves).
struct RowStats {
  std::vector<double> mean, rstd;
};
inline RowStats layernorm_stats(const std::vector<float>& x, int64_t rows, int64_t cols, double eps) {
  RowStats s{std::vector<double>(rows), std::vector<double>(rows)};
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    s.mean[r] = mean;
    s.rstd[r] = 1.0 / std::sqrt(var / cols + eps);
  }
  return s;
}

inline void layernorm(std::vector<double>& out, const std::vector<float>& x, const std::vector<float>& w,
                      const std::vector<float>& b, int64_t rows, int64_t cols, double eps) {
  out.assign(rows * cols, 0);
  RowStats s = layernorm_stats(x, rows, cols, eps);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = (x[r * cols + c] - s.mean[r]) * s.rstd[r] * w[c] + b[c];
}

// q, k, v: [bh, n, d]; out: [bh, n, d]; lse: [bh, n].
inline void attention(std::vector<double>& out, std::vector<double>& lse, const std::vector<float>& q,
                      const std::vector<float>& k, const std::vector<float>& v, int64_t bh, int64_t n, int64_t d,
                      bool causal, double scale) {
  out.assign(bh * n * d, 0);
  lse.assign(bh * n, 0);
  std::vector<double> s(n);
  for (int64_t h = 0; h < bh; ++h)
    for (int64_t i = 0; i < n; ++i) {
      double m = -std::numeric_limits<double>::infinity();
      int64_t hi = causal ? i + 1 : n;
      for (int64_t j = 0; j < hi; ++j) {
        double acc = 0;
        for (int64_t t = 0; t < d; ++t) acc += double(q[(h * n + i) * d + t]) * k[(h * n + j) * d + t];
        s[j] = acc * scale;
        m = std::max(m, s[j]);
      }
      double l = 0;
      for (int64_t j = 0; j < hi; ++j) l += std::exp(s[j] - m);
      for (int64_t t = 0; t < d; ++t) {
        double acc = 0;
        for (int64_t j = 0; j < hi; ++j) acc += std::exp(s[j] - m) * v[(h * n + j) * d + t];
        out[(h * n + i) * d + t] = acc / l;
      }
      lse[h * n + i] = m + std::log(l);
    }
}

// c = act(alpha * a . b + bias) + residual, in double; b is [K, N] or, with b_trans, [N, K].
// act: 0 none, 1 ReLU, 2 tanh-GELU, 3 SiLU. Empty bias/residual: left out.
inline std::vector<double> matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t M, int64_t N,
                                  int64_t K, bool b_trans, double alpha, int act, const std::vector<float>& bias,
                                  const std::vector<float>& residual) {
  std::vector<double> c(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(a[i * K + k]) * (b_trans ? b[j * K + k] : b[k * N + j]);
      s *= alpha;
      if (!bias.empty()) s += bias[j];
      if (act == 1) s = std::max(s, 0.0);
      if (act == 2) s = 0.5 * s * (1 + std::tanh(0.7978845608028654 * (s + 0.044715 * s * s * s)));
      if (act == 3) s = s / (1 + std::exp(-s));
      if (!residual.empty()) s += residual[i * N + j];
      c[i * N + j] = s;
    }
  return c;
}

template <class T>
std::vector<float> to_float(const std::vector<T>& v) {
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = static_cast<float>(v[i]);
  return r;
}

// Largest |got - want| / (atol + rtol*|want|); <= 1 passes. NaN never passes.
template <class T>
double max_rel_err(const std::vector<T>& got, const std::vector<double>& want, double atol, double rtol) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = static_cast<float>(got[i]);
    if (std::isnan(g) != std::isnan(want[i])) return std::numeric_limits<double>::infinity();
    if (std::isinf(want[i]) && g == want[i]) continue;
    worst = std::max(worst, std::fabs(g - want[i]) / (atol + rtol * std::fabs(want[i])));
  }
  return worst;
}

}  // namespace ref
