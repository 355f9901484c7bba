// Global loads and stores. Each access moves `vec` consecutive elements (up to 16
// bytes): unmasked ones are plain LLVM vector loads/stores, masked ones predicated
// inline PTX (`@p ld.global.v4.b32`) with the "other" value moved in first. Elements
// held by several threads are stored by one of them only.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "memory_access.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

using ir::Evict;
using ir::OpKind;

Words words_for(Codegen& cg, DType dt, int vec) {
  int eb = bit_width(dt) == 1 ? 8 : bit_width(dt);
  int total = eb * vec;
  if (eb == 64) return {vec, 64, cg.b.getInt64Ty(), "l", ".b64"};
  if (total >= 32) return {total / 32, 32, cg.b.getInt32Ty(), "r", ".b32"};
  if (total == 16) return {1, 16, cg.b.getInt16Ty(), "h", ".b16"};
  return {1, 16, cg.b.getInt16Ty(), "h", ".u8"};
}

namespace {

std::string evict_suffix(Evict e) {
  switch (e) {
    case Evict::First: return ".L1::evict_first";
    case Evict::Last: return ".L1::evict_last";
    default: return "";
  }
}

std::string vec_prefix(int n) { return n == 1 ? "" : ".v" + std::to_string(n); }

std::string operand_list(int first, int n) {
  if (n == 1) return "$" + std::to_string(first);
  std::string s = "{";
  for (int i = 0; i < n; ++i) s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + "}";
}

}  // namespace

// One cvt per word instead of a cvt per element and a move to pack them.
llvm::Value* packed_pair(Codegen& cg, llvm::Value* lo, llvm::Value* hi, DType dt) {
  // Both halves of one packed value (a pair carried around a loop): that value.
  auto* el = llvm::dyn_cast<llvm::ExtractElementInst>(lo);
  auto* eh = llvm::dyn_cast<llvm::ExtractElementInst>(hi);
  if (el && eh && el->getVectorOperand() == eh->getVectorOperand() &&
      llvm::cast<llvm::FixedVectorType>(el->getVectorOperandType())->getNumElements() == 2) {
    auto* il = llvm::dyn_cast<llvm::ConstantInt>(el->getIndexOperand());
    auto* ih = llvm::dyn_cast<llvm::ConstantInt>(eh->getIndexOperand());
    if (il && ih && il->getZExtValue() == 0 && ih->getZExtValue() == 1)
      return cg.b.CreateBitCast(el->getVectorOperand(), cg.i32());
  }
  auto* tl = llvm::dyn_cast<llvm::FPTruncInst>(lo);
  auto* th = llvm::dyn_cast<llvm::FPTruncInst>(hi);
  if (!tl || !th || !tl->getOperand(0)->getType()->isFloatTy() || !th->getOperand(0)->getType()->isFloatTy())
    return nullptr;
  std::string text = std::string("cvt.rn.") + (dt == DType::bf16 ? "bf16x2" : "f16x2") + ".f32 $0, $1, $2;";
  return cg.inline_asm(cg.i32(), text, "=r,f,f", {th->getOperand(0), tl->getOperand(0)}, false);
}

// Elements (register values) <-> words.
std::vector<llvm::Value*> to_words(Codegen& cg, const Regs& elems, DType dt, const Words& w) {
  auto& b = cg.b;
  llvm::Type* mt = cg.mem_type(dt);
  int vec = static_cast<int>(elems.size());
  if ((dt == DType::bf16 || dt == DType::f16) && w.bits == 32 && vec == 2 * w.n) {
    std::vector<llvm::Value*> words;
    for (int i = 0; i < w.n; ++i) {
      llvm::Value* word = packed_pair(cg, elems[2 * i], elems[2 * i + 1], dt);
      if (!word) break;
      words.push_back(word);
    }
    if (static_cast<int>(words.size()) == w.n) return words;
  }
  auto mem = [&](llvm::Value* v) { return dt == DType::i1 ? b.CreateZExt(v, mt) : v; };
  llvm::Value* packed;
  if (vec == 1) {
    packed = mem(elems[0]);
  } else {
    packed = llvm::PoisonValue::get(llvm::FixedVectorType::get(mt, vec));
    for (int i = 0; i < vec; ++i) packed = b.CreateInsertElement(packed, mem(elems[i]), i);
  }
  int total = static_cast<int>(vec * mt->getPrimitiveSizeInBits());
  if (total < w.bits) return {b.CreateZExt(b.CreateBitCast(packed, b.getIntNTy(total)), w.ty)};
  if (w.n == 1) return {b.CreateBitCast(packed, w.ty)};
  llvm::Value* v = b.CreateBitCast(packed, llvm::FixedVectorType::get(w.ty, w.n));
  std::vector<llvm::Value*> out;
  for (int i = 0; i < w.n; ++i) out.push_back(b.CreateExtractElement(v, i));
  return out;
}

// The elements of a run from its words (to_words undone).
Regs from_words(Codegen& cg, const std::vector<llvm::Value*>& words, DType dt, int vec, const Words& w) {
  auto& b = cg.b;
  llvm::Type* mt = cg.mem_type(dt);
  int total = static_cast<int>(vec * mt->getPrimitiveSizeInBits());
  llvm::Value* packed;
  if (w.n == 1) {
    packed = words[0];
    if (total < w.bits) packed = b.CreateTrunc(packed, b.getIntNTy(total));
  } else {
    packed = llvm::PoisonValue::get(llvm::FixedVectorType::get(w.ty, w.n));
    for (int i = 0; i < w.n; ++i) packed = b.CreateInsertElement(packed, words[i], i);
  }
  Regs out;
  auto fix = [&](llvm::Value* v) { return dt == DType::i1 ? b.CreateICmpNE(v, llvm::ConstantInt::get(mt, 0)) : v; };
  if (vec == 1) return {fix(b.CreateBitCast(packed, mt))};
  llvm::Value* v = b.CreateBitCast(packed, llvm::FixedVectorType::get(mt, vec));
  for (int i = 0; i < vec; ++i) out.push_back(fix(b.CreateExtractElement(v, i)));
  return out;
}

// The words of a run loaded by inline PTX, predicated by `pred` (null: always); where it
// does not hold the words are `fill` (empty: zeros).
std::vector<llvm::Value*> load_words(Codegen& cg, llvm::Value* ptr, llvm::Value* pred,
                                     const std::vector<llvm::Value*>& fill, const Words& w, Evict ev) {
  auto& b = cg.b;
  std::string text = (pred ? "@$" + std::to_string(w.n + 1) + " " : std::string()) + "ld.global" +
                     evict_suffix(ev) + vec_prefix(w.n) + w.ptx_type + " " + operand_list(0, w.n) + ", [$" +
                     std::to_string(w.n) + "];";
  if (ev == Evict::Last) {
    // Keep the line in L2 too (an L1 hint alone does not): a later pass re-reads it.
    text = "{ .reg .b64 tf_pol; createpolicy.fractional.L2::evict_last.b64 tf_pol, 1.0; " +
           (pred ? "@$" + std::to_string(w.n + 1) + " " : std::string()) + "ld.global" + evict_suffix(ev) +
           ".L2::cache_hint" + vec_prefix(w.n) + w.ptx_type + " " + operand_list(0, w.n) + ", [$" +
           std::to_string(w.n) + "], tf_pol; }";
  }
  std::string cons;
  for (int i = 0; i < w.n; ++i) cons += std::string(i ? "," : "") + "=" + w.constraint;
  cons += ",l";
  std::vector<llvm::Value*> args{ptr};
  if (pred) {
    cons += ",b";
    args.push_back(pred);
    for (int i = 0; i < w.n; ++i) {
      cons += "," + std::to_string(i);
      args.push_back(fill.empty() ? llvm::Constant::getNullValue(w.ty) : fill[i]);
    }
  }
  llvm::Type* ret = w.ty;
  if (w.n > 1) ret = llvm::StructType::get(cg.ctx, std::vector<llvm::Type*>(w.n, w.ty));
  llvm::Value* res = cg.inline_asm(ret, text, cons, args, true);
  std::vector<llvm::Value*> words;
  if (w.n == 1) words.push_back(res);
  else
    for (int i = 0; i < w.n; ++i) words.push_back(b.CreateExtractValue(res, i));
  return words;
}

Regs emit_load(Codegen& cg, llvm::Value* ptr, llvm::Value* pred, const Regs& other, DType dt, int vec, Evict ev) {
  auto& b = cg.b;
  llvm::Type* mt = cg.mem_type(dt);
  int es = byte_size(dt);
  if (!pred && ev == Evict::Normal) {
    llvm::Type* ty = vec == 1 ? mt : llvm::FixedVectorType::get(mt, vec);
    llvm::Value* v = b.CreateAlignedLoad(ty, ptr, llvm::Align(es * vec));
    Regs out;
    for (int i = 0; i < vec; ++i) {
      llvm::Value* e = vec == 1 ? v : b.CreateExtractElement(v, i);
      out.push_back(dt == DType::i1 ? b.CreateICmpNE(e, llvm::ConstantInt::get(mt, 0)) : e);
    }
    return out;
  }
  Words w = words_for(cg, dt, vec);
  std::vector<llvm::Value*> fill;
  if (pred) {
    Regs f = other;
    if (f.empty()) f.assign(vec, llvm::Constant::getNullValue(cg.elem_type(dt)));
    fill = to_words(cg, f, dt, w);
  }
  return from_words(cg, load_words(cg, ptr, pred, fill, w, ev), dt, vec, w);
}

void emit_store(Codegen& cg, llvm::Value* ptr, const Regs& vals, llvm::Value* pred, DType dt, Evict ev) {
  auto& b = cg.b;
  int vec = static_cast<int>(vals.size());
  llvm::Type* mt = cg.mem_type(dt);
  int es = byte_size(dt);
  if (!pred && ev == Evict::Normal) {
    auto mem = [&](llvm::Value* v) { return dt == DType::i1 ? b.CreateZExt(v, mt) : v; };
    llvm::Value* v;
    if (vec == 1) {
      v = mem(vals[0]);
    } else {
      v = llvm::PoisonValue::get(llvm::FixedVectorType::get(mt, vec));
      for (int i = 0; i < vec; ++i) v = b.CreateInsertElement(v, mem(vals[i]), i);
    }
    b.CreateAlignedStore(v, ptr, llvm::Align(es * vec));
    return;
  }
  Words w = words_for(cg, dt, vec);
  std::string text = (pred ? "@$" + std::to_string(w.n + 1) + " " : std::string()) + "st.global" +
                     evict_suffix(ev) + vec_prefix(w.n) + w.ptx_type + " [$0], " + operand_list(1, w.n) + ";";
  std::string cons = "l";
  std::vector<llvm::Value*> args{ptr};
  for (auto* x : to_words(cg, vals, dt, w)) {
    cons += std::string(",") + w.constraint;
    args.push_back(x);
  }
  if (pred) {
    cons += ",b";
    args.push_back(pred);
  }
  cons += ",~{memory}";
  cg.inline_asm(b.getVoidTy(), text, cons, args, true);
}

// Branches to a block built by `part` when `whole` does not hold; returns the values
// merged after it (`kept` from before the branch, part()'s from the block).
std::vector<llvm::Value*> unless(Codegen& cg, llvm::Value* whole, const std::vector<llvm::Value*>& kept,
                                 const std::function<std::vector<llvm::Value*>()>& part, bool split_kept) {
  auto& b = cg.b;
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* from = b.GetInsertBlock();
  auto* body = llvm::BasicBlock::Create(cg.ctx, "run.part", f);
  auto* join = llvm::BasicBlock::Create(cg.ctx, "run.join", f);
  llvm::BasicBlock* kept_from = from;
  if (!kept.empty() && split_kept) {
    kept_from = llvm::BasicBlock::Create(cg.ctx, "run.whole", f);
    b.CreateCondBr(whole, kept_from, body);
    b.SetInsertPoint(kept_from);
    cg.inline_asm(b.getVoidTy(), "", "", {}, true);
    b.CreateBr(join);
  } else {
    b.CreateCondBr(whole, join, body);
  }
  b.SetInsertPoint(body);
  std::vector<llvm::Value*> got = part();
  llvm::BasicBlock* body_end = b.GetInsertBlock();
  b.CreateBr(join);
  b.SetInsertPoint(join);
  std::vector<llvm::Value*> out;
  for (size_t i = 0; i < kept.size(); ++i) {
    llvm::PHINode* phi = b.CreatePHI(kept[i]->getType(), 2);
    phi->addIncoming(kept[i], kept_from);
    phi->addIncoming(got[i], body_end);
    out.push_back(phi);
  }
  return out;
}


void lower_memory(Codegen& cg, const ir::Op& op) {
  const OpPlan& p = cg.plan.op(&op);
  if (p.async_copy) return lower_async_load(cg, op);
  if (p.held) return issue_held_copies(cg, op);
  const ir::Value* ptr = op.operand(0);
  DType dt = ptr->type.dtype;
  bool is_load = op.kind == OpKind::Load;
  Regs ptrs = cg.operand(op, 0);
  Regs mask, other, vals;
  if (is_load) {
    if (op.num_operands() > 1) mask = cg.operand(op, 1);
    if (op.num_operands() > 2) other = cg.operand(op, 2);
  } else {
    vals = cg.operand(op, 1);
    if (op.num_operands() > 2) mask = cg.operand(op, 2);
  }
  if (op.kind == OpKind::Store && p.tma_map >= 0) {
    // The engine faults on negative coordinates: such blocks (rare: a view's edge
    // before its start) take the plain stores. The operands above dominate both ways.
    llvm::Value* ok = cg.b.getTrue();
    for (int d = 0; d < op.view_rank; ++d)
      ok = cg.b.CreateAnd(ok, cg.b.CreateICmpSGE(cg.scalar(op.view_coord(d)), cg.c32(0)));
    cg.if_then(ok, [&] { lower_tma_store(cg, op, vals); });
    cg.if_then(cg.b.CreateNot(ok), [&] { plain_stores(cg, op, ptrs, vals, mask); });
    cg.smem_unknown();
    return;
  }
  if (!is_load) return plain_stores(cg, op, ptrs, vals, mask);
  // A load kept in shared memory where the plan could not hold it: a plain one.
  Evict ev = op.evict == Evict::Shared ? Evict::Normal : op.evict;
  LayoutRef l = p.operands.empty() ? nullptr : p.operands[0];
  int vec = l ? p.vec : 1;
  bool realign = l && p.realign;
  bool checked = l && p.checked && !mask.empty();
  bool interval = (checked || (realign && !mask.empty())) && interval_on_runs(cg.plan, op.mask(), p.fast_dim, vec);
  int n = static_cast<int>(ptrs.size());
  auto run = [&](const Regs& v, int r) { return v.empty() ? Regs{} : Regs(v.begin() + r, v.begin() + r + vec); };
  if (realign && interval) return checked_realigned_loads(cg, op.result(), ptrs, mask, other, vec, dt, ev);
  if (checked && !realign) {
    if (reads_runs_whole(cg.plan, op))
      return readable_checked_loads(cg, op.result(), ptrs, mask, other, cg.operand(op, 3), vec, interval, dt, ev);
    return checked_loads(cg, op.result(), ptrs, mask, other, vec, interval, dt, ev);
  }
  Regs out(n);
  for (int r = 0; r < n; r += vec) {
    Regs got = realign ? realigned_load(cg, ptrs[r], run(mask, r), run(other, r), dt, ev)
                       : emit_load(cg, ptrs[r], mask.empty() ? nullptr : mask[r], run(other, r), dt, vec, ev);
    for (int i = 0; i < vec; ++i) out[r + i] = got[i];
  }
  cg.set(op.result(), std::move(out));
}

void plain_stores(Codegen& cg, const ir::Op& op, const Regs& ptrs, const Regs& vals, const Regs& mask) {
  const OpPlan& p = cg.plan.op(&op);
  DType dt = op.operand(0)->type.dtype;
  LayoutRef l = p.operands.empty() ? nullptr : p.operands[0];
  int vec = l ? p.vec : 1;
  bool realign = l && p.realign;
  bool checked = l && p.checked && !mask.empty();
  bool interval = (checked || (realign && !mask.empty())) && interval_on_runs(cg.plan, op.mask(), p.fast_dim, vec);
  int n = static_cast<int>(ptrs.size());
  auto run = [&](const Regs& v, int r) { return v.empty() ? Regs{} : Regs(v.begin() + r, v.begin() + r + vec); };
  llvm::Value* owner = l ? cg.owner_predicate(l->ll) : cg.b.CreateICmpEQ(cg.tid(), cg.c32(0));
  uint32_t dup_regs = l ? l->ll.redundancy().reg : 0;
  if (checked && !realign) return checked_stores(cg, ptrs, vals, mask, owner, dup_regs, vec, interval, dt, op.evict);
  for (int r = 0; r < n; r += vec) {
    if (r & dup_regs) continue;
    if (realign)
      realigned_store(cg, ptrs[r], run(vals, r), run(mask, r), owner, dt, op.evict);
    else
      emit_store(cg, ptrs[r], run(vals, r), and_pred(cg, mask.empty() ? nullptr : mask[r], owner), dt, op.evict);
  }
}

}  // namespace tilefuse::nvptx
