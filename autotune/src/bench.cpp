#include "tilefuse/autotune/bench.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/stream.hpp"

namespace tilefuse::tuning {

int reps_for(double estimate_ms, const BenchOptions& o) {
  if (!(estimate_ms > 0)) return o.max_reps;
  double n = std::ceil(o.target_ms / estimate_ms);
  return static_cast<int>(std::clamp(n, double(o.min_reps), double(o.max_reps)));
}

namespace {

// Enqueues `n` flushed, event-bracketed runs and returns their times, sorted.
std::vector<double> timed_runs(const std::function<void()>& fn, int n, bool flush) {
  std::vector<cuda::Event> ev;
  ev.reserve(2 * n);
  for (int i = 0; i < 2 * n; ++i) ev.push_back(cuda::Event::create());
  // All runs are enqueued before one wait, so host overhead never shows between them.
  for (int i = 0; i < n; ++i) {
    if (flush) cuda::flush_l2();
    ev[2 * i].record();
    fn();
    ev[2 * i + 1].record();
  }
  ev.back().synchronize();
  std::vector<double> ms(n);
  for (int i = 0; i < n; ++i) ms[i] = cuda::Event::elapsed_ms(ev[2 * i], ev[2 * i + 1]);
  std::sort(ms.begin(), ms.end());
  return ms;
}

}  // namespace

Measurement measure(const std::function<void()>& fn, const BenchOptions& o) {
  fn();  // cold run: module load, first touch
  cuda::synchronize();
  auto est = timed_runs(fn, std::max(1, o.estimate_runs), o.flush_l2);
  auto ms = timed_runs(fn, reps_for(est[est.size() / 2], o), o.flush_l2);
  Measurement m;
  m.reps = static_cast<int>(ms.size());
  m.ms = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  m.min_ms = ms.front();
  m.max_ms = ms.back();
  return m;
}

}  // namespace tilefuse::tuning
