// The lowering context: value map, types, thread geometry, shared memory, barriers.
#include "codegen.hpp"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace tilefuse::nvptx {

using ir::OpKind;

Codegen::Codegen(llvm::LLVMContext& c, llvm::Module& m, const ir::Function& f, const GpuPlan& p,
                 const TargetInfo& t)
    : ctx(c), mod(m), b(c), fn(f), plan(p), ti(t) {}

const Regs& Codegen::regs(const ir::Value* v) const {
  auto it = vals_.find(v);
  TF_ASSERT(it != vals_.end(), "value %" + std::to_string(v->id) + " used before it was lowered");
  return it->second;
}

void Codegen::set(const ir::Value* v, Regs r) {
  LayoutRef l = plan.layout(v);
  size_t want = l ? static_cast<size_t>(l->ll.num_regs()) : 1;
  TF_ASSERT(r.size() == want, "register count mismatch for %" + std::to_string(v->id));
  vals_[v] = std::move(r);
}

Regs Codegen::operand(const ir::Op& op, int i) {
  const ir::Value* v = op.operand(i);
  const OpPlan& p = plan.op(&op);
  LayoutRef want = i < static_cast<int>(p.operands.size()) ? p.operands[i] : nullptr;
  if (!want || v->type.is_scalar()) return regs(v);
  return in_layout(v, want->ll, p.smem_offset);
}

// ---------------------------------------------------------------------------------
// Types

llvm::Type* Codegen::elem_type(DType d) {
  switch (d) {
    case DType::i1: return b.getInt1Ty();
    case DType::i8: case DType::u8: case DType::f8e4m3: case DType::f8e5m2: return b.getInt8Ty();
    case DType::i16: return b.getInt16Ty();
    case DType::i32: case DType::u32: return b.getInt32Ty();
    case DType::i64: return b.getInt64Ty();
    case DType::f16: return b.getHalfTy();
    case DType::bf16: return b.getBFloatTy();
    case DType::f32: return b.getFloatTy();
    case DType::f64: return b.getDoubleTy();
  }
  return nullptr;
}

llvm::Type* Codegen::elem_type(const ir::Type& t) { return t.is_ptr ? global_ptr_type() : elem_type(t.dtype); }
llvm::Type* Codegen::mem_type(DType d) { return d == DType::i1 ? b.getInt8Ty() : elem_type(d); }
llvm::Type* Codegen::global_ptr_type() { return llvm::PointerType::get(ctx, 1); }
llvm::Type* Codegen::shared_ptr_type() { return llvm::PointerType::get(ctx, 3); }

// ---------------------------------------------------------------------------------
// Thread geometry

llvm::IRBuilderBase::InsertPoint Codegen::entry_point() {
  return llvm::IRBuilderBase::InsertPoint(entry_, entry_->getTerminator()->getIterator());
}

void Codegen::setup_thread_ids() {
  llvm::IRBuilderBase::InsertPointGuard g(b);
  b.restoreIP(entry_point());
  tid_ = call_intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {});
  lane_ = b.CreateAnd(tid_, 31, "lane");
  warp_ = b.CreateLShr(tid_, 5, "warp");
}

llvm::Value* Codegen::tid() { return tid_; }
llvm::Value* Codegen::lane() { return lane_; }
llvm::Value* Codegen::warp() { return warp_; }

llvm::Value* Codegen::linear_map(llvm::Value* index, const std::vector<uint32_t>& vals) {
  llvm::Value* acc = nullptr;
  uint32_t acc_bits = 0;
  int n = static_cast<int>(vals.size());
  for (int i = 0; i < n; ++i) {
    uint32_t v = vals[i];
    if (v == 0) continue;
    llvm::Value* term;
    uint32_t bits;
    if ((v & (v - 1)) == 0) {
      int k = 1;
      while (i + k < n && vals[i + k] == (v << k)) ++k;
      int sh = __builtin_ctz(v);
      llvm::Value* x = i ? b.CreateLShr(index, i) : index;
      x = b.CreateAnd(x, (1u << k) - 1);
      term = sh ? b.CreateShl(x, sh, "", true, true) : x;
      bits = ((1u << k) - 1) << sh;
      i += k - 1;
    } else {
      llvm::Value* bit = b.CreateAnd(b.CreateLShr(index, i), 1);
      term = b.CreateSelect(b.CreateICmpNE(bit, c32(0)), c32(v), c32(0));
      bits = v;
    }
    if (!acc) {
      acc = term;
    } else if (acc_bits & bits) {
      acc = b.CreateXor(acc, term);
    } else {
      acc = b.CreateOr(acc, term);
      llvm::cast<llvm::PossiblyDisjointInst>(acc)->setIsDisjoint(true);
    }
    acc_bits |= bits;
  }
  return acc ? acc : c32(0);
}

namespace {
// Combines a thread's part and a register's constant part of an index (t ^ r): the bits
// of r the thread part may have are xor-ed in, the rest added, so that registers
// differing only in those bits share one base and address arithmetic folds the rest
// into immediate offsets (swizzled shared memory has few distinct xor parts).
llvm::Value* combine_part(llvm::IRBuilder<>& b, llvm::Value* t, uint32_t thread_bits, uint32_t r) {
  uint32_t lo = r & thread_bits, hi = r & ~thread_bits;
  llvm::Value* x = lo ? b.CreateXor(t, b.getInt32(lo)) : t;
  return hi ? b.CreateAdd(x, b.getInt32(hi), "", true, true) : x;
}
}  // namespace

std::vector<Regs> Codegen::coords(const LinearLayout& l) {
  std::vector<Regs> out(l.rank());
  for (int d = 0; d < l.rank(); ++d) {
    std::vector<uint32_t> lanes, warps;
    for (uint32_t x : l.lanes()) lanes.push_back(static_cast<uint32_t>(l.coord(x, d)));
    for (uint32_t x : l.warps()) warps.push_back(static_cast<uint32_t>(l.coord(x, d)));
    llvm::Value* t;
    {
      llvm::IRBuilderBase::InsertPointGuard g(b);
      b.restoreIP(entry_point());
      llvm::Value* a = linear_map(lane_, lanes);
      llvm::Value* w = linear_map(warp_, warps);
      uint32_t lb = 0, wb = 0;
      for (uint32_t x : lanes) lb |= x;
      for (uint32_t x : warps) wb |= x;
      t = (lb & wb) ? b.CreateXor(a, w) : b.CreateOr(a, w);
    }
    uint32_t tb = l.thread_bits(d);
    for (int r = 0; r < l.num_regs(); ++r)
      out[d].push_back(combine_part(b, t, tb, static_cast<uint32_t>(l.coord(l.reg_part(r), d))));
  }
  return out;
}

Regs Codegen::flat_indices(const LinearLayout& l) {
  llvm::Value* t;
  uint32_t tb = 0;
  for (uint32_t x : l.lanes()) tb |= x;
  for (uint32_t x : l.warps()) tb |= x;
  {
    llvm::IRBuilderBase::InsertPointGuard g(b);
    b.restoreIP(entry_point());
    uint32_t lb = 0, wb = 0;
    for (uint32_t x : l.lanes()) lb |= x;
    for (uint32_t x : l.warps()) wb |= x;
    llvm::Value* a = linear_map(lane_, l.lanes());
    llvm::Value* w = linear_map(warp_, l.warps());
    t = (lb & wb) ? b.CreateXor(a, w) : b.CreateOr(a, w);
  }
  Regs out;
  for (int r = 0; r < l.num_regs(); ++r) out.push_back(combine_part(b, t, tb, l.reg_part(r)));
  return out;
}

llvm::Value* Codegen::entry_counter(const ir::Op* key) {
  auto it = counters_.find(key);
  if (it != counters_.end()) return it->second;
  llvm::IRBuilderBase::InsertPointGuard g(b);
  b.restoreIP(entry_point());
  llvm::Value* slot = b.CreateAlloca(i32());
  b.CreateStore(c32(0), slot);
  return counters_[key] = slot;
}

llvm::Value* Codegen::owner_predicate(const LinearLayout& l) {
  auto red = l.redundancy();
  if (!red.lane && !red.warp) return nullptr;
  llvm::IRBuilderBase::InsertPointGuard g(b);
  b.restoreIP(entry_point());
  llvm::Value* p = b.getTrue();
  if (red.lane) p = b.CreateAnd(p, b.CreateICmpEQ(b.CreateAnd(lane_, red.lane), c32(0)));
  if (red.warp) p = b.CreateAnd(p, b.CreateICmpEQ(b.CreateAnd(warp_, red.warp), c32(0)));
  return p;
}

// ---------------------------------------------------------------------------------
// Shared memory

llvm::Value* Codegen::smem_addr(int byte_offset, llvm::Value* dyn_bytes) {
  if (!smem_) {
    smem_ = new llvm::GlobalVariable(mod, llvm::ArrayType::get(b.getInt8Ty(), 0), false,
                                     llvm::GlobalValue::ExternalLinkage, nullptr, "tilefuse_smem", nullptr,
                                     llvm::GlobalValue::NotThreadLocal, 3);
    smem_->setAlignment(llvm::Align(1024));  // wgmma/TMA swizzles use absolute address bits
  }
  llvm::Value* off = c32(byte_offset);
  if (dyn_bytes) off = b.CreateAdd(dyn_bytes, off, "", true, true);
  return b.CreateGEP(b.getInt8Ty(), smem_, off);
}

llvm::Value* Codegen::shared_addr32(llvm::Value* p) {
  return b.CreateTrunc(b.CreatePtrToInt(p, b.getInt64Ty()), i32());
}

void Codegen::barrier() {
  if (!plan.warp_specialized()) return (void)call_intrinsic(llvm::Intrinsic::nvvm_barrier0, {});
  // The consumer warps only (the producer warpgroup never joins): named barrier 1. A
  // warpgroup holding its ping-pong turn passes it first, or the other, waiting for the
  // turn, would never reach this barrier.
  pingpong_pass_turn(*this);
  inline_asm(b.getVoidTy(), "bar.sync 1, " + std::to_string(32 * fn.num_warps) + ";", "~{memory}", {}, true);
}

void Codegen::smem_before_write() {
  if (smem_pending_) barrier();
  smem_pending_ = false;
}
void Codegen::smem_after_write() {
  barrier();
  smem_pending_ = false;
}
void Codegen::smem_after_read() { smem_pending_ = true; }

// ---------------------------------------------------------------------------------
// Helpers

llvm::Function* Codegen::intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> tys) {
  return llvm::Intrinsic::getDeclaration(&mod, id, tys);
}

llvm::Value* Codegen::call_intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args,
                                     llvm::ArrayRef<llvm::Type*> tys) {
  return b.CreateCall(intrinsic(id, tys), args);
}

llvm::Value* Codegen::call_libdevice(const std::string& name, llvm::Type* ret, llvm::ArrayRef<llvm::Value*> args) {
  std::vector<llvm::Type*> tys;
  for (auto* a : args) tys.push_back(a->getType());
  auto callee = mod.getOrInsertFunction(name, llvm::FunctionType::get(ret, tys, false));
  return b.CreateCall(callee, args);
}

llvm::Value* Codegen::inline_asm(llvm::Type* ret, const std::string& text, const std::string& constraints,
                                 llvm::ArrayRef<llvm::Value*> args, bool side_effects) {
  std::vector<llvm::Type*> tys;
  for (auto* a : args) tys.push_back(a->getType());
  auto* fty = llvm::FunctionType::get(ret, tys, false);
  auto* ia = llvm::InlineAsm::get(fty, text, constraints, side_effects);
  return b.CreateCall(fty, ia, args);
}

void Codegen::if_then(llvm::Value* pred, const std::function<void()>& body) {
  if (!pred) return body();
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(pred)) {
    if (c->isOne()) body();
    return;
  }
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto* then = llvm::BasicBlock::Create(ctx, "then", f);
  auto* cont = llvm::BasicBlock::Create(ctx, "cont", f);
  b.CreateCondBr(pred, then, cont);
  b.SetInsertPoint(then);
  body();
  b.CreateBr(cont);
  b.SetInsertPoint(cont);
}

void Codegen::unsupported(const ir::Op& op, const std::string& what) {
  user_error(std::string("the GPU backend does not support ") + what + " (op " + ir::name(op.kind) + ")", op.loc,
             "Rewrite the kernel without it or run it on the interpreter");
}

// ---------------------------------------------------------------------------------
// Dispatch

void Codegen::lower_block(const ir::Block& block) {
  for (auto& op : block.ops) {
    lower_op(*op);
    if (op.get() == launch_dependents_after) launch_dependents();
  }
  finish_loads();
}

void Codegen::defer_load(const ir::Value* v, std::function<Regs()> finish) {
  deferred_loads_.push_back({v, std::move(finish)});
  deferred_values_.insert(v);
}

void Codegen::finish_loads() {
  auto loads = std::move(deferred_loads_);
  auto ops = std::move(deferred_ops_);
  deferred_loads_.clear();
  deferred_ops_.clear();
  deferred_values_.clear();
  for (auto& [v, finish] : loads) set(v, finish());
  for (const ir::Op* op : ops) lower_op(*op);
}

namespace {

bool pure_elementwise(OpKind k) {
  switch (k) {
    case OpKind::Binary: case OpKind::Unary: case OpKind::Compare: case OpKind::Select: case OpKind::Fma:
    case OpKind::Cast: case OpKind::AddPtr: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Splat:
      return true;
    default: return false;
  }
}

}  // namespace

void Codegen::lower_op(const ir::Op& op) {
  if (!plan.any_held()) return lower_op_now(op);
  if (plan.held_casts.count(&op)) return;  // computed again at each reader
  settle_held_copies(*this, op);
  auto held = read_back_held(op);
  lower_op_now(op);
  forget(held);
  finish_held_groups(*this, op);
}

void Codegen::lower_op_now(const ir::Op& op) {
  if (!deferred_values_.empty()) {
    bool reads = false;
    for (const ir::Value* x : op.operands) reads |= deferred_values_.count(x) != 0;
    if (reads && pure_elementwise(op.kind) && !plan.pinned.count(op.result())) {
      deferred_ops_.push_back(&op);
      for (const ir::Value* r : op.results) deferred_values_.insert(r);
      return;
    }
    bool effects = !op.regions.empty() || op.kind == OpKind::Store || op.kind == OpKind::AtomicRMW ||
                   op.kind == OpKind::AtomicCas || op.kind == OpKind::Yield || op.kind == OpKind::Barrier;
    if (reads || effects) finish_loads();
  }
  if (auto w = plan.wgmma_waits.find(&op); w != plan.wgmma_waits.end()) {
    // Deferred MMA results this op reads: one wait, their registers threaded through it.
    Regs all;
    for (const ir::Value* v : w->second.values) all.insert(all.end(), vals_.at(v).begin(), vals_.at(v).end());
    Regs done = all.empty() ? all : wgmma_wait(*this, w->second.pending, all);
    if (all.empty()) {
      pingpong_pass_turn(*this);
      inline_asm(b.getVoidTy(), "wgmma.wait_group.sync.aligned " + std::to_string(w->second.pending) + ";",
                 "~{memory}", {}, true);
    }
    size_t at = 0;
    for (const ir::Value* v : w->second.values) {
      Regs& r = vals_.at(v);
      std::copy(done.begin() + at, done.begin() + at + r.size(), r.begin());
      at += r.size();
    }
    release_completed_stages(*this, op);
  }
  switch (op.kind) {
    case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Constant: case OpKind::Arange:
    case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Reshape:
    case OpKind::Trans:
      if (plan.lazy.count(op.result())) return;  // produced in each consumer's layout
      return lower_index_op(*this, op);
    case OpKind::Binary: case OpKind::Unary: case OpKind::Compare: case OpKind::Select: case OpKind::Fma:
    case OpKind::Cast: case OpKind::AddPtr:
      lower_elementwise(*this, op);
      if (plan.pinned.count(op.result())) vals_[op.result()] = thread_through(*this, "", vals_.at(op.result()));
      return;
    case OpKind::AlignPtr: return lower_index_op(*this, op);
    case OpKind::Load: case OpKind::Store: return lower_memory(*this, op);
    case OpKind::AtomicRMW: case OpKind::AtomicCas: return lower_atomic(*this, op);
    case OpKind::Reduce: return lower_reduce(*this, op);
    case OpKind::Scan: return lower_scan(*this, op);
    case OpKind::Dot: return lower_dot(*this, op);
    case OpKind::ClusterReduce: return lower_cluster_reduce(*this, op);
    case OpKind::For: case OpKind::If: return lower_control(*this, op);
    case OpKind::Yield: return;  // consumed by the parent op
    case OpKind::Barrier: return barrier();  // bar.sync: orders the CTA's memory accesses too
  }
}

Regs Codegen::lower_scalar_region(const ir::Block& block, const Regs& args) {
  TF_ASSERT(args.size() == block.args.size(), "region argument count");
  for (size_t i = 0; i < args.size(); ++i) vals_[block.args[i]] = {args[i]};
  for (auto& op : block.ops)
    if (op->kind != OpKind::Yield) lower_op(*op);
  Regs out;
  for (auto* v : block.terminator()->operands) out.push_back(scalar(v));
  return out;
}

}  // namespace tilefuse::nvptx
