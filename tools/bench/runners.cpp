#include "runners.hpp"

#include <cmath>
#include <cstdlib>
#include <random>

#include "bench_util.hpp"
#include "tilefuse/kernels/kernels.hpp"

namespace tilefuse::bench {
namespace {

// Uniform in [lo, hi) from a xorshift generator: fast enough for 10^8 elements.
template <class T>
std::vector<T> random_host(size_t n, uint32_t seed, float lo, float hi) {
  std::vector<T> v(n);
  uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (auto& x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = T(lo + (hi - lo) * float(s >> 40) * (1.0f / 16777216.0f));
  }
  return v;
}

// Worst |a - b| / (atol + rtol |b|) over the sample.
template <class T>
double rel_err(const std::vector<T>& got, const std::vector<T>& want, double atol, double rtol) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = float(got[i]), w = float(want[i]);
    if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w) ? worst : 1e30;
    if (std::isinf(w) && g == w) continue;
    worst = std::max(worst, std::fabs(g - w) / (atol + rtol * std::fabs(w)));
  }
  return worst;
}

template <class T>
double rtol_for() {
  return std::is_same_v<T, float> ? 1e-4 : std::is_same_v<T, half> ? 4e-3 : 2e-2;
}

struct RowShape {
  int64_t rows, cols;
};
RowShape parse_rows(const std::string& s) {
  auto x = s.find('x');
  if (x == std::string::npos) user_error("shape '" + s + "' is not ROWSxCOLS", SourceLoc{});
  return {std::stoll(s.substr(0, x)), std::stoll(s.substr(x + 1))};
}

Config apply(Config c, const std::vector<std::pair<std::string, int64_t>>& sets) {
  for (auto& [k, v] : sets) c.set(k, v);
  return c;
}

// The rows [0, rows/2, rows-1] of a row-major matrix.
std::vector<int64_t> sample_rows(int64_t rows) {
  std::vector<int64_t> r{0};
  if (rows > 2) r.push_back(rows / 2);
  if (rows > 1) r.push_back(rows - 1);
  return r;
}
template <class T>
std::vector<T> gather_rows(const std::vector<T>& m, int64_t cols, const std::vector<int64_t>& rows) {
  std::vector<T> out;
  for (auto r : rows) out.insert(out.end(), m.begin() + r * cols, m.begin() + (r + 1) * cols);
  return out;
}

template <class T>
Result run_rowwise(const std::string& kernel, RowShape s, const std::vector<std::pair<std::string, int64_t>>& sets,
                   int reps) {
  namespace tk = kernels;
  size_t n = size_t(s.rows) * s.cols;
  auto x = random_host<T>(n, 1, -4.0f, 4.0f);
  auto r = random_host<T>(n, 2, -4.0f, 4.0f);
  auto w = random_host<T>(s.cols, 3, 0.5f, 1.5f);
  auto b = random_host<T>(s.cols, 4, -1.0f, 1.0f);
  auto dx = to_device(x), dr = to_device(r), dw = to_device(w), db = to_device(b);
  DeviceBuffer<T> dy(n), ds(n);
  DeviceBuffer<float> stats_mean(kernel == "layernorm_stats" ? s.rows : 1), stats_rstd(stats_mean.size());
  Config cfg;
  size_t es = sizeof(T);
  // The norms' programs cover the aligned span where they read shifted weight copies.
  bool copies = tk::contiguous_rows_misaligned(s.cols, dtype_v<T>) && tk::weight_copies_pay(s.rows, s.cols, dtype_v<T>, 0);
  double bytes = 0;
  std::function<void(std::vector<T>&, std::vector<T>&, const std::vector<T>&, const std::vector<T>&, int64_t)> host;
  std::function<void()> gpu;
  if (kernel == "softmax") {
    cfg = apply(tk::with_split_rows<DeviceBuffer<T>>(tk::softmax_rows_config(s.cols, dtype_v<T>, gpu_has_clusters(), tk::contiguous_rows_misaligned(s.cols, dtype_v<T>)), s.rows, s.cols, dtype_v<T>), sets);
    gpu = [&] { tk::softmax(dy, dx, s.rows, s.cols, -1, -1, cfg); };
    host = [&](auto& y, auto&, auto& xs, auto&, int64_t rows) { tk::softmax(y, xs, rows, s.cols, -1, -1, cfg); };
    bytes = 2.0 * n * es;
  } else if (kernel == "rmsnorm") {
    cfg = apply(tk::with_split_rows<DeviceBuffer<T>>(tk::rmsnorm_heuristic(s.cols, dtype_v<T>, gpu_has_clusters(), copies), s.rows, s.cols, dtype_v<T>), sets);
    gpu = [&] { tk::rmsnorm(dy, dx, dw, s.rows, s.cols, 1e-6f, cfg); };
    host = [&](auto& y, auto&, auto& xs, auto&, int64_t rows) { tk::rmsnorm(y, xs, w, rows, s.cols, 1e-6f, cfg); };
    bytes = 2.0 * n * es + s.cols * es;
  } else if (kernel == "add_rmsnorm") {
    cfg = apply(tk::with_split_rows<DeviceBuffer<T>>(tk::add_rmsnorm_heuristic(s.cols, dtype_v<T>, gpu_has_clusters(), tk::contiguous_rows_misaligned(s.cols, dtype_v<T>)), s.rows, s.cols, dtype_v<T>), sets);
    gpu = [&] { tk::add_rmsnorm(dy, ds, dx, dr, dw, s.rows, s.cols, 1e-6f, cfg); };
    host = [&](auto& y, auto& so, auto& xs, auto& rs, int64_t rows) {
      tk::add_rmsnorm(y, so, xs, rs, w, rows, s.cols, 1e-6f, cfg);
    };
    bytes = 4.0 * n * es + s.cols * es;
  } else if (kernel == "layernorm") {
    cfg = apply(tk::layernorm_rows_heuristic<DeviceBuffer<T>>(s.rows, s.cols, dtype_v<T>, gpu_has_clusters(), copies), sets);
    gpu = [&] { tk::layernorm(dy, dx, dw, db, s.rows, s.cols, 1e-5f, cfg); };
    host = [&](auto& y, auto&, auto& xs, auto&, int64_t rows) { tk::layernorm(y, xs, w, b, rows, s.cols, 1e-5f, cfg); };
    bytes = 2.0 * n * es + 2.0 * s.cols * es;
  } else if (kernel == "layernorm_stats") {  // the training forward: also writes each row's mean and rstd
    cfg = apply(tk::layernorm_rows_heuristic<DeviceBuffer<T>>(s.rows, s.cols, dtype_v<T>, gpu_has_clusters(), copies), sets);
    gpu = [&] { tk::layernorm(dy, stats_mean, stats_rstd, dx, dw, db, s.rows, s.cols, 1e-5f, cfg); };
    host = [&](auto& y, auto&, auto& xs, auto&, int64_t rows) {
      std::vector<float> mean(rows), rstd(rows);
      tk::layernorm(y, mean, rstd, xs, w, b, rows, s.cols, 1e-5f, cfg);
    };
    bytes = 2.0 * n * es + 2.0 * s.cols * es + 8.0 * s.rows;
  } else if (kernel == "bias_relu_log") {
    cfg = apply(tk::elementwise_heuristic(), sets);
    gpu = [&] { tk::bias_relu_log(dy, dx, db, s.rows, s.cols, cfg); };
    host = [&](auto& y, auto&, auto& xs, auto&, int64_t rows) { tk::bias_relu_log(y, xs, b, rows, s.cols, cfg); };
    bytes = 2.0 * n * es + s.cols * es;
  } else {
    user_error("unknown benchmark kernel '" + kernel + "'", SourceLoc{}, "Known: " + runner_names());
  }
  Result res;
  res.config = cfg.str();
  res.ms = time_ms(gpu, reps);
  res.gbs = bytes / (res.ms * 1e-3) / 1e9;
  // Check sampled rows against the interpreter running the same program.
  auto rows = sample_rows(s.rows);
  auto xs = gather_rows(x, s.cols, rows), rs = gather_rows(r, s.cols, rows);
  std::vector<T> want(xs.size()), want_sum(xs.size());
  host(want, want_sum, xs, rs, static_cast<int64_t>(rows.size()));
  auto got = gather_rows(dy.to_host(), s.cols, rows);
  double atol = kernel == "bias_relu_log" ? 1e-3 : 1e-5;
  res.max_err = rel_err(got, want, atol, rtol_for<T>());
  if (kernel == "add_rmsnorm") res.max_err = std::max(res.max_err, rel_err(gather_rows(ds.to_host(), s.cols, rows), want_sum, 0, 1e-6));
  res.check_ok = res.max_err <= 1.0;
  return res;
}

template <class T>
Result run_attention(const std::string& shape, const std::vector<std::pair<std::string, int64_t>>& sets, int reps) {
  int64_t bsz, heads, seq, dim, group = 1;
  int used = 0;
  if (std::sscanf(shape.c_str(), "%ldx%ldx%ldx%ld%n", &bsz, &heads, &seq, &dim, &used) < 4)
    user_error("attention shape '" + shape + "' is not BxHxNxD[c][gG]", SourceLoc{});
  std::string suffix = shape.substr(static_cast<size_t>(used));
  bool causal = !suffix.empty() && suffix[0] == 'c';
  if (size_t at = suffix.find('g'); at != std::string::npos) {
    char* end = nullptr;
    group = std::strtol(suffix.c_str() + at + 1, &end, 10);
    if (group < 1 || *end != '\0' || heads % group != 0)
      user_error("attention shape '" + shape + "': gG takes G >= 1 query heads per key/value head, dividing the " +
                     std::to_string(heads) + " heads",
                 SourceLoc{});
  }
  int64_t bh = bsz * heads;
  size_t n = size_t(bh) * seq * dim, n_kv = n / static_cast<size_t>(group);
  auto q = random_host<T>(n, 11, -1, 1), k = random_host<T>(n_kv, 12, -1, 1), v = random_host<T>(n_kv, 13, -1, 1);
  auto dq = to_device(q), dk = to_device(k), dv = to_device(v);
  DeviceBuffer<T> dout(n);
  DeviceBuffer<float> dlse(size_t(bh) * seq);
  Config cfg = apply(kernels::attention_heuristic(seq, dim, causal, gpu_has_warpgroup_mma()), sets);
  Result res;
  res.config = cfg.str();
  res.ms = time_ms(
      [&] { kernels::attention_fwd_grouped(dout, dlse, dq, dk, dv, bh, group, seq, dim, causal, 0.0f, cfg); }, reps);
  double flops = 4.0 * bh * seq * seq * dim * (causal ? 0.5 : 1.0);
  res.tflops = flops / (res.ms * 1e-3) / 1e12;
  res.gbs = (2.0 * n + 2.0 * n_kv) * sizeof(T) / (res.ms * 1e-3) / 1e9;
  // Check three query rows of the last head against a double-precision reference.
  auto out = dout.to_host();
  double scale = 1.0 / std::sqrt(double(dim)), worst = 0;
  int64_t h = bh - 1, h_kv = h / group;
  for (int64_t i : sample_rows(seq)) {
    int64_t hi = causal ? i + 1 : seq;
    std::vector<double> s(hi);
    double m = -1e300;
    for (int64_t j = 0; j < hi; ++j) {
      double acc = 0;
      for (int64_t t = 0; t < dim; ++t) acc += double(float(q[(h * seq + i) * dim + t])) * float(k[(h_kv * seq + j) * dim + t]);
      s[j] = acc * scale;
      m = std::max(m, s[j]);
    }
    double l = 0;
    for (auto& x : s) l += std::exp(x - m);
    for (int64_t t = 0; t < dim; ++t) {
      double acc = 0;
      for (int64_t j = 0; j < hi; ++j) acc += std::exp(s[j] - m) * float(v[(h_kv * seq + j) * dim + t]);
      double want = acc / l, got = float(out[(h * seq + i) * dim + t]);
      worst = std::max(worst, std::fabs(got - want) / (1e-2 + 1e-2 * std::fabs(want)));
    }
  }
  res.max_err = worst;
  res.check_ok = worst <= 1.0;
  return res;
}

// Worst |out - epilogue(a . b)| / (2e-2 + 1e-2 |want|) over sampled rows and columns, in
// double; b is [K, N] or, with b_trans, [N, K]; epilogue(acc, column).
template <class TA, class TB, class TO, class Epilogue>
double sampled_gemm_error(const std::vector<TA>& a, const std::vector<TB>& b, const std::vector<TO>& out, int64_t M,
                          int64_t N, int64_t K, bool b_trans, Epilogue epilogue) {
  double worst = 0;
  for (int64_t i : sample_rows(M))
    for (int64_t j : sample_rows(N)) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += double(float(a[i * K + k])) * float(b_trans ? b[j * K + k] : b[k * N + j]);
      acc = epilogue(acc, j);
      worst = std::max(worst, std::fabs(double(float(out[i * N + j])) - acc) / (2e-2 + 1e-2 * std::fabs(acc)));
    }
  return worst;
}

// matmul: MxNxK, optionally "+gelu" (bias + tanh-GELU epilogue); bf16/f16 in and out.
template <class T>
Result run_matmul(const std::string& shape, const std::vector<std::pair<std::string, int64_t>>& sets, int reps) {
  int64_t M, N, K;
  if (std::sscanf(shape.c_str(), "%ldx%ldx%ld", &M, &N, &K) != 3)
    user_error("matmul shape '" + shape + "' is not MxNxK[+gelu]", SourceLoc{});
  bool gelu = shape.find("+gelu") != std::string::npos;
  auto a = random_host<T>(size_t(M) * K, 21, -1, 1), b = random_host<T>(size_t(K) * N, 22, -1, 1);
  auto bias = random_host<T>(size_t(N), 23, -1, 1);
  auto da = to_device(a), db = to_device(b), dbias = to_device(bias);
  DeviceBuffer<T> dc(size_t(M) * N);
  Config cfg = apply(kernels::matmul_heuristic(M, N, K, gpu_has_warpgroup_mma(), kernels::gpu_sm_count()), sets);
  kernels::MatmulOptions o;
  if (gelu) o.activation = kernels::Activation::gelu_tanh;
  // --set B_TRANS=1: b holds [N, K] (the launch takes it from the options, not the config).
  o.b_trans = cfg.has("B_TRANS") && cfg.get("B_TRANS") != 0;
  cfg.meta.erase("B_TRANS");
  auto run = [&] {
    if (gelu) kernels::matmul(dc, da, db, M, N, K, o, dbias, nullptr, cfg);
    else kernels::matmul(dc, da, db, M, N, K, o, nullptr, nullptr, cfg);
  };
  Result res;
  res.ms = time_ms(run, reps);
  res.config = cfg.str() + (o.b_trans ? " B_TRANS=1" : "");
  res.tflops = 2.0 * M * N * K / (res.ms * 1e-3) / 1e12;
  res.gbs = double(M * K + K * N + M * N) * sizeof(T) / (res.ms * 1e-3) / 1e9;
  res.max_err = sampled_gemm_error(a, b, dc.to_host(), M, N, K, o.b_trans, [&](double acc, int64_t j) {
    if (!gelu) return acc;
    acc += float(bias[j]);
    return 0.5 * acc * (1 + std::tanh(0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)));
  });
  res.check_ok = res.max_err <= 1.0;
  return res;
}

// scaled_matmul: MxNxK, 8-bit A (e4m3, or e5m2 with --dtype f8e5m2) and e4m3 B [N, K]
// (--set B_TRANS=0: [K, N]), per-tensor scales, bf16 out.
template <class TA>
Result run_scaled_matmul(const std::string& shape, const std::vector<std::pair<std::string, int64_t>>& sets, int reps) {
  int64_t M, N, K;
  if (std::sscanf(shape.c_str(), "%ldx%ldx%ld", &M, &N, &K) != 3)
    user_error("scaled_matmul shape '" + shape + "' is not MxNxK", SourceLoc{});
  auto a = random_host<TA>(size_t(M) * K, 21, -4, 4);
  auto b = random_host<float8_e4m3>(size_t(K) * N, 22, -4, 4);
  std::vector<float> sa{0.5f}, sb{0.125f};
  auto da = to_device(a);
  auto db = to_device(b);
  auto dsa = to_device(sa), dsb = to_device(sb);
  DeviceBuffer<bfloat16> dc(size_t(M) * N);
  kernels::ScaledMatmulOptions o;
  for (auto& [key, v] : sets) o.precise_accumulation = o.precise_accumulation || (key == "PRECISE_ACC" && v != 0);
  Config cfg = apply(kernels::scaled_matmul_heuristic(M, N, K, gpu_has_warpgroup_mma(), o.precise_accumulation, kernels::gpu_sm_count()), sets);
  o.b_trans = !cfg.has("B_TRANS") || cfg.get("B_TRANS") != 0;
  cfg.meta.erase("B_TRANS");
  Result res;
  res.ms = time_ms([&] { kernels::scaled_matmul(dc, da, db, dsa, dsb, M, N, K, o, nullptr, cfg); }, reps);
  res.config = cfg.str() + (o.b_trans ? "" : " B_TRANS=0");
  res.tflops = 2.0 * M * N * K / (res.ms * 1e-3) / 1e12;
  res.gbs = double(M * K + K * N + 2 * M * N) / (res.ms * 1e-3) / 1e9;
  res.max_err = sampled_gemm_error(a, b, dc.to_host(), M, N, K, o.b_trans,
                                   [](double acc, int64_t) { return acc * 0.0625; });  // the scales
  res.check_ok = res.max_err <= 1.0;
  return res;
}

template <class T>
Result dispatch(const std::string& kernel, const std::string& shape,
                const std::vector<std::pair<std::string, int64_t>>& sets, int reps) {
  if (kernel == "cross_entropy") return run_cross_entropy(dtype_v<T>, shape, sets, reps);
  if (kernel == "attention") {
    if constexpr (std::is_same_v<T, float>) user_error("attention runs on f16/bf16", SourceLoc{});
    else return run_attention<T>(shape, sets, reps);
  }
  if (kernel == "matmul") {
    if constexpr (std::is_same_v<T, float>) user_error("matmul runs on f16/bf16", SourceLoc{});
    else return run_matmul<T>(shape, sets, reps);
  }
  return run_rowwise<T>(kernel, parse_rows(shape), sets, reps);
}

}  // namespace

std::string runner_names() {
  return "cross_entropy,softmax,rmsnorm,add_rmsnorm,layernorm,layernorm_stats,bias_relu_log,attention,matmul,scaled_matmul"
         ",swiglu,swiglu_bwd,softmax_bwd,rmsnorm_bwd,add_rmsnorm_bwd,layernorm_bwd,layernorm_bwd_recompute";
}

std::vector<std::string> default_shapes(const std::string& kernel) {
  if (kernel == "cross_entropy") return cross_entropy_shapes();
  if (kernel == "attention") return {"4x16x4096x64", "4x16x4096x128", "1x16x16384x128c"};
  if (is_training_elementwise(kernel) || is_norm_backward(kernel)) return standard_row_shapes();
  if (kernel == "scaled_matmul") return {"4096x4096x4096", "8192x8192x8192", "8192x8192x1024", "16384x4096x4096"};
  if (kernel == "matmul")
    return {"4096x4096x4096", "8192x8192x8192", "8192x8192x1024", "16384x4096x4096", "4000x4000x4000",
            "4096x4096x4096+gelu", "8192x8192x1024+gelu", "4000x4000x4000+gelu"};
  return {"65536x1024", "16384x4096", "8192x16384", "2048x65536", "16384x5000", "512x262144"};
}

Result run_one(const std::string& kernel, DType dtype, const std::string& shape,
               const std::vector<std::pair<std::string, int64_t>>& sets, int reps) {
  if (is_training_elementwise(kernel)) return run_training_elementwise(kernel, dtype, shape, sets, reps);
  if (is_norm_backward(kernel)) return run_norm_backward(kernel, dtype, shape, sets, reps);
  if (kernel == "scaled_matmul") {
    if (dtype == DType::f8e4m3) return run_scaled_matmul<float8_e4m3>(shape, sets, reps);
    if (dtype == DType::f8e5m2) return run_scaled_matmul<float8_e5m2>(shape, sets, reps);
    user_error("scaled_matmul runs on 8-bit floats", SourceLoc{}, "Pass --dtype f8e4m3 or f8e5m2");
  }
  return with_float_type(dtype, [&](auto t) { return dispatch<typename decltype(t)::type>(kernel, shape, sets, reps); });
}

}  // namespace tilefuse::bench
