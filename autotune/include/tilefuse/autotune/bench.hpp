#pragma once
// How the autotuner times one config (GPU only): one cold run (loads, first-touch),
// a few event-timed runs to estimate the time, then N repetitions sized to spend about
// target_ms measuring (N clamped to [min_reps, max_reps]), each after an L2 flush and
// between its own pair of CUDA events; the median is the result.
// CUDA-graph timing (which would hide launch gaps of very short kernels) is not done:
// with the L2 flushed between runs there are no back-to-back launches to hide.
#include <functional>

namespace tilefuse::tuning {

// Changing the method invalidates cached timings: this string is part of every entry.
inline constexpr const char* kBenchMethod = "median of event-timed runs, L2 flushed before each, v1";

struct BenchOptions {
  double target_ms = 25;  // measured kernel time to aim for per config
  int min_reps = 5;
  int max_reps = 200;
  int estimate_runs = 3;
  bool flush_l2 = true;
};

struct Measurement {
  double ms = 0;  // median
  double min_ms = 0, max_ms = 0;
  int reps = 0;
};

// Times fn() (which enqueues GPU work on the legacy default stream). Throws what fn
// throws and CudaError for driver failures.
Measurement measure(const std::function<void()>& fn, const BenchOptions& opts = {});

// The repetition count for an estimated time per run (exposed for tests).
int reps_for(double estimate_ms, const BenchOptions& opts);

}  // namespace tilefuse::tuning
