// parallel_for over LLVM's thread pool: the tuner compiles candidate configs with it.
#include <algorithm>

#include "compile.hpp"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

namespace tilefuse::tuning::detail {

void parallel_for(size_t n, int threads, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  unsigned wanted = threads > 0 ? static_cast<unsigned>(threads) : 0;  // 0: one per hardware thread
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(wanted));
  size_t workers = std::min<size_t>(pool.getMaxConcurrency(), n);
  if (workers <= 1) {  // no thread worth starting
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  for (size_t i = 0; i < n; ++i) pool.async([&fn, i] { fn(i); });  // fn must not throw
  pool.wait();
}

}  // namespace tilefuse::tuning::detail
