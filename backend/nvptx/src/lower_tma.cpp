// TMA copies of tensor-view blocks (tma_plan.cpp). Each stage of a TMA load's pipeline
// has an mbarrier, in a small buffer of the load's own (OpPlan::barrier_offset). Thread
// 0 arms a stage's barrier with the bytes to expect and issues one bulk tensor copy per 128-byte column block (the
// engine writes each box swizzled exactly as the wgmma descriptors read it, and zero
// fills what lies outside the view); every thread waits for the barrier's phase before
// its dot reads the buffer. Iteration i of the loop uses stage i % S, whose barrier
// completes for the (i / S)-th time: phase parity (i / S) & 1.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "codegen.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

namespace {

// The "full" barrier of a stage (its copies landed), or its "empty" one (the consumers
// have read it; warp-specialized kernels only).
llvm::Value* barrier_addr(Codegen& cg, const ir::Op& ld, llvm::Value* slot, bool empty = false) {
  const OpPlan& p = cg.plan.op(&ld);
  int first = p.barrier_offset + (empty ? 8 * p.stages : 0);
  llvm::Value* off = cg.b.CreateAdd(cg.c32(first), cg.b.CreateMul(slot, cg.c32(8)));
  return cg.shared_addr32(cg.smem_addr(0, off));
}

void wait_parity(Codegen& cg, llvm::Value* bar, llvm::Value* parity) {
  cg.inline_asm(cg.b.getVoidTy(),
                "{\n.reg .pred done;\n"
                "tma_wait_${:uid}:\n"
                "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
                "@!done bra tma_wait_${:uid};\n}",
                "r,r,~{memory}", {bar, parity}, true);
}

// The mbarriers of each (TMA load, stages): a full one per stage, and warp-specialized
// an empty one (one arrival per consumer warp).
void init_barriers(Codegen& cg, const std::vector<std::pair<const ir::Op*, int>>& rings) {
  bool ws = cg.plan.warp_specialized();
  cg.if_then(cg.b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] {
    for (auto [ld, stages] : rings) {
      if (cg.plan.op(ld).tma_map < 0) continue;
      for (int s = 0; s < stages; ++s) {
        cg.inline_asm(cg.b.getVoidTy(), "mbarrier.init.shared::cta.b64 [$0], 1;", "r,~{memory}",
                      {barrier_addr(cg, *ld, cg.c32(s))}, true);
        if (ws)
          cg.inline_asm(cg.b.getVoidTy(), "mbarrier.init.shared::cta.b64 [$0], " + std::to_string(cg.fn.num_warps) + ";",
                        "r,~{memory}", {barrier_addr(cg, *ld, cg.c32(s), true)}, true);
      }
    }
    // The initialized barriers become visible to the copy engine (async proxy).
    cg.inline_asm(cg.b.getVoidTy(), "fence.mbarrier_init.release.cluster;", "~{memory}", {}, true);
  });
}

std::vector<std::pair<const ir::Op*, int>> rings_of(const GpuPlan::Pipeline& pl) {
  std::vector<std::pair<const ir::Op*, int>> rings;
  for (const ir::Op* ld : pl.loads) rings.push_back({ld, pl.stages});
  return rings;
}

bool has_tma(const Codegen& cg, const GpuPlan::Pipeline& pl) {
  for (const ir::Op* ld : pl.loads)
    if (cg.plan.op(ld).tma_map >= 0) return true;
  return false;
}

}  // namespace

void init_tma_barriers(Codegen& cg, const GpuPlan::Pipeline& pl) {
  if (!has_tma(cg, pl) || cg.plan.warp_specialized()) return;  // (at kernel entry, split_producer)
  cg.smem_before_write();  // the barriers' bytes may have held other scratch
  init_barriers(cg, rings_of(pl));
  cg.smem_after_write();
}

void inval_tma_barriers(Codegen& cg, const GpuPlan::Pipeline& pl) {
  if (!has_tma(cg, pl) || cg.plan.warp_specialized()) return;
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
  // Only the slice ops the (scalar) coordinates depend on, not the pointer tiles.
  std::unordered_set<const ir::Op*> in_slice(slice.begin(), slice.end()), need;
  std::vector<const ir::Value*> work;
  for (int d = 0; d < ld.view_rank; ++d) work.push_back(ld.view_coord(d));
  while (!work.empty()) {
    const ir::Value* v = work.back();
    work.pop_back();
    if (v->def && in_slice.count(v->def) && need.insert(v->def).second)
      work.insert(work.end(), v->def->operands.begin(), v->def->operands.end());
  }
  std::vector<const ir::Op*> sub;
  for (const ir::Op* o : slice)
    if (need.count(o)) sub.push_back(o);
  Regs out;
  for (int d = 0; d < ld.view_rank; ++d)
    out.push_back(cg.at_iteration(sub, iv_arg, iv, ld, 4 + 2 * ld.view_rank + d).at(0));
  return out;
}

void issue_tma_copy(Codegen& cg, const ir::Op& ld, const Regs& coords, llvm::Value* pred, llvm::Value* slot,
                    llvm::Value* issuer) {
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
  llvm::Value* go = issuer ? issuer : b.CreateICmpEQ(cg.tid(), cg.c32(0));
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

void issue_tma_prologue(Codegen& cg, const ir::Op& loop, llvm::Value* lo, llvm::Value* hi, llvm::Value* step,
                        llvm::Value* first_slot, llvm::Value* valid) {
  auto& b = cg.b;
  const GpuPlan::Pipeline& pl = cg.plan.pipelines.at(&loop);
  const ir::Block& body = *loop.regions[0];
  bool sgn = is_signed_int(loop.operand(0)->type.dtype);
  for (int s = 0; s < pl.ahead(); ++s) {
    llvm::Value* iv = b.CreateAdd(lo, b.CreateMul(step, llvm::ConstantInt::get(lo->getType(), s)));
    llvm::Value* ok = sgn ? b.CreateICmpSLT(iv, hi) : b.CreateICmpULT(iv, hi);
    if (valid) ok = b.CreateAnd(ok, valid);
    llvm::Value* slot = b.CreateURem(b.CreateAdd(first_slot, cg.c32(s)), cg.c32(pl.stages));
    for (const ir::Op* ld : pl.loads)
      issue_tma_copy(cg, *ld, tma_coordinates(cg, *ld, pl.slice, body.args[0], iv), ok, slot);
  }
}

void wait_tma_copy(Codegen& cg, const ir::Op& ld) {
  auto [slot, phase] = cg.tma_wait_at.at(&ld);
  wait_parity(cg, barrier_addr(cg, ld, slot), phase);
}

void release_completed_stages(Codegen& cg, const ir::Op& at) {
  auto it = cg.plan.wgmma_releases.find(&at);
  if (it == cg.plan.wgmma_releases.end()) return;
  std::vector<const ir::Op*> released;  // once per load (a dot may read one as A and B)
  for (const ir::Op* dot : it->second)
    for (int i = 0; i < 2; ++i) {
      const ir::Op* ld = async_source(cg.plan, dot->operand(i));
      // (a copy made before the loop is not the loop's to release)
      if (!ld || ld->parent != dot->parent || cg.plan.op(ld).tma_map < 0 || !cg.tma_wait_at.count(ld)) continue;
      if (std::find(released.begin(), released.end(), ld) != released.end()) continue;
      released.push_back(ld);
      release_tma_stage(cg, *ld, cg.tma_wait_at.at(ld).first, cg.b.getTrue());
    }
}

void release_tma_stage(Codegen& cg, const ir::Op& ld, llvm::Value* slot, llvm::Value* pred) {
  llvm::Value* go = cg.b.CreateAnd(cg.b.CreateICmpEQ(cg.lane(), cg.c32(0)), pred);
  cg.if_then(go, [&] {
    cg.inline_asm(cg.b.getVoidTy(), "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}",
                  {barrier_addr(cg, ld, slot, true)}, true);
  });
}

namespace {
std::pair<llvm::Value*, llvm::Value*> producer_copies(Codegen& cg, llvm::Value* stage, llvm::Value* parity);
}  // namespace

void split_producer(Codegen& cg) {
  auto& b = cg.b;
  auto rings = rings_of(cg.plan.pipelines.at(cg.plan.producer_loops.front()));
  for (const GpuPlan::ProducerCopy& c : cg.plan.producer_copies) rings.push_back({c.load, cg.plan.op(c.load).stages});
  init_barriers(cg, rings);
  cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier0, {});  // every thread: the barriers are ready
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto* group = llvm::BasicBlock::Create(cg.ctx, "producer_group", f);
  auto* producer = llvm::BasicBlock::Create(cg.ctx, "producer", f);
  auto* idle = llvm::BasicBlock::Create(cg.ctx, "idle", f);
  auto* work = llvm::BasicBlock::Create(cg.ctx, "consumers", f);
  b.CreateCondBr(b.CreateICmpUGE(cg.warp(), cg.c32(cg.fn.num_warps)), group, work);
  // Registers move from the producer warpgroup to the consumers (the kernel starts with
  // 64K / threads each; setmaxnreg needs whole warpgroups, in one branch per role).
  // TILEFUSE_PRODUCER_REGS: the producer's budget (24-256, a multiple of 8; default 40), the
  // rest going to the consumers.
  const long asked = knob_count("TILEFUSE_PRODUCER_REGS");
  const bool valid = asked >= 24 && asked <= 256 && asked % 8 == 0;
  const int threads = 32 * (cg.fn.num_warps + 4), producer_regs = valid ? static_cast<int>(asked) : 40;
  const int start = std::min(255, 65536 / threads / 8 * 8);
  const int consumer_regs = std::min(valid ? 256 : 232, (65536 - 128 * producer_regs) / (32 * cg.fn.num_warps) / 8 * 8);
  const bool move = consumer_regs > start;
  b.SetInsertPoint(group);
  if (move)
    cg.inline_asm(b.getVoidTy(), "setmaxnreg.dec.sync.aligned.u32 " + std::to_string(producer_regs) + ";", "", {},
                  true);
  // The producer warpgroup's first thread copies; the rest of it has nothing to do.
  b.CreateCondBr(b.CreateICmpEQ(cg.tid(), cg.c32(32 * cg.fn.num_warps)), producer, idle);
  b.SetInsertPoint(idle);
  b.CreateRetVoid();
  b.SetInsertPoint(work);
  if (move)
    cg.inline_asm(b.getVoidTy(), "setmaxnreg.inc.sync.aligned.u32 " + std::to_string(consumer_regs) + ";", "", {},
                  true);
  work = b.GetInsertBlock();

  b.SetInsertPoint(producer);
  if (cg.fn.persistent) {
    // The consumers' loop over programs (lower_persistent.cpp), with the ring's position
    // carried from program to program.
    llvm::Value* start = cg.call_intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {});
    llvm::Value* stride = cg.call_intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, {});
    loop_over_programs(cg, start, stride, "copy_program",
                       [&](llvm::Value*, Ring ring) { return producer_copies(cg, ring.first, ring.second); });
  } else {
    producer_copies(cg, cg.c32(0), cg.c32(0));
  }
  b.CreateRetVoid();
  b.SetInsertPoint(work);
}

namespace {

// The producer's copies of one program: every producer loop's, in order, from ring
// position (stage, parity); returns the position after them.
std::pair<llvm::Value*, llvm::Value*> producer_copies(Codegen& cg, llvm::Value* stage, llvm::Value* parity) {
  auto& b = cg.b;
  llvm::Function* f = b.GetInsertBlock()->getParent();
  for (const ir::Op* o : cg.plan.producer_ops) cg.lower_op(*o);
  int loops_done = 0;
  // The one-block copies that come after the first `loops_done` loops.
  auto one_block_copies = [&] {
    for (const GpuPlan::ProducerCopy& c : cg.plan.producer_copies) {
      if (c.after_loops != loops_done) continue;
      auto [slot, phase] = producer_copy_stage(cg, *c.load);
      if (cg.fn.persistent)  // an earlier program's consumers have read the buffer
        wait_parity(cg, barrier_addr(cg, *c.load, slot, true), b.CreateXor(phase, cg.c32(1)));
      Regs coords;
      for (int d = 0; d < c.load->view_rank; ++d) coords.push_back(cg.scalar(c.load->view_coord(d)));
      issue_tma_copy(cg, *c.load, coords, nullptr, slot, b.getTrue());
    }
  };
  one_block_copies();
  for (const ir::Op* loop : cg.plan.producer_loops) {
    const GpuPlan::Pipeline& pl = cg.plan.pipelines.at(loop);
    llvm::Value* lo = cg.scalar(loop->operand(0));
    llvm::Value* hi = cg.scalar(loop->operand(1));
    llvm::Value* step = cg.scalar(loop->operand(2));
    bool sgn = is_signed_int(loop->operand(0)->type.dtype);
    auto* pre = b.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(cg.ctx, "copy.header", f);
    auto* body = llvm::BasicBlock::Create(cg.ctx, "copy.body", f);
    auto* done = llvm::BasicBlock::Create(cg.ctx, "copy.done", f);
    b.CreateBr(header);
    b.SetInsertPoint(header);
    llvm::PHINode* iv = b.CreatePHI(lo->getType(), 2, "copy_iv");
    llvm::PHINode* slot = b.CreatePHI(cg.i32(), 2, "copy_stage");
    llvm::PHINode* phase = b.CreatePHI(cg.i32(), 2, "copy_phase");
    iv->addIncoming(lo, pre);
    slot->addIncoming(stage, pre);
    phase->addIncoming(parity, pre);
    b.CreateCondBr(sgn ? b.CreateICmpSLT(iv, hi) : b.CreateICmpULT(iv, hi), body, done);
    b.SetInsertPoint(body);
    const ir::Block& blk = *loop->regions[0];
    for (const ir::Op* ld : pl.loads) {
      // The stage's previous contents were released (a fresh barrier passes parity 1).
      wait_parity(cg, barrier_addr(cg, *ld, slot, true), b.CreateXor(phase, cg.c32(1)));
      issue_tma_copy(cg, *ld, tma_coordinates(cg, *ld, pl.slice, blk.args[0], iv), nullptr, slot, b.getTrue());
    }
    auto [slot_next, phase_next] = next_stage(cg, slot, phase, pl.stages);
    llvm::BasicBlock* latch = b.GetInsertBlock();
    iv->addIncoming(b.CreateAdd(iv, step), latch);
    slot->addIncoming(slot_next, latch);
    phase->addIncoming(phase_next, latch);
    b.CreateBr(header);
    b.SetInsertPoint(done);
    stage = slot;
    parity = phase;
    ++loops_done;
    one_block_copies();
  }
  return {stage, parity};
}

}  // namespace

llvm::Value* program_parity(Codegen& cg) { return cg.program_parity ? cg.program_parity : cg.c32(0); }

std::pair<llvm::Value*, llvm::Value*> producer_copy_stage(Codegen& cg, const ir::Op& ld) {
  if (cg.plan.op(&ld).stages == 1) return {cg.c32(0), program_parity(cg)};
  // Two buffers: program k uses buffer k % 2, whose barriers complete for the k / 2-th time.
  return {program_parity(cg), cg.program_pair_parity ? cg.program_pair_parity : cg.c32(0)};
}

void expect_producer_copy(Codegen& cg, const ir::Op& ld) {
  auto [slot, phase] = producer_copy_stage(cg, ld);
  cg.async_base[&ld] =
      cg.b.CreateAdd(cg.c32(cg.plan.op(&ld).smem_offset), cg.b.CreateMul(slot, cg.c32(async_stage_bytes(cg.plan, &ld))));
  cg.tma_wait_at[&ld] = {slot, phase};
}

void release_producer_copies(Codegen& cg) {
  if (cg.plan.producer_copies.empty()) return;
  // Every MMA reading them has completed (the program's results are out).
  cg.inline_asm(cg.b.getVoidTy(), "wgmma.wait_group.sync.aligned 0;", "~{memory}", {}, true);
  for (const GpuPlan::ProducerCopy& c : cg.plan.producer_copies)
    release_tma_stage(cg, *c.load, producer_copy_stage(cg, *c.load).first, cg.b.getTrue());
}

std::pair<llvm::Value*, llvm::Value*> next_stage(Codegen& cg, llvm::Value* slot, llvm::Value* phase, int stages) {
  llvm::Value* inc = cg.b.CreateAdd(slot, cg.c32(1));
  llvm::Value* wrap = cg.b.CreateICmpEQ(inc, cg.c32(stages));
  return {cg.b.CreateSelect(wrap, cg.c32(0), inc), cg.b.CreateSelect(wrap, cg.b.CreateXor(phase, cg.c32(1)), phase)};
}

void release_remaining_stages(Codegen& cg, const ir::Op& loop, llvm::Value* iv, llvm::Value* slot) {
  // Iterations n-1-lag .. n-1 were not released inside the loop (n: its trip count);
  // their MMAs have completed (the exit's waits). iv and slot are those of iteration n.
  auto& b = cg.b;
  const GpuPlan::Pipeline& pl = cg.plan.pipelines.at(&loop);
  llvm::Value* lo = cg.scalar(loop.operand(0));
  llvm::Value* step = cg.scalar(loop.operand(2));
  bool sgn = is_signed_int(loop.operand(0)->type.dtype);
  for (int q = 0; q <= pl.lag; ++q) {
    llvm::Value* it = b.CreateSub(iv, b.CreateMul(step, llvm::ConstantInt::get(iv->getType(), q + 1)));
    llvm::Value* ran = sgn ? b.CreateICmpSGE(it, lo) : b.CreateICmpUGE(it, lo);
    llvm::Value* s = b.CreateURem(b.CreateAdd(slot, cg.c32(pl.stages - 1 - q)), cg.c32(pl.stages));
    for (const ir::Op* ld : pl.loads) release_tma_stage(cg, *ld, s, ran);
  }
}

}  // namespace tilefuse::nvptx
