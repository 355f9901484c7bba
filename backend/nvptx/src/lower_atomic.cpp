// Atomics: one predicated `atom.global` per element, performed by exactly one of the
// threads holding the element; the old values then reach every copy through shared
// memory. Ordered atomics (Op::acq_rel) are `atom.acq_rel.gpu` between two CTA barriers:
// the barrier before makes the other threads' earlier accesses precede the performing
// thread's release (barriers order memory within the CTA, and the release is
// cumulative), the one after makes the acquire precede every thread's later accesses.
#include "codegen.hpp"

namespace tilefuse::nvptx {

using ir::AtomicOp;
using ir::OpKind;

namespace {

struct RegKind {
  llvm::Type* ty;
  const char* constraint;
};

RegKind int_reg(Codegen& cg, DType dt) {
  return bit_width(dt) == 64 ? RegKind{cg.b.getInt64Ty(), "l"} : RegKind{cg.b.getInt32Ty(), "r"};
}

// `@p atom.global.<op>.<type> $0, [$1], $2 [, $3];` returning the old value (0 where p is false).
llvm::Value* atom(Codegen& cg, const std::string& opname, const std::string& type, RegKind k, llvm::Value* ptr,
                  const std::vector<llvm::Value*>& vals, llvm::Value* pred, bool acq_rel) {
  std::string text = pred ? "@$" + std::to_string(2 + vals.size()) + " " : "";
  text += std::string("atom") + (acq_rel ? ".acq_rel.gpu" : "") + ".global." + opname + "." + type + " $0, [$1]";
  std::string cons = std::string("=") + k.constraint + ",l";
  std::vector<llvm::Value*> args{ptr};
  for (size_t i = 0; i < vals.size(); ++i) {
    text += ", $" + std::to_string(2 + i);
    cons += std::string(",") + k.constraint;
    args.push_back(vals[i]);
  }
  text += ";";
  if (pred) {
    cons += ",b,0";
    args.push_back(pred);
    args.push_back(llvm::Constant::getNullValue(k.ty));
  }
  cons += ",~{memory}";
  return cg.inline_asm(k.ty, text, cons, args, true);
}

llvm::Value* rmw(Codegen& cg, AtomicOp a, DType dt, llvm::Value* ptr, llvm::Value* v, llvm::Value* pred, bool ord) {
  auto& b = cg.b;
  bool fp = is_float(dt);
  int w = bit_width(dt);
  std::string bits = w == 64 ? "64" : "32";
  switch (a) {
    case AtomicOp::Add: {
      if (fp) {
        RegKind k = w == 64 ? RegKind{b.getDoubleTy(), "d"} : RegKind{b.getFloatTy(), "f"};
        return atom(cg, "add", "f" + bits, k, ptr, {v}, pred, ord);
      }
      return atom(cg, "add", "u" + bits, int_reg(cg, dt), ptr, {v}, pred, ord);
    }
    case AtomicOp::Xchg: {
      RegKind k = int_reg(cg, dt);
      llvm::Value* x = fp ? b.CreateBitCast(v, k.ty) : v;
      llvm::Value* old = atom(cg, "exch", "b" + bits, k, ptr, {x}, pred, ord);
      return fp ? b.CreateBitCast(old, v->getType()) : old;
    }
    case AtomicOp::WaitAtLeast: break;  // lower_wait
    case AtomicOp::Read: break;         // lower_atomic
    case AtomicOp::Max:
    case AtomicOp::Min: {
      bool mx = a == AtomicOp::Max;
      RegKind k = int_reg(cg, dt);
      if (!fp) return atom(cg, mx ? "max" : "min", (is_signed_int(dt) ? "s" : "u") + bits, k, ptr, {v}, pred, ord);
      // f32: non-negative floats order like signed ints, negative ones reversed like
      // unsigned ints; pick the integer atomic by the sign of the operand.
      llvm::Value* x = b.CreateBitCast(v, k.ty);
      llvm::Value* neg = b.CreateICmpSLT(x, cg.c32(0));
      llvm::Value* p = pred ? pred : b.getTrue();
      llvm::Value* pos_old = atom(cg, mx ? "max" : "min", "s32", k, ptr, {x}, b.CreateAnd(p, b.CreateNot(neg)), ord);
      llvm::Value* neg_old = atom(cg, mx ? "min" : "max", "u32", k, ptr, {x}, b.CreateAnd(p, neg), ord);
      return b.CreateBitCast(b.CreateSelect(neg, neg_old, pos_old), v->getType());
    }
  }
  return nullptr;
}

// wait_at_least: warp 0 polls the counter (every lane, one transaction; acquire) until the
// whole warp saw it at least the target (vote: the warp leaves the loop together, converged
// at the CTA barrier after it), then fences; thread 0's value reaches the others through
// shared memory after the barrier. The acquire load invalidates the SM's L1, so the
// program's later plain loads read what the counting programs wrote. A relaxed wait:
// every warp polls with relaxed loads by itself and does nothing else.
void lower_wait(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&op);
  llvm::Value* ptr = cg.scalar(op.operand(0));
  llvm::Value* target = cg.scalar(op.operand(1));
  if (!op.acq_rel) {  // every warp polls by itself: no barrier, no fence, no L1 invalidation
    cg.set(op.result(), {poll_until_at_least(cg, ptr, target, false, true, bit_width(op.operand(0)->type.dtype) == 64)});
    return;
  }
  llvm::Value* addr = cg.smem_addr(p.smem_offset);
  cg.barrier();  // warp 0 enters the poll converged (vote.sync names all 32 lanes)
  cg.smem_before_write();
  cg.if_then(b.CreateICmpULT(cg.tid(), cg.c32(32)), [&] {
    llvm::Value* seen = poll_until_at_least(cg, ptr, target, false);
    cg.inline_asm(b.getVoidTy(), "fence.acq_rel.gpu;", "~{memory}", {}, true);
    cg.if_then(b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] { b.CreateStore(seen, addr); });
  });
  cg.smem_after_write();
  llvm::Value* seen = b.CreateLoad(cg.i32(), addr);
  cg.smem_after_read();
  cg.set(op.result(), {seen});
}

}  // namespace

void lower_atomic(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  if (op.kind == OpKind::AtomicRMW && op.atomic() == AtomicOp::WaitAtLeast) return lower_wait(cg, op);
  if (op.kind == OpKind::AtomicRMW && op.atomic() == AtomicOp::Read) {  // every thread reads for itself
    bool wide = bit_width(op.operand(0)->type.dtype) == 64;
    llvm::Value* ptr = cg.scalar(op.operand(0));
    llvm::Value* v = wide ? cg.inline_asm(b.getInt64Ty(), "ld.relaxed.gpu.global.u64 $0, [$1];", "=l,l,~{memory}",
                                          {ptr}, true)
                          : cg.inline_asm(cg.i32(), "ld.relaxed.gpu.global.u32 $0, [$1];", "=r,l,~{memory}", {ptr}, true);
    cg.set(op.result(), {v});
    return;
  }
  const OpPlan& p = cg.plan.op(&op);
  DType dt = op.operand(0)->type.dtype;
  LayoutRef l = p.operands.empty() ? nullptr : p.operands[0];
  std::vector<Regs> in;
  for (int i = 0; i < op.num_operands(); ++i) in.push_back(cg.operand(op, i));
  llvm::Value* owner = l ? cg.owner_predicate(l->ll) : b.CreateICmpEQ(cg.tid(), cg.c32(0));
  uint32_t dup_regs = l ? l->ll.redundancy().reg : 0;
  int n = static_cast<int>(in[0].size());
  llvm::Type* ty = cg.elem_type(dt);
  Regs old(n, llvm::Constant::getNullValue(ty));
  const bool ord = op.acq_rel;
  if (ord) cg.barrier();
  for (int r = 0; r < n; ++r) {
    if (r & dup_regs) continue;
    llvm::Value* pred = owner;
    if (op.kind == OpKind::AtomicRMW && in.size() > 2) pred = pred ? b.CreateAnd(pred, in[2][r]) : in[2][r];
    if (op.kind == OpKind::AtomicRMW) {
      old[r] = rmw(cg, op.atomic(), dt, in[0][r], in[1][r], pred, ord);
    } else {
      RegKind k = int_reg(cg, dt);
      bool fp = is_float(dt);
      llvm::Value* c = fp ? b.CreateBitCast(in[1][r], k.ty) : in[1][r];
      llvm::Value* v = fp ? b.CreateBitCast(in[2][r], k.ty) : in[2][r];
      llvm::Value* o = atom(cg, "cas", bit_width(dt) == 64 ? "b64" : "b32", k, in[0][r], {c, v}, pred, ord);
      old[r] = fp ? b.CreateBitCast(o, ty) : o;
    }
  }
  // Every copy of an element gets the old value the performing thread saw.
  bool copies = !l || l->ll.redundancy().any();
  if (copies) {
    if (l) {
      cg.smem_before_write();
      cg.smem_store_tile(old, l->ll, p.smem_offset, ty);
      cg.smem_after_write();
      old = cg.smem_load_tile(l->ll, p.smem_offset, ty);
      cg.smem_after_read();
    } else {
      cg.smem_before_write();
      llvm::Value* addr = cg.smem_addr(p.smem_offset);
      cg.if_then(owner, [&] { b.CreateStore(old[0], addr); });
      cg.smem_after_write();
      old[0] = b.CreateLoad(ty, addr);
      cg.smem_after_read();
    }
  }
  if (ord && !copies) cg.barrier();  // (the copies' exchange has its barriers)
  cg.set(op.result(), std::move(old));
}

}  // namespace tilefuse::nvptx
