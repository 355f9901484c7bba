// 8-bit floats in registers: f8e4m3 and f8e5m2 live as i8 bit patterns and are
// converted through f32 for everything but data movement and dot.
// To f32 (any target): e5m2 is the top byte of an f16; e4m3's bits placed where f16's
// exponent and mantissa sit read 2^8 too small (bias 7 vs 15, normal and subnormal
// alike), so one f16 -> f32 conversion and a multiply by 256 decode it; 0x7F/0xFF is NaN.
// From f32 (sm_89+): cvt.rn.satfinite, the rounding and saturation the interpreter
// implements (float8.hpp).
#include "codegen.hpp"
#include "tilefuse/ir/float8.hpp"

namespace tilefuse::nvptx {

llvm::Value* float8_to_f32(Codegen& cg, llvm::Value* byte, DType from) {
  auto& b = cg.b;
  llvm::Value* w = b.CreateZExt(byte, b.getInt16Ty());
  if (from == DType::f8e5m2) return b.CreateFPExt(b.CreateBitCast(b.CreateShl(w, 8), b.getHalfTy()), b.getFloatTy());
  llvm::Value* magnitude = b.CreateAnd(w, 0x7f);
  llvm::Value* bits = b.CreateOr(b.CreateShl(magnitude, 7), b.CreateShl(b.CreateAnd(w, 0x80), 8));
  llvm::Value* f = b.CreateFPExt(b.CreateBitCast(bits, b.getHalfTy()), b.getFloatTy());
  f = b.CreateFMul(f, llvm::ConstantFP::get(b.getFloatTy(), 256.0));
  llvm::Value* nan = llvm::ConstantFP::getNaN(b.getFloatTy());
  return b.CreateSelect(b.CreateICmpEQ(magnitude, b.getInt16(0x7f)), nan, f);
}

llvm::Value* f32_to_float8(Codegen& cg, llvm::Value* x, DType to) {
  std::string text = std::string("cvt.rn.satfinite.") + (to == DType::f8e4m3 ? "e4m3x2" : "e5m2x2") + ".f32 $0, $1, $1;";
  llvm::Value* pair = cg.inline_asm(cg.b.getInt16Ty(), text, "=h,f", {x}, false);
  return cg.b.CreateTrunc(pair, cg.b.getInt8Ty());
}

uint8_t float8_bits(double v, DType d) {
  float f = static_cast<float>(v);
  return d == DType::f8e4m3 ? float8_e4m3(f).bits : float8_e5m2(f).bits;
}

}  // namespace tilefuse::nvptx
