#pragma once
// Compiled and loaded kernels by cache key: in memory (per device), then on disk
// (PTX + cubin), then the caller's compile function. Thread-safe; a key is compiled
// and loaded at most once per process and device even when threads race for it.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "tilefuse/cuda/disk_cache.hpp"
#include "tilefuse/cuda/module.hpp"

namespace tilefuse::cuda {

using CompileFn = std::function<nvptx::CompiledKernel()>;

class KernelCache {
 public:
  explicit KernelCache(DiskCache* disk) : disk_(disk) {}  // disk may be nullptr
  static KernelCache& global();                          // uses DiskCache::global()

  // GPU-free: the compiled kernel from disk, or compile() (then stored on disk).
  // *from_disk (when given) says which.
  nvptx::CompiledKernel compiled(const CacheKey& key, const CompileFn& compile, bool* from_disk = nullptr);

  // The kernel loaded on the current device. The reference stays valid for the life of
  // the cache. Kernels load through the driver's whole-program JIT (needs_whole_program_jit):
  // the disk keeps their PTX, the driver's JIT cache their SASS. With
  // TILEFUSE_WHOLE_PROGRAM_JIT=0 the others go through the linker: a disk hit with a cubin
  // for this device and driver loads without JIT; otherwise the PTX is linked into a cubin
  // (timed: LoadedKernel::jit_ms), stored with it.
  const LoadedKernel& get(const CacheKey& key, const CompileFn& compile);

  size_t size() const;  // loaded kernels in memory
  void clear();         // drops the in-memory kernels (invalidates references)

 private:
  struct Slot {
    std::mutex m;
    std::unique_ptr<LoadedKernel> kernel;
  };
  DiskCache* disk_;
  mutable std::mutex m_;
  std::map<std::pair<CacheKey, int>, std::shared_ptr<Slot>> slots_;
};

}  // namespace tilefuse::cuda
