// TMA copies of tensor-view blocks (tma_plan.cpp). Each stage of a TMA load's pipeline
// has an mbarrier after the stage buffers. Thread 0 arms a stage's barrier with the
// bytes to expect and issues one bulk tensor copy per 128-byte column block (the
// engine writes each box swizzled exactly as the wgmma descriptors read it, and zero
// fills what lies outside the view); every thread waits for the barrier's phase before
// its dot reads the buffer. Iteration i of the loop uses stage i % S, whose barrier
// completes for the (i / S)-th time: phase parity (i / S) & 1.
#include "codegen.hpp"

namespace tilefuse::nvptx {

namespace {

llvm::Value* barrier_addr(Codegen& cg, const ir::Op& ld, llvm::Value* slot) {
  const OpPlan& p = cg.plan.op(&ld);
  int first = p.smem_offset + p.stages * async_stage_bytes(cg.plan, &ld);
  llvm::Value* off = cg.b.CreateAdd(cg.c32(first), cg.b.CreateMul(slot, cg.c32(8)));
  return cg.shared_addr32(cg.smem_addr(0, off));
}

bool has_tma(const Codegen& cg, const GpuPlan::Pipeline& pl) {
  for (const ir::Op* ld : pl.loads)
    if (cg.plan.op(ld).tma_map >= 0) return true;
  return false;
}

}  // namespace

void init_tma_barriers(Codegen& cg, const GpuPlan::Pipeline& pl) {
  if (!has_tma(cg, pl)) return;
  cg.smem_before_write();  // the barriers' bytes may have held other scratch
  cg.if_then(cg.b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] {
    for (const ir::Op* ld : pl.loads) {
      if (cg.plan.op(ld).tma_map < 0) continue;
      for (int s = 0; s < pl.stages; ++s)
        cg.inline_asm(cg.b.getVoidTy(), "mbarrier.init.shared::cta.b64 [$0], 1;", "r,~{memory}",
                      {barrier_addr(cg, *ld, cg.c32(s))}, true);
    }
    // The initialized barriers become visible to the copy engine (async proxy).
    cg.inline_asm(cg.b.getVoidTy(), "fence.mbarrier_init.release.cluster;", "~{memory}", {}, true);
  });
  cg.smem_after_write();
}

void inval_tma_barriers(Codegen& cg, const GpuPlan::Pipeline& pl) {
  if (!has_tma(cg, pl)) return;
  // Every thread passed its last wait before the last iteration's barrier, which thread
  // 0 has passed too; later users of these bytes synchronize before writing them.
  cg.if_then(cg.b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] {
    for (const ir::Op* ld : pl.loads) {
      if (cg.plan.op(ld).tma_map < 0) continue;
      for (int s = 0; s < pl.stages; ++s)
        cg.inline_asm(cg.b.getVoidTy(), "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}",
                      {barrier_addr(cg, *ld, cg.c32(s))}, true);
    }
  });
}

Regs tma_coordinates(Codegen& cg, const ir::Op& ld, const std::vector<const ir::Op*>& slice,
                     const ir::Value* iv_arg, llvm::Value* iv) {
  Regs out;
  for (int d = 0; d < ld.view_rank; ++d)
    out.push_back(cg.at_iteration(slice, iv_arg, iv, ld, 4 + 2 * ld.view_rank + d).at(0));
  return out;
}

void issue_tma_copy(Codegen& cg, const ir::Op& ld, const Regs& coords, llvm::Value* pred, llvm::Value* slot) {
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&ld);
  const TensorMapSpec& spec = cg.plan.tensor_maps.at(p.tma_map);
  const ir::Type& t = ld.result()->type;
  const int es = byte_size(t.dtype), rank = ld.view_rank;
  const int64_t rows = t.shape[0], inner = spec.box.back(), boxes = t.shape[1] / inner;
  const int64_t box_bytes = rows * inner * es;
  llvm::Value* map = b.CreatePtrToInt(cg.kernel->getArg(static_cast<unsigned>(cg.fn.params.size() + p.tma_map)),
                                      b.getInt64Ty());
  llvm::Value* bar = barrier_addr(cg, ld, slot);
  llvm::Value* buffer = b.CreateAdd(cg.c32(p.smem_offset), b.CreateMul(slot, cg.c32(async_stage_bytes(cg.plan, &ld))));
  llvm::Value* go = b.CreateICmpEQ(cg.tid(), cg.c32(0));
  if (pred) go = b.CreateAnd(go, pred);
  cg.if_then(go, [&] {
    cg.inline_asm(b.getVoidTy(), "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}",
                  {bar, cg.c32(box_bytes * boxes)}, true);
    // Operands: destination, map, coordinates innermost first, barrier.
    std::string text = "cp.async.bulk.tensor." + std::to_string(rank) +
                       "d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {";
    for (int d = 0; d < rank; ++d) text += (d ? ", $" : "$") + std::to_string(2 + d);
    text += "}], [$" + std::to_string(2 + rank) + "];";
    std::string constraints = "r,l";
    for (int d = 0; d < rank; ++d) constraints += ",r";
    constraints += ",r,~{memory}";
    for (int64_t j = 0; j < boxes; ++j) {
      llvm::Value* dst = cg.shared_addr32(cg.smem_addr(0, b.CreateAdd(buffer, cg.c32(j * box_bytes))));
      std::vector<llvm::Value*> args{dst, map};
      for (int d = rank - 1; d >= 0; --d)
        args.push_back(d == rank - 1 ? b.CreateAdd(coords[d], cg.c32(j * inner)) : coords[d]);
      args.push_back(bar);
      cg.inline_asm(b.getVoidTy(), text, constraints, args, true);
    }
  });
}

void wait_tma_copy(Codegen& cg, const ir::Op& ld) {
  auto [slot, phase] = cg.tma_wait_at.at(&ld);
  cg.inline_asm(cg.b.getVoidTy(),
                "{\n.reg .pred done;\n"
                "tma_wait_${:uid}:\n"
                "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
                "@!done bra tma_wait_${:uid};\n}",
                "r,r,~{memory}", {barrier_addr(cg, ld, slot), phase}, true);
}

}  // namespace tilefuse::nvptx
