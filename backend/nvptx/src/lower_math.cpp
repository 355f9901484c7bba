// Transcendental math: libdevice (__nv_*) for accurate results, nvvm approximation
// intrinsics (MUFU instructions) where the op allows approximation. f16/bf16 compute
// in f32.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

using ir::UnaryOp;

// The .ftz forms unless TILEFUSE_APPROX_FTZ=0. The plain forms cost a subnormal-range
// fix-up around each ex2 (ptxas, sm_90a: a compare and two predicated multiplies; softmax
// bf16 on 5 x 1024, 1424 -> 1304 SASS instructions). libdevice math already flushes
// (nvvm-reflect-ftz), as nvcc's --use_fast_math does. Measured (H200 bf16, % of copy,
// bench/NOTES.md): softmax 8191x4097 77.9 -> 81.5, 4096x30011 79.3 -> 84.9; cross-entropy
// 53.5 -> 59.1, 68.1 -> 75.0; SwiGLU backward 74.3 -> 81.0; aligned rows and attention equal.
bool approx_flushes_subnormals() { return knob("TILEFUSE_APPROX_FTZ") != "0"; }

llvm::Value* approx_div_f32(Codegen& cg, llvm::Value* x, llvm::Value* y) {
  using namespace llvm::Intrinsic;
  return cg.call_intrinsic(approx_flushes_subnormals() ? nvvm_div_approx_ftz_f : nvvm_div_approx_f, {x, y});
}

namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

const char* libdevice_name(UnaryOp op, bool f64) {
  switch (op) {
    case UnaryOp::Exp: return f64 ? "__nv_exp" : "__nv_expf";
    case UnaryOp::Exp2: return f64 ? "__nv_exp2" : "__nv_exp2f";
    case UnaryOp::Log: return f64 ? "__nv_log" : "__nv_logf";
    case UnaryOp::Log2: return f64 ? "__nv_log2" : "__nv_log2f";
    case UnaryOp::Rsqrt: return f64 ? "__nv_rsqrt" : "__nv_rsqrtf";
    case UnaryOp::Sin: return f64 ? "__nv_sin" : "__nv_sinf";
    case UnaryOp::Cos: return f64 ? "__nv_cos" : "__nv_cosf";
    case UnaryOp::Tanh: return f64 ? "__nv_tanh" : "__nv_tanhf";
    case UnaryOp::Erf: return f64 ? "__nv_erf" : "__nv_erff";
    default: return nullptr;
  }
}

llvm::Value* approx_f32(Codegen& cg, UnaryOp op, llvm::Value* x) {
  auto& b = cg.b;
  using namespace llvm::Intrinsic;
  auto* f = b.getFloatTy();
  bool ftz = approx_flushes_subnormals();
  auto call = [&](ID plain, ID flushing, llvm::Value* v) { return cg.call_intrinsic(ftz ? flushing : plain, {v}); };
  auto ex2 = [&](llvm::Value* v) { return call(nvvm_ex2_approx_f, nvvm_ex2_approx_ftz_f, v); };
  auto lg2 = [&](llvm::Value* v) { return call(nvvm_lg2_approx_f, nvvm_lg2_approx_ftz_f, v); };
  switch (op) {
    case UnaryOp::Exp: return ex2(b.CreateFMul(x, llvm::ConstantFP::get(f, kLog2e)));
    case UnaryOp::Exp2: return ex2(x);
    case UnaryOp::Log: return b.CreateFMul(lg2(x), llvm::ConstantFP::get(f, kLn2));
    case UnaryOp::Log2: return lg2(x);
    case UnaryOp::Sqrt: return call(nvvm_sqrt_approx_f, nvvm_sqrt_approx_ftz_f, x);
    case UnaryOp::Rsqrt: return call(nvvm_rsqrt_approx_f, nvvm_rsqrt_approx_ftz_f, x);
    case UnaryOp::Sin: return call(nvvm_sin_approx_f, nvvm_sin_approx_ftz_f, x);
    case UnaryOp::Cos: return call(nvvm_cos_approx_f, nvvm_cos_approx_ftz_f, x);
    case UnaryOp::Tanh: return cg.inline_asm(f, "tanh.approx.f32 $0, $1;", "=f,f", {x}, false);
    case UnaryOp::Sigmoid: {
      llvm::Value* e = ex2(b.CreateFMul(x, llvm::ConstantFP::get(f, -kLog2e)));
      llvm::Value* den = b.CreateFAdd(e, llvm::ConstantFP::get(f, 1.0));
      return approx_div_f32(cg, llvm::ConstantFP::get(f, 1.0), den);
    }
    default: return nullptr;  // erf has no hardware approximation
  }
}

}  // namespace

llvm::Value* lower_unary_math(Codegen& cg, UnaryOp op, llvm::Value* x, DType dt, bool approx) {
  auto& b = cg.b;
  llvm::Type* ty = x->getType();
  if (dt == DType::f16 || dt == DType::bf16) {
    llvm::Value* r = lower_unary_math(cg, op, b.CreateFPExt(x, b.getFloatTy()), DType::f32, approx);
    return b.CreateFPTrunc(r, ty);
  }
  bool f64 = dt == DType::f64;
  if (approx && !f64)
    if (llvm::Value* r = approx_f32(cg, op, x)) return r;
  switch (op) {
    case UnaryOp::Sqrt: return cg.call_intrinsic(llvm::Intrinsic::sqrt, {x}, {ty});
    case UnaryOp::Sigmoid: {
      llvm::Value* e = lower_unary_math(cg, UnaryOp::Exp, b.CreateFNeg(x), dt, false);
      llvm::Value* one = llvm::ConstantFP::get(ty, 1.0);
      return b.CreateFDiv(one, b.CreateFAdd(one, e));
    }
    default: break;
  }
  const char* name = libdevice_name(op, f64);
  TF_ASSERT(name, std::string("no lowering for unary ") + ir::name(op));
  return cg.call_libdevice(name, ty, {x});
}

}  // namespace tilefuse::nvptx
