// DLTensor -> TensorView with the checks of include/tilefuse/dlpack.hpp.
#include "tilefuse/dlpack.hpp"

#include <dlpack/dlpack.h>

#include <type_traits>

namespace tilefuse {
namespace {

// DLPack 1.1's 8-bit float codes (the system header may predate them).
constexpr uint8_t kFloat8E4M3FN = 10, kFloat8E5M2 = 12;

bool dtype_from_dlpack(DLDataType t, DType& out) {
  if (t.lanes != 1) return false;
  if (t.code == kFloat8E4M3FN && t.bits == 8) return out = DType::f8e4m3, true;
  if (t.code == kFloat8E5M2 && t.bits == 8) return out = DType::f8e5m2, true;
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 16) return out = DType::f16, true;
      if (t.bits == 32) return out = DType::f32, true;
      if (t.bits == 64) return out = DType::f64, true;
      return false;
    case kDLBfloat:
      return t.bits == 16 ? (out = DType::bf16, true) : false;
    case kDLInt:
      if (t.bits == 8) return out = DType::i8, true;
      if (t.bits == 16) return out = DType::i16, true;
      if (t.bits == 32) return out = DType::i32, true;
      if (t.bits == 64) return out = DType::i64, true;
      return false;
    case kDLUInt:
      if (t.bits == 8) return out = DType::u8, true;
      if (t.bits == 32) return out = DType::u32, true;
      return false;
    default:
      return false;
  }
}

std::string dlpack_dtype_name(DLDataType t) {
  const char* code = t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint" : t.code == kDLFloat ? "float"
                   : t.code == kDLBfloat ? "bfloat" : t.code == kDLComplex ? "complex"
                   : t.code == kFloat8E4M3FN ? "float8_e4m3fn" : t.code == kFloat8E5M2 ? "float8_e5m2" : "code ";
  std::string s = code;
  if (s == "code ") s += std::to_string(t.code) + " ";
  s += std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

}  // namespace

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool TensorView::contiguous() const {
  int64_t expect = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expect) return false;  // size-1 dims may carry any stride
    expect *= shape[i];
  }
  return true;
}

std::string TensorView::describe() const {
  std::string s = std::string(name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "] on " + (on_device ? "cuda:" + std::to_string(device_id) : std::string("cpu"));
}

void TensorView::check(DType want, bool want_device, const std::string& what) const {
  if (dtype != want)
    user_error(what + " has dtype " + name(dtype) + ", expected " + name(want), SourceLoc{},
               "Pass every tensor of one call in the same dtype");
  if (on_device != want_device)
    user_error(what + " is " + describe() + ", expected " + (want_device ? "a CUDA tensor" : "a CPU tensor"),
               SourceLoc{}, "Pass all tensors of one call on the CPU (interpreter) or all on one CUDA device (GPU)");
  if (!contiguous())
    user_error(what + " (" + describe() + ") is not contiguous", SourceLoc{},
               "Pass a contiguous tensor (e.g. x.contiguous() in PyTorch, np.ascontiguousarray in NumPy)");
}

TensorView from_dltensor(const DLTensor& t) {
  TensorView v;
  if (t.device.device_type == kDLCUDA || t.device.device_type == kDLCUDAManaged) v.on_device = true;
  else if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
    user_error("a DLPack tensor on device type " + std::to_string(t.device.device_type) +
                   " (tilefuse runs CPU tensors on its interpreter and CUDA tensors on the GPU)",
               SourceLoc{}, "Move the tensor to the CPU or to a CUDA device");
  v.device_id = t.device.device_id;
  if (!dtype_from_dlpack(t.dtype, v.dtype))
    user_error("a DLPack tensor of dtype " + dlpack_dtype_name(t.dtype) + ", which tilefuse has no element type for",
               SourceLoc{}, "Use float16, bfloat16, float32, float64, int8..int64, uint8 or uint32");
  if (t.ndim < 0) user_error("a DLPack tensor with ndim " + std::to_string(t.ndim), SourceLoc{});
  v.shape.assign(t.shape, t.shape + t.ndim);
  for (int64_t d : v.shape)
    if (d < 0) user_error("a DLPack tensor with a negative dimension", SourceLoc{});
  if (t.strides) {
    v.strides.assign(t.strides, t.strides + t.ndim);
  } else {  // null strides: compact row-major
    v.strides.resize(t.ndim);
    int64_t s = 1;
    for (int i = t.ndim; i-- > 0;) v.strides[i] = s, s *= v.shape[i];
  }
  v.data = static_cast<char*>(t.data) + t.byte_offset;
  return v;
}

TensorView from_dlpack(const DLManagedTensor* tensor) {
  if (!tensor) user_error("from_dlpack: a null DLManagedTensor", SourceLoc{});
  return from_dltensor(tensor->dl_tensor);
}

}  // namespace tilefuse
