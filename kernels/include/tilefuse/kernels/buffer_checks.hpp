#pragma once
// Argument checks of the gallery's elementwise and training kernels: every buffer of a
// call shares the first one's dtype and holds at least the elements the shape needs.
// The kernel launch would catch a wrong dtype too, but only by its parameter name;
// these messages name the host function's argument and the shape.
#include <cstdint>
#include <string>

#include "tilefuse/kernels/common.hpp"

namespace tilefuse::kernels {

// `buf` (argument `what` of `fn`) must have dtype T (the dtype of argument `ref`).
template <class T, class B>
void check_buffer_dtype(const char* fn, const char* what, const B&, const char* ref) {
  DType got = dtype_v<buffer_elem_t<B>>;
  if (got != dtype_v<T>)
    user_error(std::string(fn) + ": " + what + " has dtype " + name(got) + ", but " + ref + " has " +
                   name(dtype_v<T>),
               SourceLoc{}, std::string("Pass every buffer of one ") + fn + " call in the same dtype");
}

// `buf` must hold rows x cols elements (`shape` spells the shape in the caller's terms,
// e.g. "M x 2N").
template <class B>
void check_buffer_size(const char* fn, const char* what, const B& buf, int64_t rows, int64_t cols,
                       const char* shape) {
  int64_t need = rows * cols;
  if (static_cast<int64_t>(buf.size()) < need)
    user_error(std::string(fn) + ": " + what + " has " + std::to_string(buf.size()) + " elements, but " + shape +
                   " = " + std::to_string(rows) + " x " + std::to_string(cols) + " needs " + std::to_string(need),
               SourceLoc{}, std::string("Pass ") + what + " with " + shape + " elements, or fix the sizes");
}

// Sizes of one call: positive, and each row indexable with 32-bit column numbers.
inline void check_matrix_dims(const char* fn, int64_t rows, int64_t cols) {
  if (rows < 1 || cols < 1 || cols > (int64_t(1) << 30))
    user_error(std::string(fn) + ": sizes " + std::to_string(rows) + " x " + std::to_string(cols) +
                   " are out of range",
               SourceLoc{}, "Pass at least one row and between 1 and 2^30 columns");
}

}  // namespace tilefuse::kernels
