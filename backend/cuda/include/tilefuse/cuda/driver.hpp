#pragma once
// The CUDA driver, loaded at run time: libtilefuse has no link-time dependency on
// libcuda, so tracing, the interpreter and PTX emission work on machines without a GPU.
// Everything that touches the GPU calls into the driver table loaded here; when no
// driver exists it throws UserError "no CUDA driver found (...)".
#include <cstdint>
#include <string>

#include "tilefuse/ir/errors.hpp"
#include "tilefuse/nvptx/compiled_kernel.hpp"

// Opaque driver handles, declared exactly as cuda.h declares them (a repeated identical
// typedef is valid C++), so public headers do not need the CUDA toolkit.
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;

namespace tilefuse::cuda {

// A failed driver call. what() names the CUDA error (cuGetErrorName), its description,
// the driver call and what tilefuse was doing (for launches: kernel name and config).
class CudaError : public UserError {
 public:
  CudaError(int code, const std::string& what) : UserError(what), code_(code) {}
  int code() const { return code_; }  // the CUresult value
 private:
  int code_;
};

// True when libcuda.so.1 loads, exports the CUDA 12.0 entry points and cuInit succeeds.
// Otherwise false, with the reason in *why (when given). Never throws.
bool driver_available(std::string* why = nullptr);

// The driver's CUDA version, e.g. 13000 (throws when no driver is available).
int driver_version();

// Number of CUDA devices (throws when no driver is available).
int device_count();

// The device used by allocations, streams, loads and launches of this process
// (default 0). Setting it retains that device's primary context.
int current_device();
void set_device(int ordinal);

struct DeviceInfo {
  int ordinal = 0;
  std::string name;                  // "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;    // compute capability
  int sm_count = 0;                  // streaming multiprocessors
  int64_t l2_bytes = 0;              // L2 cache size
  int64_t total_memory = 0;          // bytes of device memory
  int max_threads_per_block = 0;
  int shared_per_block = 0;          // default limit (48 KB)
  int shared_per_block_optin = 0;    // with cuFuncSetAttribute opt-in (227 KB on H100)
  int shared_per_sm = 0;
  int warp_size = 32;

  int compute_capability() const { return cc_major * 10 + cc_minor; }  // 90 for 9.0
  // The code generation target for this device (see target_for_compute_capability).
  nvptx::Target target() const;
};

// Properties of a device (queried once, then cached). Throws when no driver is available.
const DeviceInfo& device_info(int ordinal);
const DeviceInfo& device_info();  // the current device

// The compiler target for a compute capability: 9.0 -> sm_90a (wgmma, TMA);
// 8.x -> sm_80; 10.0 and newer -> sm_90 (portable PTX the driver JITs forward).
// Devices older than 8.0 are not supported (UserError).
nvptx::Target target_for_compute_capability(int major, int minor);

// Blocks until all work on the current device's context is done.
void synchronize();

// The current device's primary context (retained once, made current on this thread).
CUcontext context();

// Escape hatch for interop and benchmarks: the driver entry point `base_name`
// ("cuLaunchKernel", not "cuLaunchKernel_v2") at the CUDA 12.0 ABI; cast it to the
// matching PFN_<name>_vNNNN typedef of cudaTypedefs.h. Throws when not found.
void* driver_symbol(const char* base_name);

namespace detail {
// The user-facing message for a driver library that cannot be dlopen'ed, or "" when
// `soname` loads. Exposed for tests of the error text.
std::string driver_load_error(const char* soname);
}  // namespace detail

}  // namespace tilefuse::cuda
