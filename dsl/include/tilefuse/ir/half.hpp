#pragma once
// Host storage types for 16-bit floats, bit-compatible with the GPU's f16 and bf16.
// Conversion from float rounds to nearest even, exactly like cvt.rn on the GPU.
#include <cstdint>
#include <cstring>

namespace tilefuse {

namespace detail {
inline uint32_t bits_of(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float float_of(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}
inline float bf16_bits_to_float(uint16_t b) { return float_of(static_cast<uint32_t>(b) << 16); }

inline uint16_t float_to_f16_bits(float f) {
  uint32_t u = bits_of(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow (incl. inf) after rounding
  if (a < 0x38800000u) {  // subnormal or zero in f16: scale into an integer and round
    if (a < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t drop = 126 - e;  // bits of m below the f16 subnormal unit 2^-24
    uint32_t q = m >> drop;
    uint32_t rem = m & ((1u << drop) - 1);
    uint32_t half = 1u << (drop - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t r = a + 0xfffu + ((a >> 13) & 1u);  // round mantissa to 10 bits, nearest even
  r -= 0x38000000u;                              // rebias exponent 127 -> 15
  return static_cast<uint16_t>(sign | (r >> 13));
}
inline float f16_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float v = static_cast<float>(m) * (1.0f / 16777216.0f);  // m * 2^-24
    return sign ? -v : v;
  }
  if (e == 31) return float_of(sign | 0x7f800000u | (m << 13));
  return float_of(sign | ((e + 112) << 23) | (m << 13));
}
}  // namespace detail

struct half {
  uint16_t bits = 0;
  half() = default;
  explicit half(float f) : bits(detail::float_to_f16_bits(f)) {}
  operator float() const { return detail::f16_bits_to_float(bits); }
  static half from_bits(uint16_t b) { half h; h.bits = b; return h; }
};

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(detail::float_to_bf16_bits(f)) {}
  operator float() const { return detail::bf16_bits_to_float(bits); }
  static bfloat16 from_bits(uint16_t b) { bfloat16 h; h.bits = b; return h; }
};

}  // namespace tilefuse
