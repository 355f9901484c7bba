// dot(a, b, acc).
// Tensor cores (f16/bf16, tiles of at least 16x8x16): the operands arrive in the
// mma.sync fragment layouts (mma_layout.hpp), converted through swizzled shared memory
// with ldmatrix, or renamed in registers when they are already there (an accumulator
// cast to 16 bits); one mma.sync.m16n8k16 per (m, n, k) instruction tile, in a fixed
// order (k innermost per output tile) so results do not depend on scheduling.
// FMA path (f32 inputs, smaller tiles): a (stored K-major) and b go to shared memory;
// each thread then walks k, loading the a values of its rows and the b values of its
// columns once per k and updating its accumulator registers with f32 FMAs (an outer
// product per k).
#include <algorithm>
#include <map>
#include <unordered_map>

#include <llvm/IR/InlineAsm.h>

#include "codegen.hpp"
#include "passes.hpp"

namespace tilefuse::nvptx {

namespace {

struct Axis {
  // Distinct register parts of the thread's coordinates along one acc dimension, each
  // with the register whose runtime coordinate it is, grouped into vector loads.
  std::vector<uint32_t> parts;
  std::vector<int> rep;         // a register with that part
  std::map<uint32_t, int> slot;  // part -> index into loaded values
  std::vector<int> group_start;  // indices into parts starting a vector load
  std::vector<int> group_len;
};

Axis distinct_parts(const LinearLayout& l, int dim, int max_vec) {
  Axis a;
  for (int r = 0; r < l.num_regs(); ++r) {
    uint32_t c = static_cast<uint32_t>(l.coord(l.reg_part(r), dim));
    if (std::find(a.parts.begin(), a.parts.end(), c) == a.parts.end()) {
      a.parts.push_back(c);
      a.rep.push_back(r);
    }
  }
  // Sort by coordinate so runs of consecutive coordinates can become vector loads.
  std::vector<int> idx(a.parts.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  std::sort(idx.begin(), idx.end(), [&](int x, int y) { return a.parts[x] < a.parts[y]; });
  Axis s;
  for (int i : idx) {
    s.parts.push_back(a.parts[i]);
    s.rep.push_back(a.rep[i]);
  }
  for (size_t i = 0; i < s.parts.size(); ++i) s.slot[s.parts[i]] = static_cast<int>(i);
  uint32_t tb = l.thread_bits(dim);
  for (size_t i = 0; i < s.parts.size();) {
    int v = max_vec;
    while (v > 1) {
      bool ok = (s.parts[i] % v == 0) && (tb & (v - 1)) == 0 && i + v <= s.parts.size();
      for (int k = 1; ok && k < v; ++k) ok = s.parts[i + k] == s.parts[i] + k;
      if (ok) break;
      v /= 2;
    }
    s.group_start.push_back(static_cast<int>(i));
    s.group_len.push_back(v);
    i += v;
  }
  return s;
}

// Moves every ldmatrix emitted after `start` in `bb` (with the extracts and packs that
// unpack its result) down to just before the first instruction that consumes it. The
// operand readers load whole tiles; issued in k order next to their MMAs, only one k
// slice of fragments is live at a time instead of every fragment of both tiles.
void sink_fragment_loads(llvm::BasicBlock* bb, llvm::Instruction* start,
                         const std::unordered_map<llvm::Instruction*, llvm::Instruction*>& slice_start) {
  auto is_ldmatrix = [](const llvm::Instruction& i) {
    auto* call = llvm::dyn_cast<llvm::CallInst>(&i);
    auto* ia = call ? llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand()) : nullptr;
    return ia && ia->getAsmString().rfind("ldmatrix", 0) == 0;
  };
  auto is_unpack = [](const llvm::Instruction* i) {
    return llvm::isa<llvm::ExtractValueInst>(i) || llvm::isa<llvm::BitCastInst>(i) ||
           llvm::isa<llvm::ExtractElementInst>(i) || llvm::isa<llvm::InsertElementInst>(i);
  };
  std::vector<llvm::Instruction*> loads;
  auto it = start ? std::next(start->getIterator()) : bb->begin();
  for (; it != bb->end(); ++it)
    if (is_ldmatrix(*it)) loads.push_back(&*it);
  for (llvm::Instruction* ld : loads) {
    std::vector<llvm::Instruction*> chain{ld};
    llvm::Instruction* first_use = nullptr;
    for (size_t i = 0; i < chain.size(); ++i)
      for (llvm::User* u : chain[i]->users()) {
        auto* ui = llvm::dyn_cast<llvm::Instruction>(u);
        if (!ui || ui->getParent() != bb) continue;
        if (is_unpack(ui)) {
          if (std::find(chain.begin(), chain.end(), ui) == chain.end()) chain.push_back(ui);
        } else if (!first_use || ui->comesBefore(first_use)) {
          first_use = ui;
        }
      }
    if (!first_use) continue;
    // To the start of the k slice that first uses it: the slice's loads issue together
    // and overlap their latency.
    if (auto it = slice_start.find(first_use); it != slice_start.end() && it->second->comesBefore(first_use) &&
                                               ld->comesBefore(it->second))
      first_use = it->second;
    // Never past a store or a barrier: shared memory may be rewritten after it.
    for (auto j = std::next(ld->getIterator()); &*j != first_use; ++j)
      if (llvm::isa<llvm::StoreInst>(&*j) || (llvm::isa<llvm::CallInst>(&*j) && !is_ldmatrix(*j) &&
                                               j->mayWriteToMemory())) {
        first_use = &*j;
        break;
      }
    std::sort(chain.begin(), chain.end(), [](auto* x, auto* y) { return x->comesBefore(y); });
    for (llvm::Instruction* i : chain)
      if (i->comesBefore(first_use)) i->moveBefore(first_use);
  }
}

void lower_mma(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&op);
  const ir::Type& ta = op.operand(0)->type;
  int64_t M = ta.shape[0], K = ta.shape[1], N = op.operand(1)->type.shape[1];
  int es = byte_size(ta.dtype);
  auto async = [&](int i) { return async_source(cg.plan, op.operand(i)) != nullptr; };
  int off_a = p.smem_offset;
  int off_b = off_a + (async(0) ? 0 : static_cast<int>((M * K * es + 15) / 16 * 16));
  // The accumulator first: its conversion (if any) reuses the operands' scratch.
  Regs C = cg.operand(op, 2);
  bool wrote = false;
  if (async(0) || async(1)) {
    wait_async_copies(cg, op);
    wrote = true;  // the copies of other threads become visible at the barrier
  }
  auto read_a = cg.stage(op.operand(0), p.operands[0]->ll, off_a, wrote);
  auto read_b = cg.stage(op.operand(1), p.operands[1]->ll, off_b, wrote);
  if (wrote) cg.smem_after_write();
  issue_deferred_copies(cg, op);  // refill the buffers the previous iteration read
  llvm::BasicBlock* bb = b.GetInsertBlock();
  llvm::Instruction* before_reads = bb->empty() ? nullptr : &bb->back();
  Regs A = read_a(), B = read_b();
  if (wrote) cg.smem_after_read();

  const MmaTiling& t = p.mma_tiling;
  bool tf32 = p.mma_kind == MmaKind::Tf32;
  bool f8 = p.mma_kind == MmaKind::F8;
  int kreps = static_cast<int>(K / mma_k(p.mma_kind));
  int mreps = static_cast<int>(std::max<int64_t>(1, M / (kMmaM * t.warps_m)));
  int nreps = static_cast<int>(std::max<int64_t>(1, N / (kMmaN * t.warps_n)));
  int kb = log2_exact(kreps), nb = log2_exact(nreps);
  // Word w of an operand fragment starting at register `base`: two 16-bit or four 8-bit
  // elements packed, or one f32 rounded to tf32 (cvt.rna, as the instruction expects).
  int per_word = f8 ? 4 : 2;
  auto* packed = llvm::FixedVectorType::get(cg.elem_type(ta.dtype), per_word);
  auto word = [&](const Regs& r, int base, int w) -> llvm::Value* {
    if (tf32) return cg.inline_asm(cg.i32(), "cvt.rna.tf32.f32 $0, $1;", "=r,f", {r[base + w]}, false);
    llvm::Value* v = llvm::PoisonValue::get(packed);
    for (int e = 0; e < per_word; ++e) v = b.CreateInsertElement(v, r[base + per_word * w + e], uint64_t(e));
    return b.CreateBitCast(v, cg.i32());
  };
  // Registers per fragment: 4/8/16 (A: tf32, 16-bit, 8-bit), 2/4/8 (B).
  int a_bits = tf32 ? 2 : f8 ? 4 : 3, b_bits = tf32 ? 1 : f8 ? 3 : 2;
  auto type_name = [&](DType d) -> std::string {
    if (tf32) return "tf32";
    return d == DType::bf16 ? "bf16" : d == DType::f8e4m3 ? "e4m3" : d == DType::f8e5m2 ? "e5m2" : "f16";
  };
  std::string text = std::string("mma.sync.aligned.") + (tf32 ? "m16n8k8" : f8 ? "m16n8k32" : "m16n8k16") +
                     ".row.col.f32." + type_name(ta.dtype) + "." + type_name(op.operand(1)->type.dtype) +
                     ".f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};";
  llvm::Type* f32 = b.getFloatTy();
  auto* ret = llvm::StructType::get(cg.ctx, {f32, f32, f32, f32});
  Regs out(C.begin(), C.end());
  // k outermost: each output tile still accumulates in k order, and one k slice of
  // operand fragments is live at a time.
  std::unordered_map<llvm::Instruction*, llvm::Instruction*> slice_start;  // mma -> first mma of its k slice
  for (int ki = 0; ki < kreps; ++ki) {
    llvm::Instruction* first = nullptr;
    for (int mi = 0; mi < mreps; ++mi)
      for (int ni = 0; ni < nreps; ++ni) {
        int c0 = (ni << 2) | (mi << (2 + nb));
        int a0 = (ki << a_bits) | (mi << (a_bits + kb)), b0 = (ki << b_bits) | (ni << (b_bits + kb));
        std::vector<llvm::Value*> args{word(A, a0, 0), word(A, a0, 1), word(A, a0, 2), word(A, a0, 3),
                                       word(B, b0, 0), word(B, b0, 1), out[c0], out[c0 + 1], out[c0 + 2], out[c0 + 3]};
        llvm::Value* d = cg.inline_asm(ret, text, "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", args, false);
        auto* di = llvm::cast<llvm::Instruction>(d);
        if (!first) first = di;
        slice_start[di] = first;
        for (int j = 0; j < 4; ++j) out[c0 + j] = b.CreateExtractValue(d, j);
      }
  }
  // Group a k slice's loads only when A comes from shared memory too (a GEMM main
  // loop); with A in registers (FlashAttention's Q and P) B's fragments go one by one
  // next to their MMAs, which keeps the register peak lower.
  bool a_in_registers = !async(0) && (cg.is_hoisted(op.operand(0), p.operands[0]->ll) ||
                                      !conversion_needs_smem(cg.plan, op.operand(0), p.operands[0]->ll));
  if (a_in_registers) slice_start.clear();
  sink_fragment_loads(bb, before_reads, slice_start);
  cg.set(op.result(), std::move(out));
}

}  // namespace

void lower_dot(Codegen& cg, const ir::Op& op) {
  if (cg.plan.op(&op).wgmma) return lower_wgmma(cg, op);
  if (cg.plan.op(&op).mma) return lower_mma(cg, op);
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&op);
  const ir::Value* av = op.operand(0);
  const ir::Value* bv = op.operand(1);
  int64_t M = av->type.shape[0], K = av->type.shape[1], N = bv->type.shape[1];
  DType dt = av->type.dtype;
  int es = byte_size(dt);
  llvm::Type* ety = cg.elem_type(dt);
  llvm::Type* f32 = b.getFloatTy();
  const LinearLayout& la = p.operands[0]->ll;
  const LinearLayout& lb = p.operands[1]->ll;
  const LinearLayout& lc = p.operands[2]->ll;
  Regs A = cg.operand(op, 0), B = cg.operand(op, 1), C = cg.operand(op, 2);
  int off_a = p.smem_offset;
  int off_b = off_a + static_cast<int>((M * K * es + 15) / 16 * 16);

  // Stage the operands: a as [K][M] (so a thread's rows are contiguous), b as [K][N].
  cg.smem_before_write();
  {
    auto ca = cg.coords(la);
    auto red = la.redundancy();
    cg.if_then(cg.owner_predicate(la), [&] {
      for (int r = 0; r < la.num_regs(); ++r) {
        if (r & red.reg) continue;
        llvm::Value* idx = b.CreateAdd(b.CreateMul(ca[1][r], cg.c32(M)), ca[0][r]);
        b.CreateStore(A[r], cg.smem_addr(off_a, b.CreateMul(idx, cg.c32(es))));
      }
    });
  }
  cg.smem_store_tile(B, lb, off_b, ety);
  cg.smem_after_write();

  auto cc = cg.coords(lc);
  Axis rows = distinct_parts(lc, 0, 1);
  Axis cols = distinct_parts(lc, 1, 16 / es);

  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(cg.ctx, "dot.k", f);
  auto* exit = llvm::BasicBlock::Create(cg.ctx, "dot.end", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* k = b.CreatePHI(cg.i32(), 2, "k");
  k->addIncoming(cg.c32(0), pre);
  std::vector<llvm::PHINode*> acc;
  for (auto* c : C) {
    auto* phi = b.CreatePHI(f32, 2);
    phi->addIncoming(c, pre);
    acc.push_back(phi);
  }
  auto load_row = [&](int base_off, int64_t stride, const Axis& ax, int dim, DType d) {
    auto widen = [&](llvm::Value* x) { return convert_element(cg, x, d, DType::f32); };  // no-op for f32
    std::vector<llvm::Value*> vals(ax.parts.size());
    llvm::Value* row = b.CreateMul(k, cg.c32(stride));
    for (size_t g = 0; g < ax.group_start.size(); ++g) {
      int i = ax.group_start[g], v = ax.group_len[g];
      llvm::Value* idx = b.CreateAdd(row, cc[dim][ax.rep[i]]);
      llvm::Value* addr = cg.smem_addr(base_off, b.CreateMul(idx, cg.c32(es)));
      if (v == 1) {
        vals[i] = widen(b.CreateAlignedLoad(ety, addr, llvm::Align(es)));
      } else {
        llvm::Value* vec = b.CreateAlignedLoad(llvm::FixedVectorType::get(ety, v), addr, llvm::Align(es * v));
        for (int j = 0; j < v; ++j) {
          llvm::Value* e = b.CreateExtractElement(vec, j);
          vals[i + j] = widen(e);
        }
      }
    }
    // Precision::tf32 on a tile too small for tensor cores: the same rounding they apply.
    if (op.precision() == ir::DotPrecision::Tf32)
      for (auto& x : vals)
        x = b.CreateBitCast(cg.inline_asm(cg.i32(), "cvt.rna.tf32.f32 $0, $1;", "=r,f", {x}, false), f32);
    return vals;
  };
  auto avals = load_row(off_a, M, rows, 0, dt);
  auto bvals = load_row(off_b, N, cols, 1, bv->type.dtype);
  Regs next;
  for (int r = 0; r < lc.num_regs(); ++r) {
    uint32_t rm = static_cast<uint32_t>(lc.coord(lc.reg_part(r), 0));
    uint32_t rn = static_cast<uint32_t>(lc.coord(lc.reg_part(r), 1));
    llvm::Value* x = avals[rows.slot.at(rm)];
    llvm::Value* y = bvals[cols.slot.at(rn)];
    next.push_back(cg.call_intrinsic(llvm::Intrinsic::fma, {x, y, acc[r]}, {f32}));
  }
  llvm::Value* k1 = b.CreateAdd(k, cg.c32(1), "", true, true);
  llvm::BasicBlock* end = b.GetInsertBlock();
  b.CreateCondBr(b.CreateICmpULT(k1, cg.c32(K)), loop, exit);
  k->addIncoming(k1, end);
  for (size_t r = 0; r < acc.size(); ++r) acc[r]->addIncoming(next[r], end);
  b.SetInsertPoint(exit);
  cg.smem_after_read();
  cg.set(op.result(), Regs(next.begin(), next.end()));
}

}  // namespace tilefuse::nvptx
