#include <cstring>

#include "tilefuse/ir/dtype.hpp"
#include "tilefuse/ir/type.hpp"

namespace tilefuse {

const char* name(DType t) {
  switch (t) {
    case DType::i1: return "i1";
    case DType::i8: return "i8";
    case DType::i16: return "i16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::u32: return "u32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f8e4m3: return "f8e4m3";
    case DType::f8e5m2: return "f8e5m2";
  }
  return "?";
}

bool parse_dtype(const std::string& s, DType& out) {
  for (int i = 0; i < kNumDTypes; ++i) {
    auto d = static_cast<DType>(i);
    if (s == name(d) || (s == "bool" && d == DType::i1)) { out = d; return true; }
  }
  return false;
}

namespace ir {

int64_t Type::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string Type::str() const {
  std::string elem = is_ptr ? std::string("ptr<") + name(dtype) + ">" : std::string(name(dtype));
  if (shape.empty()) return elem;
  std::string r = "tile<";
  for (auto d : shape) r += std::to_string(d) + "x";
  return r + elem + ">";
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace ir
}  // namespace tilefuse
