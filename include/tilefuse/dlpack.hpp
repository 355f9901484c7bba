#pragma once
// DLPack interop: a checked view of another framework's tensor (PyTorch, JAX, CuPy,
// NumPy...) as a tilefuse buffer. Host tensors become std::span (the interpreter runs
// them), CUDA tensors DevicePtr (the GPU runs them). Bad input raises UserError.
//
//   TensorView v = from_dlpack(managed);           // borrowed: the caller keeps `managed` alive
//   auto x = v.device<float>("x");                 // DevicePtr<float>, or UserError naming "x"
#include <dlpack/dlpack.h>  // Debian: libdlpack-dev

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/ir/dtype.hpp"
#include "tilefuse/ir/errors.hpp"

namespace tilefuse {

struct TensorView {
  void* data = nullptr;          // first element (DLPack's data + byte_offset)
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements; filled in for compact tensors
  bool on_device = false;        // CUDA (or CUDA-managed) memory; else host memory
  int device_id = 0;

  int64_t numel() const;
  // Row-major with no gaps: what the gallery's flat kernels index.
  bool contiguous() const;

  // The checked buffers; `what` names the argument in errors. They require this dtype
  // (T), the memory kind (host / device) and a contiguous layout.
  template <class T>
  std::span<T> host(const std::string& what) const {
    check(cuda::detail::dtype_of<std::remove_cv_t<T>>::value, false, what);
    return std::span<T>(static_cast<T*>(data), static_cast<size_t>(numel()));
  }
  template <class T>
  DevicePtr<T> device(const std::string& what) const {
    check(cuda::detail::dtype_of<std::remove_cv_t<T>>::value, true, what);
    return DevicePtr<T>(static_cast<T*>(data), static_cast<size_t>(numel()));
  }
  // The same checks, for callers that dispatch on dtype themselves.
  void check(DType want, bool want_device, const std::string& what) const;

  // "f32[3, 5] on cpu": for error messages.
  std::string describe() const;
};

// A view of `tensor`; UserError for a null tensor, a device other than CPU / CUDA,
// a dtype tilefuse has no element type for, or vector lanes. Does not take ownership.
TensorView from_dlpack(const DLManagedTensor* tensor);
TensorView from_dltensor(const DLTensor& tensor);

}  // namespace tilefuse
