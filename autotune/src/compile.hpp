#pragma once
// Parallel compilation of a problem's configs (internal to the autotuner).
#include <functional>
#include <string>
#include <vector>

#include "tilefuse/autotune/tuner.hpp"
#include "tilefuse/cuda/disk_cache.hpp"

namespace tilefuse::tuning::detail {

struct Compiled {
  bool ok = false;
  std::string error;  // why it did not compile (first line)
  cuda::CacheKey key;
  nvptx::CompiledKernel kernel;
};

// Specializes and compiles plan(cfg) for every config on a pool of `threads` threads,
// through the process kernel cache (memory, then disk) under the same key the GPU
// launch path computes, so the launch after tuning finds the kernel ready.
std::vector<Compiled> compile_all(const Problem& p, const std::vector<Config>& cfgs, const nvptx::Target& target,
                                  int threads);

// Runs fn(0..n-1) on up to `threads` threads (0: one per hardware thread).
void parallel_for(size_t n, int threads, const std::function<void(size_t)>& fn);

// "12.5 KB" / "640 bytes" for reasons.
std::string kb(int64_t bytes);

}  // namespace tilefuse::tuning::detail
