// tilefuse-bench runner of the fused cross-entropy (shape MxV): loss (mean over rows
// not ignored; `--set REDUCTION=0|1` for none or sum) and dlogits in a separate
// buffer, targets uniform in [0, V) with ~5% ignore_index. GB/s counts the minimal
// bytes 2 x M x V x sizeof(T): the logits read once and dlogits written once (targets
// and the loss are negligible). Three sampled rows are checked against the
// interpreter running the same host function and config.
#include <cmath>
#include <cstdio>

#include "bench_util.hpp"
#include "runners.hpp"
#include "tilefuse/kernels/kernels.hpp"

namespace tilefuse::bench {
namespace {

struct Shape {
  int64_t rows = 0, cols = 0;
};
Shape parse(const std::string& s) {
  long long r = 0, c = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%lldx%lld%c", &r, &c, &extra) != 2 || r < 1 || c < 1)
    user_error("cross_entropy shape '" + s + "' is not MxV", SourceLoc{}, "Write shapes like 8192x32000");
  return {r, c};
}

// xorshift: fast for 10^9 elements, never all zeros.
struct XorShift {
  uint64_t s;
  uint64_t next() {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * float(next() >> 40) * (1.0f / 16777216.0f); }
};

// Worst |got - want| / (atol + rtol |want|) with atol relative to the largest |want|.
template <class T>
double worst_error(const std::vector<T>& got, const std::vector<T>& want, double rtol) {
  double scale = 0, worst = 0;
  for (const T& w : want) scale = std::max(scale, std::fabs(double(float(w))));
  for (size_t i = 0; i < want.size(); ++i) {
    double g = float(got[i]), w = float(want[i]);
    if (std::isnan(g) || std::isnan(w)) return 1e30;
    worst = std::max(worst, std::fabs(g - w) / (1e-5 * scale + rtol * std::fabs(w) + 1e-30));
  }
  return worst;
}

template <class T>
Result run(const std::string& shape, const std::vector<std::pair<std::string, int64_t>>& sets, int reps) {
  namespace tk = kernels;
  auto [M, V] = parse(shape);
  size_t n = size_t(M) * V;
  XorShift g{0x9E3779B97F4A7C15ull};
  std::vector<T> x(n);
  for (auto& v : x) v = T(g.uniform(-8.0f, 8.0f));
  std::vector<int64_t> t(M);
  for (auto& v : t) v = g.next() % 20 == 0 ? -100 : int64_t(g.next() % uint64_t(V));
  auto xd = to_device(x);
  auto td = to_device(t);
  DeviceBuffer<T> dxd(n);
  DeviceBuffer<float> lossd(M);
  Config cfg = tk::cross_entropy_rows_config(V, dtype_v<T>, gpu_has_clusters(), tk::contiguous_rows_misaligned(V, dtype_v<T>));
  tk::CrossEntropyOptions o;  // mean over rows not ignored, unless REDUCTION is set
  for (auto& [k, v] : sets) {
    if (k != "REDUCTION") cfg.set(k, v);
    else if (v < 0 || v > 2)
      user_error("cross_entropy: REDUCTION=" + std::to_string(v) + " is not 0, 1 or 2", SourceLoc{},
                 "Set REDUCTION=0 (none), 1 (sum) or 2 (mean)");
    else o.reduction = static_cast<tk::LossReduction>(v);
  }
  Result res;
  res.config = cfg.str();
  res.ms = time_ms([&] { tk::cross_entropy(lossd, dxd, xd, td, M, V, o, cfg); }, reps);
  res.gbs = 2.0 * double(n) * sizeof(T) / (res.ms * 1e-3) / 1e9;
  // Sampled rows on the interpreter with reduction none and grad_scale 1/count (a
  // mean) or 1, which gives the gradient row by row; a sum or mean is checked against
  // every row's loss.
  int64_t count = 0;
  for (auto v : t) count += v != -100;
  const bool mean = o.reduction == tk::LossReduction::mean;
  auto dx = dxd.to_host();
  float reduced_gpu = 0;
  lossd.view().subview(0, 1).copy_to_host(std::span<float>(&reduced_gpu, 1));
  tk::cross_entropy(lossd, dxd, xd, td, M, V, {.reduction = tk::LossReduction::none}, cfg);
  auto rows_gpu = lossd.to_host();
  double total = 0;
  for (float v : rows_gpu) total += v;
  if (mean) total /= double(count);
  double worst = o.reduction == tk::LossReduction::none
                     ? 0.0
                     : std::fabs(reduced_gpu - total) / (1e-5 * std::fabs(total) + 1e-6);
  double rtol = std::is_same_v<T, float> ? 1e-4 : std::is_same_v<T, half> ? 4e-3 : 2e-2;
  for (int64_t r : {int64_t(0), M / 2, M - 1}) {
    std::vector<T> xs(x.begin() + r * V, x.begin() + (r + 1) * V), want(V);
    std::vector<int64_t> ts{t[r]};
    std::vector<float> loss(1);
    tk::cross_entropy(loss, want, xs, ts, 1, V,
                      {.reduction = tk::LossReduction::none, .grad_scale = mean ? 1.0f / float(count) : 1.0f}, cfg);
    std::vector<T> got(dx.begin() + r * V, dx.begin() + (r + 1) * V);
    worst = std::max(worst, worst_error(got, want, rtol));
    worst = std::max(worst, std::fabs(rows_gpu[r] - loss[0]) / (1e-5 * std::fabs(loss[0]) + 1e-5));
  }
  res.max_err = worst;
  res.check_ok = worst <= 1.0;
  return res;
}

}  // namespace

Result run_cross_entropy(DType dtype, const std::string& shape,
                         const std::vector<std::pair<std::string, int64_t>>& sets, int reps) {
  return with_float_type(dtype, [&](auto t) { return run<typename decltype(t)::type>(shape, sets, reps); });
}

std::vector<std::string> cross_entropy_shapes() { return {"8192x32000", "4096x128256", "2048x151936", "16384x50304"}; }

}  // namespace tilefuse::bench
