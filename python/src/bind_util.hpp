#pragma once
// What the gallery bindings share: the float dtypes they dispatch on and the
// rows x columns view of a tensor whose last dimension is the row.
#include <type_traits>

#include "tilefuse/python.hpp"

namespace tilefuse::python {

// Calls f(std::type_identity<T>{}) for the float element type of `dtype`.
template <class F>
void dispatch_float(DType dtype, const std::string& fn, F&& f) {
  switch (dtype) {
    case DType::f32: return f(std::type_identity<float>{});
    case DType::f16: return f(std::type_identity<half>{});
    case DType::bf16: return f(std::type_identity<bfloat16>{});
    default:
      user_error(fn + ": dtype " + name(dtype) + " is not supported", SourceLoc{}, "Use float32, float16 or bfloat16");
  }
}

// f(side, std::type_identity<T>{}) for the float type of `dtype`, on the caller's stream,
// on the GPU (`device`) or the interpreter: the frame every gallery binding runs in.
template <class F>
void run_float(DType dtype, const std::string& fn, bool device, uintptr_t stream, F&& f) {
  dispatch_float(dtype, fn, [&]<class T>(std::type_identity<T> t) {
    KernelCall call(stream);
    on_side(device, [&](auto side) { f(side, t); });
  });
}

struct RowsCols {
  int64_t rows = 0, cols = 0;
  bool empty() const { return rows == 0 || cols == 0; }
};

// A tensor of rank >= 1 as rows of its last dimension.
inline RowsCols rows_cols(const TensorView& x, const std::string& what) {
  if (x.shape.empty()) user_error(what + " is a scalar; expected at least one dimension", SourceLoc{});
  RowsCols rc;
  rc.cols = x.shape.back();
  rc.rows = rc.cols == 0 ? 0 : x.numel() / rc.cols;
  return rc;
}

void bind_rows(nb::module_& m);
void bind_attention(nb::module_& m);
void bind_matmul(nb::module_& m);
void bind_training(nb::module_& m);

}  // namespace tilefuse::python
