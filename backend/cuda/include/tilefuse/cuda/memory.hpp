#pragma once
// Device memory: raw copies, the owning DeviceBuffer<T> and the non-owning DevicePtr<T>
// (to wrap device memory that another framework owns). Device addresses are carried as
// T* that must not be dereferenced on the host.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/ir/dtype.hpp"
#include "tilefuse/ir/float8.hpp"
#include "tilefuse/ir/half.hpp"
#include "tilefuse/ir/kernel_args.hpp"

namespace tilefuse {

namespace cuda {
// Thin checked wrappers over the driver (current device; stream nullptr = legacy default
// stream, and the copy then completes before returning).
void* mem_alloc(size_t bytes);        // nullptr for 0 bytes
void mem_free(void* device) noexcept; // ignores nullptr; never throws
// Stream-ordered scratch (tilefuse's pool, which keeps up to 1 GiB freed for reuse):
// usable by work queued on `stream` after this call, and freed once the work queued
// before mem_free_async is done. Drivers without pools fall back to mem_alloc / a
// synchronizing mem_free.
void* mem_alloc_async(size_t bytes, CUstream stream);
void mem_free_async(void* device, CUstream stream) noexcept;
void memcpy_htod(void* dst_device, const void* src_host, size_t bytes, CUstream stream = nullptr);
void memcpy_dtoh(void* dst_host, const void* src_device, size_t bytes, CUstream stream = nullptr);
void memcpy_dtod(void* dst_device, const void* src_device, size_t bytes, CUstream stream = nullptr);
void memset_d8(void* dst_device, uint8_t value, size_t bytes, CUstream stream = nullptr);
void memset_d32(void* dst_device, uint32_t value, size_t count, CUstream stream = nullptr);
// Counters for kernels that count their programs in (e.g. the GEMM whose last slice of
// a tile adds the others): kStreamCounters u32 per device and stream, zero whenever no
// kernel is using them, because the kernels that take them leave them zero. Zeroed on
// `stream` when first asked for and kept for the process; kernels queued on one stream
// run one after another, so they share the array.
inline constexpr size_t kStreamCounters = 4096;
uint32_t* stream_counters(CUstream stream);
// The workspace of kernels whose clusters exchange through memory
// (nvptx::CompiledKernel::cluster_in_memory): at least `bytes`, zero whenever no kernel
// is using it (those kernels leave it zeroed), per device and stream. Grown by a new
// zeroed allocation after the stream's earlier work is done with the old one.
void* cluster_workspace(CUstream stream, size_t bytes);
// Free and total device memory in bytes.
std::pair<size_t, size_t> mem_info();

namespace detail {
template <class T> struct dtype_of { static constexpr bool known = false; static constexpr DType value = DType::i8; };
#define TF_CUDA_DTYPE_OF(T, D) \
  template <> struct dtype_of<T> { static constexpr bool known = true; static constexpr DType value = DType::D; };
TF_CUDA_DTYPE_OF(bool, i1)
TF_CUDA_DTYPE_OF(int8_t, i8)
TF_CUDA_DTYPE_OF(uint8_t, u8)
TF_CUDA_DTYPE_OF(int16_t, i16)
TF_CUDA_DTYPE_OF(int32_t, i32)
TF_CUDA_DTYPE_OF(uint32_t, u32)
TF_CUDA_DTYPE_OF(int64_t, i64)
TF_CUDA_DTYPE_OF(half, f16)
TF_CUDA_DTYPE_OF(bfloat16, bf16)
TF_CUDA_DTYPE_OF(float, f32)
TF_CUDA_DTYPE_OF(double, f64)
TF_CUDA_DTYPE_OF(float8_e4m3, f8e4m3)
TF_CUDA_DTYPE_OF(float8_e5m2, f8e5m2)
#undef TF_CUDA_DTYPE_OF
[[noreturn]] void size_mismatch(const char* what, size_t have, size_t want);
}  // namespace detail
}  // namespace cuda

// A non-owning view of `size` elements of T in device memory.
template <class T>
class DevicePtr {
 public:
  DevicePtr() = default;
  DevicePtr(T* device_address, size_t size) : ptr_(device_address), size_(size) {}
  // Wraps a raw device address (e.g. a CUdeviceptr or a framework's data_ptr()).
  static DevicePtr from_address(uint64_t address, size_t size) {
    return DevicePtr(reinterpret_cast<T*>(static_cast<uintptr_t>(address)), size);
  }

  T* data() const { return ptr_; }  // device address
  uint64_t address() const { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ptr_)); }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }
  DevicePtr subview(size_t offset, size_t count) const {
    if (offset + count > size_) cuda::detail::size_mismatch("DevicePtr::subview", offset + count, size_);
    return DevicePtr(ptr_ + offset, count);
  }

  // Copies host data into the first src.size() elements.
  void copy_from_host(std::span<const T> src, CUstream stream = nullptr) const {
    if (src.size() > size_) cuda::detail::size_mismatch("copy_from_host", src.size(), size_);
    cuda::memcpy_htod(ptr_, src.data(), src.size_bytes(), stream);
  }
  // Copies the first dst.size() elements to host memory.
  void copy_to_host(std::span<T> dst, CUstream stream = nullptr) const {
    if (dst.size() > size_) cuda::detail::size_mismatch("copy_to_host", dst.size(), size_);
    cuda::memcpy_dtoh(dst.data(), ptr_, dst.size_bytes(), stream);
  }
  std::vector<T> to_host() const {
    std::vector<T> v(size_);
    copy_to_host(std::span<T>(v));
    return v;
  }
  // Sets every byte to `byte`.
  void memset(uint8_t byte, CUstream stream = nullptr) const { cuda::memset_d8(ptr_, byte, bytes(), stream); }

  // The kernel argument for this buffer.
  ArgValue arg() const {
    static_assert(cuda::detail::dtype_of<std::remove_cv_t<T>>::known,
                  "DevicePtr<T>::arg(): T must be a tilefuse element type (bool, int8..int64, "
                  "uint8, uint32, half, bfloat16, float, double, float8_e4m3, float8_e5m2)");
    return ArgValue::device(const_cast<std::remove_cv_t<T>*>(ptr_), bytes(),
                            cuda::detail::dtype_of<std::remove_cv_t<T>>::value);
  }

 private:
  T* ptr_ = nullptr;
  size_t size_ = 0;
};

// Owning device memory for `size` elements of T (cuMemAlloc / cuMemFree). Move-only.
template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer<T>: T must be trivially copyable");

 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t size)
      : ptr_(static_cast<T*>(cuda::mem_alloc(size * sizeof(T)))), size_(size) {}
  ~DeviceBuffer() { cuda::mem_free(ptr_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      cuda::mem_free(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return ptr_; }  // device address
  uint64_t address() const { return view().address(); }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }
  DevicePtr<T> view() const { return DevicePtr<T>(ptr_, size_); }
  operator DevicePtr<T>() const { return view(); }

  void copy_from_host(std::span<const T> src, CUstream stream = nullptr) const { view().copy_from_host(src, stream); }
  void copy_to_host(std::span<T> dst, CUstream stream = nullptr) const { view().copy_to_host(dst, stream); }
  std::vector<T> to_host() const { return view().to_host(); }
  void memset(uint8_t byte, CUstream stream = nullptr) const { view().memset(byte, stream); }
  ArgValue arg() const { return view().arg(); }

 private:
  T* ptr_ = nullptr;
  size_t size_ = 0;
};

// A new device buffer holding a copy of `host`.
template <class T>
DeviceBuffer<std::remove_cv_t<T>> to_device(std::span<T> host) {
  DeviceBuffer<std::remove_cv_t<T>> b(host.size());
  b.copy_from_host(std::span<const std::remove_cv_t<T>>(host.data(), host.size()));
  return b;
}
template <class T>
DeviceBuffer<T> to_device(const std::vector<T>& host) { return to_device(std::span<const T>(host)); }

}  // namespace tilefuse
