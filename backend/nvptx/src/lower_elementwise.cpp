// Elementwise ops: binary, unary, compare, select, fma, cast, pointer offsets.
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"

namespace tilefuse::nvptx {

using ir::BinaryOp;
using ir::CmpPred;
using ir::OpKind;
using ir::UnaryOp;

namespace {

// The 32-bit word a 16-bit element was unpacked from (an element of a loaded vector of
// words), and which half of it; null when x did not come from one.
llvm::Value* word_holding(llvm::Value* x, int* half) {
  auto* ee = llvm::dyn_cast<llvm::ExtractElementInst>(x);
  if (!ee) return nullptr;
  auto* idx = llvm::dyn_cast<llvm::ConstantInt>(ee->getIndexOperand());
  auto* bc = llvm::dyn_cast<llvm::BitCastInst>(ee->getVectorOperand());
  if (!idx || !bc) return nullptr;
  uint64_t i = idx->getZExtValue();
  llvm::Value* src = bc->getOperand(0);
  *half = static_cast<int>(i % 2);
  if (src->getType()->isIntegerTy(32)) return i < 2 ? src : nullptr;
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(src->getType());
  if (!vt || !vt->getElementType()->isIntegerTy(32)) return nullptr;
  return llvm::findScalarElement(src, static_cast<unsigned>(i / 2));
}

}  // namespace

llvm::Value* convert_element(Codegen& cg, llvm::Value* x, DType from, DType to) {
  auto& b = cg.b;
  if (from == to) return x;
  if (is_float8(from)) return convert_element(cg, float8_to_f32(cg, x, from), DType::f32, to);
  if (is_float8(to)) return f32_to_float8(cg, convert_element(cg, x, from, DType::f32), to);
  llvm::Type* ty = cg.elem_type(to);
  if (to == DType::i1) {
    if (is_float(from)) return b.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
    return b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (from == DType::bf16 && (to == DType::f32 || to == DType::f64)) {
    // bf16 is the top half of an f32: one shift (low half) or mask (high half) of the
    // loaded 32-bit word, where cvt.f32.bf16 would first split it into 16-bit registers.
    int half = 0;
    llvm::Value* bits;
    if (llvm::Value* word = word_holding(x, &half))
      bits = half ? b.CreateAnd(word, 0xffff0000u) : b.CreateShl(word, 16);
    else
      bits = b.CreateShl(b.CreateZExt(b.CreateBitCast(x, b.getInt16Ty()), b.getInt32Ty()), 16);
    llvm::Value* f = b.CreateBitCast(bits, b.getFloatTy());
    return to == DType::f32 ? f : b.CreateFPExt(f, ty);
  }
  if (is_float(from) && is_float(to)) {
    bool halves = (from == DType::f16 && to == DType::bf16) || (from == DType::bf16 && to == DType::f16);
    if (halves) x = b.CreateFPExt(x, b.getFloatTy());
    if (bit_width(to) > bit_width(from) && !halves) return b.CreateFPExt(x, ty);
    return b.CreateFPTrunc(x, ty);  // cvt.rn
  }
  if (is_int(from) && is_float(to)) return is_signed_int(from) ? b.CreateSIToFP(x, ty) : b.CreateUIToFP(x, ty);
  if (is_float(from) && is_int(to)) {
    // Saturating, NaN -> 0 (cvt.rzi.sat): the interpreter's semantics, no poison.
    auto id = is_signed_int(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return cg.call_intrinsic(id, {x}, {ty, x->getType()});
  }
  int fw = bit_width(from), tw = bit_width(to);
  if (tw < fw) return b.CreateTrunc(x, ty);
  if (tw > fw) return is_signed_int(from) ? b.CreateSExt(x, ty) : b.CreateZExt(x, ty);
  return x;  // same width, signedness only
}

llvm::Value* binary_element(Codegen& cg, BinaryOp op, llvm::Value* x, llvm::Value* y, DType dt) {
  auto& b = cg.b;
  bool fp = is_float(dt);
  bool sgn = is_signed_int(dt);
  using llvm::Intrinsic::ID;
  switch (op) {
    case BinaryOp::Add: return fp ? b.CreateFAdd(x, y) : b.CreateAdd(x, y);
    case BinaryOp::Sub: return fp ? b.CreateFSub(x, y) : b.CreateSub(x, y);
    case BinaryOp::Mul: return fp ? b.CreateFMul(x, y) : b.CreateMul(x, y);
    case BinaryOp::Div:
      if (fp) {
        if (cg.fast_math && dt == DType::f32) return approx_div_f32(cg, x, y);
        return b.CreateFDiv(x, y);
      }
      if (sgn) {  // x / -1 wraps (no INT_MIN / -1 trap)
        llvm::Value* m1 = b.CreateICmpEQ(y, llvm::ConstantInt::getSigned(y->getType(), -1));
        llvm::Value* safe = b.CreateSelect(m1, llvm::ConstantInt::get(y->getType(), 1), y);
        return b.CreateSelect(m1, b.CreateNeg(x), b.CreateSDiv(x, safe));
      }
      return b.CreateUDiv(x, y);
    case BinaryOp::Rem:
      if (fp) {
        if (dt == DType::f64) return cg.call_libdevice("__nv_fmod", x->getType(), {x, y});
        llvm::Value* xf = dt == DType::f32 ? x : b.CreateFPExt(x, b.getFloatTy());
        llvm::Value* yf = dt == DType::f32 ? y : b.CreateFPExt(y, b.getFloatTy());
        llvm::Value* r = cg.call_libdevice("__nv_fmodf", b.getFloatTy(), {xf, yf});
        return dt == DType::f32 ? r : b.CreateFPTrunc(r, x->getType());
      }
      if (sgn) {
        llvm::Value* m1 = b.CreateICmpEQ(y, llvm::ConstantInt::getSigned(y->getType(), -1));
        llvm::Value* safe = b.CreateSelect(m1, llvm::ConstantInt::get(y->getType(), 1), y);
        return b.CreateSRem(x, safe);  // x % 1 == 0 == x % -1
      }
      return b.CreateURem(x, y);
    case BinaryOp::Min:
    case BinaryOp::Max: {
      bool mx = op == BinaryOp::Max;
      // IEEE 754-2019 maximum/minimum: NaN propagates (max.NaN on sm_80+).
      ID id = fp ? (mx ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum)
                 : sgn ? (mx ? llvm::Intrinsic::smax : llvm::Intrinsic::smin)
                       : (mx ? llvm::Intrinsic::umax : llvm::Intrinsic::umin);
      return cg.call_intrinsic(id, {x, y}, {x->getType()});
    }
    case BinaryOp::And: return b.CreateAnd(x, y);
    case BinaryOp::Or: return b.CreateOr(x, y);
    case BinaryOp::Xor: return b.CreateXor(x, y);
    case BinaryOp::Shl:
    case BinaryOp::Shr: {
      // Shift amounts outside [0, width) give 0 (or the sign for arithmetic right
      // shifts), as in the interpreter; LLVM would make them poison.
      unsigned w = x->getType()->getIntegerBitWidth();
      llvm::Value* out_of_range = b.CreateICmpUGE(y, llvm::ConstantInt::get(y->getType(), w));
      llvm::Value* amt = b.CreateSelect(out_of_range, llvm::ConstantInt::get(y->getType(), w - 1), y);
      if (op == BinaryOp::Shl)
        return b.CreateSelect(out_of_range, llvm::ConstantInt::get(x->getType(), 0), b.CreateShl(x, amt));
      if (sgn) return b.CreateAShr(x, amt);
      return b.CreateSelect(out_of_range, llvm::ConstantInt::get(x->getType(), 0), b.CreateLShr(x, amt));
    }
  }
  return nullptr;
}

namespace {

llvm::Value* compare_element(Codegen& cg, CmpPred p, llvm::Value* x, llvm::Value* y, const ir::Type& t) {
  auto& b = cg.b;
  if (!t.is_ptr && is_float(t.dtype)) {
    switch (p) {
      case CmpPred::Eq: return b.CreateFCmpOEQ(x, y);
      case CmpPred::Ne: return b.CreateFCmpUNE(x, y);
      case CmpPred::Lt: return b.CreateFCmpOLT(x, y);
      case CmpPred::Le: return b.CreateFCmpOLE(x, y);
      case CmpPred::Gt: return b.CreateFCmpOGT(x, y);
      case CmpPred::Ge: return b.CreateFCmpOGE(x, y);
    }
  }
  bool sgn = !t.is_ptr && is_signed_int(t.dtype);
  switch (p) {
    case CmpPred::Eq: return b.CreateICmpEQ(x, y);
    case CmpPred::Ne: return b.CreateICmpNE(x, y);
    case CmpPred::Lt: return sgn ? b.CreateICmpSLT(x, y) : b.CreateICmpULT(x, y);
    case CmpPred::Le: return sgn ? b.CreateICmpSLE(x, y) : b.CreateICmpULE(x, y);
    case CmpPred::Gt: return sgn ? b.CreateICmpSGT(x, y) : b.CreateICmpUGT(x, y);
    case CmpPred::Ge: return sgn ? b.CreateICmpSGE(x, y) : b.CreateICmpUGE(x, y);
  }
  return nullptr;
}

llvm::Value* unary_element(Codegen& cg, const ir::Op& op, llvm::Value* x, DType dt) {
  auto& b = cg.b;
  bool fp = is_float(dt);
  switch (op.un()) {
    case UnaryOp::Neg: return fp ? b.CreateFNeg(x) : b.CreateNeg(x);
    case UnaryOp::Not: return b.CreateNot(x);
    case UnaryOp::Abs:
      if (fp) return cg.call_intrinsic(llvm::Intrinsic::fabs, {x}, {x->getType()});
      if (!is_signed_int(dt)) return x;
      return cg.call_intrinsic(llvm::Intrinsic::abs, {x, b.getFalse()}, {x->getType()});
    case UnaryOp::Floor: return cg.call_intrinsic(llvm::Intrinsic::floor, {x}, {x->getType()});
    case UnaryOp::Ceil: return cg.call_intrinsic(llvm::Intrinsic::ceil, {x}, {x->getType()});
    default: return lower_unary_math(cg, op.un(), x, dt, op.approx || cg.fast_math);
  }
}

// For each register of a compare's result, the register holding the same value: where
// axis info proves the result constant over aligned runs (e.g. cols < n with n a
// multiple of 8), registers that differ only inside a run share one compare, so a mask
// costs one instruction per run, not per element.
std::vector<int> constant_run_owner(Codegen& cg, const ir::Op& op, size_t n) {
  std::vector<int> owner(n);
  for (size_t k = 0; k < n; ++k) owner[k] = static_cast<int>(k);
  if (!op.result()->type.is_tile() || !cg.plan.axis.has(op.result())) return owner;
  const LinearLayout& l = cg.plan.layout(op.result())->ll;
  if (static_cast<size_t>(l.num_regs()) != n) return owner;
  const AxisInfo& ai = cg.plan.axis.get(op.result());
  uint32_t same = 0;  // register bits that stay inside one constant run
  for (size_t i = 0; i < l.regs().size(); ++i) {
    uint32_t base = l.regs()[i];
    int along = -1;
    for (int d = 0; d < l.rank(); ++d)
      if (l.coord(base, d) != 0) along = along < 0 ? d : l.rank();
    if (along >= 0 && along < l.rank() && l.coord(base, along) < ai.constancy[along]) same |= 1u << i;
  }
  for (size_t k = 0; k < n; ++k) owner[k] = static_cast<int>(k & ~same);
  return owner;
}

}  // namespace

void lower_elementwise(Codegen& cg, const ir::Op& op) {
  std::vector<Regs> in;
  for (int i = 0; i < op.num_operands(); ++i) in.push_back(cg.operand(op, i));
  std::vector<int> owner;
  if (op.kind == OpKind::Compare) owner = constant_run_owner(cg, op, in[0].size());
  cg.set(op.result(), elementwise_regs(cg, op, in, owner));
}

Regs elementwise_regs(Codegen& cg, const ir::Op& op, const std::vector<Regs>& in, const std::vector<int>& owner) {
  auto& b = cg.b;
  size_t n = in[0].size();
  for (auto& r : in) n = std::max(n, r.size());
  auto at = [&](int i, size_t k) { return in[i].size() == 1 ? in[i][0] : in[i][k]; };
  const ir::Type& t0 = op.operand(0)->type;
  DType dt = t0.dtype;
  Regs out(n);
  for (size_t k = 0; k < n; ++k) {
    if (!owner.empty() && owner[k] != static_cast<int>(k)) {
      out[k] = out[owner[k]];  // owner[k] < k: already computed
      continue;
    }
    switch (op.kind) {
      case OpKind::Binary: out[k] = binary_element(cg, op.bin(), at(0, k), at(1, k), dt); break;
      case OpKind::Unary: out[k] = unary_element(cg, op, at(0, k), dt); break;
      case OpKind::Compare: out[k] = compare_element(cg, op.cmp(), at(0, k), at(1, k), t0); break;
      case OpKind::Select: out[k] = b.CreateSelect(at(0, k), at(1, k), at(2, k)); break;
      case OpKind::Fma:
        out[k] = cg.call_intrinsic(llvm::Intrinsic::fma, {at(0, k), at(1, k), at(2, k)}, {at(0, k)->getType()});
        break;
      case OpKind::Cast: out[k] = convert_element(cg, at(0, k), dt, op.result()->type.dtype); break;
      case OpKind::AddPtr: {
        DType od = op.operand(1)->type.dtype;
        llvm::Value* off = at(1, k);
        if (!is_signed_int(od)) off = b.CreateZExt(off, b.getInt64Ty());
        out[k] = b.CreateGEP(cg.mem_type(t0.dtype), at(0, k), off);
        break;
      }
      default: internal_error("lower_elementwise: unexpected op");
    }
  }
  return out;
}

}  // namespace tilefuse::nvptx
