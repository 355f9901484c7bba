#pragma once
// Reading and writing one element of host memory by dtype, with memcpy of the
// element's bytes (f16/bf16/f8 as their bit patterns, i1 as one byte).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tilefuse/ir/dtype.hpp"
#include "tilefuse/ir/errors.hpp"
#include "tilefuse/ir/float8.hpp"
#include "tilefuse/ir/half.hpp"

namespace tilefuse::interp::detail {

template <DType D>
using DTag = std::integral_constant<DType, D>;

// Calls f(DTag<d>{}) so the body can be specialized for the dtype at compile time.
template <class F>
inline void with_dtype(DType d, F&& f) {
  switch (d) {
    case DType::i1: return f(DTag<DType::i1>{});
    case DType::i8: return f(DTag<DType::i8>{});
    case DType::i16: return f(DTag<DType::i16>{});
    case DType::i32: return f(DTag<DType::i32>{});
    case DType::i64: return f(DTag<DType::i64>{});
    case DType::u8: return f(DTag<DType::u8>{});
    case DType::u32: return f(DTag<DType::u32>{});
    case DType::f16: return f(DTag<DType::f16>{});
    case DType::bf16: return f(DTag<DType::bf16>{});
    case DType::f32: return f(DTag<DType::f32>{});
    case DType::f64: return f(DTag<DType::f64>{});
    case DType::f8e4m3: return f(DTag<DType::f8e4m3>{});
    case DType::f8e5m2: return f(DTag<DType::f8e5m2>{});
  }
  internal_error("with_dtype: unknown dtype");
}

template <DType D>
struct IntCType;
template <> struct IntCType<DType::i1> { using T = uint8_t; };
template <> struct IntCType<DType::i8> { using T = int8_t; };
template <> struct IntCType<DType::i16> { using T = int16_t; };
template <> struct IntCType<DType::i32> { using T = int32_t; };
template <> struct IntCType<DType::i64> { using T = int64_t; };
template <> struct IntCType<DType::u8> { using T = uint8_t; };
template <> struct IntCType<DType::u32> { using T = uint32_t; };

// Float dtypes: double in, double out.
template <DType D>
inline double read_float(const unsigned char* p) {
  if constexpr (D == DType::f8e4m3) return static_cast<float>(float8_e4m3::from_bits(*p));
  else if constexpr (D == DType::f8e5m2) return static_cast<float>(float8_e5m2::from_bits(*p));
  else if constexpr (D == DType::f16 || D == DType::bf16) {
    uint16_t b;
    std::memcpy(&b, p, 2);
    if constexpr (D == DType::f16) return static_cast<float>(half::from_bits(b));
    else return static_cast<float>(bfloat16::from_bits(b));
  } else if constexpr (D == DType::f32) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  } else {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
}
template <DType D>
inline void write_float(unsigned char* p, double x) {
  // Values reaching memory are already rounded to the dtype: the conversion is exact.
  if constexpr (D == DType::f8e4m3) *p = float8_e4m3(static_cast<float>(x)).bits;
  else if constexpr (D == DType::f8e5m2) *p = float8_e5m2(static_cast<float>(x)).bits;
  else if constexpr (D == DType::f16 || D == DType::bf16) {
    uint16_t b = D == DType::f16 ? half(static_cast<float>(x)).bits : bfloat16(static_cast<float>(x)).bits;
    std::memcpy(p, &b, 2);
  } else if constexpr (D == DType::f32) {
    float v = static_cast<float>(x);
    std::memcpy(p, &v, 4);
  } else {
    std::memcpy(p, &x, 8);
  }
}

// Integer dtypes: normalized int64 in and out.
template <DType D>
inline int64_t read_int(const unsigned char* p) {
  typename IntCType<D>::T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (D == DType::i1) return v != 0;
  else return static_cast<int64_t>(v);
}
template <DType D>
inline void write_int(unsigned char* p, int64_t x) {
  typename IntCType<D>::T v = D == DType::i1 ? (x != 0) : static_cast<typename IntCType<D>::T>(x);
  std::memcpy(p, &v, sizeof v);
}

}  // namespace tilefuse::interp::detail
