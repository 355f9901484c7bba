// Loading libcuda.so.1 at run time and the per-device state (primary contexts, info).
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "driver_api.hpp"

namespace tilefuse::cuda {
namespace detail {
namespace {

constexpr const char* kDriverLib = "libcuda.so.1";
constexpr int kAbiVersion = 12000;  // every entry point is requested at the CUDA 12.0 ABI
constexpr const char* kFix = "run on a machine with an NVIDIA driver or use the interpreter";

struct Loaded {
  DriverApi api;
  bool ok = false;
  std::string error;  // the user-facing message when !ok
};

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

std::string missing_driver_message(const char* soname, const std::string& err) {
  return std::string("no CUDA driver found (") + soname + " could not be loaded: " + err + "); " + kFix;
}

Loaded load_driver() {
  Loaded L;
  void* lib = dlopen(kDriverLib, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    L.error = missing_driver_message(kDriverLib, dl_error());
    return L;
  }
  // cuda.h maps cuGetProcAddress to cuGetProcAddress_v2 (5 arguments, CUDA 12.0+);
  // the plain symbol is the 4-argument 11.3 ABI.
  auto gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!gpa) {
    L.error = std::string("CUDA driver too old (") + kDriverLib +
              " has no cuGetProcAddress_v2; tilefuse needs a CUDA 12.0 or newer driver); update the "
              "NVIDIA driver or use the interpreter";
    return L;
  }
  L.api.GetProcAddress = gpa;
  std::string missing;
  auto get = [&](const char* name, void** out) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult rc = gpa(name, out, kAbiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (rc != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || !*out) {
      *out = nullptr;
      missing += missing.empty() ? name : std::string(", ") + name;
    }
  };
#define TF_CUDA_GET(member, name, pfn) get(name, reinterpret_cast<void**>(&L.api.member));
  TF_CUDA_DRIVER_FUNCTIONS(TF_CUDA_GET)
#undef TF_CUDA_GET
  auto get_optional = [&](const char* name, void** out) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (gpa(name, out, kAbiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
        found != CU_GET_PROC_ADDRESS_SUCCESS)
      *out = nullptr;
  };
#define TF_CUDA_GET_OPTIONAL(member, name, pfn) get_optional(name, reinterpret_cast<void**>(&L.api.member));
  TF_CUDA_OPTIONAL_DRIVER_FUNCTIONS(TF_CUDA_GET_OPTIONAL)
#undef TF_CUDA_GET_OPTIONAL
  if (L.api.DriverGetVersion) L.api.DriverGetVersion(&L.api.version);
  if (!missing.empty()) {
    L.error = "CUDA driver unusable (version " + std::to_string(L.api.version) +
              " lacks entry points at the CUDA 12.0 ABI: " + missing + "); update the NVIDIA driver or use the interpreter";
    return L;
  }
  if (L.api.version < kAbiVersion) {
    L.error = "CUDA driver too old (it supports CUDA " + std::to_string(L.api.version / 1000) + "." +
              std::to_string(L.api.version % 1000 / 10) + "; tilefuse needs 12.0 or newer); update the NVIDIA driver "
              "or use the interpreter";
    return L;
  }
  CUresult rc = L.api.Init(0);
  if (rc != CUDA_SUCCESS) {
    const char* n = nullptr;
    const char* s = nullptr;
    L.api.GetErrorName(rc, &n);
    L.api.GetErrorString(rc, &s);
    L.error = std::string("CUDA driver unusable (cuInit failed: ") + (n ? n : "?") + " (" + (s ? s : "?") + ")); " + kFix;
    return L;
  }
  L.ok = true;
  return L;  // the library stays loaded for the life of the process
}

const Loaded& loaded() {
  static const Loaded L = load_driver();
  return L;
}

std::atomic<int> g_device{0};

struct DeviceState {
  std::once_flag once;
  CUcontext ctx = nullptr;
  DeviceInfo info;
};
constexpr int kMaxDevices = 64;
std::array<DeviceState, kMaxDevices>& devices() {
  static std::array<DeviceState, kMaxDevices> d;
  return d;
}

[[noreturn]] void no_such_device(int ordinal, int n) {
  throw UserError("CUDA device " + std::to_string(ordinal) + " does not exist (this machine has " +
                  std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s") + ")");
}

DeviceState& device_state(int ordinal) {
  const DriverApi& A = api();
  if (ordinal < 0 || ordinal >= kMaxDevices) no_such_device(ordinal, device_count());
  DeviceState& s = devices()[ordinal];
  // After the first success call_once is one acquire load; a throw leaves it retryable.
  std::call_once(s.once, [&] {
    int n = 0;
    check(A.DeviceGetCount(&n), "cuDeviceGetCount");
    if (ordinal >= n) no_such_device(ordinal, n);
    CUdevice dev = device_handle(ordinal);
    CUcontext ctx = nullptr;
    check(A.DevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain", "device " + std::to_string(ordinal));
    DeviceInfo& I = s.info;
    I.ordinal = ordinal;
    char name[256] = {};
    check(A.DeviceGetName(name, sizeof(name) - 1, dev), "cuDeviceGetName");
    I.name = name;
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      check(A.DeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
      return v;
    };
    I.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    I.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    I.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    I.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    I.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    I.shared_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    I.shared_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    I.shared_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    I.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    size_t total = 0;
    check(A.DeviceTotalMem(&total, dev), "cuDeviceTotalMem");
    I.total_memory = static_cast<int64_t>(total);
    s.ctx = ctx;  // primary contexts are kept for the life of the process
  });
  if (!s.ctx) throw UserError("CUDA device " + std::to_string(ordinal) + " could not be initialized");
  return s;
}

}  // namespace

std::string driver_load_error(const char* soname) {
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib) {
    dlclose(lib);
    return "";
  }
  return missing_driver_message(soname, dl_error());
}

const DriverApi& api() {
  const Loaded& L = loaded();
  if (!L.ok) throw UserError(L.error);
  return L.api;
}

std::string error_text(CUresult rc) {
  const Loaded& L = loaded();
  const char* n = nullptr;
  const char* s = nullptr;
  if (L.api.GetErrorName) L.api.GetErrorName(rc, &n);
  if (L.api.GetErrorString) L.api.GetErrorString(rc, &s);
  std::string r = n ? n : "CUDA error " + std::to_string(static_cast<int>(rc));
  if (s) r += std::string(" (") + s + ")";
  return r;
}

void throw_error(CUresult rc, std::string_view call, std::string_view context) {
  std::string msg = "CUDA error " + error_text(rc) + " in " + std::string(call);
  if (!context.empty()) msg += " " + std::string(context);
  throw CudaError(static_cast<int>(rc), msg);
}

CUdevice device_handle(int ordinal) {
  CUdevice dev = 0;
  check(api().DeviceGet(&dev, ordinal), "cuDeviceGet", "device " + std::to_string(ordinal));
  return dev;
}

CUcontext ensure_context(int device) {
  const DriverApi& A = api();
  CUcontext want = device_state(device).ctx;
  CUcontext cur = nullptr;
  A.CtxGetCurrent(&cur);
  if (cur != want) check(A.CtxSetCurrent(want), "cuCtxSetCurrent");
  return want;
}

CUcontext ensure_context() { return ensure_context(g_device.load(std::memory_order_relaxed)); }

}  // namespace detail

bool driver_available(std::string* why) {
  const detail::Loaded& L = detail::loaded();
  if (L.ok) {
    int n = 0;
    CUresult rc = L.api.DeviceGetCount(&n);
    if (rc == CUDA_SUCCESS && n > 0) return true;
    if (why) *why = rc != CUDA_SUCCESS ? "cuDeviceGetCount failed: " + detail::error_text(rc) : "no CUDA device found";
    return false;
  }
  if (why) *why = L.error;
  return false;
}

int driver_version() { return detail::api().version; }

int device_count() {
  int n = 0;
  detail::check(detail::api().DeviceGetCount(&n), "cuDeviceGetCount");
  return n;
}

int current_device() { return detail::g_device.load(std::memory_order_relaxed); }

void set_device(int ordinal) {
  detail::device_state(ordinal);  // validates and retains the primary context
  detail::g_device.store(ordinal, std::memory_order_relaxed);
  detail::ensure_context(ordinal);
}

const DeviceInfo& device_info(int ordinal) { return detail::device_state(ordinal).info; }
const DeviceInfo& device_info() { return device_info(current_device()); }

nvptx::Target DeviceInfo::target() const { return target_for_compute_capability(cc_major, cc_minor); }

nvptx::Target target_for_compute_capability(int major, int minor) {
  nvptx::Target t;
  if (major == 9 && minor == 0) {
    t.sm = 90;
    t.arch_specific = true;  // sm_90a: wgmma and TMA; such code runs only on 9.0
  } else if (major >= 9) {
    t.sm = 90;  // newer GPUs JIT sm_90 PTX forward (sm_90a code would not run there)
  } else if (major == 8) {
    t.sm = 80;
  } else {
    throw UserError("CUDA device with compute capability " + std::to_string(major) + "." + std::to_string(minor) +
                    " is not supported (tilefuse generates code for sm_80 and newer); use an Ampere or newer GPU "
                    "or the interpreter");
  }
  return t;
}

void synchronize() {
  detail::ensure_context();
  detail::check(detail::api().CtxSynchronize(), "cuCtxSynchronize");
}

CUcontext context() { return detail::ensure_context(); }

void* driver_symbol(const char* base_name) {
  const detail::DriverApi& A = detail::api();
  void* p = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult rc = A.GetProcAddress(base_name, &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found);
  if (rc != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || !p)
    throw UserError(std::string("the CUDA driver has no entry point '") + base_name +
                    "' at the CUDA 12.0 ABI (pass a base name such as \"cuLaunchKernel\")");
  return p;
}

}  // namespace tilefuse::cuda
