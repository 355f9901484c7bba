// Value casts between element types (not bitcasts): float narrowing rounds to nearest
// even, float -> int truncates toward zero and saturates (NaN -> 0), int -> int wraps,
// anything -> i1 is "!= 0".
#include "exec.hpp"
#include "numeric.hpp"

namespace tilefuse::interp::detail {

void exec_cast(Exec& ex, const ir::Op& op) {
  const ir::Value* res = op.result();
  const ir::Value* src = op.operand(0);
  TF_ASSERT(!res->type.is_ptr && !src->type.is_ptr, "cast of a pointer");
  const int64_t n = res->type.numel();
  TF_ASSERT(src->type.numel() == n, "cast changes the shape");
  const DType from = src->type.dtype, to = res->type.dtype;
  const Slot& in = ex.at(src);
  Slot& out = ex.at(res);
  if (is_float(from) && is_float(to)) {
    out.f.resize(n);
    const double* a = in.f.data();
    double* o = out.f.data();
    if (to == DType::f64 || (to == DType::f32 && from != DType::f64)) {  // exact
      for (int64_t k = 0; k < n; ++k) o[k] = a[k];
    } else if (from != DType::f64) {  // a float-exact value to f16/bf16/f8
      for (int64_t k = 0; k < n; ++k) o[k] = round_narrow(static_cast<float>(a[k]), to);
    } else {
      for (int64_t k = 0; k < n; ++k) o[k] = round_to(a[k], to);
    }
  } else if (is_float(from)) {
    out.i.resize(n);
    for (int64_t k = 0; k < n; ++k) out.i[k] = float_to_int(in.f[k], to);
  } else if (is_float(to)) {
    out.f.resize(n);
    for (int64_t k = 0; k < n; ++k) out.f[k] = int_to_float(in.i[k], to);
  } else {
    out.i.resize(n);
    for (int64_t k = 0; k < n; ++k) out.i[k] = int_to_int(in.i[k], to);
  }
}

}  // namespace tilefuse::interp::detail
