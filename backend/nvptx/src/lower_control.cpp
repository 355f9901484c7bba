// Structured control flow: for loops with loop-carried tiles (one phi per register,
// 16-bit floats one per pair) and if/else with results. Conditions and bounds are
// scalars, hence uniform across the CTA, so barriers inside the bodies are safe.
#include <algorithm>
#include <tuple>

#include "codegen.hpp"
#include "memory_access.hpp"

namespace tilefuse::nvptx {

using ir::OpKind;

namespace {

// The yielded values of a region in the layouts its parent requires.
std::vector<Regs> yields(Codegen& cg, const ir::Block& block) {
  const ir::Op& y = *block.terminator();
  TF_ASSERT(y.kind == OpKind::Yield, "region without yield");
  std::vector<Regs> out;
  for (int i = 0; i < y.num_operands(); ++i) out.push_back(cg.operand(y, i));
  return out;
}

// 16-bit float registers travel around a loop in pairs, one 32-bit register each (the
// packed cvt makes them so and MMA operands read them so); as separate phis ptxas gives
// each its own 32-bit register (FlashAttention's lagged P tile: 32 registers more).
bool carried_in_pairs(const Regs& r) {
  if (r.size() < 2 || r.size() % 2) return false;
  for (llvm::Value* v : r)
    if (!v->getType()->isHalfTy() && !v->getType()->isBFloatTy()) return false;
  return true;
}

Regs pack_pairs(Codegen& cg, const Regs& r) {
  if (!carried_in_pairs(r)) return r;
  auto& b = cg.b;
  llvm::Type* et = r[0]->getType();
  auto* pair = llvm::FixedVectorType::get(et, 2);
  Regs out;
  for (size_t i = 0; i < r.size(); i += 2) {
    if (llvm::Value* w = packed_pair(cg, r[i], r[i + 1], et->isBFloatTy() ? DType::bf16 : DType::f16)) {
      out.push_back(b.CreateBitCast(w, pair));
      continue;
    }
    llvm::Value* v = b.CreateInsertElement(llvm::PoisonValue::get(pair), r[i], uint64_t{0});
    out.push_back(b.CreateInsertElement(v, r[i + 1], uint64_t{1}));
  }
  return out;
}

Regs unpack_pairs(Codegen& cg, const Regs& packed, const Regs& like) {
  if (!carried_in_pairs(like)) return packed;
  Regs out;
  for (llvm::Value* v : packed) {
    out.push_back(cg.b.CreateExtractElement(v, uint64_t{0}));
    out.push_back(cg.b.CreateExtractElement(v, uint64_t{1}));
  }
  return out;
}

// Tensor-core operands the loop only reads (FlashAttention's Q) are converted to their
// fragment layout once, before the loop, instead of through shared memory every
// iteration.
void hoist_dot_operands(Codegen& cg, const ir::Block& body) {
  ir::walk(body, [&](const ir::Op& o) {
    if (o.kind != OpKind::Dot || !cg.plan.op(&o).mma) return;
    const OpPlan& p = cg.plan.op(&o);
    for (int i = 0; i < 2; ++i) {
      const ir::Value* v = o.operand(i);
      if (defined_within(v, body)) continue;
      // wgmma reads B, and A where an async copy put it, from shared memory.
      if (p.wgmma && (i == 1 || wgmma_smem_source(cg.plan, v, i))) continue;
      cg.hoist(v, p.operands[i]->ll, cg.in_layout(v, p.operands[i]->ll, p.smem_offset));
    }
  });
}

void lower_for(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  const ir::Block& body = *op.regions[0];
  llvm::Value* lo = cg.scalar(op.operand(0));
  llvm::Value* hi = cg.scalar(op.operand(1));
  llvm::Value* step = cg.scalar(op.operand(2));
  bool sgn = is_signed_int(op.operand(0)->type.dtype);
  std::vector<Regs> inits;
  for (int i = 3; i < op.num_operands(); ++i) inits.push_back(cg.operand(op, i));
  hoist_dot_operands(cg, body);
  auto pit = cg.plan.pipelines.find(&op);
  const GpuPlan::Pipeline* pl = pit == cg.plan.pipelines.end() ? nullptr : &pit->second;
  auto less = [&](llvm::Value* x, llvm::Value* y) { return sgn ? b.CreateICmpSLT(x, y) : b.CreateICmpULT(x, y); };
  auto buffer_bytes = [&](const ir::Op* ld) { return async_stage_bytes(cg.plan, ld); };
  int group_loads = 0;  // pipelined loads committing cp.async groups (the others use TMA)
  if (pl)
    for (const ir::Op* ld : pl->loads) group_loads += cg.plan.op(ld).tma_map < 0;
  // A persistent kernel's prefetch loop: barriers set up at kernel start, the prologue's
  // copies issued for this program before its loop (lower_persistent.cpp).
  const bool prefetched = &op == cg.plan.prefetch_loop;
  if (pl && !prefetched) {
    init_tma_barriers(cg, *pl);
    // Prologue: the copies of iterations 0 .. S-2 (predicated off past the end).
    for (int s = 0; s < pl->ahead(); ++s) {
      llvm::Value* iv_s = b.CreateAdd(lo, b.CreateMul(step, llvm::ConstantInt::get(lo->getType(), s)));
      llvm::Value* ok = less(iv_s, hi);
      for (const ir::Op* ld : pl->loads) {
        if (cg.plan.op(ld).tma_map >= 0 && cg.plan.warp_specialized()) continue;  // the producer copies
        if (cg.plan.op(ld).tma_map >= 0) {
          issue_tma_copy(cg, *ld, tma_coordinates(cg, *ld, pl->slice, body.args[0], iv_s), ok, cg.c32(s));
          continue;
        }
        issue_async_copy(cg, *ld, [&](int i) { return cg.at_iteration(pl->slice, body.args[0], iv_s, *ld, i); }, ok,
                         cg.c32(cg.plan.op(ld).smem_offset + s * buffer_bytes(ld)));
      }
    }
  }

  // Copies made before the loop and read inside it: the producer's (by TMA) are waited
  // for on their barriers; for cp.async ones, everything older than the prologue's
  // groups has landed (the dots' barriers make it visible).
  std::vector<const ir::Op*> groups_before;
  if (cg.plan.loops_reading_copies.count(&op))
    for (const auto& o : op.parent->ops) {
      auto users = cg.plan.async_users.find(o.get());
      if (users == cg.plan.async_users.end()) continue;
      bool read_here = false;
      for (const ir::Op* d : users->second) read_here = read_here || d->parent == &body;
      if (!read_here) continue;
      if (cg.plan.is_producer_copy(o.get())) wait_tma_copy(cg, *o);
      else if (!cg.copies_awaited.count(o.get())) groups_before.push_back(o.get());
    }
  if (!groups_before.empty()) {
    cg.copies_awaited.insert(groups_before.begin(), groups_before.end());
    int younger = pl ? pl->ahead() * group_loads : 0;
    cg.inline_asm(b.getVoidTy(), "cp.async.wait_group " + std::to_string(std::min(younger, 7)) + ";", "~{memory}", {},
                  true);
    if (cg.plan.warp_specialized()) {
      // Their dots meet no barrier per iteration (the stages' mbarriers order the
      // loop's own copies): the consumers see these copies, async proxy included, here.
      cg.inline_asm(b.getVoidTy(), "fence.proxy.async.shared::cta;", "~{memory}", {}, true);
      cg.barrier();
    }
  }
  pingpong_pass_turn(cg);
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(cg.ctx, "for.header", f);
  auto* loop = llvm::BasicBlock::Create(cg.ctx, "for.body", f);
  auto* exit = llvm::BasicBlock::Create(cg.ctx, "for.exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* iv = b.CreatePHI(lo->getType(), 2, "iv");
  iv->addIncoming(lo, pre);
  std::vector<std::vector<llvm::PHINode*>> phis;
  for (auto& regs : inits) {
    std::vector<llvm::PHINode*> ps;
    b.SetInsertPoint(pre->getTerminator());
    Regs stored = pack_pairs(cg, regs);
    b.SetInsertPoint(header);
    for (auto* r : stored) {
      auto* phi = b.CreatePHI(r->getType(), 2);
      phi->addIncoming(r, pre);
      ps.push_back(phi);
    }
    phis.push_back(ps);
  }
  llvm::PHINode* slot = nullptr;   // pipeline buffer holding this iteration's copies
  llvm::PHINode* phase = nullptr;  // parity of the completions of its TMA barrier
  // Warp-specialized, or a persistent kernel's prefetch loop: one ring of stages, continued here.
  bool ring = std::find(cg.plan.producer_loops.begin(), cg.plan.producer_loops.end(), &op) !=
                  cg.plan.producer_loops.end() ||
              prefetched;
  if (pl) {
    slot = b.CreatePHI(cg.i32(), 2, "stage");
    slot->addIncoming(ring && cg.ring_position.first ? cg.ring_position.first : cg.c32(0), pre);
    phase = b.CreatePHI(cg.i32(), 2, "phase");
    phase->addIncoming(ring && cg.ring_position.second ? cg.ring_position.second : cg.c32(0), pre);
  }
  llvm::Value* cond = less(iv, hi);
  b.CreateCondBr(cond, loop, exit);

  b.SetInsertPoint(loop);
  size_t hoist_mark = cg.hoisted_mark();  // this loop's own hoists (preheader) stay valid after it
  cg.set(body.args[0], {iv});
  cg.async_issued[&body] = 0;
  if (pl) {
    Codegen::PipelineState st;
    st.iv_ahead = b.CreateAdd(iv, b.CreateMul(step, llvm::ConstantInt::get(iv->getType(), pl->ahead())));
    st.in_range = less(st.iv_ahead, hi);
    // Iteration i reads buffer i % S and refills buffer (i - 1 - lag) % S, which
    // iteration i - 1 - lag read, with the copies of iteration i + ahead.
    int back = pl->stages - pl->ahead();  // buffers back from this iteration's: 1 + lag
    llvm::Value* prev = b.CreateSelect(b.CreateICmpULT(slot, cg.c32(back)), b.CreateAdd(slot, cg.c32(pl->ahead())),
                                       b.CreateSub(slot, cg.c32(back)));
    for (const ir::Op* ld : pl->loads) {
      int off = cg.plan.op(ld).smem_offset, bytes = buffer_bytes(ld);
      cg.async_base[ld] = b.CreateAdd(cg.c32(off), b.CreateMul(slot, cg.c32(bytes)));
      st.write_base[ld] = b.CreateAdd(cg.c32(off), b.CreateMul(prev, cg.c32(bytes)));
      if (cg.plan.op(ld).tma_map >= 0) cg.tma_wait_at[ld] = {slot, phase};
    }
    st.write_slot = prev;
    // Iteration i releases the stage of iteration i - 1 - lag (none before the first).
    st.release_ok = sgn ? b.CreateICmpSGE(iv, b.CreateAdd(lo, b.CreateMul(step, llvm::ConstantInt::get(iv->getType(), back))))
                        : b.CreateICmpUGE(iv, b.CreateAdd(lo, b.CreateMul(step, llvm::ConstantInt::get(iv->getType(), back))));
    cg.pipeline_state[&body] = st;
  }
  for (size_t i = 0; i < phis.size(); ++i)
    cg.set(body.args[i + 1], unpack_pairs(cg, Regs(phis[i].begin(), phis[i].end()), inits[i]));
  cg.smem_unknown();  // the previous iteration may still be reading shared memory
  cg.lower_block(body);
  std::vector<Regs> next = yields(cg, body);
  for (size_t i = 0; i < next.size(); ++i) next[i] = pack_pairs(cg, next[i]);
  pingpong_pass_turn(cg);
  llvm::Value* iv_next = b.CreateAdd(iv, step);
  llvm::Value* slot_next = nullptr;
  llvm::Value* phase_next = nullptr;
  if (pl) std::tie(slot_next, phase_next) = next_stage(cg, slot, phase, pl->stages);
  llvm::BasicBlock* latch = b.GetInsertBlock();
  b.CreateBr(header);
  iv->addIncoming(iv_next, latch);
  if (pl) {
    slot->addIncoming(slot_next, latch);
    phase->addIncoming(phase_next, latch);
  }
  for (size_t i = 0; i < phis.size(); ++i)
    for (size_t r = 0; r < phis[i].size(); ++r) phis[i][r]->addIncoming(next[i][r], latch);

  b.SetInsertPoint(exit);
  cg.hoisted_reset(hoist_mark);
  cg.pipeline_state.erase(&body);
  if (cg.async_issued[&body] > 0 || pl)  // copies issued ahead (zero-filled past the end) land first
    cg.inline_asm(b.getVoidTy(), "cp.async.wait_all;", "~{memory}", {}, true);
  if (pl && !prefetched) inval_tma_barriers(cg, *pl);
  cg.smem_unknown();
  for (size_t i = 0; i < op.results.size(); ++i) {
    Regs r = unpack_pairs(cg, Regs(phis[i].begin(), phis[i].end()), inits[i]);
    // The last iteration's MMAs were left in flight.
    if (auto w = cg.plan.wgmma_exit_waits.find(&op); w != cg.plan.wgmma_exit_waits.end())
      if (std::find(w->second.begin(), w->second.end(), static_cast<int>(i)) != w->second.end())
        r = wgmma_wait(cg, 0, r);
    cg.set(op.results[i], std::move(r));
  }
  if (prefetched) {  // after the exit's MMA waits: the next program's first copies
    prefetch_next_program(cg, slot);
    cg.ring_position = {slot, phase};
  } else if (ring) {  // after the exit's MMA waits: hand the last stages back to the producer
    if (!cg.plan.early_release_loops.count(&op)) release_remaining_stages(cg, op, iv, slot);
    cg.ring_position = {slot, phase};
  }
}

void lower_if(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  pingpong_pass_turn(cg);  // both arms start without the turn, as loop bodies do
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto* then_bb = llvm::BasicBlock::Create(cg.ctx, "if.then", f);
  auto* else_bb = llvm::BasicBlock::Create(cg.ctx, "if.else", f);
  auto* merge = llvm::BasicBlock::Create(cg.ctx, "if.end", f);
  b.CreateCondBr(cg.scalar(op.operand(0)), then_bb, else_bb);
  bool pending = cg.smem_pending();
  bool pending_after = false;
  std::vector<Regs> vals[2];
  llvm::BasicBlock* ends[2];
  llvm::BasicBlock* starts[2] = {then_bb, else_bb};
  size_t hoist_mark = cg.hoisted_mark();
  for (int i = 0; i < 2; ++i) {
    b.SetInsertPoint(starts[i]);
    cg.set_smem_pending(pending);
    cg.lower_block(*op.regions[i]);
    vals[i] = yields(cg, *op.regions[i]);
    pingpong_pass_turn(cg);
    cg.hoisted_reset(hoist_mark);
    pending_after = pending_after || cg.smem_pending();
    ends[i] = b.GetInsertBlock();
    b.CreateBr(merge);
  }
  b.SetInsertPoint(merge);
  cg.set_smem_pending(pending_after);
  for (size_t i = 0; i < op.results.size(); ++i) {
    Regs out;
    for (size_t r = 0; r < vals[0][i].size(); ++r) {
      auto* phi = b.CreatePHI(vals[0][i][r]->getType(), 2);
      phi->addIncoming(vals[0][i][r], ends[0]);
      phi->addIncoming(vals[1][i][r], ends[1]);
      out.push_back(phi);
    }
    cg.set(op.results[i], std::move(out));
  }
}

}  // namespace

void lower_control(Codegen& cg, const ir::Op& op) {
  if (op.kind == OpKind::For) return lower_for(cg, op);
  return lower_if(cg, op);
}

}  // namespace tilefuse::nvptx
