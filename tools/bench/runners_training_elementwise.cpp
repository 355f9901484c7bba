// tilefuse-bench runners of the training elementwise kernels: swiglu (shape MxN, or
// MxN+packed for one [M, 2N] input of [gate | up] rows), swiglu_bwd (da, db from dy, a,
// b) and softmax_bwd (dx from dy and y). GB/s counts the minimal bytes: each input read
// once and each output written once (swiglu 3, swiglu_bwd 5, softmax_bwd 3 tensors of
// M x N elements). Sampled rows are checked against the interpreter running the same
// host function and config.
#include <cmath>
#include <cstdio>

#include "bench_util.hpp"
#include "runners.hpp"
#include "tilefuse/kernels/kernels.hpp"

namespace tilefuse::bench {
namespace {

struct Problem {
  int64_t rows = 0, cols = 0;
  bool packed = false;
};
Problem parse(const std::string& kernel, const std::string& s) {
  long long r = 0, c = 0;
  char tail[16] = {};
  int got = std::sscanf(s.c_str(), "%lldx%lld%15s", &r, &c, tail);
  bool packed = got == 3 && std::string(tail) == "+packed";
  if (got < 2 || (got == 3 && !(packed && kernel != "softmax_bwd")) || r < 1 || c < 1)
    user_error(kernel + " shape '" + s + "' is not ROWSxCOLS" + (kernel == "softmax_bwd" ? "" : "[+packed]"),
               SourceLoc{}, "Write shapes like 16384x4096");
  return {r, c, packed};
}

// xorshift values in [lo, hi): fast for 10^8 elements, never all zeros.
template <class T>
std::vector<T> random_values(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<T> v(n);
  uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (auto& x : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x = T(lo + (hi - lo) * float(s >> 40) * (1.0f / 16777216.0f));
  }
  return v;
}

// Rows 0, rows/2 and rows-1 of a matrix with `width` elements per row.
template <class T>
std::vector<T> sample(const std::vector<T>& m, int64_t rows, int64_t width) {
  std::vector<T> out;
  for (int64_t r : {int64_t(0), rows / 2, rows - 1})
    out.insert(out.end(), m.begin() + r * width, m.begin() + (r + 1) * width);
  return out;
}

// Worst |got - want| / (atol + rtol |want|), atol relative to the largest |want|.
template <class T>
double worst_error(const std::vector<T>& got, const std::vector<T>& want) {
  double rtol = std::is_same_v<T, float> ? 1e-4 : std::is_same_v<T, half> ? 4e-3 : 2e-2, scale = 0, worst = 0;
  for (const T& w : want) scale = std::max(scale, std::fabs(double(float(w))));
  for (size_t i = 0; i < want.size(); ++i) {
    double g = float(got[i]), w = float(want[i]);
    if (std::isnan(g) || std::isnan(w)) return 1e30;
    worst = std::max(worst, std::fabs(g - w) / (1e-4 * scale + 1e-30 + rtol * std::fabs(w)));
  }
  return worst;
}

Config with_sets(Config c, const std::vector<std::pair<std::string, int64_t>>& sets) {
  for (auto& [k, v] : sets) c.set(k, v);
  return c;
}

template <class T>
Result run(const std::string& kernel, const std::string& shape, const std::vector<std::pair<std::string, int64_t>>& sets,
           int reps) {
  namespace tk = kernels;
  Problem p = parse(kernel, shape);
  const int64_t M = p.rows, N = p.cols, S = 3;  // S: sampled rows
  size_t n = size_t(M) * N;
  Result res;
  double tensors = 3;
  // Inputs: x0 (a, or ab when packed; y for softmax_bwd) and x1 (b or dy).
  auto x0 = kernel == "softmax_bwd" ? random_values<T>(n, 1, 0.0f, 2.0f / N)
                                     : random_values<T>(p.packed ? 2 * n : n, 1, -6.0f, 6.0f);
  auto x1 = random_values<T>(n, 2, -4.0f, 4.0f);
  auto d0 = to_device(x0), d1 = to_device(x1);
  DeviceBuffer<T> out(n);
  double err = 0;
  if (kernel == "swiglu") {
    Config cfg = with_sets(tk::swiglu_heuristic(N, dtype_v<T>), sets);
    res.config = cfg.str();
    auto launch = [&](auto& y, const auto& a, const auto& b, int64_t rows) {
      if (p.packed) tk::swiglu_packed(y, a, rows, N, cfg);
      else tk::swiglu(y, a, b, rows, N, cfg);
    };
    res.ms = time_ms([&] { launch(out, d0, d1, M); }, reps);
    std::vector<T> want(S * N);
    launch(want, sample(x0, M, p.packed ? 2 * N : N), sample(x1, M, N), S);
    err = worst_error(sample(out.to_host(), M, N), want);
  } else if (kernel == "swiglu_bwd") {  // dy = x1; a/b = x0 (packed) or x0 and x2
    tensors = 5;
    Config cfg = with_sets(tk::swiglu_heuristic(N, dtype_v<T>, true), sets);
    res.config = cfg.str();
    if (p.packed) {
      DeviceBuffer<T> dab(2 * n);
      res.ms = time_ms([&] { tk::swiglu_backward_packed(dab, d1, d0, M, N, cfg); }, reps);
      std::vector<T> want(S * 2 * N);
      tk::swiglu_backward_packed(want, sample(x1, M, N), sample(x0, M, 2 * N), S, N, cfg);
      err = worst_error(sample(dab.to_host(), M, 2 * N), want);
    } else {
      auto x2 = random_values<T>(n, 3, -4.0f, 4.0f);
      auto d2 = to_device(x2);
      DeviceBuffer<T> db(n);
      res.ms = time_ms([&] { tk::swiglu_backward(out, db, d1, d0, d2, M, N, cfg); }, reps);
      std::vector<T> want_a(S * N), want_b(S * N);
      tk::swiglu_backward(want_a, want_b, sample(x1, M, N), sample(x0, M, N), sample(x2, M, N), S, N, cfg);
      err = std::max(worst_error(sample(out.to_host(), M, N), want_a), worst_error(sample(db.to_host(), M, N), want_b));
    }
  } else {  // softmax_bwd: y = x0, dy = x1
    Config cfg = with_sets(
        tk::softmax_backward_config(N, dtype_v<T>, gpu_has_clusters(), tk::contiguous_rows_misaligned(N, dtype_v<T>)),
        sets);
    res.config = cfg.str();
    res.ms = time_ms([&] { tk::softmax_backward(out, d1, d0, M, N, cfg); }, reps);
    std::vector<T> want(S * N);
    tk::softmax_backward(want, sample(x1, M, N), sample(x0, M, N), S, N, cfg);
    err = worst_error(sample(out.to_host(), M, N), want);
  }
  res.gbs = tensors * double(n) * sizeof(T) / (res.ms * 1e-3) / 1e9;
  res.max_err = err;
  res.check_ok = err <= 1.0;
  return res;
}

}  // namespace

bool is_training_elementwise(const std::string& kernel) {
  return kernel == "swiglu" || kernel == "swiglu_bwd" || kernel == "softmax_bwd";
}

Result run_training_elementwise(const std::string& kernel, DType dtype, const std::string& shape,
                                const std::vector<std::pair<std::string, int64_t>>& sets, int reps) {
  return with_float_type(dtype, [&](auto t) { return run<typename decltype(t)::type>(kernel, shape, sets, reps); });
}

}  // namespace tilefuse::bench
