#pragma once
// Scalar numeric rules of the interpreter: integer wrapping, float rounding to each
// format (round to nearest even, with no double-rounding error), and conversions.
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tilefuse/ir/dtype.hpp"
#include "tilefuse/ir/float8.hpp"
#include "tilefuse/ir/half.hpp"

namespace tilefuse::interp::detail {

// Two's-complement wrap of `v` to the width of integer dtype `d`, normalized
// (sign-extended for signed types, zero-extended for unsigned, 0/1 for i1).
inline int64_t wrap_int(int64_t v, DType d) {
  switch (d) {
    case DType::i1: return v & 1;
    case DType::i8: return static_cast<int8_t>(v);
    case DType::i16: return static_cast<int16_t>(v);
    case DType::i32: return static_cast<int32_t>(v);
    case DType::u8: return static_cast<uint8_t>(v);
    case DType::u32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

inline int64_t int_min(DType d) {
  if (is_unsigned(d)) return 0;
  return d == DType::i64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bit_width(d) - 1));
}
inline int64_t int_max(DType d) {
  if (d == DType::i64) return std::numeric_limits<int64_t>::max();
  return is_unsigned(d) ? (int64_t(1) << bit_width(d)) - 1 : (int64_t(1) << (bit_width(d) - 1)) - 1;
}

// Rounding to odd: the result keeps a sticky bit, so a later round-to-nearest-even to
// a format with at least 2 fewer significand bits equals rounding the exact value once.
inline float double_to_float_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if (std::isinf(f)) {
    f = std::copysign(FLT_MAX, static_cast<float>(d));
  } else if (std::fabs(static_cast<double>(f)) > std::fabs(d)) {
    f = std::nextafter(f, 0.0f);
  }
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}
inline double int_to_double_odd(int64_t v) {
  uint64_t u = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  if (u < (uint64_t(1) << 53)) return static_cast<double>(v);
  int drop = 64 - std::countl_zero(u) - 53;
  uint64_t q = u >> drop;
  if (u & ((uint64_t(1) << drop) - 1)) q |= 1;
  double d = std::ldexp(static_cast<double>(q), drop);
  return v < 0 ? -d : d;
}

// Round a float-format value (exactly a float) to f16/bf16/f32/f8 storage.
template <DType D>
inline float round_narrow(float x) {
  if constexpr (D == DType::f16) return static_cast<float>(half(x));
  else if constexpr (D == DType::bf16) return static_cast<float>(bfloat16(x));
  else if constexpr (D == DType::f8e4m3) return static_cast<float>(float8_e4m3(x));
  else if constexpr (D == DType::f8e5m2) return static_cast<float>(float8_e5m2(x));
  else return x;
}
// The same with the dtype known at run time (f64 excluded: x is a float).
inline float round_narrow(float x, DType d) {
  switch (d) {
    case DType::f16: return round_narrow<DType::f16>(x);
    case DType::bf16: return round_narrow<DType::bf16>(x);
    case DType::f8e4m3: return round_narrow<DType::f8e4m3>(x);
    case DType::f8e5m2: return round_narrow<DType::f8e5m2>(x);
    default: return x;
  }
}

// Round an arbitrary double to float dtype `d` (one correct rounding).
inline double round_to(double x, DType d) {
  switch (d) {
    case DType::f64: return x;
    case DType::f32: return static_cast<float>(x);
    case DType::f16: return static_cast<float>(half(double_to_float_odd(x)));
    case DType::bf16: case DType::f8e4m3: case DType::f8e5m2: return round_narrow(double_to_float_odd(x), d);
    default: return x;
  }
}

// Integer (normalized) to float dtype `d`, rounding to nearest even.
inline double int_to_float(int64_t v, DType d) {
  switch (d) {
    case DType::f64: return static_cast<double>(v);
    case DType::f32: return static_cast<float>(v);
    default: return round_to(static_cast<double>(double_to_float_odd(int_to_double_odd(v))), d);
  }
}

// Float to integer dtype `d`: truncation toward zero, saturating at the range of `d`,
// NaN -> 0 (like cvt.rzi.sat); to i1 is "x != 0".
inline int64_t float_to_int(double x, DType d) {
  if (d == DType::i1) return x != 0;
  if (std::isnan(x)) return 0;
  double t = std::trunc(x);
  int64_t lo = int_min(d), hi = int_max(d);
  if (t <= static_cast<double>(lo)) return lo;
  if (t >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(t);
}

// Integer to integer dtype `d`: wrap (to i1 is "v != 0").
inline int64_t int_to_int(int64_t v, DType d) { return d == DType::i1 ? (v != 0) : wrap_int(v, d); }

}  // namespace tilefuse::interp::detail
