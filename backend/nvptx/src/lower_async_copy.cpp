// Loads that only feed tensor-core dots travel global -> shared memory with cp.async
// (sm_80+): no registers hold the tile, masked-off elements are zero-filled (src-size
// 0), and each load's copies form one cp.async group. In a pipelined loop (stages S)
// the copies issued in iteration i are those of iteration i + S - 1, into the buffer
// that iteration i - 1 read; the dots of iteration i wait until their own copies (issued
// S - 1 iterations earlier) have landed. lower_control.cpp issues the prologue.
#include <algorithm>

#include "memory_access.hpp"

namespace tilefuse::nvptx {

Regs Codegen::at_iteration(const std::vector<const ir::Op*>& slice, const ir::Value* iv_arg, llvm::Value* iv,
                           const ir::Op& user, int operand) {
  auto it = vals_.find(iv_arg);
  std::optional<Regs> saved = it == vals_.end() ? std::nullopt : std::optional<Regs>(it->second);
  vals_[iv_arg] = {iv};
  Regs out;
  reevaluate(slice, [&] { out = this->operand(user, operand); });
  if (saved) vals_[iv_arg] = *saved;
  else vals_.erase(iv_arg);
  return out;
}

void Codegen::reevaluate(const std::vector<const ir::Op*>& ops, const std::function<void()>& use) {
  std::vector<std::pair<const ir::Value*, std::optional<Regs>>> saved;
  for (const ir::Op* o : ops)
    for (const ir::Value* r : o->results) {
      auto it = vals_.find(r);
      saved.push_back({r, it == vals_.end() ? std::nullopt : std::optional<Regs>(it->second)});
    }
  for (const ir::Op* o : ops) lower_op(*o);
  use();
  for (auto& [v, r] : saved) {
    if (r) vals_[v] = *r;
    else vals_.erase(v);
  }
}

void issue_async_copy(Codegen& cg, const ir::Op& op, const std::function<Regs(int)>& operand_at, llvm::Value* pred,
                      llvm::Value* base) {
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&op);
  Regs ptrs = operand_at(0);
  Regs mask = op.num_operands() > 1 ? operand_at(1) : Regs{};
  // A checked load (staged: its runs' mask tested at run time) copies whole the runs all
  // valid or readable; the read-back finishes the others.
  bool checked = p.checked && !mask.empty();
  Regs readable = checked && reads_runs_whole(cg.plan, op) ? operand_at(3) : Regs{};
  bool interval = checked && interval_on_runs(cg.plan, op.mask(), p.fast_dim, p.vec);
  const LinearLayout& l = cg.plan.layout(op.result())->ll;
  int es = byte_size(op.result()->type.dtype);
  int vec = p.vec, bytes = es * vec;
  Regs offs;
  uint32_t dup = 0;
  if (p.staged) {
    offs = staged_offsets(cg, op);
    // The prologue's copies may land where other threads still read the scratch of an
    // op before the loop; in the loop the buffer is this thread's alone.
    if (!cg.pipeline_state.count(op.parent)) cg.smem_before_write();
  } else {
    offs = cg.flat_indices(async_encoding(cg.plan, &op).apply(l));
    for (auto& o : offs) o = b.CreateMul(o, cg.c32(es), "", true, true);
    dup = l.redundancy().reg;
    cg.smem_before_write();
  }
  // .cg (L2 only) needs 16 bytes; smaller copies go through L1 (.ca). No L2 cache hint:
  // copies with one (cp.async...L2::cache_hint) faulted as illegal instructions on H200.
  std::string text = std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") + ".shared.global [$0], [$1], " +
                     std::to_string(bytes) + ", $2;";
  for (int r = 0; r < l.num_regs(); r += vec) {
    if (r & dup) continue;
    llvm::Value* ok = pred;
    if (!mask.empty()) {
      llvm::Value* run = checked ? staged_run_copied(cg, mask, readable, r, vec, interval) : mask[r];
      ok = ok ? b.CreateAnd(ok, run) : run;
    }
    llvm::Value* src_size = ok ? b.CreateSelect(ok, cg.c32(bytes), cg.c32(0)) : cg.c32(bytes);
    llvm::Value* off = b.CreateAdd(offs[r], base, "", true, true);
    llvm::Value* dst = cg.shared_addr32(cg.smem_addr(0, off));
    cg.inline_asm(b.getVoidTy(), text, "r,l,r,~{memory}", {dst, ptrs[r], src_size}, true);
  }
  // No barrier owed for this write: the buffer is the copy's own (the allocator keeps
  // other scratch out of it), and its readers wait for it and synchronize first.
  cg.inline_asm(b.getVoidTy(), "cp.async.commit_group;", "~{memory}", {}, true);
}

Regs staged_offsets(Codegen& cg, const ir::Op& op) {
  // Run k of every thread, thread-major within a run index: consecutive threads touch
  // consecutive 4..16-byte pieces (no bank conflicts), and no thread reads another's.
  const LinearLayout& l = cg.plan.layout(op.result())->ll;
  const OpPlan& p = cg.plan.op(&op);
  int run_bytes = p.vec * byte_size(op.result()->type.dtype);
  int threads = 32 * cg.plan.num_warps;
  llvm::Value* mine = cg.b.CreateMul(cg.tid(), cg.c32(run_bytes), "", true, true);
  Regs offs(l.num_regs());
  for (int r = 0; r < l.num_regs(); r += p.vec)
    offs[r] = cg.b.CreateAdd(mine, cg.c32(static_cast<int64_t>(r / p.vec) * threads * run_bytes), "", true, true);
  return offs;
}

namespace {

// A staged checked load's runs read back as words (zero where the copies did not move
// them), then finished like the checked loads' (lower_checked.cpp).
void read_staged_checked(Codegen& cg, const ir::Op& op, const Regs& offs, llvm::Value* base, const Regs& mask) {
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&op);
  DType dt = op.result()->type.dtype;
  Words w = words_for(cg, dt, p.vec);
  std::vector<std::vector<llvm::Value*>> words;
  for (size_t k = 0; k < offs.size(); k += p.vec) {
    llvm::Value* addr = cg.smem_addr(0, b.CreateAdd(offs[k], base, "", true, true));
    llvm::Type* ty = w.n == 1 ? w.ty : llvm::FixedVectorType::get(w.ty, w.n);
    llvm::Value* v = b.CreateAlignedLoad(ty, addr, llvm::Align(p.vec * byte_size(dt)));
    std::vector<llvm::Value*> run;
    for (int i = 0; i < w.n; ++i) run.push_back(w.n == 1 ? v : b.CreateExtractElement(v, i));
    words.push_back(run);
  }
  Regs readable = reads_runs_whole(cg.plan, op) ? cg.operand(op, 3) : Regs{};
  bool interval = interval_on_runs(cg.plan, op.mask(), p.fast_dim, p.vec);
  ir::Evict ev = op.evict == ir::Evict::Shared ? ir::Evict::Normal : op.evict;
  cg.set(op.result(), finish_staged_checked(cg, cg.operand(op, 0), mask, readable, words, p.vec, interval, dt, ev));
}

// A staged load (OpPlan::staged) in its pipelined loop: waits for this iteration's
// copies, reads this thread's runs back, then issues the copies of iteration i + ahead
// into the buffer the previous iteration read.
void read_staged(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&op);
  const ir::Value* r = op.result();
  DType dt = r->type.dtype;
  int pending = p.ahead * p.async_count + cg.async_issued[op.parent] - p.async_index;
  cg.inline_asm(b.getVoidTy(), "cp.async.wait_group " + std::to_string(std::clamp(pending, 0, 7)) + ";", "~{memory}",
                {}, true);
  Regs offs = staged_offsets(cg, op);
  llvm::Value* base = cg.async_base.at(&op);
  llvm::Type* mt = cg.mem_type(dt);
  int vec = p.vec, n = static_cast<int>(offs.size());
  // The mask: for `other`'s selects, and for a checked load's finishing (with or without
  // an `other`: a load(ptrs, mask) reads 0 where masked).
  Regs mask = op.num_operands() > 1 ? cg.operand(op, 1) : Regs{};
  const ir::Value* fill = op.num_operands() > 2 ? op.operand(2) : nullptr;
  bool zero_fill = !fill || (fill->def && fill->def->kind == ir::OpKind::Constant && fill->def->fval == 0 &&
                             fill->def->ival == 0);
  Regs other = zero_fill ? Regs{} : cg.operand(op, 2);
  if (p.checked && !mask.empty()) return read_staged_checked(cg, op, offs, base, mask);
  Regs out(n);
  for (int k = 0; k < n; k += vec) {
    llvm::Value* addr = cg.smem_addr(0, b.CreateAdd(offs[k], base, "", true, true));
    llvm::Type* ty = vec == 1 ? mt : llvm::FixedVectorType::get(mt, vec);
    llvm::Value* v = b.CreateAlignedLoad(ty, addr, llvm::Align(vec * byte_size(dt)));
    for (int i = 0; i < vec; ++i) {
      llvm::Value* e = vec == 1 ? v : b.CreateExtractElement(v, i);
      // Masked-off elements were zero-filled; the load's `other` replaces them.
      out[k + i] = other.empty() ? e : b.CreateSelect(mask[k + i], e, other[k + i]);
    }
  }
  cg.set(r, std::move(out));
}

// The copies of iteration iv + ahead * step, into the buffer iteration i - 1 - lag read.
void issue_ahead(Codegen& cg, const ir::Op& op) {
  const ir::Block* block = op.parent;
  const Codegen::PipelineState& st = cg.pipeline_state.at(block);
  const GpuPlan::Pipeline& pl = cg.plan.pipelines.at(block->parent);
  if (cg.plan.op(&op).tma_map >= 0 && cg.plan.warp_specialized()) {
    if (cg.plan.early_release_loops.count(block->parent)) return;  // released where its MMAs completed
    return release_tma_stage(cg, op, st.write_slot, st.release_ok);
  }
  if (cg.plan.op(&op).tma_map >= 0)
    return issue_tma_copy(cg, op, tma_coordinates(cg, op, pl.slice, block->args[0], st.iv_ahead), st.in_range,
                          st.write_slot);
  issue_async_copy(cg, op, [&](int i) { return cg.at_iteration(pl.slice, block->args[0], st.iv_ahead, op, i); },
                   st.in_range, st.write_base.at(&op));
  ++cg.async_issued[block];
}

}  // namespace

void issue_deferred_copies(Codegen& cg, const ir::Op& dot) {
  auto st = cg.pipeline_state.find(dot.parent);
  if (st == cg.pipeline_state.end()) return;
  for (const ir::Op* ld : cg.plan.pipelines.at(dot.parent->parent).loads)
    if (cg.plan.op(ld).issue_at == &dot) issue_ahead(cg, *ld);
}

void lower_async_load(Codegen& cg, const ir::Op& op) {
  const OpPlan& p = cg.plan.op(&op);
  const ir::Block* block = op.parent;
  if (p.stages > 1 && cg.pipeline_state.count(block)) {
    if (p.staged) read_staged(cg, op);
    if (!p.issue_at) issue_ahead(cg, op);  // else its first dot issues it
    return;
  }
  TF_ASSERT(!p.staged, "staged load outside its pipelined loop");
  if (cg.plan.is_producer_copy(&op)) return expect_producer_copy(cg, op);
  cg.copies_awaited.erase(&op);  // copied again (the next program's)
  llvm::Value* base = cg.c32(p.smem_offset);
  issue_async_copy(cg, op, [&](int i) { return cg.operand(op, i); }, nullptr, base);
  cg.async_base[&op] = base;
  ++cg.async_issued[block];
}

void wait_async_copies(Codegen& cg, const ir::Op& dot) {
  // Groups committed after load j's copies for this iteration: the rest of that
  // iteration's loads, S - 2 whole iterations, and the q loads already issued in this
  // one: (S - 1) * n + q - j.
  int pending = 1 << 20;
  bool group_copies = false;
  for (int i = 0; i < 2; ++i) {
    const ir::Op* ld = async_source(cg.plan, dot.operand(i));
    if (!ld || ld->parent != dot.parent) continue;  // copied before the loop: waited for there
    const OpPlan& p = cg.plan.op(ld);
    if (p.tma_map >= 0) {
      wait_tma_copy(cg, *ld);
      continue;
    }
    group_copies = true;
    int q = cg.async_issued[ld->parent];
    int ahead = p.stages > 1 ? p.ahead : 0;
    pending = std::min(pending, ahead * p.async_count + q - p.async_index);
  }
  if (!group_copies) return;
  pending = std::clamp(pending, 0, 7);  // a younger group left pending only costs overlap
  cg.inline_asm(cg.b.getVoidTy(), "cp.async.wait_group " + std::to_string(pending) + ";", "~{memory}", {}, true);
}

}  // namespace tilefuse::nvptx
