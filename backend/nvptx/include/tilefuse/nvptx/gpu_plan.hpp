#pragma once
// The GPU passes' results, kept beside the (unchanged) tile IR: a layout for every
// tile value, the layout each op needs for each operand (a difference is a layout
// conversion), vector widths of memory ops, and shared-memory scratch per op.
// Produced by plan_kernel(); consumed by the LLVM lowering; printed by dump_plan().
#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tilefuse/ir/ir.hpp"
#include "tilefuse/nvptx/axis_info.hpp"
#include "tilefuse/nvptx/compiled_kernel.hpp"
#include "tilefuse/nvptx/linear_layout.hpp"
#include "tilefuse/nvptx/mma_layout.hpp"
#include "tilefuse/nvptx/shared_encoding.hpp"

namespace tilefuse::nvptx {

// An interned layout: equal layouts are the same object, so pointer equality is layout
// equality. `desc` names the family it was built as (blocked{...}, slice{...}, ...).
struct LayoutEntry {
  LinearLayout ll;
  std::string desc;
  int id = 0;
};
using LayoutRef = const LayoutEntry*;

struct OpPlan {
  std::vector<LayoutRef> operands;  // required layout per operand; null for scalars
  // Load/Store: elements per access along `fast_dim` (1 = scalar accesses).
  int vec = 1;
  int fast_dim = -1;
  // Load/Store: the runs' start is not known to be 16-byte aligned (or the mask may
  // change inside a run); each run of `vec` elements (16 bytes) still moves as aligned
  // 16-byte chunks, realigned in registers (lower_realigned.cpp). `aligned_vec` is the
  // width plain accesses would have (what cp.async copies use).
  bool realign = false;
  int aligned_vec = 1;
  // Load/Store: runs known to be aligned whose mask may change inside a run (a row
  // indexed from its rounded-down start): each run tests its mask at run time and moves
  // as one vector when all of it is valid, element by element when only part is, not
  // at all when none is (lower_memory.cpp). `aligned_vec` keeps the mask-limited width.
  bool checked = false;
  // Shared-memory scratch this op uses while it runs (conversions, reductions, dot).
  int smem_offset = 0;
  int smem_bytes = 0;
  // A TMA copy's mbarriers (full, then empty, per stage): a small buffer of their own, so
  // the 1024-aligned stages are not padded out by 32 bytes of barriers each.
  int barrier_offset = 0;
  // Dot: on tensor cores (mma.sync m16n8k16) with this warp tiling; else the FMA path.
  bool mma = false;
  MmaTiling mma_tiling;
  MmaKind mma_kind = MmaKind::F16;
  // Dot on Hopper's warpgroup MMA (mma is set too): operands that an async copy put in
  // shared memory are read there by descriptor (wgmma_smem_source); otherwise A comes
  // from registers and B is staged into this op's scratch.
  bool wgmma = false;
  WgmmaTiling wgmma_tiling;
  // The dot's wgmma group is left in flight: its result is waited for where it is
  // first read (GpuPlan::wgmma_waits), so the MMAs overlap what comes in between.
  bool wgmma_defer = false;
  // Load that only feeds tensor-core dots: copied global -> shared memory by cp.async
  // (no registers), into `stages` buffers; stages > 1 when software-pipelined over its
  // loop (the copies of iteration i + stages - 1 are issued in iteration i).
  // async_index is its 1-based position among the `async_count` async loads of its block.
  // Pipelined copies are issued by their first dot, right after its wait and barrier
  // (that barrier also ends the previous iteration's reads of the buffer they refill);
  // async_index then counts in that issue order.
  bool async_copy = false;
  // An async load read into registers (no dot reads it): a load of a pipelined loop
  // whose copies run `ahead` iterations early into shared memory, each thread copying
  // the runs it later reads back itself (no barrier; cp.async.wait_group suffices).
  // Chosen when num_stages > 1 asks for a pipeline (see async_copy.cpp).
  bool staged = false;
  int stages = 1;
  int ahead = 0;  // pipelined: iterations ahead its copies are issued (stages - 1 - lag)
  int async_index = 0, async_count = 0;
  const ir::Op* issue_at = nullptr;
  // An async load of a tensor-view block moved by the TMA engine (sm_90): one bulk tensor
  // copy per 128-byte column block of the tile, through hidden kernel parameter
  // GpuPlan::tensor_maps[tma_map], completing on one mbarrier per stage that sits after
  // the stages' buffers (see tma_plan.cpp). It commits no cp.async group.
  int tma_map = -1;
  // A view load whose mask changes inside its 16-byte runs (an odd extent): cp.async
  // cannot copy it, TMA can (it bounds-checks by element). Planned as an async copy only
  // where TMA will move it (tma_view_possible); never a cp.async.
  bool tma_only = false;
  // A load outside loops kept in shared memory (DSL Cache::KeepInShared, held_loads.cpp):
  // each thread cp.async-copies the runs it would hold into its own part of a buffer
  // (masked-off runs get `other` by st.shared), and every reader of the tile reads them
  // back there (lower_held.cpp), so no registers hold it between its uses. held_index:
  // its position among the kernel's held loads, in issue order.
  bool held = false;
  int held_index = 0;
};

struct GpuPlan {
  AxisInfoMap axis;
  std::unordered_map<const ir::Value*, LayoutRef> layouts;
  std::unordered_map<const ir::Op*, OpPlan> ops;
  std::deque<LayoutEntry> pool;
  // Shape-op results no consumer asked a layout of: produced on demand, directly in
  // each consumer's layout, never on their own.
  std::unordered_set<const ir::Value*> lazy;
  // Consecutive sibling reductions lowered together, sharing one exchange (one barrier
  // round trip between warps, one between the programs of a cluster): each group's
  // first op maps to all its ops, every other member to the first.
  std::unordered_map<const ir::Op*, std::vector<const ir::Op*>> reduce_groups;
  std::unordered_map<const ir::Op*, const ir::Op*> reduce_group_leader;
  int shared_bytes = 0;
  int num_warps = 4;
  // The kernel's cluster (Function::cluster_size > 1) is one the hardware does not hold
  // (more than 16 programs, or a target before sm_90): its reductions exchange through
  // global memory (lower_cluster_memory.cpp), and its programs need no shared slots.
  bool clusters_in_memory = false;
  // Async loads (see OpPlan::async_copy): the dots reading each one, and per pipelined
  // loop its loads in body order with the body ops that compute their addresses.
  std::unordered_map<const ir::Op*, std::vector<const ir::Op*>> async_users;
  struct Pipeline {
    std::vector<const ir::Op*> loads;
    std::vector<const ir::Op*> slice;  // body ops the loads' operands depend on, in order
    int stages = 1;
    // Iterations whose MMAs may still read their buffers when an iteration starts
    // (MMAs left in flight across the back edge): copies run stages - 1 - lag ahead.
    int lag = 0;
    int ahead() const { return stages - 1 - lag; }
  };
  std::unordered_map<const ir::Op*, Pipeline> pipelines;  // For op -> its pipeline
  // Waits for deferred wgmma groups (OpPlan::wgmma_defer), before the op they precede:
  // wgmma.wait_group `pending`, the registers of `values` threaded through it.
  struct WgmmaWait {
    std::vector<const ir::Value*> values;
    int pending = 0;
  };
  std::unordered_map<const ir::Op*, WgmmaWait> wgmma_waits;
  // Loops whose results (indices) are still being computed by MMAs at the exit.
  std::unordered_map<const ir::Op*, std::vector<int>> wgmma_exit_waits;
  // Loops whose dots read copies issued before the loop (wgmma A operands): the loop
  // waits for those once, after its prologue.
  std::unordered_set<const ir::Op*> loops_reading_copies;
  // TMA descriptors the launch encodes (OpPlan::tma_map indexes them).
  std::vector<TensorMapSpec> tensor_maps;
  // View stores written by TMA (find_tma_stores), in body order: the block goes to
  // shared memory in its own (accumulator) layout, swizzled as the box, and thread 0
  // copies it out with cp.async.bulk.tensor (lower_tma.cpp). `allow_tma_stores` false:
  // plain stores (when their staging buffer does not fit).
  std::vector<const ir::Op*> tma_stores;
  bool allow_tma_stores = true;
  bool is_tma_store(const ir::Op* o) const {
    return std::find(tma_stores.begin(), tma_stores.end(), o) != tma_stores.end();
  }
  // Warp specialization (tma_plan.cpp): one more warpgroup, the producer, whose first
  // thread issues every TMA copy of the `producer_loops` (top-level, in body order),
  // waiting on each stage's "empty" mbarrier, while the num_warps consumer warps run the
  // kernel, wait on the "full" barriers and release each stage when their MMAs have read
  // it. The consumers synchronize among themselves with a named barrier. The loops'
  // i-th loads share one ring of stages (the first loop's buffers and barriers, see
  // `ring_leader`), its stage and phase carried from loop to loop. `producer_ops` are the
  // top-level scalar ops the copies' coordinates and the loops' bounds depend on.
  std::vector<const ir::Op*> producer_loops;
  std::vector<const ir::Op*> producer_ops;
  std::unordered_map<const ir::Op*, const ir::Op*> ring_leader;  // later loops' loads -> first loop's
  bool warp_specialized() const { return !producer_loops.empty(); }
  // Top-level view loads of one block (outside loops, read by warpgroup MMAs) that the
  // producer copies by TMA too, after the copies of the first `after_loops` producer
  // loops (body order): attention's last P.V-behind V block lands while the consumers
  // still run the key loop, and they wait on its mbarrier instead of copying it and
  // meeting at a barrier. One buffer each, live from kernel entry; persistent kernels
  // release it at the program's end (its "empty" mbarrier) and copy the next program's
  // then; a copy before the first producer loop there has two buffers (OpPlan::stages
  // = 2), used by the programs in turn, else it would hold back the next program's ring
  // copies until this program ends.
  struct ProducerCopy {
    const ir::Op* load;
    int after_loops;
  };
  std::vector<ProducerCopy> producer_copies;
  bool allow_producer_copies = true;  // false: where their buffers do not fit (compiler.cpp)
  bool allow_two_buffer_copies = true;  // false: persistent copies before the loops stay the consumers'
  bool is_producer_copy(const ir::Op* ld) const {
    for (const ProducerCopy& c : producer_copies)
      if (c.load == ld) return true;
    return false;
  }
  // f32 tiles computed where the program computes them (wgmma_waits.cpp).
  std::unordered_set<const ir::Value*> pinned;
  // Two consumer warpgroups take turns issuing their MMAs (lower_pingpong.cpp).
  bool pingpong = false;
  // Warp-specialized loops whose stages go back to the producer as soon as the MMAs
  // reading them complete (wgmma_waits.cpp): the wait before op X completes the dots
  // `wgmma_releases[X]`, whose TMA stages the consumers release right there, rather
  // than at the next iteration's issue of those dots (FlashAttention-3 releases K after
  // Q.K^T's wait, before the softmax).
  std::unordered_set<const ir::Op*> early_release_loops;
  std::unordered_map<const ir::Op*, std::vector<const ir::Op*>> wgmma_releases;
  // Persistent kernels (Function::persistent) whose one pipelined loop copies by TMA
  // only: its stages and barriers live for the whole kernel, their ring continues from
  // program to program, and at the loop's exit thread 0 issues the first copies of the
  // next program's loop (evaluating `prefetch_ops`, the top-level scalar ops its
  // coordinates and bounds depend on, for that program) before this one's epilogue.
  const ir::Op* prefetch_loop = nullptr;
  // Stores of dot results keep the accumulator's layout (no conversion scratch): chosen
  // for persistent kernels whose ring and conversion scratch together do not fit.
  bool accumulator_stores = false;
  std::vector<const ir::Op*> prefetch_ops;
  // Loads of loop bodies other than dot operands may be staged (async_copy.cpp); false
  // where their buffers do not fit beside the rest (the dots' copies keep theirs).
  bool stage_loads = true;
  // Loads asking to be kept in shared memory may be (held_loads.cpp); false where their
  // buffers do not fit. held_casts: casts of held tiles, computed again at each reader
  // from the tile read back; held_last_reader: per held load, the op of its block whose
  // lowering (regions included) reads it last (its buffer is live until then).
  bool hold_loads = true;
  std::unordered_set<const ir::Op*> held_casts;
  std::unordered_map<const ir::Op*, const ir::Op*> held_last_reader;
  bool any_held() const { return !held_last_reader.empty(); }
  bool any_staged() const {
    for (const auto& [op, p] : ops)
      if (p.staged) return true;
    return false;
  }

  LayoutRef intern(const LinearLayout& ll, const std::string& desc);
  LayoutRef layout(const ir::Value* v) const;  // null for scalars
  const OpPlan& op(const ir::Op* o) const;
  OpPlan& op(const ir::Op* o) { return ops[o]; }
};

// Pass 1: axis info. Pass 2: layouts (coalescing anchors, backward propagation of wanted
// layouts, forward assignment) and memory-op vector widths.
void assign_layouts(const ir::Function& f, const Target& t, GpuPlan& plan);
// Pass 3: groups of adjacent sibling reductions with the same operand layout (Reduce)
// or adjacent in one block (ClusterReduce); see GpuPlan::reduce_groups.
void group_reductions(const ir::Function& f, GpuPlan& plan);
// Pass 3b: loads that only feed tensor-core dots become cp.async copies, pipelined over
// their loop with f.num_stages buffers when their addresses depend only on the
// induction variable and loop-invariant values (see OpPlan::async_copy).
void plan_async_copies(const ir::Function& f, const Target& t, GpuPlan& plan);
// Pass 3c: loads outside loops that ask to be kept in shared memory (OpPlan::held), where
// their runs move as aligned 4-16 byte pieces and every reader can read them back.
void plan_held_loads(const ir::Function& f, const Target& t, GpuPlan& plan);
// Bytes of held load `ld`'s buffer: every thread's registers of the tile.
int held_buffer_bytes(const GpuPlan& plan, const ir::Op* ld);
// The shared-memory encoding of async load `ld`'s buffer (one pipeline stage), and the
// bytes of one stage (a multiple of 1024 when a wgmma reads it: its swizzle works on
// absolute address bits).
SharedEncoding async_encoding(const GpuPlan& plan, const ir::Op* ld);
int async_stage_bytes(const GpuPlan& plan, const ir::Op* ld);
// The async load holding dot operand `v` in shared memory: v's own load, or the load v
// transposes; null when v is not a copy.
const ir::Op* async_source(const GpuPlan& plan, const ir::Value* v);
// The async load whose buffer a wgmma dot reads operand `v` (`operand` 0: A, 1: B) from
// by descriptor: v's own load or the load v transposes, when its swizzle is one a
// descriptor can name (and, for 8-bit floats, K is contiguous); null when v must come
// from registers (A) or be staged (B).
const ir::Op* wgmma_smem_source(const GpuPlan& plan, const ir::Value* v, int operand);
// Whether any reader of async load `ld` is a wgmma dot.
bool read_by_wgmma(const GpuPlan& plan, const ir::Op* ld);
// Pass 3b': pipelined async loads of tensor-view blocks that TMA can move (sm_90,
// wgmma readers, view described by kernel arguments and constants, 16-byte strides):
// sets OpPlan::tma_map and renumbers the remaining cp.async loads' groups.
void plan_tma_copies(const ir::Function& f, const Target& t, GpuPlan& plan);
// Whether TMA can move view load `ld`'s block once it is a pipelined copy read by
// warpgroup MMAs (everything tma_spec checks that does not depend on the pipeline).
bool tma_view_possible(const ir::Function& f, const Target& t, const GpuPlan& plan, const ir::Op* ld);
// Pass 1b (before layouts): the view stores TMA can write on this target
// (GpuPlan::tma_stores); plan_tma_copies gives them their tensor maps.
void find_tma_stores(const ir::Function& f, const Target& t, GpuPlan& plan);
// Bytes of the mbarriers after a TMA load's stage buffers (0 for other loads): a "full"
// barrier per stage, then (warp-specialized) an "empty" one per stage.
int tma_barrier_bytes(const GpuPlan& plan, const ir::Op* ld);
// Pass 3c: which wgmma groups stay in flight past their dot and where they are waited
// for (top-level dots of a loop body; see wgmma_waits.cpp).
void plan_wgmma_waits(const ir::Function& f, GpuPlan& plan);
// Pass 4: shared-memory scratch sizes and a liveness-based allocation of offsets.
void allocate_shared_memory(const ir::Function& f, GpuPlan& plan);
// Shared memory of one cluster reduction of `values` numbers per program: two sets of a
// slot per program for each value + an mbarrier.
int cluster_reduce_smem_bytes(int cluster_size, int values = 1);
// Shared memory of a cluster reduction of a tile (smem_alloc.cpp).
int cluster_tile_smem_bytes(const GpuPlan& plan, const ir::Op& op);
// All four, in order.
GpuPlan plan_kernel(const ir::Function& f, const Target& t);

// The tile IR annotated with layouts, conversions, vector widths and shared memory.
std::string dump_plan(const ir::Function& f, const GpuPlan& plan);

// A value whose op can be recomputed in any layout instead of converted.
bool is_rematerializable(const ir::Value* v);
// Shape ops (broadcast, expand_dims, reshape, trans) only relabel registers: a value
// they produce is obtained in another layout by converting their operand instead.
bool is_view_op(ir::OpKind k);
// The layout the operand of view op `op` must have for its result to have layout `to`.
LinearLayout view_source_layout(const ir::Op& op, const LinearLayout& to);
// Whether `v` is defined in `region` or in a region nested in it.
bool defined_within(const ir::Value* v, const ir::Block& region);
// Elementwise and shape ops over constants, aranges, splats and scalars (masks and
// index tiles, a few ops deep): recomputed in another layout instead of converted.
bool cheap_to_recompute(const ir::Value* v, int depth = 0);
// Every thread already holds the elements `to` gives it (a register renaming).
bool register_only(const LinearLayout& from, const LinearLayout& to);
// Whether giving `v` the layout `to` needs a round trip through shared memory (after
// rematerializing constants and looking through view ops).
bool conversion_needs_smem(const GpuPlan& plan, const ir::Value* v, const LinearLayout& to);
// Bytes of one element in registers spilled to shared memory (i1 -> 1, pointers -> 8).
int smem_elem_bytes(const ir::Type& t);

// The coalesced layout family the planner gives memory ops and the FMA-dot layout, for
// tests and for the planner itself.
Blocked dot_fma_blocked(int64_t m, int64_t n, int num_warps);

}  // namespace tilefuse::nvptx
