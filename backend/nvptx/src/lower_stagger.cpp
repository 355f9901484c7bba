// Staggered warpgroups (Config stagger, GpuPlan::stagger): single-role kernels of two
// warpgroups whose pipelined blocks arrive by TMA, two stages. Every block's first MMA
// normally waits at a CTA barrier, which frees the stage the previous block read so
// that thread 0 can refill it; the barrier also keeps the two warpgroups in lockstep, so
// both run their softmax (attention) at the same time while the tensor cores idle.
// Split into an arrive by warpgroup 0 and a wait by warpgroup 1, whose first thread
// then refills the stage, it lets warpgroup 0 run ahead and the two drift apart. A
// block ahead at most: with one block copied ahead, warpgroup 0's next block is the
// one warpgroup 1 refills after its wait, so arrivals never pile up on the barrier
// (which counts threads, not phases). Each warpgroup still waits on the stages'
// mbarriers for the data.
#include "codegen.hpp"

namespace tilefuse::nvptx {

void stagger_meet(Codegen& cg) {
  // Barrier 1 is free in single-role kernels (the consumers' barrier of warp-specialized ones).
  llvm::Value* wg = cg.b.CreateLShr(cg.warp(), cg.c32(2));
  cg.if_then(cg.b.CreateICmpEQ(wg, cg.c32(0)),
             [&] { cg.inline_asm(cg.b.getVoidTy(), "bar.arrive 1, 256;", "~{memory}", {}, true); });
  cg.if_then(cg.b.CreateICmpEQ(wg, cg.c32(1)),
             [&] { cg.inline_asm(cg.b.getVoidTy(), "bar.sync 1, 256;", "~{memory}", {}, true); });
}

llvm::Value* stage_refiller(Codegen& cg) {
  return cg.b.CreateICmpEQ(cg.tid(), cg.c32(cg.plan.stagger ? 128 : 0));
}

}  // namespace tilefuse::nvptx
