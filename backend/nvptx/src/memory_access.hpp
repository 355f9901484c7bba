#pragma once
// Internal: single global accesses of a run of elements (lower_memory.cpp), shared by
// the plain, the checked (lower_checked.cpp) and the realigned lowering of loads and stores.
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "codegen.hpp"

namespace tilefuse::nvptx {

// How a run of `vec` elements of `dt` travels through inline PTX: `n` words of `bits`.
struct Words {
  int n, bits;
  llvm::Type* ty;
  const char* constraint;
  std::string ptx_type;
};
Words words_for(Codegen& cg, DType dt, int vec);
// Two 16-bit elements as one 32-bit word without moves: the halves of one packed value
// (a pair carried around a loop) as that value, f32 -> bf16/f16 roundings as one
// cvt.rn.{bf16,f16}x2.f32 (lo in the low half); null otherwise.
llvm::Value* packed_pair(Codegen& cg, llvm::Value* lo, llvm::Value* hi, DType dt);
// The elements of a run packed into words (f32 -> 16-bit roundings as cvt.rn.*x2 pairs).
std::vector<llvm::Value*> to_words(Codegen& cg, const Regs& elems, DType dt, const Words& w);

// Loads `vec` elements at ptr (aligned to their size), only where pred holds (null:
// always); elsewhere the result is `other` (empty: zeros).
Regs emit_load(Codegen& cg, llvm::Value* ptr, llvm::Value* pred, const Regs& other, DType dt, int vec, ir::Evict ev);
// Stores vals (a run) at ptr where pred holds (null: always).
void emit_store(Codegen& cg, llvm::Value* ptr, const Regs& vals, llvm::Value* pred, DType dt, ir::Evict ev);

// Branches to a block built by `part` when `whole` does not hold; returns the values
// merged after it (`kept` from before the branch, part()'s from the block).
// `split_kept`: the kept values reach the merge through a block of their own (held by an
// empty asm): else the merge's copies sit before the branch, where part() may still read
// the kept values, and ptxas keeps them as moves that every thread runs.
std::vector<llvm::Value*> unless(Codegen& cg, llvm::Value* whole, const std::vector<llvm::Value*>& kept,
                                 const std::function<std::vector<llvm::Value*>()>& part, bool split_kept = false);

// Runs of 16 bytes whose start is not known to be 16-byte aligned (lower_realigned.cpp).
// `mask` holds one predicate per element (empty: all valid); `owner` (null: every
// thread) says whether this thread stores its elements. Every thread of the warp must
// call realigned_store together: it exchanges runs with the neighbouring lanes.
Regs realigned_load(Codegen& cg, llvm::Value* ptr, const Regs& mask, const Regs& other, DType dt, ir::Evict ev);
// The two aligned chunks a run of 16 bytes straddles, loaded where `pred` holds (the
// first whole, of the second only the run's bytes), and the run's bytes shifted out.
struct RealignedChunks {
  std::array<llvm::Value*, 8> words;
  llvm::Value* shift;  // the run's misalignment in bytes
};
RealignedChunks load_realigned_chunks(Codegen& cg, llvm::Value* ptr, llvm::Value* pred, DType dt, ir::Evict ev);
Regs realigned_elements(Codegen& cg, const RealignedChunks& c, DType dt);
// `w.n` words at ptr where pred holds (null: always); elsewhere `fill` (empty: zeros).
// Never undefined: ptxas took a predicated-off load's undefined registers for the loaded
// value and forwarded them to a later load of the same address (bench/NOTES.md).
std::vector<llvm::Value*> load_words(Codegen& cg, llvm::Value* ptr, llvm::Value* pred,
                                     const std::vector<llvm::Value*>& fill, const Words& w, ir::Evict ev);
void realigned_store(Codegen& cg, llvm::Value* ptr, const Regs& vals, const Regs& mask, llvm::Value* owner, DType dt,
                     ir::Evict ev);
// The elements of a run from its words (to_words undone).
Regs from_words(Codegen& cg, const std::vector<llvm::Value*>& words, DType dt, int vec, const Words& w);
// `a && b`, either null meaning true.
inline llvm::Value* and_pred(Codegen& cg, llvm::Value* a, llvm::Value* b) {
  if (!a) return b;
  if (!b) return a;
  return cg.b.CreateAnd(a, b);
}

// Accesses whose mask is tested per run at run time (lower_checked.cpp). `interval`:
// interval_on_runs holds for the mask (a run is whole iff its first and last elements
// are valid). The loads' results are set by Codegen::defer_load.
bool interval_on_runs(const GpuPlan& plan, const ir::Value* m, int dim, int vec);
// Whether checked load `op` reads whole the runs its `readable` operand allows (it has one,
// constant over each run; TILEFUSE_READABLE=0 turns this off).
bool reads_runs_whole(const GpuPlan& plan, const ir::Op& op);
void checked_loads(Codegen& cg, const ir::Value* result, const Regs& ptrs, const Regs& mask, const Regs& other,
                   int vec, bool interval, DType dt, ir::Evict ev);
// `readable`: per element, constant over each run; where it holds the run is read whole.
void readable_checked_loads(Codegen& cg, const ir::Value* result, const Regs& ptrs, const Regs& mask,
                            const Regs& other, const Regs& readable, int vec, bool interval, DType dt, ir::Evict ev);
// Staged checked loads (lower_async_copy.cpp; their fill is zero): whether the copies move
// the run at `r` whole (all valid, or readable), and the read-back runs' words (`words`,
// zero where not copied) finished as readable_checked_loads finishes its runs.
llvm::Value* staged_run_copied(Codegen& cg, const Regs& mask, const Regs& readable, int r, int vec, bool interval);
Regs finish_staged_checked(Codegen& cg, const Regs& ptrs, const Regs& mask, const Regs& readable,
                           const std::vector<std::vector<llvm::Value*>>& words, int vec, bool interval, DType dt,
                           ir::Evict ev);
void checked_realigned_loads(Codegen& cg, const ir::Value* result, const Regs& ptrs, const Regs& mask,
                             const Regs& other, int vec, DType dt, ir::Evict ev);
// `owner` (null: every thread) stores; runs whose index has a bit of `dup_regs` are
// copies held elsewhere and skipped.
void checked_stores(Codegen& cg, const Regs& ptrs, const Regs& vals, const Regs& mask, llvm::Value* owner,
                    uint32_t dup_regs, int vec, bool interval, DType dt, ir::Evict ev);

}  // namespace tilefuse::nvptx
