// Program ids, constants, arange, and the shape ops (splat, broadcast, expand_dims,
// reshape, trans). Shape ops are register relabelings: their layouts were chosen so.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <unordered_map>

#include "codegen.hpp"

namespace tilefuse::nvptx {

using ir::OpKind;

namespace {

llvm::Value* constant_value(Codegen& cg, const ir::Op& op) {
  const ir::Type& t = op.result()->type;
  llvm::Type* ty = cg.elem_type(t);
  if (is_float8(t.dtype)) return llvm::ConstantInt::get(ty, float8_bits(op.fval, t.dtype));
  if (is_float(t.dtype)) return llvm::ConstantFP::get(ty, op.fval);
  return llvm::ConstantInt::get(ty, static_cast<uint64_t>(op.ival), is_signed_int(t.dtype));
}

Regs fill(const LinearLayout& l, llvm::Value* v) { return Regs(l.num_regs(), v); }

Regs arange_regs(Codegen& cg, const ir::Op& op, const LinearLayout& l) {
  auto c = cg.coords(l);
  Regs out;
  for (auto* x : c[0]) out.push_back(op.start ? cg.b.CreateAdd(x, cg.c32(op.start), "", true, true) : x);
  return out;
}

llvm::Value* sreg(Codegen& cg, bool ctaid, int axis) {
  using namespace llvm::Intrinsic;
  static const ID ids[2][3] = {{nvvm_read_ptx_sreg_nctaid_x, nvvm_read_ptx_sreg_nctaid_y, nvvm_read_ptx_sreg_nctaid_z},
                               {nvvm_read_ptx_sreg_ctaid_x, nvvm_read_ptx_sreg_ctaid_y, nvvm_read_ptx_sreg_ctaid_z}};
  return cg.call_intrinsic(ids[ctaid ? 1 : 0][axis], {});
}

}  // namespace

Regs view_regs(Codegen& cg, const ir::Op& op, const Regs& in, const LinearLayout& src, const LinearLayout& dst) {
  if (op.kind != OpKind::Broadcast) return in;  // same registers, relabeled coordinates
  // The operand is in the projection of the result layout: every result register finds
  // its element in the operand register with the projected constant part.
  std::unordered_map<uint32_t, int> where;
  for (int i = src.num_regs() - 1; i >= 0; --i) where[src.reg_part(i)] = i;
  const auto& shape = op.operand(0)->type.shape;
  Regs out;
  for (int i = 0; i < dst.num_regs(); ++i) {
    auto c = dst.coords(dst.reg_part(i));
    for (int d = 0; d < dst.rank(); ++d)
      if (shape[d] == 1) c[d] = 0;
    auto it = where.find(src.flatten(c));
    TF_ASSERT(it != where.end(), "broadcast: element not held by the thread");
    out.push_back(in[it->second]);
  }
  return out;
}

Regs rematerialize(Codegen& cg, const ir::Value* v, const LinearLayout& l) {
  const ir::Op& op = *v->def;
  switch (op.kind) {
    case OpKind::Constant: return fill(l, constant_value(cg, op));
    case OpKind::Splat: return fill(l, cg.scalar(op.operand(0)));
    case OpKind::Arange: return arange_regs(cg, op, l);
    default: internal_error("rematerialize of a non-rematerializable value");
  }
}

void lower_index_op(Codegen& cg, const ir::Op& op) {
  const ir::Value* r = op.result();
  LayoutRef rl = cg.plan.layout(r);
  switch (op.kind) {
    // Persistent kernels: the program of this iteration of the programs' loop.
    case OpKind::ProgramId: cg.set(r, {cg.program[op.axis] ? cg.program[op.axis] : sreg(cg, true, op.axis)}); return;
    case OpKind::NumPrograms:
      cg.set(r, {cg.grid_size[op.axis] ? cg.grid_size[op.axis] : sreg(cg, false, op.axis)});
      return;
    case OpKind::Constant:
      cg.set(r, rl ? fill(rl->ll, constant_value(cg, op)) : Regs{constant_value(cg, op)});
      return;
    case OpKind::Arange: cg.set(r, arange_regs(cg, op, rl->ll)); return;
    case OpKind::AlignPtr: {
      auto& b = cg.b;
      llvm::Value* p = cg.scalar(op.operand(0));
      llvm::Value* low = b.CreateAnd(b.CreatePtrToInt(p, b.getInt64Ty()), uint64_t(op.ival - 1));
      int shift = __builtin_ctzll(static_cast<uint64_t>(byte_size(op.operand(0)->type.dtype)));
      llvm::Value* elements = b.CreateTrunc(b.CreateLShr(low, uint64_t(shift)), cg.i32());
      if (op.code) cg.set(r, {elements});
      else cg.set(r, {b.CreateGEP(b.getInt8Ty(), p, b.CreateNeg(low))});
      return;
    }
    case OpKind::Splat: cg.set(r, fill(rl->ll, cg.scalar(op.operand(0)))); return;
    case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Trans: {
      const ir::Value* x = op.operand(0);
      if (x->type.is_scalar()) {
        cg.set(r, fill(rl->ll, cg.scalar(x)));
        return;
      }
      const LinearLayout& src = cg.plan.op(&op).operands[0]->ll;
      cg.set(r, view_regs(cg, op, cg.operand(op, 0), src, rl->ll));
      return;
    }
    default: internal_error("lower_index_op: unexpected op");
  }
}

}  // namespace tilefuse::nvptx
