// tilefuse-bench runners of the norm backward passes: rmsnorm_bwd, add_rmsnorm_bwd,
// layernorm_bwd (from the forward's saved mean and rstd, + 8 bytes per row counted) and
// layernorm_bwd_recompute on ROWSxCOLS. GB/s counts the minimal bytes: x and dy read, dx written
// (3 M N elements; + M N for dres_out read by add_rmsnorm_bwd), plus the weight read and
// dw (and db) written (N elements each). The dW/dB partial sums are the implementation's
// own traffic and are not counted (their scratch is cached, not allocated per call, so
// the timed calls are what a training step sees). Sampled rows of dx are checked against
// the interpreter running the same host function and config; dw/db against a plain C++
// sum over all rows (the interpreter would take minutes on these shapes).
#include <cmath>
#include <cstdio>

#include "bench_util.hpp"
#include "runners.hpp"
#include "tilefuse/kernels/kernels.hpp"

namespace tilefuse::bench {
namespace {

// xorshift values in [lo, hi): fast for 10^8 elements, never all zeros.
template <class T>
std::vector<T> random_values(size_t n, uint64_t seed, float lo, float hi) {
  std::vector<T> v(n);
  uint64_t s = 0x2545F4914F6CDD1Dull * (seed + 1);
  for (auto& x : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x = T(lo + (hi - lo) * float(s >> 40) * (1.0f / 16777216.0f));
  }
  return v;
}

// Worst |got - want| / (atol + rtol |want|), atol relative to the largest |want|.
template <class T>
double worst_error(const std::vector<T>& got, const std::vector<double>& want) {
  double rtol = std::is_same_v<T, float> ? 1e-4 : std::is_same_v<T, half> ? 4e-3 : 2e-2, scale = 0, worst = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < want.size(); ++i) {
    double g = float(got[i]);
    if (std::isnan(g) || std::isnan(want[i])) return 1e30;
    worst = std::max(worst, std::fabs(g - want[i]) / (1e-4 * scale + 1e-30 + rtol * std::fabs(want[i])));
  }
  return worst;
}

// dw (and, for LayerNorm, db) summed over every row in double, from x, dy as stored.
template <class T>
void weight_grads(bool layer, const std::vector<T>& x, const std::vector<T>& dy, int64_t M, int64_t N, double eps,
                  std::vector<double>& dw, std::vector<double>& db) {
  dw.assign(N, 0.0);
  db.assign(N, 0.0);
  for (int64_t r = 0; r < M; ++r) {
    const T* xr = &x[r * N];
    const T* dyr = &dy[r * N];
    double mean = 0, var = 0;
    if (layer) {
      for (int64_t c = 0; c < N; ++c) mean += float(xr[c]);
      mean /= N;
    }
    for (int64_t c = 0; c < N; ++c) var += (float(xr[c]) - mean) * (float(xr[c]) - mean);
    double rstd = 1.0 / std::sqrt(var / N + eps);
    for (int64_t c = 0; c < N; ++c) {
      dw[c] += double(float(dyr[c])) * (float(xr[c]) - mean) * rstd;
      db[c] += float(dyr[c]);
    }
  }
}

template <class T>
std::vector<T> sample_rows(const std::vector<T>& m, const std::vector<int64_t>& rows, int64_t width) {
  std::vector<T> out;
  for (int64_t r : rows) out.insert(out.end(), m.begin() + r * width, m.begin() + (r + 1) * width);
  return out;
}

template <class T>
Result run(const std::string& kernel, const std::string& shape, const std::vector<std::pair<std::string, int64_t>>& sets,
           int reps) {
  namespace tk = kernels;
  long long m = 0, n = 0;
  char extra = 0;
  if (std::sscanf(shape.c_str(), "%lldx%lld%c", &m, &n, &extra) != 2 || m < 1 || n < 1)
    user_error(kernel + " shape '" + shape + "' is not ROWSxCOLS", SourceLoc{}, "Write shapes like 16384x4096");
  const int64_t M = m, N = n;
  // layernorm_bwd: from the mean and rstd our forward saved (as a training step runs it);
  // layernorm_bwd_recompute: the statistics recomputed from x.
  const bool saved = kernel == "layernorm_bwd", layer = saved || kernel == "layernorm_bwd_recompute";
  const bool residual = kernel == "add_rmsnorm_bwd";
  const float eps = layer ? 1e-5f : 1e-6f;
  size_t elems = size_t(M) * N;
  auto x = random_values<T>(elems, 1, layer ? 1.0f : -3.0f, 3.0f);
  auto dy = random_values<T>(elems, 2, -1.0f, 1.0f);
  auto dres = residual ? random_values<T>(elems, 3, -1.0f, 1.0f) : std::vector<T>(1);
  auto w = random_values<T>(N, 4, 0.5f, 1.5f);
  auto gx = to_device(x), gdy = to_device(dy), gres = to_device(dres), gw = to_device(w);
  DeviceBuffer<T> gdx(elems), gdw(N), gdb(N);
  DeviceBuffer<float> gmean(saved ? M : 1), grstd(saved ? M : 1);
  if (saved) tk::layernorm(gdx, gmean, grstd, gx, gw, gw, M, N, eps);  // dx is overwritten below
  // The config the entry points pick for these (contiguous, aligned-base) buffers.
  Config cfg = tk::norm_backward_config(N, dtype_v<T>,
                                        saved      ? tk::NormBackwardKind::layer_saved
                                        : layer    ? tk::NormBackwardKind::layer
                                        : residual ? tk::NormBackwardKind::rms_residual
                                                   : tk::NormBackwardKind::rms,
                                        gpu_has_clusters(), tk::contiguous_rows_misaligned(N, dtype_v<T>));
  for (auto& [k, v] : sets) cfg.set(k, v);
  // The same call on device buffers (timed) and on host vectors (the check).
  auto call = [&](auto& dx, auto& dw, auto& db, const auto& dyv, const auto& resv, const auto& xv, const auto& wv,
                  const auto& mean, const auto& rstd, int64_t rows) {
    if (saved) tk::layernorm_backward(dx, dw, db, dyv, xv, wv, mean, rstd, rows, N, cfg);
    else if (layer) tk::layernorm_backward(dx, dw, db, dyv, xv, wv, rows, N, eps, cfg);
    else if (residual) tk::add_rmsnorm_backward(dx, dw, dyv, resv, xv, wv, rows, N, eps, cfg);
    else tk::rmsnorm_backward(dx, dw, dyv, xv, wv, rows, N, eps, cfg);
  };
  Result res;
  res.config = cfg.str();
  res.ms = time_ms([&] { call(gdx, gdw, gdb, gdy, gres, gx, gw, gmean, grstd, M); }, reps);
  double bytes = (residual ? 4.0 : 3.0) * elems * sizeof(T) + (layer ? 3.0 : 2.0) * N * sizeof(T) +
                 (saved ? 8.0 * M : 0.0);
  res.gbs = bytes / (res.ms * 1e-3) / 1e9;

  std::vector<int64_t> rows = {0, M / 2, M - 1};
  auto xs = sample_rows(x, rows, N), dys = sample_rows(dy, rows, N);
  auto ress = residual ? sample_rows(dres, rows, N) : std::vector<T>(1);
  std::vector<T> want_dx(xs.size()), sdw(N), sdb(N);
  std::vector<float> smean, srstd;  // the sampled rows' saved statistics
  if (saved) {
    auto mean = gmean.to_host(), rstd = grstd.to_host();
    for (int64_t r : rows) smean.push_back(mean[r]), srstd.push_back(rstd[r]);
  }
  call(want_dx, sdw, sdb, dys, ress, xs, w, smean, srstd, int64_t(rows.size()));
  std::vector<double> want;
  for (const T& v : want_dx) want.push_back(float(v));
  res.max_err = worst_error(sample_rows(gdx.to_host(), rows, N), want);
  std::vector<double> dw, db;
  weight_grads(layer, x, dy, M, N, eps, dw, db);
  res.max_err = std::max(res.max_err, worst_error(gdw.to_host(), dw));
  if (layer) res.max_err = std::max(res.max_err, worst_error(gdb.to_host(), db));
  res.check_ok = res.max_err <= 1.0;
  return res;
}

}  // namespace

bool is_norm_backward(const std::string& kernel) {
  return kernel == "rmsnorm_bwd" || kernel == "add_rmsnorm_bwd" || kernel == "layernorm_bwd" ||
         kernel == "layernorm_bwd_recompute";
}

Result run_norm_backward(const std::string& kernel, DType dtype, const std::string& shape,
                         const std::vector<std::pair<std::string, int64_t>>& sets, int reps) {
  return with_float_type(dtype, [&](auto t) { return run<typename decltype(t)::type>(kernel, shape, sets, reps); });
}

}  // namespace tilefuse::bench
