// In-memory cache of loaded kernels backed by the disk cache.
#include "tilefuse/cuda/kernel_cache.hpp"

#include "tilefuse/cuda/driver.hpp"

namespace tilefuse::cuda {

KernelCache& KernelCache::global() {
  static KernelCache c(&DiskCache::global());
  return c;
}

nvptx::CompiledKernel KernelCache::compiled(const CacheKey& key, const CompileFn& compile, bool* from_disk) {
  if (disk_) {
    if (auto e = disk_->load(key)) {
      if (from_disk) *from_disk = true;
      return std::move(e->kernel);
    }
  }
  if (from_disk) *from_disk = false;
  CacheEntry e;
  e.kernel = compile();
  if (disk_) disk_->store(key, e);
  return std::move(e.kernel);
}

const LoadedKernel& KernelCache::get(const CacheKey& key, const CompileFn& compile) {
  const int dev = current_device();
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(m_);
    auto& s = slots_[{key, dev}];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  std::lock_guard<std::mutex> lock(slot->m);  // one thread compiles and loads a key
  if (slot->kernel) return *slot->kernel;

  const DeviceInfo& info = device_info(dev);
  const int drv = driver_version();
  std::optional<CacheEntry> entry = disk_ ? disk_->load(key) : std::nullopt;
  if (entry && !entry->cubin.empty() && entry->cubin_cc == info.compute_capability() && entry->cubin_driver == drv &&
      !needs_whole_program_jit(entry->kernel.ptx)) {
    try {
      slot->kernel = std::make_unique<LoadedKernel>(LoadedKernel::from_cubin(entry->kernel, entry->cubin, 0));
      return *slot->kernel;
    } catch (const CudaError&) {
      // A cubin the driver rejects is rebuilt from the PTX below.
    }
  }
  const bool compiled = !entry;
  if (compiled) {
    entry.emplace();
    entry->kernel = compile();
  }
  if (needs_whole_program_jit(entry->kernel.ptx)) {
    // No cubin to keep: the driver's own JIT cache keeps the SASS of this PTX.
    slot->kernel = std::make_unique<LoadedKernel>(LoadedKernel::from_ptx(entry->kernel));
    if (disk_ && compiled) disk_->store(key, *entry);
    return *slot->kernel;
  }
  Cubin c = link_ptx_to_cubin(entry->kernel.ptx, entry->kernel.name);
  auto k = std::make_unique<LoadedKernel>(LoadedKernel::from_cubin(entry->kernel, c.bytes, c.jit_ms, c.info_log));
  if (disk_) {
    entry->cubin = std::move(c.bytes);
    entry->cubin_cc = info.compute_capability();
    entry->cubin_driver = drv;
    entry->info = std::move(c.info_log);
    disk_->store(key, *entry);
  }
  slot->kernel = std::move(k);
  return *slot->kernel;
}

size_t KernelCache::size() const {
  std::lock_guard<std::mutex> lock(m_);
  size_t n = 0;
  for (auto& [k, s] : slots_) {
    std::lock_guard<std::mutex> l2(s->m);
    n += s->kernel ? 1 : 0;
  }
  return n;
}

void KernelCache::clear() {
  std::lock_guard<std::mutex> lock(m_);
  slots_.clear();
}

}  // namespace tilefuse::cuda
