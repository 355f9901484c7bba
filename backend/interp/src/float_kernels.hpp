#pragma once
// Loops applying a float function over whole tiles: f16/bf16/f32 are computed in
// float and rounded to their format after the op, f64 in double.
#include <cstdint>

#include "numeric.hpp"
#include "tilefuse/ir/errors.hpp"

namespace tilefuse::interp::detail {

template <DType D, class Fn>
inline void map1_narrow(const double* a, double* o, int64_t n, Fn fn) {
  for (int64_t k = 0; k < n; ++k) o[k] = round_narrow<D>(fn(static_cast<float>(a[k])));
}
template <DType D, class Fn>
inline void map2_narrow(const double* a, const double* b, double* o, int64_t n, Fn fn) {
  for (int64_t k = 0; k < n; ++k) o[k] = round_narrow<D>(fn(static_cast<float>(a[k]), static_cast<float>(b[k])));
}
template <DType D, class Fn>
inline void map3_narrow(const double* a, const double* b, const double* c, double* o, int64_t n, Fn fn) {
  for (int64_t k = 0; k < n; ++k)
    o[k] = round_narrow<D>(fn(static_cast<float>(a[k]), static_cast<float>(b[k]), static_cast<float>(c[k])));
}

// fn is generic: called with float for f16/bf16/f32 and with double for f64.
template <class Fn>
inline void map_float(DType d, const double* a, double* o, int64_t n, Fn fn) {
  switch (d) {
    case DType::f64: for (int64_t k = 0; k < n; ++k) o[k] = fn(a[k]); return;
    case DType::f32: return map1_narrow<DType::f32>(a, o, n, fn);
    case DType::f16: return map1_narrow<DType::f16>(a, o, n, fn);
    case DType::bf16: return map1_narrow<DType::bf16>(a, o, n, fn);
    default: internal_error("map_float on a non-float dtype");
  }
}
template <class Fn>
inline void map_float(DType d, const double* a, const double* b, double* o, int64_t n, Fn fn) {
  switch (d) {
    case DType::f64: for (int64_t k = 0; k < n; ++k) o[k] = fn(a[k], b[k]); return;
    case DType::f32: return map2_narrow<DType::f32>(a, b, o, n, fn);
    case DType::f16: return map2_narrow<DType::f16>(a, b, o, n, fn);
    case DType::bf16: return map2_narrow<DType::bf16>(a, b, o, n, fn);
    default: internal_error("map_float on a non-float dtype");
  }
}
template <class Fn>
inline void map_float(DType d, const double* a, const double* b, const double* c, double* o, int64_t n, Fn fn) {
  switch (d) {
    case DType::f64: for (int64_t k = 0; k < n; ++k) o[k] = fn(a[k], b[k], c[k]); return;
    case DType::f32: return map3_narrow<DType::f32>(a, b, c, o, n, fn);
    case DType::f16: return map3_narrow<DType::f16>(a, b, c, o, n, fn);
    case DType::bf16: return map3_narrow<DType::bf16>(a, b, c, o, n, fn);
    default: internal_error("map_float on a non-float dtype");
  }
}

// IEEE 754-2019 minimum/maximum: NaN propagates, -0 < +0.
template <class T>
inline T min_nan(T x, T y) {
  if (x != x || y != y) return x + y;
  if (x < y) return x;
  if (y < x) return y;
  return std::signbit(x) ? x : y;
}
template <class T>
inline T max_nan(T x, T y) {
  if (x != x || y != y) return x + y;
  if (x > y) return x;
  if (y > x) return y;
  return std::signbit(x) ? y : x;
}

}  // namespace tilefuse::interp::detail
