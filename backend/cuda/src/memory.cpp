// Device memory through the driver table.
#include "tilefuse/cuda/memory.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>

#include "driver_api.hpp"

namespace tilefuse::cuda {

using detail::api;
using detail::check;
using detail::dptr;

void* mem_alloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  detail::ensure_context();
  CUdeviceptr p = 0;
  CUresult rc = api().MemAlloc(&p, bytes);
  if (rc != CUDA_SUCCESS) {
    std::string ctx = "(allocating " + std::to_string(bytes) + " bytes";
    size_t free = 0, total = 0;
    if (api().MemGetInfo(&free, &total) == CUDA_SUCCESS)
      ctx += "; " + std::to_string(free >> 20) + " MiB of " + std::to_string(total >> 20) + " MiB free";
    detail::throw_error(rc, "cuMemAlloc", ctx + ")");
  }
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

void mem_free(void* device) noexcept {
  if (!device) return;
  try {
    detail::ensure_context();
    api().MemFree(dptr(device));  // errors here (e.g. at process teardown) are ignored
  } catch (...) {
  }
}

namespace {

bool have_pools() { return api().MemPoolCreate && api().MemPoolSetAttribute && api().MemAllocFromPoolAsync && api().MemFreeAsync; }

// tilefuse's own stream-ordered pool per device. It keeps up to 1 GiB of freed memory
// between calls (a GEMM's operand copies every call would otherwise map fresh pages
// each time: measured 10x slower than the copy itself); more is returned to the device
// at the next synchronization. Other pools in the process are left as they are.
CUmemoryPool scratch_pool() {
  static std::mutex m;
  static std::unordered_map<int, CUmemoryPool> pools;
  int device = current_device();
  std::lock_guard<std::mutex> lock(m);
  CUmemoryPool& pool = pools[device];
  if (!pool) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device;
    check(api().MemPoolCreate(&pool, &props), "cuMemPoolCreate", "(tilefuse's scratch pool)");
    cuuint64_t keep = cuuint64_t{1} << 30;
    check(api().MemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep), "cuMemPoolSetAttribute",
          "(tilefuse's scratch pool)");
  }
  return pool;
}

}  // namespace

void* mem_alloc_async(size_t bytes, CUstream stream) {
  if (bytes == 0) return nullptr;
  detail::ensure_context();
  if (!have_pools()) return mem_alloc(bytes);
  CUdeviceptr p = 0;
  check(api().MemAllocFromPoolAsync(&p, bytes, scratch_pool(), stream), "cuMemAllocFromPoolAsync",
        "(allocating " + std::to_string(bytes) + " bytes)");
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

void mem_free_async(void* device, CUstream stream) noexcept {
  if (!device) return;
  try {
    detail::ensure_context();
    if (have_pools()) api().MemFreeAsync(dptr(device), stream);
    else api().MemFree(dptr(device));
  } catch (...) {
  }
}

uint32_t* stream_counters(CUstream stream) {
  static std::mutex m;
  static std::map<std::pair<int, CUstream>, uint32_t*> arrays;
  detail::ensure_context();
  std::lock_guard<std::mutex> lock(m);
  uint32_t*& a = arrays[{current_device(), stream}];
  if (!a) {
    a = static_cast<uint32_t*>(mem_alloc(kStreamCounters * sizeof(uint32_t)));
    memset_d32(a, 0, kStreamCounters, stream);
  }
  return a;
}

void* cluster_workspace(CUstream stream, size_t bytes) {
  struct Workspace {
    void* ptr = nullptr;
    size_t size = 0;
  };
  static std::mutex m;
  static std::map<std::pair<int, CUstream>, Workspace> spaces;
  detail::ensure_context();
  std::lock_guard<std::mutex> lock(m);
  Workspace& w = spaces[{current_device(), stream}];
  if (w.size < bytes) {
    size_t grown = std::max(bytes, w.size * 2);
    if (w.ptr) {
      check(api().StreamSynchronize(stream), "cuStreamSynchronize", "(before growing the cluster workspace)");
      mem_free(w.ptr);
    }
    w = Workspace{};
    void* p = mem_alloc(grown);
    memset_d8(p, 0, grown, stream);
    w = Workspace{p, grown};
  }
  return w.ptr;
}

void memcpy_htod(void* dst, const void* src, size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  detail::ensure_context();
  if (stream)
    check(api().MemcpyHtoDAsync(dptr(dst), src, bytes, stream), "cuMemcpyHtoDAsync");
  else
    check(api().MemcpyHtoD(dptr(dst), src, bytes), "cuMemcpyHtoD", "(" + std::to_string(bytes) + " bytes)");
}

void memcpy_dtoh(void* dst, const void* src, size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  detail::ensure_context();
  if (stream)
    check(api().MemcpyDtoHAsync(dst, dptr(src), bytes, stream), "cuMemcpyDtoHAsync");
  else
    check(api().MemcpyDtoH(dst, dptr(src), bytes), "cuMemcpyDtoH", "(" + std::to_string(bytes) + " bytes)");
}

void memcpy_dtod(void* dst, const void* src, size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  detail::ensure_context();
  if (stream)
    check(api().MemcpyDtoDAsync(dptr(dst), dptr(src), bytes, stream), "cuMemcpyDtoDAsync");
  else
    check(api().MemcpyDtoD(dptr(dst), dptr(src), bytes), "cuMemcpyDtoD");
}

void memset_d8(void* dst, uint8_t value, size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  detail::ensure_context();
  if (stream)
    check(api().MemsetD8Async(dptr(dst), value, bytes, stream), "cuMemsetD8Async");
  else
    check(api().MemsetD8(dptr(dst), value, bytes), "cuMemsetD8");
}

void memset_d32(void* dst, uint32_t value, size_t count, CUstream stream) {
  if (count == 0) return;
  detail::ensure_context();
  if (stream)
    check(api().MemsetD32Async(dptr(dst), value, count, stream), "cuMemsetD32Async");
  else
    check(api().MemsetD32(dptr(dst), value, count), "cuMemsetD32");
}

std::pair<size_t, size_t> mem_info() {
  detail::ensure_context();
  size_t free = 0, total = 0;
  check(api().MemGetInfo(&free, &total), "cuMemGetInfo");
  return {free, total};
}

namespace detail {
void size_mismatch(const char* what, size_t have, size_t want) {
  throw UserError(std::string(what) + ": " + std::to_string(have) + " elements requested but the device buffer holds " +
                  std::to_string(want) + "; pass a span no longer than the buffer");
}
}  // namespace detail

}  // namespace tilefuse::cuda
