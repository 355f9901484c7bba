#pragma once
// Internal: the driver function table (CUDA 12.0 ABI) and error helpers.
// Only backend/cuda sources include cuda.h.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>
#include <string_view>

#include "tilefuse/cuda/driver.hpp"

namespace tilefuse::cuda::detail {

// X(member, "base name", PFN typedef current at CUDA 12.0). Members drop the "cu" prefix
// so cuda.h's versioning macros (cuMemAlloc -> cuMemAlloc_v2) cannot rename them.
#define TF_CUDA_DRIVER_FUNCTIONS(X)                                                   \
  X(Init, "cuInit", PFN_cuInit_v2000)                                                 \
  X(DriverGetVersion, "cuDriverGetVersion", PFN_cuDriverGetVersion_v2020)             \
  X(GetErrorName, "cuGetErrorName", PFN_cuGetErrorName_v6000)                         \
  X(GetErrorString, "cuGetErrorString", PFN_cuGetErrorString_v6000)                   \
  X(DeviceGetCount, "cuDeviceGetCount", PFN_cuDeviceGetCount_v2000)                   \
  X(DeviceGet, "cuDeviceGet", PFN_cuDeviceGet_v2000)                                  \
  X(DeviceGetName, "cuDeviceGetName", PFN_cuDeviceGetName_v2000)                      \
  X(DeviceGetAttribute, "cuDeviceGetAttribute", PFN_cuDeviceGetAttribute_v2000)       \
  X(DeviceTotalMem, "cuDeviceTotalMem", PFN_cuDeviceTotalMem_v3020)                   \
  X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", PFN_cuDevicePrimaryCtxRetain_v7000) \
  X(CtxSetCurrent, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000)                      \
  X(CtxGetCurrent, "cuCtxGetCurrent", PFN_cuCtxGetCurrent_v4000)                      \
  X(CtxSynchronize, "cuCtxSynchronize", PFN_cuCtxSynchronize_v2000)                   \
  X(ModuleLoadDataEx, "cuModuleLoadDataEx", PFN_cuModuleLoadDataEx_v2010)             \
  X(ModuleLoadData, "cuModuleLoadData", PFN_cuModuleLoadData_v2000)                   \
  X(ModuleUnload, "cuModuleUnload", PFN_cuModuleUnload_v2000)                         \
  X(ModuleGetFunction, "cuModuleGetFunction", PFN_cuModuleGetFunction_v2000)          \
  X(FuncGetAttribute, "cuFuncGetAttribute", PFN_cuFuncGetAttribute_v2020)             \
  X(FuncSetAttribute, "cuFuncSetAttribute", PFN_cuFuncSetAttribute_v9000)             \
  X(LaunchKernel, "cuLaunchKernel", PFN_cuLaunchKernel_v4000)                         \
  X(LaunchKernelEx, "cuLaunchKernelEx", PFN_cuLaunchKernelEx_v11060)                   \
  X(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor",   \
    PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050)                                \
  X(LinkCreate, "cuLinkCreate", PFN_cuLinkCreate_v6050)                               \
  X(LinkAddData, "cuLinkAddData", PFN_cuLinkAddData_v6050)                            \
  X(LinkComplete, "cuLinkComplete", PFN_cuLinkComplete_v5050)                         \
  X(LinkDestroy, "cuLinkDestroy", PFN_cuLinkDestroy_v5050)                            \
  X(MemAlloc, "cuMemAlloc", PFN_cuMemAlloc_v3020)                                     \
  X(MemFree, "cuMemFree", PFN_cuMemFree_v3020)                                        \
  X(MemGetInfo, "cuMemGetInfo", PFN_cuMemGetInfo_v3020)                               \
  X(MemcpyHtoD, "cuMemcpyHtoD", PFN_cuMemcpyHtoD_v3020)                               \
  X(MemcpyDtoH, "cuMemcpyDtoH", PFN_cuMemcpyDtoH_v3020)                               \
  X(MemcpyDtoD, "cuMemcpyDtoD", PFN_cuMemcpyDtoD_v3020)                               \
  X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync", PFN_cuMemcpyHtoDAsync_v3020)                \
  X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync", PFN_cuMemcpyDtoHAsync_v3020)                \
  X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync", PFN_cuMemcpyDtoDAsync_v3020)                \
  X(MemsetD8, "cuMemsetD8", PFN_cuMemsetD8_v3020)                                     \
  X(MemsetD8Async, "cuMemsetD8Async", PFN_cuMemsetD8Async_v3020)                      \
  X(MemsetD32, "cuMemsetD32", PFN_cuMemsetD32_v3020)                                  \
  X(MemsetD32Async, "cuMemsetD32Async", PFN_cuMemsetD32Async_v3020)                   \
  X(StreamCreate, "cuStreamCreate", PFN_cuStreamCreate_v2000)                         \
  X(StreamDestroy, "cuStreamDestroy", PFN_cuStreamDestroy_v4000)                      \
  X(StreamSynchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize_v2000)          \
  X(EventCreate, "cuEventCreate", PFN_cuEventCreate_v2000)                            \
  X(EventDestroy, "cuEventDestroy", PFN_cuEventDestroy_v4000)                         \
  X(EventRecord, "cuEventRecord", PFN_cuEventRecord_v2000)                            \
  X(EventSynchronize, "cuEventSynchronize", PFN_cuEventSynchronize_v2000)             \
  X(EventElapsedTime, "cuEventElapsedTime", PFN_cuEventElapsedTime_v2000)

// Entry points only some kernels need: a driver without them still loads, the member
// stays nullptr, and the feature's user checks it (with a UserError naming the fix).
#define TF_CUDA_OPTIONAL_DRIVER_FUNCTIONS(X)                                          \
  X(TensorMapEncodeTiled, "cuTensorMapEncodeTiled", PFN_cuTensorMapEncodeTiled_v12000) \
  X(MemPoolCreate, "cuMemPoolCreate", PFN_cuMemPoolCreate_v11020)                     \
  X(MemPoolSetAttribute, "cuMemPoolSetAttribute", PFN_cuMemPoolSetAttribute_v11020)   \
  X(MemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", PFN_cuMemAllocFromPoolAsync_v11020) \
  X(MemFreeAsync, "cuMemFreeAsync", PFN_cuMemFreeAsync_v11020)                       \
  X(OccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters", PFN_cuOccupancyMaxActiveClusters_v11070)

struct DriverApi {
#define TF_CUDA_MEMBER(member, name, pfn) pfn member = nullptr;
  TF_CUDA_DRIVER_FUNCTIONS(TF_CUDA_MEMBER)
  TF_CUDA_OPTIONAL_DRIVER_FUNCTIONS(TF_CUDA_MEMBER)
#undef TF_CUDA_MEMBER
  PFN_cuGetProcAddress_v12000 GetProcAddress = nullptr;
  int version = 0;
};

// The loaded driver table; throws UserError ("no CUDA driver found ...") if unavailable.
const DriverApi& api();

// "CUDA_ERROR_X (description)" for a result code.
std::string error_text(CUresult rc);
// Throws CudaError "CUDA error <name> (<description>) in <call>[ <context>]".
[[noreturn]] void throw_error(CUresult rc, std::string_view call, std::string_view context = {});
inline void check(CUresult rc, std::string_view call, std::string_view context = {}) {
  if (rc != CUDA_SUCCESS) throw_error(rc, call, context);
}

// Makes the current device's primary context current on this thread and returns it.
CUcontext ensure_context();
CUcontext ensure_context(int device);
CUdevice device_handle(int ordinal);

inline CUdeviceptr dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

}  // namespace tilefuse::cuda::detail
