// Module loading (driver JIT or cubin) and the kernel launch path.
#include "tilefuse/cuda/module.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <mutex>
#include <utility>
#include <vector>

#include "driver_api.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/ir/half.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::cuda {

using detail::api;
using detail::check;

namespace {

constexpr size_t kLogBytes = 16 * 1024;
constexpr int kDefaultSharedLimit = 48 * 1024;
constexpr size_t kMaxFastParams = 32;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string trim_log(const char* buf) {
  std::string s(buf, strnlen(buf, kLogBytes));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

[[noreturn]] void jit_failed(CUresult rc, const char* call, const std::string& name, const std::string& err_log,
                             const std::string& info_log) {
  std::string ctx = "(JIT of kernel '" + name + "' from PTX failed";
  std::string log = err_log.empty() ? info_log : err_log;
  if (!log.empty()) ctx += "; JIT log:\n" + log + "\n";
  ctx += ")";
  detail::throw_error(rc, call, ctx);
}

}  // namespace

// The maps the previous launch encoded, one per tensor map with the values they were
// encoded from: a launch resolving to the same values copies them instead of calling the
// driver (~1 us per map). Shared by the threads launching this kernel.
struct LoadedKernel::TensorMapCache {
  std::mutex m;
  std::vector<ResolvedTensorMap> keys;  // rank 0: nothing encoded
  std::vector<CUtensorMap> maps;
};
static_assert(alignof(CUtensorMap) >= 64, "a CUtensorMap parameter must be 64-byte aligned");

Cubin link_ptx_to_cubin(const std::string& ptx, const std::string& kernel_name) {
  detail::ensure_context();
  const auto& A = api();
  std::vector<char> info(kLogBytes, 0), err(kLogBytes, 0);
  CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void* vals[] = {info.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes - 1)), err.data(),
                  reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes - 1)),
                  reinterpret_cast<void*>(static_cast<uintptr_t>(1))};
  auto t0 = std::chrono::steady_clock::now();
  CUlinkState state = nullptr;
  check(A.LinkCreate(5, opts, vals, &state), "cuLinkCreate", "(kernel '" + kernel_name + "')");
  struct Guard {
    CUlinkState s;
    const detail::DriverApi& A;
    ~Guard() { A.LinkDestroy(s); }
  } guard{state, A};
  // The PTX must be NUL-terminated; std::string guarantees it, and size+1 includes it.
  std::string name = kernel_name + ".ptx";
  CUresult rc = A.LinkAddData(state, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1, name.c_str(),
                              0, nullptr, nullptr);
  if (rc != CUDA_SUCCESS) jit_failed(rc, "cuLinkAddData", kernel_name, trim_log(err.data()), trim_log(info.data()));
  void* image = nullptr;
  size_t size = 0;
  rc = A.LinkComplete(state, &image, &size);
  if (rc != CUDA_SUCCESS) jit_failed(rc, "cuLinkComplete", kernel_name, trim_log(err.data()), trim_log(info.data()));
  Cubin c;
  c.bytes.assign(static_cast<const char*>(image), size);  // owned by the link state until destroyed
  c.jit_ms = ms_since(t0);
  c.info_log = trim_log(info.data());
  return c;
}

bool needs_whole_program_jit(const std::string& ptx) {
  if (ptx.find("setmaxnreg.") != std::string::npos) return true;
  const std::string v = knob("TILEFUSE_WHOLE_PROGRAM_JIT");
  return !(v == "0" || v == "off" || v == "false");
}

LoadedKernel LoadedKernel::from_ptx(const nvptx::CompiledKernel& k) {
  LoadedKernel K;
  K.device_ = current_device();
  K.ctx_ = detail::ensure_context(K.device_);
  const auto& A = api();
  std::vector<char> info(kLogBytes, 0), err(kLogBytes, 0);
  CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void* vals[] = {info.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes - 1)), err.data(),
                  reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes - 1)),
                  reinterpret_cast<void*>(static_cast<uintptr_t>(1))};
  auto t0 = std::chrono::steady_clock::now();
  CUresult rc = A.ModuleLoadDataEx(&K.module_, k.ptx.c_str(), 5, opts, vals);
  if (rc != CUDA_SUCCESS) jit_failed(rc, "cuModuleLoadDataEx", k.name, trim_log(err.data()), trim_log(info.data()));
  K.jit_ms_ = ms_since(t0);
  K.jit_log_ = trim_log(info.data());
  auto t1 = std::chrono::steady_clock::now();
  K.init_function(k);
  K.load_ms_ = K.jit_ms_ + ms_since(t1);
  return K;
}

LoadedKernel LoadedKernel::from_cubin(const nvptx::CompiledKernel& k, std::string_view cubin, double jit_ms,
                                      std::string jit_log) {
  LoadedKernel K;
  K.device_ = current_device();
  K.ctx_ = detail::ensure_context(K.device_);
  auto t0 = std::chrono::steady_clock::now();
  // cuModuleLoadData reads the image in place; keep a suitably aligned copy.
  std::vector<uint64_t> image((cubin.size() + 7) / 8 + 1, 0);
  std::memcpy(image.data(), cubin.data(), cubin.size());
  check(api().ModuleLoadData(&K.module_, image.data()), "cuModuleLoadData", "(cubin of kernel '" + k.name + "')");
  K.jit_ms_ = jit_ms;
  K.jit_log_ = std::move(jit_log);
  K.init_function(k);
  K.load_ms_ = ms_since(t0);
  return K;
}

void LoadedKernel::init_function(const nvptx::CompiledKernel& k) {
  const auto& A = api();
  name_ = k.name;
  target_ = k.target;
  num_warps_ = k.num_warps;
  cluster_size_ = k.cluster_size;
  cluster_in_memory_ = k.cluster_in_memory;
  cluster_exchange_bytes_ = k.cluster_exchange_bytes;
  shared_bytes_ = k.shared_bytes;
  params_ = k.params;
  tensor_maps_ = k.tensor_maps;
  map_cache_.reset();
  if (!tensor_maps_.empty()) {
    map_cache_ = std::make_unique<TensorMapCache>();
    map_cache_->keys.resize(tensor_maps_.size());
    map_cache_->maps.resize(tensor_maps_.size());
  }
  CUresult rc = A.ModuleGetFunction(&func_, module_, k.name.c_str());
  if (rc != CUDA_SUCCESS)
    detail::throw_error(rc, "cuModuleGetFunction",
                        "(the module has no kernel named '" + k.name + "'; the PTX must declare '.entry " + k.name + "')");
  auto fattr = [&](CUfunction_attribute a) {
    int v = 0;
    check(A.FuncGetAttribute(&v, a, func_), "cuFuncGetAttribute", "(kernel '" + k.name + "')");
    return v;
  };
  num_regs_ = fattr(CU_FUNC_ATTRIBUTE_NUM_REGS);
  local_bytes_ = fattr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  static_shared_ = fattr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  max_threads_ = fattr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);

  const DeviceInfo& dev = device_info(device_);
  if (num_warps_ < 1 || threads_per_block() > max_threads_)
    throw UserError("kernel '" + name_ + "' cannot run with num_warps=" + std::to_string(num_warps_) + " (" +
                    std::to_string(threads_per_block()) + " threads per block): on " + dev.name +
                    " it allows at most " + std::to_string(max_threads_) + " threads per block (its launch bounds and " +
                    std::to_string(num_regs_) + " registers per thread); use num_warps <= " +
                    std::to_string(max_threads_ / 32));
  if (shared_bytes_ < 0 || static_cast<int64_t>(shared_bytes_) + static_shared_ > dev.shared_per_block_optin)
    throw UserError("kernel '" + name_ + "' needs " + std::to_string(shared_bytes_) +
                    " bytes of dynamic shared memory" +
                    (static_shared_ ? " (plus " + std::to_string(static_shared_) + " static)" : std::string()) +
                    " but " + dev.name + " allows at most " + std::to_string(dev.shared_per_block_optin) +
                    " bytes per block; use smaller block sizes or fewer pipeline stages (num_stages)");
  if (shared_bytes_ + static_shared_ > kDefaultSharedLimit)  // above 48 KB the kernel must opt in
    check(A.FuncSetAttribute(func_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes_),
          "cuFuncSetAttribute", "(MAX_DYNAMIC_SHARED_SIZE_BYTES = " + std::to_string(shared_bytes_) + " for kernel '" +
                                    name_ + "')");
  if (cluster_size_ > 1 && !cluster_in_memory_ && dev.cc_major < 9)
    throw UserError("kernel '" + name_ + "' runs in thread-block clusters of " + std::to_string(cluster_size_) +
                    " programs, but " + dev.name + " (sm_" + std::to_string(dev.compute_capability()) +
                    ") has no clusters; use cluster(1) on this GPU");
  if (cluster_size_ > 8 && !cluster_in_memory_)  // 16 is allowed on Hopper only after this opt-in
    check(A.FuncSetAttribute(func_, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), "cuFuncSetAttribute",
          "(NON_PORTABLE_CLUSTER_SIZE_ALLOWED for kernel '" + name_ + "' with clusters of " +
              std::to_string(cluster_size_) + ")");

  resident_clusters_ = resident_programs_ = 0;
  if (cluster_in_memory_) {
    int per_sm = 0;
    check(A.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func_, threads_per_block(),
                                                       static_cast<size_t>(shared_bytes_)),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor", "(kernel '" + name_ + "')");
    resident_programs_ = per_sm * dev.sm_count;
    resident_clusters_ = resident_programs_ / cluster_size_;
  } else if (cluster_size_ > 1 && A.OccupancyMaxActiveClusters) {
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = static_cast<unsigned>(cluster_size_);
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    CUlaunchConfig lc{};
    lc.gridDimX = static_cast<unsigned>(cluster_size_);
    lc.gridDimY = lc.gridDimZ = 1;
    lc.blockDimX = static_cast<unsigned>(threads_per_block());
    lc.blockDimY = lc.blockDimZ = 1;
    lc.sharedMemBytes = static_cast<unsigned>(shared_bytes_);
    lc.attrs = &attr;
    lc.numAttrs = 1;
    int n = 0;
    if (A.OccupancyMaxActiveClusters(&n, func_, &lc) == CUDA_SUCCESS) resident_clusters_ = n;
  }
  early_launch_max_blocks_ = dev.cc_major >= 9 && knob("TILEFUSE_PDL") != "0" ? k.early_launch_max_blocks : 0;
  resident_ = 0;
  if (k.persistent) {
    if (cluster_size_ != 1)
      throw UserError("kernel '" + name_ + "' is persistent and runs in clusters of " + std::to_string(cluster_size_) +
                      "; persistent kernels use cluster(1)");
    int per_sm = 0;
    check(A.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func_, threads_per_block(),
                                                       static_cast<size_t>(shared_bytes_)),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor", "(kernel '" + name_ + "')");
    resident_ = std::max(1, per_sm) * std::max(1, dev.sm_count);
    if (long cap = knob_count("TILEFUSE_PERSISTENT_PROGRAMS")) resident_ = static_cast<int>(std::min<long>(cap, resident_));
  }
  slots_.clear();
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& p = params_[i];
    Slot s;
    if (p.is_pointer) {
      s = Slot::Ptr;
    } else {
      switch (p.dtype) {
        case DType::i1: case DType::i8: case DType::u8: case DType::i16: case DType::i32: s = Slot::I32; break;
        case DType::u32: s = Slot::U32; break;
        case DType::i64: s = Slot::I64; break;
        case DType::f16: s = Slot::F16; break;
        case DType::bf16: s = Slot::BF16; break;
        case DType::f32: s = Slot::F32; break;
        case DType::f64: s = Slot::F64; break;
        default:
          throw UserError("kernel '" + name_ + "' has a scalar parameter of type " + tilefuse::name(p.dtype) +
                          ", which launches cannot pass. Pass it as f32 (or through a pointer) and cast inside");
      }
    }
    slots_.push_back(s);
  }
  if (knob_selects("TILEFUSE_PRINT_RESOURCES", name_)) print_resources();
}

// One line per loaded kernel on stderr: what decides how many of its programs an SM
// holds (a register count one step too high halves a row kernel's residency, and only
// the driver's JIT knows it: bench/NOTES.md, 2026-11-29).
void LoadedKernel::print_resources() const {
  const auto& A = api();
  int per_sm = 0;
  check(A.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func_, threads_per_block(),
                                                     static_cast<size_t>(shared_bytes_)),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor", "(kernel '" + name_ + "')");
  // Registers are allocated per warp in units of 256 (8 per thread).
  int per_warp = (num_regs_ * 32 + 255) / 256 * 256;
  int by_regs = per_warp > 0 ? 65536 / (per_warp * num_warps_) : 0;
  std::string line = "tilefuse: kernel '" + name_ + "': " + std::to_string(num_warps_) + " warps, " +
                     std::to_string(num_regs_) + " registers (" + std::to_string(local_bytes_) +
                     " bytes local: spills), " + std::to_string(shared_bytes_ + static_shared_) +
                     " bytes shared; programs per SM " + std::to_string(per_sm) + " (registers allow " +
                     std::to_string(by_regs) + ")";
  if (cluster_size_ > 1)
    line += "; clusters of " + std::to_string(cluster_size_) + ", " +
            (resident_clusters_ > 0 ? std::to_string(resident_clusters_) : std::string("unknown")) + " resident";
  std::cerr << line << "\n";
}

LoadedKernel::LoadedKernel(LoadedKernel&& o) noexcept { *this = std::move(o); }

LoadedKernel& LoadedKernel::operator=(LoadedKernel&& o) noexcept {
  if (this == &o) return *this;
  if (module_) {
    detail::ensure_context(device_);
    api().ModuleUnload(module_);
  }
  name_ = std::move(o.name_);
  target_ = o.target_;
  num_warps_ = o.num_warps_;
  cluster_size_ = o.cluster_size_;
  cluster_in_memory_ = o.cluster_in_memory_;
  cluster_exchange_bytes_ = o.cluster_exchange_bytes_;
  resident_programs_ = o.resident_programs_;
  shared_bytes_ = o.shared_bytes_;
  params_ = std::move(o.params_);
  slots_ = std::move(o.slots_);
  tensor_maps_ = std::move(o.tensor_maps_);
  map_cache_ = std::move(o.map_cache_);
  device_ = o.device_;
  ctx_ = o.ctx_;
  module_ = std::exchange(o.module_, nullptr);
  func_ = std::exchange(o.func_, nullptr);
  jit_ms_ = o.jit_ms_;
  load_ms_ = o.load_ms_;
  jit_log_ = std::move(o.jit_log_);
  num_regs_ = o.num_regs_;
  local_bytes_ = o.local_bytes_;
  static_shared_ = o.static_shared_;
  max_threads_ = o.max_threads_;
  resident_ = o.resident_;
  resident_clusters_ = o.resident_clusters_;
  early_launch_max_blocks_ = o.early_launch_max_blocks_;
  return *this;
}

LoadedKernel::~LoadedKernel() {
  if (!module_) return;
  try {
    const auto& A = api();
    CUcontext cur = nullptr;
    A.CtxGetCurrent(&cur);
    if (cur != ctx_) A.CtxSetCurrent(ctx_);
    A.ModuleUnload(module_);
  } catch (...) {
  }
}

std::string LoadedKernel::describe_launch(const Grid& g) const {
  return "kernel '" + name_ + "' with grid (" + std::to_string(g.x) + ", " + std::to_string(g.y) + ", " +
         std::to_string(g.z) + "), " + std::to_string(threads_per_block()) + " threads per block, " +
         (cluster_size_ > 1 ? "clusters of " + std::to_string(cluster_size_) + " blocks" +
                                  (cluster_in_memory_ ? " (exchanging through memory), " : ", ")
                            : std::string()) +
         std::to_string(shared_bytes_) + " bytes of dynamic shared memory";
}

void LoadedKernel::bad_arg(size_t i, const ArgValue& a) const {
  const auto& p = params_[i];
  std::string want = p.is_pointer ? std::string("a device pointer (") + tilefuse::name(p.dtype) + "*)"
                                  : std::string("a scalar of type ") + tilefuse::name(p.dtype);
  std::string got;
  switch (a.kind) {
    case ArgValue::Kind::HostBuffer: got = "a host buffer; copy it to the device first (tilefuse::to_device)"; break;
    case ArgValue::Kind::DevicePtr: got = "a device pointer"; break;
    case ArgValue::Kind::Int: got = "an integer"; break;
    case ArgValue::Kind::Float: got = "a float"; break;
  }
  throw UserError("kernel '" + name_ + "': argument " + std::to_string(i) + " must be " + want + " but got " + got);
}

void LoadedKernel::bad_grid(const Grid& g) const {
  throw UserError("cannot launch " + describe_launch(g) +
                  ": grid dimensions must be non-negative, x <= 2147483647 and y, z <= 65535, and x a multiple of the "
                  "cluster size");
}

void LoadedKernel::launch_failed(int rc, const Grid& g) const {
  detail::throw_error(static_cast<CUresult>(rc), "cuLaunchKernel", "launching " + describe_launch(g));
}

namespace {
template <class V>
bool put(void* out, V v) {
  std::memcpy(out, &v, sizeof(V));
  return true;
}
}  // namespace

// Writes one argument into its 8-byte slot; false when the argument's kind does not fit.
bool LoadedKernel::marshal(Slot slot, const ArgValue& a, void* out) {
  using K = ArgValue::Kind;
  switch (slot) {
    case Slot::Ptr: return a.kind == K::DevicePtr && put(out, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(a.ptr)));
    case Slot::I32: return a.kind == K::Int && put(out, static_cast<int32_t>(a.i));
    case Slot::U32: return a.kind == K::Int && put(out, static_cast<uint32_t>(a.i));
    case Slot::I64: return a.kind == K::Int && put(out, static_cast<int64_t>(a.i));
    case Slot::F32: return a.kind == K::Float && put(out, static_cast<float>(a.f));
    case Slot::F64: return a.kind == K::Float && put(out, a.f);
    case Slot::F16: return a.kind == K::Float && put(out, half(static_cast<float>(a.f)).bits);
    case Slot::BF16: return a.kind == K::Float && put(out, bfloat16(static_cast<float>(a.f)).bits);
  }
  return false;
}

void LoadedKernel::launch(const Grid& g, const std::vector<ArgValue>& args, CUstream stream) const {
  const size_t n = slots_.size();
  if (args.size() != n) [[unlikely]]
    throw UserError("kernel '" + name_ + "' takes " + std::to_string(n) + " arguments but " +
                    std::to_string(args.size()) + " were given");
  if (n > kMaxFastParams || !tensor_maps_.empty()) [[unlikely]]
    return launch_slow(g, args, stream);
  alignas(8) uint64_t storage[kMaxFastParams];
  void* ptrs[kMaxFastParams];
  for (size_t i = 0; i < n; ++i) {
    const ArgValue& a = args[i];
    if (!marshal(slots_[i], a, &storage[i])) [[unlikely]]
      bad_arg(i, a);
    ptrs[i] = &storage[i];
  }
  launch_raw(g, ptrs, stream);
}

// Many parameters, or tensor maps: the maps follow the signature's parameters.
void LoadedKernel::launch_slow(const Grid& g, const std::vector<ArgValue>& args, CUstream stream) const {
  const size_t n = args.size(), m = tensor_maps_.size();
  std::vector<uint64_t> storage(n);
  std::vector<void*> ptrs(n + m);
  for (size_t i = 0; i < n; ++i) {
    if (!marshal(slots_[i], args[i], &storage[i])) bad_arg(i, args[i]);
    ptrs[i] = &storage[i];
  }
  std::vector<CUtensorMap> maps;  // alive until the launch has copied the parameters
  if (m > 0) {
    if (empty_grid(g)) return;  // an empty launch may describe empty tensors: encode nothing
    maps.resize(m);
    encode_maps(args, g, maps.data());
    for (size_t j = 0; j < m; ++j) ptrs[n + j] = &maps[j];
  }
  launch_raw(g, ptrs.data(), stream);
}

void LoadedKernel::encode_maps(const std::vector<ArgValue>& args, const Grid& grid, CUtensorMap* out) const {
  TensorMapCache& c = *map_cache_;
  std::lock_guard<std::mutex> lock(c.m);  // encoding under the lock: racing launches encode once
  for (size_t j = 0; j < tensor_maps_.size(); ++j) {
    ResolvedTensorMap r = resolve_tensor_map(tensor_maps_[j], args, name_, static_cast<int>(j), grid);
    if (!(c.keys[j] == r)) {
      c.keys[j] = ResolvedTensorMap{};  // a failed encode leaves no stale match behind
      encode_tensor_map(r, &c.maps[j], name_);
      c.keys[j] = r;
    }
    out[j] = c.maps[j];
  }
}

bool LoadedKernel::empty_grid(const Grid& g) const {
  if (g.x > 0 && g.y > 0 && g.z > 0) [[likely]]
    return false;
  if (g.x < 0 || g.y < 0 || g.z < 0) bad_grid(g);
  return true;
}

void LoadedKernel::launch_raw(const Grid& g, void** params, CUstream stream) const {
  if (empty_grid(g)) [[unlikely]]
    return;  // an empty grid launches nothing
  if (g.x > 2147483647 || g.y > 65535 || g.z > 65535 || g.x % cluster_size_ != 0) [[unlikely]]
    bad_grid(g);
  if (resident_ > 0) [[unlikely]]
    return launch_persistent(g, params, stream);
  if (cluster_exchange_bytes_ > 0) [[unlikely]]
    return launch_with_workspace(g, params, stream);
  const auto& A = api();
  CUcontext cur = nullptr;
  A.CtxGetCurrent(&cur);
  if (cur != ctx_) [[unlikely]]
    check(A.CtxSetCurrent(ctx_), "cuCtxSetCurrent", "(before launching kernel '" + name_ + "')");
  int rc = launch_blocks(static_cast<unsigned>(g.x), static_cast<unsigned>(g.y), static_cast<unsigned>(g.z), params,
                         stream);
  if (rc != CUDA_SUCCESS) [[unlikely]]
    launch_failed(rc, g);
}

// The blocks loop over the grid's programs (x fastest), whose sizes follow the other
// parameters.
void LoadedKernel::launch_persistent(const Grid& g, void** params, CUstream stream) const {
  int64_t programs = g.x * g.y * g.z;
  if (programs > 2147483647)
    throw UserError("cannot launch " + describe_launch(g) + ": a persistent kernel runs at most 2^31 - 1 programs (" +
                    std::to_string(programs) + " asked); launch it in parts or leave persistent out");
  const size_t n = params_.size() + tensor_maps_.size();
  int32_t sizes[3] = {static_cast<int32_t>(g.x), static_cast<int32_t>(g.y), static_cast<int32_t>(g.z)};
  std::vector<void*> all(params, params + n);
  for (auto& v : sizes) all.push_back(&v);
  const auto& A = api();
  CUcontext cur = nullptr;
  A.CtxGetCurrent(&cur);
  if (cur != ctx_) check(A.CtxSetCurrent(ctx_), "cuCtxSetCurrent", "(before launching kernel '" + name_ + "')");
  auto blocks = static_cast<unsigned>(std::min<int64_t>(programs, resident_));
  int rc = launch_blocks(blocks, 1, 1, all.data(), stream);
  if (rc != CUDA_SUCCESS) launch_failed(rc, g);
}

void LoadedKernel::launch_with_workspace(const Grid& g, void** params, CUstream stream) const {
  // A program waits in each exchange for every peer: the whole cluster must fit on the
  // GPU at once (lower_cluster_memory.cpp), or the launch would hang.
  if (resident_programs_ < cluster_size_)
    throw UserError("cannot launch " + describe_launch(g) + ": its clusters of " + std::to_string(cluster_size_) +
                    " programs exchange through memory, so all of a cluster's programs must run at once, but the GPU "
                    "holds " + std::to_string(resident_programs_) + " of these programs at a time (" +
                    std::to_string(num_regs_) + " registers per thread, " + std::to_string(shared_bytes_) +
                    " bytes of shared memory per program). Use a smaller cluster, fewer warps or less shared memory");
  const size_t n = params_.size() + tensor_maps_.size();
  int64_t clusters = g.x * g.y * g.z / cluster_size_;
  void* ws = cluster_workspace(stream, static_cast<size_t>(nvptx::kClusterWorkspaceHeader +
                                                           clusters * cluster_exchange_bytes_));
  std::vector<void*> all(params, params + n);
  all.push_back(&ws);
  const auto& A = api();
  CUcontext cur = nullptr;
  A.CtxGetCurrent(&cur);
  if (cur != ctx_) check(A.CtxSetCurrent(ctx_), "cuCtxSetCurrent", "(before launching kernel '" + name_ + "')");
  int rc = launch_blocks(static_cast<unsigned>(g.x), static_cast<unsigned>(g.y), static_cast<unsigned>(g.z),
                         all.data(), stream);
  if (rc != CUDA_SUCCESS) launch_failed(rc, g);
}

int LoadedKernel::launch_blocks(unsigned gx, unsigned gy, unsigned gz, void** params, CUstream stream) const {
  const auto& A = api();
  auto threads = static_cast<unsigned>(32 * num_warps_);
  bool early = uint64_t(gx) * gy * gz <= early_launch_max_blocks_;  // the kernel's own test
  bool hardware_cluster = cluster_size_ > 1 && !cluster_in_memory_;
  if (!hardware_cluster && !early) [[likely]]
    return A.LaunchKernel(func_, gx, gy, gz, threads, 1, 1, static_cast<unsigned>(shared_bytes_), stream, params,
                          nullptr);
  CUlaunchAttribute attrs[2]{};
  unsigned n = 0;
  if (hardware_cluster) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = static_cast<unsigned>(cluster_size_);
    attrs[n].value.clusterDim.y = attrs[n].value.clusterDim.z = 1;
    ++n;
  }
  if (early) {  // the kernel's griddepcontrol.wait orders it after the previous grid
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n].value.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  CUlaunchConfig lc{};
  lc.gridDimX = gx;
  lc.gridDimY = gy;
  lc.gridDimZ = gz;
  lc.blockDimX = threads;
  lc.blockDimY = lc.blockDimZ = 1;
  lc.sharedMemBytes = static_cast<unsigned>(shared_bytes_);
  lc.hStream = stream;
  lc.attrs = attrs;
  lc.numAttrs = n;
  return A.LaunchKernelEx(&lc, func_, params, nullptr);
}

}  // namespace tilefuse::cuda
