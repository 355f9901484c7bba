// Inclusive scan (cumsum) along one axis: a Hillis-Steele scan in shared memory, log2(n)
// steps over a double buffer, each element updated by the one thread that owns it.
#include "codegen.hpp"
#include "passes.hpp"

namespace tilefuse::nvptx {

void lower_scan(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  const ir::Value* x = op.operand(0);
  const LinearLayout& l = cg.plan.op(&op).operands[0]->ll;
  const OpPlan& p = cg.plan.op(&op);
  Regs in = cg.operand(op, 0);
  DType dt = accumulate_dtype(op);
  DType in_dt = x->type.dtype;
  llvm::Type* ty = cg.elem_type(dt);
  int es = byte_size(dt);
  int axis = op.axis;
  int64_t n = x->type.shape[axis];
  uint32_t stride = 1u << l.dim_shift(axis);
  int buf_bytes = (static_cast<int>(x->type.numel()) * es + 15) / 16 * 16;
  int bufs[2] = {p.smem_offset, p.smem_offset + buf_bytes};

  Regs vals;
  for (auto* v : in) vals.push_back(convert_element(cg, v, in_dt, dt));
  Regs flat = cg.flat_indices(l);
  auto coords = cg.coords(l);
  auto red = l.redundancy();
  llvm::Value* owner = cg.owner_predicate(l);
  auto addr = [&](int buf, llvm::Value* idx) { return cg.smem_addr(bufs[buf], b.CreateMul(idx, cg.c32(es))); };

  cg.smem_before_write();
  cg.if_then(owner, [&] {
    for (int r = 0; r < l.num_regs(); ++r)
      if (!(r & red.reg)) b.CreateStore(vals[r], addr(0, flat[r]));
  });
  cg.smem_after_write();
  int cur = 0;
  for (int64_t s = 1; s < n; s *= 2) {
    Regs next(l.num_regs());
    for (int r = 0; r < l.num_regs(); ++r) {
      if (r & red.reg) continue;
      llvm::Value* self = b.CreateLoad(ty, addr(cur, flat[r]));
      llvm::Value* has = b.CreateICmpUGE(coords[axis][r], cg.c32(s));
      llvm::Value* src = b.CreateSelect(has, b.CreateSub(flat[r], cg.c32(s * stride)), flat[r]);
      llvm::Value* prev = b.CreateLoad(ty, addr(cur, src));
      llvm::Value* sum = binary_element(cg, ir::BinaryOp::Add, self, prev, dt);
      next[r] = b.CreateSelect(has, sum, self);
    }
    cg.if_then(owner, [&] {
      for (int r = 0; r < l.num_regs(); ++r)
        if (!(r & red.reg)) b.CreateStore(next[r], addr(1 - cur, flat[r]));
    });
    cg.smem_after_write();
    cur = 1 - cur;
  }
  Regs out;
  for (int r = 0; r < l.num_regs(); ++r)
    out.push_back(convert_element(cg, b.CreateLoad(ty, addr(cur, flat[r])), dt, op.result()->type.dtype));
  cg.smem_after_read();
  cg.set(op.result(), std::move(out));
}

}  // namespace tilefuse::nvptx
