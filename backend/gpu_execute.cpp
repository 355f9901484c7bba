// The GPU side of a launch: specialize the kernel on its arguments' alignment and
// divisibility, compile it for the current device (memory cache, then disk cache,
// then the NVPTX compiler), load it once, and launch it.
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/kernel_cache.hpp"
#include "tilefuse/dsl/kernel.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/ir/printer.hpp"
#include "tilefuse/nvptx/compiler.hpp"

namespace tilefuse {

bool gpu_available(std::string* why) {
  if (!cuda::driver_available(why)) return false;
  try {
    if (cuda::device_count() > 0) return true;
    if (why) *why = "the CUDA driver reports no devices";
  } catch (const std::exception& e) {
    if (why) *why = e.what();
  }
  return false;
}

bool gpu_has_clusters() {
  try {
    return gpu_available() && cuda::device_info().compute_capability() >= 90;
  } catch (const std::exception&) {
    return false;
  }
}

bool gpu_has_warpgroup_mma() {
  try {
    if (!gpu_available()) return false;
    nvptx::Target t = cuda::device_info().target();
    return t.sm == 90 && t.arch_specific;
  } catch (const std::exception&) {
    return false;
  }
}

namespace detail {
namespace {

struct LaunchKey {
  uint64_t kernel;  // KernelBase::id(): a kernel object destroyed and another made at its address differ
  std::string config;  // Config::str() + divisibility bits
  int device;
  bool operator==(const LaunchKey&) const = default;
};
struct LaunchKeyHash {
  size_t operator()(const LaunchKey& k) const {
    return std::hash<uint64_t>()(k.kernel) ^ (std::hash<std::string>()(k.config) * 31) ^ k.device;
  }
};

std::shared_mutex g_mu;
std::unordered_map<LaunchKey, const cuda::LoadedKernel*, LaunchKeyHash> g_loaded;

const cuda::LoadedKernel& load(const KernelBase& k, const Config& cfg, const std::vector<int64_t>& div,
                               LaunchKey key) {
  auto f = k.specialize(cfg, div);
  nvptx::Target target = cuda::device_info().target();
  std::string options = "warps=" + std::to_string(f->num_warps) + " stages=" + std::to_string(f->num_stages);
  cuda::CacheKey ck = cuda::make_cache_key(ir::to_string(*f), target, options, compiler_version());
  const cuda::LoadedKernel& lk =
      cuda::KernelCache::global().get(ck, [&] { return nvptx::compile(*f, nvptx::CompileOptions{target}); });
  std::unique_lock lock(g_mu);
  g_loaded.emplace(std::move(key), &lk);
  return lk;
}

}  // namespace

namespace {
const cuda::LoadedKernel& loaded_for(const KernelBase& k, const Config& cfg, std::vector<ArgValue>& args,
                                     const SourceLoc& loc) {
  std::string why;
  if (!cuda::driver_available(&why))
    user_error("kernel '" + k.name() + "' was given device buffers, but " + why, loc,
               "Run on a machine with an NVIDIA driver, or pass host buffers to use the interpreter");
  for (auto& a : args)
    if (a.kind == ArgValue::Kind::HostBuffer)
      user_error("kernel '" + k.name() + "' runs on the GPU but was given a host buffer", loc,
                 "Copy the data to a DeviceBuffer first");
  std::vector<int64_t> div(args.size());
  LaunchKey key{k.id(), cfg.str(), cuda::current_device()};
  key.config.push_back('|');
  for (size_t i = 0; i < args.size(); ++i) {
    div[i] = specialization_divisibility(args[i]);
    key.config.push_back(static_cast<char>('0' + __builtin_ctzll(static_cast<uint64_t>(div[i]))));
  }
  const cuda::LoadedKernel* lk = nullptr;
  {
    std::shared_lock lock(g_mu);
    auto it = g_loaded.find(key);
    if (it != g_loaded.end()) lk = it->second;
  }
  if (!lk) lk = &load(k, cfg, div, key);
  return *lk;
}
}  // namespace

void gpu_execute(const KernelBase& k, const Config& cfg, const Grid& grid, std::vector<ArgValue>& args, void* stream,
                 const SourceLoc& loc) {
  loaded_for(k, cfg, args, loc).launch(grid, args, static_cast<CUstream>(stream));
}

int64_t gpu_resident_clusters(const KernelBase& k, const Config& cfg, std::vector<ArgValue>& args,
                              const SourceLoc& loc) {
  return loaded_for(k, cfg, args, loc).resident_clusters();
}

}  // namespace detail
}  // namespace tilefuse

#include <dlfcn.h>
#include <sys/stat.h>

namespace tilefuse {

const char* compiler_version() {
  // The library's own size and modification time stand in for a build id, so any
  // rebuild of the compiler invalidates the kernels it cached.
  static const std::string v = [] {
    std::string id = "tilefuse 0.1.0 (LLVM 19)";
    Dl_info info{};
    struct stat st{};
    if (dladdr(reinterpret_cast<void*>(&compiler_version), &info) && info.dli_fname && stat(info.dli_fname, &st) == 0)
      id += " build " + std::to_string(st.st_size) + "-" + std::to_string(st.st_mtime);
    return id;
  }();
  return v.c_str();
}

}  // namespace tilefuse
