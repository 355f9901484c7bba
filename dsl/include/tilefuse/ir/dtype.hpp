#pragma once
// Element types of the tile IR and their properties.
#include <cstdint>
#include <string>

namespace tilefuse {

// f8e4m3 / f8e5m2: 8-bit floats (float8.hpp) for storage, casts and dot; arithmetic
// casts them to a wider float first.
enum class DType : uint8_t { i1, i8, i16, i32, i64, u8, u32, f16, bf16, f32, f64, f8e4m3, f8e5m2 };
inline constexpr int kNumDTypes = 13;

constexpr bool is_float8(DType t) { return t == DType::f8e4m3 || t == DType::f8e5m2; }
constexpr bool is_float(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64 || is_float8(t);
}
constexpr bool is_int(DType t) { return !is_float(t); }  // i1 counts as an integer of width 1
constexpr bool is_bool(DType t) { return t == DType::i1; }
constexpr bool is_unsigned(DType t) { return t == DType::u8 || t == DType::u32 || t == DType::i1; }
constexpr bool is_signed_int(DType t) { return is_int(t) && !is_unsigned(t); }

constexpr int bit_width(DType t) {
  switch (t) {
    case DType::i1: return 1;
    case DType::i8: case DType::u8: case DType::f8e4m3: case DType::f8e5m2: return 8;
    case DType::i16: case DType::f16: case DType::bf16: return 16;
    case DType::i32: case DType::u32: case DType::f32: return 32;
    case DType::i64: case DType::f64: return 64;
  }
  return 0;
}
// Bytes one element occupies in memory (i1 is stored as one byte).
constexpr int byte_size(DType t) { return t == DType::i1 ? 1 : bit_width(t) / 8; }

const char* name(DType t);           // "f32", "bf16", "i1", ...
bool parse_dtype(const std::string& s, DType& out);

// numpy-like promotion of two element types for arithmetic:
// float beats int; wider float wins (f16 with bf16 gives f32, and so do the two 8-bit
// floats: arithmetic on them is f32); among ints, wider wins
// and signed wins at equal width; i1 with anything gives the other.
constexpr DType promote(DType a, DType b) {
  if (a == b) return a;
  if (is_float(a) && is_float(b)) {
    if ((a == DType::f16 && b == DType::bf16) || (a == DType::bf16 && b == DType::f16)) return DType::f32;
    if (is_float8(a) && is_float8(b)) return DType::f32;
    return bit_width(a) >= bit_width(b) ? a : b;
  }
  if (is_float(a)) return a;
  if (is_float(b)) return b;
  if (a == DType::i1) return b;
  if (b == DType::i1) return a;
  if (bit_width(a) != bit_width(b)) {
    DType w = bit_width(a) > bit_width(b) ? a : b;
    return w;
  }
  return is_unsigned(a) ? b : a;  // same width: signed wins
}

}  // namespace tilefuse
