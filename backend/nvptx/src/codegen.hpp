#pragma once
// Internal: the state of lowering one planned kernel to LLVM IR. Each tile value lives
// as one LLVM value per register of its layout (scalars: one value, the same in every
// thread). The per-family lowering files (lower_*.cpp) add instructions through it.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "target_info.hpp"
#include "tilefuse/nvptx/shared_encoding.hpp"
#include "tilefuse/nvptx/gpu_plan.hpp"

namespace tilefuse::nvptx {

using Regs = std::vector<llvm::Value*>;

// The most programs a hardware thread-block cluster holds (16 on Hopper, with the
// non-portable opt-in); larger clusters exchange through memory.
inline constexpr int kMaxHardwareCluster = 16;

// Where a memory cluster's exchange keeps its state within one cluster's block of the
// workspace (lower_cluster_memory.cpp): per reduction group (its first op) the byte
// offset of its two arrival counters, per reduction op that of its slots.
struct MemoryClusterLayout {
  std::unordered_map<const ir::Op*, int64_t> counters, slots;
  int64_t bytes = 0;  // one cluster's block; 0 when the kernel never exchanges
};

class Codegen {
 public:
  Codegen(llvm::LLVMContext& ctx, llvm::Module& mod, const ir::Function& fn, const GpuPlan& plan,
          const TargetInfo& ti);

  llvm::LLVMContext& ctx;
  llvm::Module& mod;
  llvm::IRBuilder<> b;
  const ir::Function& fn;
  const GpuPlan& plan;
  const TargetInfo& ti;
  llvm::Function* kernel = nullptr;
  bool fast_math = false;
  // Warp-specialized kernels with two consumer warpgroups (lower_tma.cpp): their wgmma
  // issues take turns, so one warpgroup's softmax runs while the other's MMAs do.
  bool pingpong = false;
  bool turn_held = false;  // this warpgroup holds its turn (it issued MMAs since its last wait)
  // The kernel start arrived on the cluster barrier after initializing the cluster
  // reductions' mbarriers; the first cluster reduction waits on it.
  bool cluster_start_wait = false;
  // Memory clusters (GpuPlan::clusters_in_memory): the exchange's layout, this program's
  // rank and its cluster's block of the workspace (a global pointer).
  std::shared_ptr<const MemoryClusterLayout> memory_clusters;
  llvm::Value* cluster_rank = nullptr;
  llvm::Value* cluster_block = nullptr;
  // A counter that starts at 0 in every thread at kernel entry (a stack slot LLVM keeps
  // in a register): how often a cluster reduction inside a loop has run so far.
  llvm::Value* entry_counter(const ir::Op* key);

  // Programmatic dependent launch (sm_90+; lower_kernel.cpp): whether this launch's grid
  // is small enough to take part (an i1 computed at entry, null when the kernel never
  // does), the op after which the kernel lets the next kernel in its stream launch (null:
  // when it exits), and that instruction.
  llvm::Value* early_launch = nullptr;
  const ir::Op* launch_dependents_after = nullptr;
  void launch_dependents();

  // Builds the kernel function (signature, entry block, annotations) and lowers the body.
  void lower_kernel();

  // --- values ---
  const Regs& regs(const ir::Value* v) const;
  void set(const ir::Value* v, Regs r);
  llvm::Value* scalar(const ir::Value* v) const { return regs(v).at(0); }
  // Operand i of op in the layout the plan requires (converting or rematerializing).
  Regs operand(const ir::Op& op, int i);
  // Registers of `v` in layout `to` (a conversion when its layout differs).
  Regs in_layout(const ir::Value* v, const LinearLayout& to, int smem_offset);
  // in_layout in two halves, so that several conversions share one barrier: stage()
  // stores `v` to shared memory when the conversion needs it (setting `wrote`) and
  // returns the reader, to call after smem_after_write() when anything was written.
  std::function<Regs()> stage(const ir::Value* v, const LinearLayout& to, int smem_offset, bool& wrote);
  // Converted copies made before a loop of values the loop only reads (dot operands):
  // found by stage()/in_layout instead of converting again in every iteration.
  void hoist(const ir::Value* v, const LinearLayout& to, Regs r) { hoisted_.push_back({v, to, std::move(r)}); }
  bool is_hoisted(const ir::Value* v, const LinearLayout& to) const { return find_hoisted(v, to) != nullptr; }
  // Hoisted copies are valid only where their definition dominates: regions drop the
  // ones made inside them when they end.
  size_t hoisted_mark() const { return hoisted_.size(); }
  void hoisted_reset(size_t mark) { hoisted_.resize(std::min(mark, hoisted_.size())); }

  // --- cp.async copies (lower_async_copy.cpp) ---
  // Byte offset (i32) of the shared buffer holding the current iteration's copy of an
  // async load, and the copies issued so far in the block being lowered.
  std::unordered_map<const ir::Op*, llvm::Value*> async_base;
  std::unordered_map<const ir::Block*, int> async_issued;
  // cp.async copies made before a loop that reads them, already waited for at an earlier
  // loop's entry (lower_for): a later loop reading only those needs no wait or barrier.
  std::unordered_set<const ir::Op*> copies_awaited;
  // A pipelined loop being lowered: where this iteration's copies go, and the
  // induction variable of the iteration they are for.
  struct PipelineState {
    llvm::Value* iv_ahead = nullptr;     // iv + (stages - 1) * step
    llvm::Value* in_range = nullptr;     // iv_ahead < hi
    std::unordered_map<const ir::Op*, llvm::Value*> write_base;
    llvm::Value* write_slot = nullptr;   // the stage those copies fill
    llvm::Value* release_ok = nullptr;   // warp-specialized: that stage was read before
    // A CTA barrier was passed in this iteration: every buffer the copies issued ahead
    // refill (those of iteration i - 1 - lag) is free from there on.
    bool barrier_passed = false;
  };
  // TMA loads of the pipelined loop being lowered: this iteration's stage and the
  // phase parity its mbarrier completes with (lower_tma.cpp).
  std::unordered_map<const ir::Op*, std::pair<llvm::Value*, llvm::Value*>> tma_wait_at;
  // Warp-specialized: the stage and phase the next producer loop's ring starts at.
  std::pair<llvm::Value*, llvm::Value*> ring_position{nullptr, nullptr};
  std::unordered_map<const ir::Block*, PipelineState> pipeline_state;
  // Persistent kernels (lower_persistent.cpp): the program the current iteration of the
  // programs' loop runs (x, y, z), the grid's sizes, and the next program this thread
  // block runs (flat index; may be past the grid's end).
  llvm::Value* program[3] = {nullptr, nullptr, nullptr};
  llvm::Value* grid_size[3] = {nullptr, nullptr, nullptr};
  llvm::Value* next_program = nullptr;
  // The parity of the programs this thread block ran before the current one (the phase
  // a producer copy's barriers complete with); null outside the programs' loop.
  llvm::Value* program_parity = nullptr;
  llvm::Value* program_pair_parity = nullptr;  // the same for pairs of programs
  // Lowers `ops` again (for another program, another iteration), runs `use`, then
  // restores every value they overwrote.
  void reevaluate(const std::vector<const ir::Op*>& ops, const std::function<void()>& use);
  // Lowers the ops of `slice` again with the induction variable `iv_arg` bound to
  // `iv`, then restores every value: the registers of `v` for that iteration.
  Regs at_iteration(const std::vector<const ir::Op*>& slice, const ir::Value* iv_arg, llvm::Value* iv,
                    const ir::Op& user, int operand);

  // --- types ---
  llvm::Type* elem_type(const ir::Type& t);  // register type of one element
  llvm::Type* elem_type(DType d);
  llvm::Type* mem_type(DType d);             // in-memory type (i1 is a byte)
  llvm::Type* i32() { return b.getInt32Ty(); }
  llvm::Value* c32(int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }
  llvm::Type* global_ptr_type();
  llvm::Type* shared_ptr_type();

  // --- thread geometry (emitted once in the entry block) ---
  llvm::Value* tid();
  llvm::Value* lane();
  llvm::Value* warp();
  // Tile coordinates of every register of `l`: coords[d][r].
  std::vector<Regs> coords(const LinearLayout& l);
  // Row-major flat index of every register of `l`.
  Regs flat_indices(const LinearLayout& l);
  // i1 that is true in the one thread owning each element of `l` (null: every thread
  // owns its elements exclusively).
  llvm::Value* owner_predicate(const LinearLayout& l);
  // XOR over the set bits of `index` of vals[bit] (the linear map of a layout).
  llvm::Value* linear_map(llvm::Value* index, const std::vector<uint32_t>& vals);

  // --- shared memory and barriers ---
  llvm::Value* smem_addr(int byte_offset, llvm::Value* dyn_bytes = nullptr);
  void barrier();
  void smem_before_write();  // barrier when earlier shared accesses may still be pending
  void smem_after_write();   // barrier: the written data becomes visible to all threads
  void smem_after_read();
  void smem_unknown() { smem_pending_ = true; }
  bool smem_pending() const { return smem_pending_; }
  void set_smem_pending(bool p) { smem_pending_ = p; }
  // Stores `vals` (elements of one tile in layout l) to shared memory at a row-major
  // element offset base + flat index, once per element; loads them back in layout `to`.
  void smem_store_tile(const Regs& vals, const LinearLayout& l, int byte_offset, llvm::Type* ty);
  Regs smem_load_tile(const LinearLayout& to, int byte_offset, llvm::Type* ty, llvm::Value* dyn_base = nullptr);
  // Registers of layout `to` read from a tile stored with `enc` at byte offset base:
  // ldmatrix where the layouts allow (16-bit elements), else vector loads.
  Regs smem_read_encoded(const SharedEncoding& enc, const LinearLayout& to, int byte_offset, llvm::Type* ty,
                         llvm::Value* dyn_base = nullptr);
  // 32-bit shared-memory address of a shared pointer (for inline PTX).
  llvm::Value* shared_addr32(llvm::Value* p);

  // --- helpers ---
  llvm::Function* intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> tys = {});
  llvm::Value* call_intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args,
                              llvm::ArrayRef<llvm::Type*> tys = {});
  llvm::Value* call_libdevice(const std::string& name, llvm::Type* ret, llvm::ArrayRef<llvm::Value*> args);
  llvm::Value* inline_asm(llvm::Type* ret, const std::string& text, const std::string& constraints,
                          llvm::ArrayRef<llvm::Value*> args, bool side_effects);
  // Runs `body` only in threads where pred holds (pred null: everywhere).
  void if_then(llvm::Value* pred, const std::function<void()>& body);
  [[noreturn]] void unsupported(const ir::Op& op, const std::string& what);

  // Lowers every op of a block in order (regions included).
  void lower_block(const ir::Block& block);
  // Lowers one op; the held tiles it reads (OpPlan::held) are read back from shared
  // memory for it alone (lower_held.cpp).
  void lower_op(const ir::Op& op);

  // --- held loads (lower_held.cpp) ---
  // The cp.async group each held load committed (numbered in lowering order), how many
  // were lowered so far, and per block how many are known to have landed for the ops of
  // that block and of the regions below it (a wait in a branch or loop body may not run).
  std::unordered_map<const ir::Op*, int> held_group;
  int held_committed = 0;
  std::unordered_map<const ir::Block*, int> held_landed;
  // Sets the registers of the held tiles (and their casts) op reads; returns them.
  std::vector<const ir::Value*> read_back_held(const ir::Op& op);
  void forget(const std::vector<const ir::Value*>& vs) {
    for (const ir::Value* v : vs) vals_.erase(v);
  }
  bool has_regs(const ir::Value* v) const { return vals_.count(v) != 0; }
  // The rest of a load emitted later (lower_memory.cpp: runs whose mask is tested at run
  // time issue their vector loads first; the element-wise loads of partly valid runs
  // follow), so that the vector loads of consecutive load ops are in flight together:
  // `finish` sets v's registers. Pure element-wise ops reading deferred values are
  // deferred with them; all are emitted, in order, before the first other op that reads
  // one, writes memory or has regions, and at the end of the block.
  void defer_load(const ir::Value* v, std::function<Regs()> finish);
  void finish_loads();
  // Lowers a scalar region (a custom combine) with its arguments bound; returns the
  // yielded values.
  Regs lower_scalar_region(const ir::Block& block, const Regs& args);

 private:
  void setup_thread_ids();
  void lower_op_now(const ir::Op& op);
  llvm::IRBuilderBase::InsertPoint entry_point();

  struct Hoisted {
    const ir::Value* v;
    LinearLayout layout;
    Regs regs;
  };
  const Hoisted* find_hoisted(const ir::Value* v, const LinearLayout& l) const;

  std::unordered_map<const ir::Value*, Regs> vals_;
  std::vector<std::pair<const ir::Value*, std::function<Regs()>>> deferred_loads_;
  std::vector<const ir::Op*> deferred_ops_;
  std::unordered_set<const ir::Value*> deferred_values_;
  std::unordered_map<const ir::Op*, llvm::Value*> counters_;
  std::vector<Hoisted> hoisted_;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::Value* tid_ = nullptr;
  llvm::Value* lane_ = nullptr;
  llvm::Value* warp_ = nullptr;
  llvm::GlobalVariable* smem_ = nullptr;
  bool smem_pending_ = false;
};

// One entry point per op family (lower_<family>.cpp).
void lower_index_op(Codegen& cg, const ir::Op& op);   // program ids, constants, arange, shape ops
void lower_elementwise(Codegen& cg, const ir::Op& op);
// Elementwise op `op` applied register by register to operand registers `in` (a
// single register: a scalar); owner[k] < k reuses register owner[k]'s result.
Regs elementwise_regs(Codegen& cg, const ir::Op& op, const std::vector<Regs>& in, const std::vector<int>& owner = {});
void lower_memory(Codegen& cg, const ir::Op& op);     // load, store
// A held load (OpPlan::held): each thread's copies into its part of the buffer, one
// cp.async group; masked-off runs get the load's `other` by st.shared.
void issue_held_copies(Codegen& cg, const ir::Op& op);
// Before an op that may write memory a held load's copies still read: waits for them all
// and synchronizes the threads (a copy by one thread, a store by another). Branch
// conditions are scalars, the same in every thread, so the barrier is reached by all.
void settle_held_copies(Codegen& cg, const ir::Op& op);
// After op: waits for the copies of held loads whose last reader op is, where no wait on
// every path to here has (their readers sat in its regions), before the buffer is reused.
void finish_held_groups(Codegen& cg, const ir::Op& op);
// A load planned as a cp.async copy (lower_async_copy.cpp): issues this iteration's
// copies, or in a pipelined loop those of the iteration stages - 1 ahead.
void lower_async_load(Codegen& cg, const ir::Op& op);
// Issues the copies of async load `op` into the buffer at byte offset `base`, predicated
// on `pred` too (may be null), and commits the group; `operand_at(i)`: the registers of
// the load's operand i at the iteration copied.
// Byte offsets (from a stage's start) of the runs of staged load `op` this thread copies
// and reads back, one per run at its first register.
Regs staged_offsets(Codegen& cg, const ir::Op& op);
void issue_async_copy(Codegen& cg, const ir::Op& op, const std::function<Regs(int)>& operand_at, llvm::Value* pred,
                      llvm::Value* base);
// TMA copies (lower_tma.cpp): the stages' mbarriers of a pipeline's TMA loads, set up
// before its prologue and invalidated after the loop; the coordinates of load `ld` at
// iteration `iv`; the copies of `ld` into stage `slot` (thread 0, when pred holds); the
// wait for this iteration's stage (Codegen::tma_wait_at).
void init_tma_barriers(Codegen& cg, const GpuPlan::Pipeline& pl);
void inval_tma_barriers(Codegen& cg, const GpuPlan::Pipeline& pl);
Regs tma_coordinates(Codegen& cg, const ir::Op& ld, const std::vector<const ir::Op*>& slice,
                     const ir::Value* iv_arg, llvm::Value* iv);
// `issuer`: the thread that copies (null: thread 0).
void issue_tma_copy(Codegen& cg, const ir::Op& ld, const Regs& coords, llvm::Value* pred, llvm::Value* slot,
                    llvm::Value* issuer = nullptr);
// Warp-specialized kernels: each consumer warp's release of a stage of `ld` (its MMAs
// have read it) when pred holds; and at kernel entry, the barriers' setup and the
// producer warpgroup's branch (its first thread runs the copy loop, then all return).
void release_tma_stage(Codegen& cg, const ir::Op& ld, llvm::Value* slot, llvm::Value* pred);
void split_producer(Codegen& cg);
// The producer's one-block copies (GpuPlan::producer_copies), consumer side: where the
// copy lands and the phase its barrier completes with (the load lowers to nothing
// else); and at a persistent program's end, their buffers handed back to the producer.
void expect_producer_copy(Codegen& cg, const ir::Op& ld);
void release_producer_copies(Codegen& cg);
llvm::Value* program_parity(Codegen& cg);  // Codegen::program_parity, 0 outside the programs' loop
// The buffer and phase parity of producer copy `ld` in the current program.
std::pair<llvm::Value*, llvm::Value*> producer_copy_stage(Codegen& cg, const ir::Op& ld);
// Ping-pong turns (Codegen::pingpong): a warpgroup takes its turn before it issues MMAs
// and passes it on before it next waits for MMA results (or leaves a loop body or a
// branch: the state must agree on every path); at the end warpgroup 0 consumes the last
// hand-over so that the named barriers end balanced. No-ops when not ping-ponging.
void pingpong_start(Codegen& cg);  // after split_producer, in the consumers
void pingpong_take_turn(Codegen& cg);
void pingpong_pass_turn(Codegen& cg);
void pingpong_finish(Codegen& cg);
// At a producer loop's exit: releases the stages of its last iterations, whose MMAs were
// still reading them when the loop released the others (iv, slot: those of the exit).
void release_remaining_stages(Codegen& cg, const ir::Op& loop, llvm::Value* iv, llvm::Value* slot);
// The stage after `slot` in a ring of `stages`, and the phase parity it completes with.
std::pair<llvm::Value*, llvm::Value*> next_stage(Codegen& cg, llvm::Value* slot, llvm::Value* phase, int stages);
void wait_tma_copy(Codegen& cg, const ir::Op& ld);
// Early-release loops (GpuPlan::early_release_loops): after the MMA wait before `at`,
// each consumer warp releases the stages of the TMA loads the completed dots read.
void release_completed_stages(Codegen& cg, const ir::Op& at);
// A view store TMA writes (GpuPlan::tma_stores; lower_tma_store.cpp): `vals`, the
// block in the store's value layout, leaves through shared memory.
void lower_tma_store(Codegen& cg, const ir::Op& op, const Regs& vals);
// A store's value runs written by st.global, as its plan says (lower_memory.cpp).
void plain_stores(Codegen& cg, const ir::Op& op, const Regs& ptrs, const Regs& vals, const Regs& mask);
// cp.async.wait_group n before a dot reads async operands of this iteration.
void wait_async_copies(Codegen& cg, const ir::Op& dot);
// After that dot's barrier: the pipelined copies it issues (OpPlan::issue_at).
void issue_deferred_copies(Codegen& cg, const ir::Op& dot);
void lower_atomic(Codegen& cg, const ir::Op& op);
void lower_reduce(Codegen& cg, const ir::Op& op);
void lower_scan(Codegen& cg, const ir::Op& op);
void lower_dot(Codegen& cg, const ir::Op& op);
void lower_wgmma(Codegen& cg, const ir::Op& op);     // a dot planned for wgmma (sm_90a)
// wgmma.wait_group `pending`, the accumulator registers threaded through it (so their
// uses stay after it); thread_through does the same for any instruction text.
Regs wgmma_wait(Codegen& cg, int pending, const Regs& acc);
Regs thread_through(Codegen& cg, const std::string& text, const Regs& vals);
void lower_cluster_reduce(Codegen& cg, const ir::Op& op);  // lower_cluster.cpp
// The kernel's top-level loop over the grid (lower_kernel.cpp; see launch_dependents_after).
const ir::Op* grid_stride_loop(const ir::Function& fn);
// The largest grid (in blocks) that takes part in programmatic dependent launch on this
// target (0: none; TILEFUSE_PDL=0, or before sm_90): CompiledKernel::early_launch_max_blocks.
uint32_t early_launch_max_blocks(const TargetInfo& ti);
// At kernel start: initializes the mbarrier of every cluster reduction (lower_cluster.cpp).
void init_cluster_reductions(Codegen& cg);
// Memory clusters (lower_cluster_memory.cpp): whether f's clusters are, their workspace
// layout, the kernel start (program ticket, rank, cluster block), one exchange for the
// reduction group `ops` led by op, and the kernel end (the last program zeroes the counters).
bool clusters_in_memory(const ir::Function& f, const Target& t);
MemoryClusterLayout memory_cluster_layout(const ir::Function& f, const GpuPlan& plan);
void init_memory_clusters(Codegen& cg);
void lower_cluster_reduce_in_memory(Codegen& cg, const ir::Op& op, const std::vector<const ir::Op*>& ops);
void finish_memory_clusters(Codegen& cg);
// In a whole warp (all 32 lanes): polls the i32 at global `ptr` with acquire loads until
// every lane saw it at least `target` (wrapping: seen - target >= 0), the warp leaving
// together (vote), so it reaches a CTA barrier after it converged; returns the value seen.
// `relaxed`: relaxed loads (no ordering but the counter's own), of an i64 with `wide`.
llvm::Value* poll_until_at_least(Codegen& cg, llvm::Value* ptr, llvm::Value* target, bool wrapping,
                                 bool relaxed = false, bool wide = false);

void lower_control(Codegen& cg, const ir::Op& op);    // for, if
// Persistent kernels (lower_persistent.cpp): the kernel body inside a loop over the
// programs of the grid; and at the exit of GpuPlan::prefetch_loop, the copies of the
// next program's first iterations into the ring's next stages (slot onwards).
void lower_persistent_body(Codegen& cg);
void prefetch_next_program(Codegen& cg, llvm::Value* slot);
// The grid's sizes from the hidden parameters (once), their product (the programs), and
// program_id bound to the coordinates of flat program index t (x fastest).
void bind_grid_sizes(Codegen& cg);
llvm::Value* grid_programs(Codegen& cg);
void bind_program(Codegen& cg, llvm::Value* t);
// A loop over the grid's programs t = start, start + stride, ... (below grid_programs)
// carrying a ring position (stage, phase) from (0, 0): `program` lowers one with
// program_id bound to t and returns the position after it. Afterwards program_id is unbound.
using Ring = std::pair<llvm::Value*, llvm::Value*>;
void loop_over_programs(Codegen& cg, llvm::Value* start, llvm::Value* stride, const std::string& name,
                        const std::function<Ring(llvm::Value* t, Ring ring)>& program);
// The copies of iterations 0 .. ahead-1 of TMA pipeline `loop` (bounds lo, hi, step),
// into stages first_slot, first_slot + 1, ... of its ring, when `valid` holds too.
void issue_tma_prologue(Codegen& cg, const ir::Op& loop, llvm::Value* lo, llvm::Value* hi, llvm::Value* step,
                        llvm::Value* first_slot, llvm::Value* valid);
// Recomputes a constant/splat/arange tile directly in another layout.
Regs rematerialize(Codegen& cg, const ir::Value* v, const LinearLayout& l);
// The registers of view op `op`'s result in layout `dst`, from its operand's registers
// in view_source_layout(op, dst).
Regs view_regs(Codegen& cg, const ir::Op& op, const Regs& src, const LinearLayout& src_layout,
               const LinearLayout& dst);
// Unary math on one element (libdevice, nvvm approximations, or plain LLVM).
llvm::Value* lower_unary_math(Codegen& cg, ir::UnaryOp op, llvm::Value* x, DType dt, bool approx);
// x / y in f32 by div.approx (fast math); .ftz under TILEFUSE_APPROX_FTZ (lower_math.cpp).
llvm::Value* approx_div_f32(Codegen& cg, llvm::Value* x, llvm::Value* y);
// Element conversion between dtypes.
llvm::Value* convert_element(Codegen& cg, llvm::Value* x, DType from, DType to);
// 8-bit floats (i8 registers) to f32 and back (lower_float8.cpp; the latter needs sm_89+),
// and the bit pattern of a constant.
llvm::Value* float8_to_f32(Codegen& cg, llvm::Value* byte, DType from);
llvm::Value* f32_to_float8(Codegen& cg, llvm::Value* x, DType to);
uint8_t float8_bits(double v, DType d);
// v from lane (lane ^ mask) of the warp (shfl.sync.bfly; any type of 8 to 64 bits).
llvm::Value* shuffle_xor(Codegen& cg, llvm::Value* v, uint32_t mask);
// A binary combine of two elements (shared by elementwise ops and reductions).
llvm::Value* binary_element(Codegen& cg, ir::BinaryOp op, llvm::Value* x, llvm::Value* y, DType dt);

}  // namespace tilefuse::nvptx
