#pragma once
// Host storage types for the 8-bit floats of Hopper's tensor cores, bit-compatible with
// the GPU's: e4m3 (OCP "E4M3FN": bias 7, no infinities, 0x7F/0xFF NaN, max 448) and
// e5m2 (IEEE-like: bias 15, infinities, max 57344). Conversion from float rounds to
// nearest even and saturates to the largest finite value, like PTX's
// cvt.rn.satfinite.{e4m3,e5m2}x2.f32; NaN becomes 0x7F.
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tilefuse {

namespace detail {

template <int ExpBits, int ManBits>
struct Float8Format {
  static constexpr int bias = (1 << (ExpBits - 1)) - 1;
  static constexpr int min_exp = 1 - bias;  // exponent of the smallest normal
  // e4m3 gives its all-ones exponent to normal values (only 0x7F is NaN).
  static constexpr bool has_inf = ExpBits == 5;
  static constexpr uint8_t max_bits = has_inf ? 0x7B : 0x7E;
  static constexpr uint8_t nan_bits = 0x7F;
};

template <class F>
inline double float8_to_double(uint8_t b) {
  constexpr int man_bits = F::has_inf ? 2 : 3;
  bool neg = b & 0x80;
  int e = (b & 0x7F) >> man_bits, m = b & ((1 << man_bits) - 1);
  double v;
  if ((b & 0x7F) == F::nan_bits || (F::has_inf && e == 31 && m != 0)) {
    v = std::nan("");
  } else if (F::has_inf && e == 31) {
    v = INFINITY;
  } else if (e == 0) {
    v = std::ldexp(m, F::min_exp - man_bits);
  } else {
    v = std::ldexp(m + (1 << man_bits), e - F::bias - man_bits);
  }
  return neg ? -v : v;
}

// `x` must be exactly a float (rounding happens once, from there).
template <class F>
inline uint8_t float_to_float8_bits(float x) {
  constexpr int man_bits = F::has_inf ? 2 : 3;
  if (std::isnan(x)) return F::nan_bits;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  double a = std::fabs(static_cast<double>(x));
  double max = float8_to_double<F>(F::max_bits);
  if (a >= max) return sign | F::max_bits;
  if (a == 0) return sign;
  int e = std::max(std::ilogb(a), F::min_exp);
  double q = std::ldexp(a, man_bits - e);  // a in units of the quantum at this exponent
  double r = std::floor(q), rest = q - r;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  if (r == 0) return sign;
  if (r >= (2 << man_bits)) {  // rounded up into the next binade
    r /= 2;
    ++e;
  }
  if (r < (1 << man_bits)) return sign | static_cast<uint8_t>(r);  // subnormal (e == min_exp)
  int field = e + F::bias;
  uint8_t bits = static_cast<uint8_t>(field << man_bits | (static_cast<int>(r) - (1 << man_bits)));
  return bits > F::max_bits ? sign | F::max_bits : sign | bits;
}

using E4M3Format = Float8Format<4, 3>;
using E5M2Format = Float8Format<5, 2>;

}  // namespace detail

struct float8_e4m3 {
  uint8_t bits = 0;
  float8_e4m3() = default;
  explicit float8_e4m3(float f) : bits(detail::float_to_float8_bits<detail::E4M3Format>(f)) {}
  operator float() const { return static_cast<float>(detail::float8_to_double<detail::E4M3Format>(bits)); }
  static float8_e4m3 from_bits(uint8_t b) { float8_e4m3 h; h.bits = b; return h; }
};

struct float8_e5m2 {
  uint8_t bits = 0;
  float8_e5m2() = default;
  explicit float8_e5m2(float f) : bits(detail::float_to_float8_bits<detail::E5M2Format>(f)) {}
  operator float() const { return static_cast<float>(detail::float8_to_double<detail::E5M2Format>(bits)); }
  static float8_e5m2 from_bits(uint8_t b) { float8_e5m2 h; h.bits = b; return h; }
};

}  // namespace tilefuse
