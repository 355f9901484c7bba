// Loads and stores whose mask is tested per run at run time (OpPlan::checked): every
// run's vector access is issued predicated on the run being whole (or readable), and the
// runs only partly valid finish element by element or masked in registers, in branches
// the whole runs skip.
#include <functional>
#include <unordered_map>

#include <llvm/IR/IntrinsicsNVPTX.h>

#include "memory_access.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

using ir::Evict;
using ir::OpKind;

// Whether mask `m`, read along `dim` in aligned runs of `vec` elements, holds on an
// interval of each run (so the run is all valid iff its first and last elements are):
// constant over the run, a signed order comparison of an increasing run (contiguous)
// with a value constant over it, or a conjunction of such.
bool interval_on_runs(const GpuPlan& plan, const ir::Value* m, int dim, int vec) {
  if (plan.axis.has(m) && plan.axis.get(m).constancy[dim] >= vec) return true;
  const ir::Op* d = m->def;
  if (!d) return false;
  switch (d->kind) {
    case OpKind::Binary:
      return d->bin() == ir::BinaryOp::And && interval_on_runs(plan, d->operand(0), dim, vec) &&
             interval_on_runs(plan, d->operand(1), dim, vec);
    case OpKind::Compare: {
      const ir::Value* a = d->operand(0);
      const ir::Value* b = d->operand(1);
      bool order = d->cmp() != ir::CmpPred::Eq && d->cmp() != ir::CmpPred::Ne;
      if (!order || a->type.is_ptr || !is_signed_int(a->type.dtype) || !plan.axis.has(a) || !plan.axis.has(b))
        return false;
      const AxisInfo& x = plan.axis.get(a);
      const AxisInfo& y = plan.axis.get(b);
      return (x.contiguity[dim] >= vec && y.constancy[dim] >= vec) ||
             (y.contiguity[dim] >= vec && x.constancy[dim] >= vec);
    }
    case OpKind::Broadcast: {
      const ir::Value* x = d->operand(0);
      return x->type.is_scalar() || x->type.shape[dim] == 1 || interval_on_runs(plan, x, dim, vec);
    }
    case OpKind::ExpandDims:
      if (d->axis == dim) return true;
      return d->operand(0)->type.is_scalar() || interval_on_runs(plan, d->operand(0), dim > d->axis ? dim - 1 : dim, vec);
    default: return false;
  }
}

bool reads_runs_whole(const GpuPlan& plan, const ir::Op& op) {
  const ir::Value* rd = op.readable();
  const OpPlan& p = plan.op(&op);
  return rd && knob("TILEFUSE_READABLE") != "0" && plan.axis.has(rd) && p.fast_dim >= 0 &&
         plan.axis.get(rd).constancy[p.fast_dim] >= p.vec;
}

namespace {

// Whether every element of the run at `r` is valid: its first and last when the mask is
// an interval on runs, else all of them.
llvm::Value* run_all_valid(Codegen& cg, const Regs& mask, int r, int vec, bool interval) {
  if (interval) return cg.b.CreateAnd(mask[r], mask[r + vec - 1]);
  llvm::Value* all = mask[r];
  for (int i = 1; i < vec; ++i) all = cg.b.CreateAnd(all, mask[r + i]);
  return all;
}

// The conjuncts of a mask element (the operands of nested `and`s).
void conjuncts(llvm::Value* m, std::vector<llvm::Value*>& out) {
  auto* bin = llvm::dyn_cast<llvm::BinaryOperator>(m);
  if (bin && bin->getOpcode() == llvm::Instruction::And) {
    conjuncts(bin->getOperand(0), out);
    conjuncts(bin->getOperand(1), out);
  } else {
    out.push_back(m);
  }
}

// Whether nothing of the run at `r` is valid, known from its first and last elements
// alone (false when unknown): of an interval mask, a conjunct false at both ends (each
// conjunct is a threshold along the run) is false all along it. Runs past a row's end
// then cost a test, not a mask per element.
llvm::Value* run_surely_empty(Codegen& cg, const Regs& mask, int r, int vec, bool interval) {
  if (!interval) return cg.b.getFalse();
  std::vector<llvm::Value*> first, last;
  conjuncts(mask[r], first);
  conjuncts(mask[r + vec - 1], last);
  if (first.size() != last.size()) return cg.b.getFalse();
  llvm::Value* empty = cg.b.getFalse();
  for (size_t i = 0; i < first.size(); ++i)
    empty = cg.b.CreateOr(empty, cg.b.CreateNot(cg.b.CreateOr(first[i], last[i])));
  return empty;
}

// An opaque copy of `v` (an integer or predicate) at the insert point: what is computed
// from it there cannot be merged with the same computation elsewhere and hoisted.
llvm::Value* opaque_copy(Codegen& cg, llvm::Value* v) {
  llvm::Type* t = v->getType();
  if (!t->isIntegerTy() || llvm::isa<llvm::Constant>(v)) return v;
  switch (t->getIntegerBitWidth()) {
    case 1: return cg.inline_asm(t, "mov.pred $0, $1;", "=b,b", {v}, false);
    case 16: return cg.inline_asm(t, "mov.b16 $0, $1;", "=h,h", {v}, false);
    case 32: return cg.inline_asm(t, "mov.b32 $0, $1;", "=r,r", {v}, false);
    case 64: return cg.inline_asm(t, "mov.b64 $0, $1;", "=l,l", {v}, false);
    default: return v;
  }
}

// `v` computed again at the insert point when it is cheap integer or predicate
// arithmetic (up to `depth` levels deep), from opaque copies of what it reads: the
// per-element masks of a run are then computed only where the run is partly valid
// (LLVM would otherwise merge the copies of the load's and the store's and keep them
// in registers from one to the other).
llvm::Value* recompute_here(Codegen& cg, llvm::Value* v, int depth,
                            std::unordered_map<llvm::Value*, llvm::Value*>& memo) {
  if (auto it = memo.find(v); it != memo.end()) return it->second;
  auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
  bool cheap = false;
  if (inst && depth > 0) {
    switch (inst->getOpcode()) {
      case llvm::Instruction::ICmp: case llvm::Instruction::And: case llvm::Instruction::Or:
      case llvm::Instruction::Xor: case llvm::Instruction::Add: case llvm::Instruction::Sub:
      case llvm::Instruction::Shl: case llvm::Instruction::LShr: case llvm::Instruction::AShr:
      case llvm::Instruction::ZExt: case llvm::Instruction::SExt: case llvm::Instruction::Trunc:
      case llvm::Instruction::Select:
        cheap = true;
        break;
      default: break;
    }
  }
  llvm::Value* out;
  if (!cheap) {
    out = opaque_copy(cg, v);
  } else {
    llvm::Instruction* c = inst->clone();
    for (unsigned i = 0; i < c->getNumOperands(); ++i)
      c->setOperand(i, recompute_here(cg, inst->getOperand(i), depth - 1, memo));
    cg.b.Insert(c);
    out = c;
  }
  memo[v] = out;
  return out;
}

Regs run_masks_here(Codegen& cg, const Regs& mask, int r, int vec) {
  std::unordered_map<llvm::Value*, llvm::Value*> memo;
  Regs m;
  for (int i = 0; i < vec; ++i) m.push_back(recompute_here(cg, mask[r + i], 5, memo));
  return m;
}

// Element e of a load's `other` (zero without one), and the run of them at `r`.
llvm::Value* fill_of(Codegen& cg, const Regs& other, DType dt, int e) {
  return other.empty() ? llvm::Constant::getNullValue(cg.elem_type(dt)) : other[e];
}
Regs fill_run(Codegen& cg, const Regs& other, DType dt, int r, int vec) {
  Regs elems;
  for (int i = 0; i < vec; ++i) elems.push_back(fill_of(cg, other, dt, r + i));
  return elems;
}

// How an op's partly valid runs are finished. Per run (the default): a branch per run,
// which whole runs skip. Warp-uniform where a thread holds 4 or more runs of the op: one
// vote per op, and only a warp with a run partly valid in some lane takes the per-run
// branches; the others keep the vector accesses' registers as they are. Only a row's
// first and last runs are ever partial, so most warps skip the per-run tests, predicate
// spills and BSSY/BSYNC pairs. Measured (bench/NOTES.md, H200): at 4 runs per thread 0 to
// +12 points of copy; at 1 run per thread the vote saves little and measured slower
// (LayerNorm bf16 -4 points); 2 and 3 runs per thread were not measured in this form.
bool finishes_uniformly(int runs) { return runs >= 4 && knob("TILEFUSE_UNIFORM_RUNS") != "0"; }

// True in every lane iff `p` holds in every lane of the warp (vote.all): a branch on it
// is warp-uniform. Checked ops run with the whole warp converged (never inside a
// lane-dependent branch).
llvm::Value* warp_all(Codegen& cg, llvm::Value* p) {
  return cg.call_intrinsic(llvm::Intrinsic::nvvm_vote_all_sync, {cg.c32(-1), p});
}

// The warp-uniform finishing: `finish` runs only in warps where `clean` (no run of the
// op partly valid in this lane) fails in some lane; the others keep `kept`, which reach
// the merge through an edge of their own (unless's split_kept: no moves on their path).
// The per-run merges inside stay unsplit: splitting them too (the variant measured in
// bench/NOTES.md) left ptxas spilling 4 bytes in two norm configs. Null `warp_clean`:
// per run, finish() everywhere.
std::vector<llvm::Value*> finish_uniformly(Codegen& cg, llvm::Value* warp_clean, const std::vector<llvm::Value*>& kept,
                                           const std::function<std::vector<llvm::Value*>()>& finish) {
  if (!warp_clean) return finish();
  return unless(cg, warp_clean, kept, finish, true);
}

// The element-wise part of checked loads, as the runs' words: runs only partly valid
// load element by element, runs with nothing valid take `other`.
std::vector<llvm::Value*> finish_checked_loads(Codegen& cg, const Regs& ptrs, const Regs& mask, const Regs& other,
                                               int vec, bool interval, DType dt, Evict ev, const Words& w,
                                               const std::vector<llvm::Value*>& all,
                                               const std::vector<std::vector<llvm::Value*>>& words) {
  int n = static_cast<int>(ptrs.size());
  auto fill = [&](int e) { return fill_of(cg, other, dt, e); };
  std::vector<llvm::Value*> out;
  for (int r = 0, k = 0; r < n; r += vec, ++k) {
    auto got = unless(cg, all[k], words[k], [&] {
      std::vector<llvm::Value*> none = to_words(cg, fill_run(cg, other, dt, r, vec), dt, w);
      return unless(cg, run_surely_empty(cg, mask, r, vec, interval), none, [&] {
        Regs m = run_masks_here(cg, mask, r, vec);
        Regs part;
        for (int i = 0; i < vec; ++i) part.push_back(emit_load(cg, ptrs[r + i], m[i], {fill(r + i)}, dt, 1, ev)[0]);
        return to_words(cg, part, dt, w);
      });
    });
    out.insert(out.end(), got.begin(), got.end());
  }
  return out;
}

std::vector<llvm::Value*> flatten(const std::vector<std::vector<llvm::Value*>>& words) {
  std::vector<llvm::Value*> out;
  for (auto& w : words) out.insert(out.end(), w.begin(), w.end());
  return out;
}

// The elements of runs of `vec` from their words, run after run.
Regs elements_of_runs(Codegen& cg, const std::vector<llvm::Value*>& flat, DType dt, int vec, const Words& w) {
  Regs out;
  for (size_t i = 0; i < flat.size(); i += w.n) {
    std::vector<llvm::Value*> run(flat.begin() + i, flat.begin() + i + w.n);
    for (auto* e : from_words(cg, run, dt, vec, w)) out.push_back(e);
  }
  return out;
}

// The finishing of loads whose runs were read whole where `read` holds (their words in
// `words`, fills elsewhere): runs all valid (`whole`) keep their words; runs with nothing
// valid take `other`; runs partly valid are masked in registers where read, else loaded
// element by element. Warp-uniform when `warp_clean` is given (see finish_uniformly).
Regs finish_read_runs(Codegen& cg, const Regs& ptrs, const Regs& mask, const Regs& other,
                      const std::vector<llvm::Value*>& read, const std::vector<llvm::Value*>& whole,
                      const std::vector<std::vector<llvm::Value*>>& words, llvm::Value* warp_clean, int vec,
                      bool interval, DType dt, Evict ev, const Words& w) {
  auto got = finish_uniformly(cg, warp_clean, flatten(words), [&] {
    auto fill = [&](int e) { return fill_of(cg, other, dt, e); };
    std::vector<llvm::Value*> out;
    for (int r = 0, k = 0; r < static_cast<int>(mask.size()); r += vec, ++k) {
      auto run = unless(cg, whole[k], words[k], [&] {
        std::vector<llvm::Value*> none = to_words(cg, fill_run(cg, other, dt, r, vec), dt, w);
        return unless(cg, run_surely_empty(cg, mask, r, vec, interval), none, [&] {
          Regs m = run_masks_here(cg, mask, r, vec);
          Regs loaded = from_words(cg, words[k], dt, vec, w), masked;
          for (int i = 0; i < vec; ++i) masked.push_back(cg.b.CreateSelect(m[i], loaded[i], fill(r + i)));
          return unless(cg, read[k], to_words(cg, masked, dt, w), [&] {
            Regs part;
            for (int i = 0; i < vec; ++i)
              part.push_back(emit_load(cg, ptrs[r + i], m[i], {fill(r + i)}, dt, 1, ev)[0]);
            return to_words(cg, part, dt, w);
          });
        });
      });
      out.insert(out.end(), run.begin(), run.end());
    }
    return out;
  });
  return elements_of_runs(cg, got, dt, vec, w);
}

}  // namespace

// Loads whose runs test their mask at run time (OpPlan::checked): every run's vector
// load is issued first, predicated on the whole run being valid, so all are in flight
// together, those of the next load ops too (Codegen::defer_load finishes them later).
void checked_loads(Codegen& cg, const ir::Value* result, const Regs& ptrs, const Regs& mask, const Regs& other,
                   int vec, bool interval, DType dt, Evict ev) {
  Words w = words_for(cg, dt, vec);
  bool uniform = finishes_uniformly(static_cast<int>(ptrs.size()) / vec);
  std::vector<llvm::Value*> all;
  std::vector<std::vector<llvm::Value*>> words;
  llvm::Value* clean = cg.b.getTrue();
  for (int r = 0; r < static_cast<int>(ptrs.size()); r += vec) {
    all.push_back(run_all_valid(cg, mask, r, vec, interval));
    // Warp-uniform: a run not loaded keeps its fill, so one with nothing valid is finished.
    std::vector<llvm::Value*> fill;
    if (uniform) fill = to_words(cg, fill_run(cg, other, dt, r, vec), dt, w);
    words.push_back(load_words(cg, ptrs[r], all.back(), fill, w, ev));
    if (uniform)
      clean = cg.b.CreateAnd(clean, cg.b.CreateOr(all.back(), run_surely_empty(cg, mask, r, vec, interval)));
  }
  llvm::Value* warp_clean = uniform ? warp_all(cg, clean) : nullptr;
  cg.defer_load(result, [&cg, ptrs, mask, other, vec, interval, dt, ev, w, all, words, warp_clean] {
    auto got = finish_uniformly(cg, warp_clean, flatten(words), [&] {
      return finish_checked_loads(cg, ptrs, mask, other, vec, interval, dt, ev, w, all, words);
    });
    return elements_of_runs(cg, got, dt, vec, w);
  });
}

// Checked loads whose runs may be read whole where `readable` holds (it is constant over
// each run): each run's vector load is predicated on that rather than on the whole run
// being valid, so a run only partly valid (a row's first or last, indexed from its
// aligned start) moves whole with the others and is masked in registers afterwards, in
// a branch without memory accesses. Element-wise loads after the vector ones had to wait
// for them (their registers are the same), so a program whose row began or ended inside
// a run waited for two memory latencies instead of one. Runs not readable keep the
// element-wise path; runs with nothing valid (past a row's end) are tested for first and
// take `other` without a mask per element.
//
// (load_words starts the vector load's registers at zero: left undefined where the load
// is off, ptxas (CUDA 13, sm_90a) gave the element load of a run's first element, at the
// same address, the vector load's undefined register — wrong values at rows' ends on the
// GPU while the PTX read right.)
void readable_checked_loads(Codegen& cg, const ir::Value* result, const Regs& ptrs, const Regs& mask,
                            const Regs& other, const Regs& readable, int vec, bool interval, DType dt, Evict ev) {
  Words w = words_for(cg, dt, vec);
  bool uniform = finishes_uniformly(static_cast<int>(ptrs.size()) / vec);
  std::vector<llvm::Value*> read, whole;
  std::vector<std::vector<llvm::Value*>> words;
  llvm::Value* clean = cg.b.getTrue();
  for (int r = 0; r < static_cast<int>(ptrs.size()); r += vec) {
    read.push_back(readable[r]);
    whole.push_back(cg.b.CreateAnd(readable[r], run_all_valid(cg, mask, r, vec, interval)));
    std::vector<llvm::Value*> fill;
    if (uniform) fill = to_words(cg, fill_run(cg, other, dt, r, vec), dt, w);
    words.push_back(load_words(cg, ptrs[r], read.back(), fill, w, ev));
    if (uniform) {
      // A run read whole although nothing in it is valid holds memory, not its fill.
      llvm::Value* unread_empty = cg.b.CreateAnd(cg.b.CreateNot(read.back()), run_surely_empty(cg, mask, r, vec, interval));
      clean = cg.b.CreateAnd(clean, cg.b.CreateOr(whole.back(), unread_empty));
    }
  }
  llvm::Value* warp_clean = uniform ? warp_all(cg, clean) : nullptr;
  cg.defer_load(result, [&cg, ptrs, mask, other, vec, interval, dt, ev, w, read, whole, words, warp_clean] {
    return finish_read_runs(cg, ptrs, mask, other, read, whole, words, warp_clean, vec, interval, dt, ev, w);
  });
}

// Staged checked loads: each run copied whole where it is all valid or readable.
llvm::Value* staged_run_copied(Codegen& cg, const Regs& mask, const Regs& readable, int r, int vec, bool interval) {
  llvm::Value* all = run_all_valid(cg, mask, r, vec, interval);
  return readable.empty() ? all : cg.b.CreateOr(readable[r], all);
}

Regs finish_staged_checked(Codegen& cg, const Regs& ptrs, const Regs& mask, const Regs& readable,
                           const std::vector<std::vector<llvm::Value*>>& words, int vec, bool interval, DType dt,
                           ir::Evict ev) {
  Words w = words_for(cg, dt, vec);
  bool uniform = finishes_uniformly(static_cast<int>(mask.size()) / vec);
  std::vector<llvm::Value*> read, whole;
  llvm::Value* clean = cg.b.getTrue();
  for (int r = 0; r < static_cast<int>(mask.size()); r += vec) {
    whole.push_back(run_all_valid(cg, mask, r, vec, interval));
    read.push_back(readable.empty() ? whole.back() : cg.b.CreateOr(readable[r], whole.back()));
    // A run not copied was zero-filled: its fill, when nothing in it is valid.
    llvm::Value* unread_empty = cg.b.CreateAnd(cg.b.CreateNot(read.back()), run_surely_empty(cg, mask, r, vec, interval));
    clean = cg.b.CreateAnd(clean, cg.b.CreateOr(whole.back(), unread_empty));
  }
  return finish_read_runs(cg, ptrs, mask, {}, read, whole, words, uniform ? warp_all(cg, clean) : nullptr, vec,
                          interval, dt, ev, w);
}

// Realigned loads (runs of unknown alignment in a layout of whole runs) whose mask is an
// interval on runs: like checked_loads, each run's two chunks are loaded first where the
// whole run is valid (of the second, only the run's bytes); the shifts follow (deferred),
// and runs only partly valid load element by element.
void checked_realigned_loads(Codegen& cg, const ir::Value* result, const Regs& ptrs, const Regs& mask,
                             const Regs& other, int vec, DType dt, Evict ev) {
  std::vector<llvm::Value*> all;
  std::vector<RealignedChunks> chunks;
  for (int r = 0; r < static_cast<int>(ptrs.size()); r += vec) {
    all.push_back(run_all_valid(cg, mask, r, vec, true));
    chunks.push_back(load_realigned_chunks(cg, ptrs[r], all.back(), dt, ev));
  }
  cg.defer_load(result, [&cg, ptrs, mask, other, vec, dt, ev, all, chunks] {
    Regs out;
    for (int r = 0, k = 0; r < static_cast<int>(ptrs.size()); r += vec, ++k) {
      Regs whole = realigned_elements(cg, chunks[k], dt);
      Regs got = unless(cg, all[k], whole, [&] {
        return unless(cg, run_surely_empty(cg, mask, r, vec, true), fill_run(cg, other, dt, r, vec), [&] {
          // Element addresses from the run's first (ptrs[r + i] would stay live until here).
          Regs m = run_masks_here(cg, mask, r, vec);
          Regs part;
          for (int i = 0; i < vec; ++i) {
            llvm::Value* at = cg.b.CreateGEP(cg.b.getInt8Ty(), ptrs[r], cg.c32(i * byte_size(dt)));
            part.push_back(emit_load(cg, at, m[i], {fill_of(cg, other, dt, r + i)}, dt, 1, ev)[0]);
          }
          return part;
        });
      });
      out.insert(out.end(), got.begin(), got.end());
    }
    return out;
  });
}

// Stores likewise: each run's vector store predicated on the whole run being valid,
// then the runs only partly valid element by element.
void checked_stores(Codegen& cg, const Regs& ptrs, const Regs& vals, const Regs& mask, llvm::Value* owner,
                    uint32_t dup_regs, int vec, bool interval, DType dt, Evict ev) {
  int n = static_cast<int>(ptrs.size());
  bool uniform = finishes_uniformly(n / vec);
  std::vector<llvm::Value*> all;
  llvm::Value* clean = cg.b.getTrue();
  for (int r = 0; r < n; r += vec) {
    all.push_back(run_all_valid(cg, mask, r, vec, interval));
    if (r & dup_regs) continue;
    emit_store(cg, ptrs[r], Regs(vals.begin() + r, vals.begin() + r + vec), and_pred(cg, all.back(), owner), dt, ev);
    if (uniform)
      clean = cg.b.CreateAnd(clean, cg.b.CreateOr(all.back(), run_surely_empty(cg, mask, r, vec, interval)));
  }
  finish_uniformly(cg, uniform ? warp_all(cg, clean) : nullptr, {}, [&] {
    for (int r = 0, k = 0; r < n; r += vec, ++k) {
      if (r & dup_regs) continue;
      unless(cg, all[k], {}, [&] {
        return unless(cg, run_surely_empty(cg, mask, r, vec, interval), {}, [&] {
          Regs m = run_masks_here(cg, mask, r, vec);
          for (int i = 0; i < vec; ++i) emit_store(cg, ptrs[r + i], {vals[r + i]}, and_pred(cg, m[i], owner), dt, ev);
          return std::vector<llvm::Value*>{};
        });
      });
    }
    return std::vector<llvm::Value*>{};
  });
}

}  // namespace tilefuse::nvptx
