// Shared memory: the scratch each op needs while it runs, placed by a liveness-based
// first-fit allocator (buffers whose live ranges overlap never share bytes). All
// buffers today are op-local scratch; long-lived buffers (pipelining stages) will
// simply have longer live ranges.
#include <algorithm>
#include <limits>

#include "passes.hpp"

namespace tilefuse::nvptx {

using ir::Op;
using ir::OpKind;

int smem_elem_bytes(const ir::Type& t) { return t.is_ptr ? 8 : byte_size(t.dtype); }

DType accumulate_dtype(const ir::Op& op) {
  DType d = op.operand(0)->type.dtype;
  bool sum = op.red() == ir::ReduceKind::Sum;
  return sum && (d == DType::f16 || d == DType::bf16) ? DType::f32 : d;
}

namespace {

int round_up(int v, int a) { return (v + a - 1) / a * a; }

}  // namespace

// Two sets (reductions inside loops alternate between them) of, for each value, a slot
// per program, then an mbarrier.
int cluster_reduce_smem_bytes(int cluster_size, int values) {
  return 2 * (values * round_up(8 * cluster_size, 16) + 16);
}

// Each thread's registers of the tile, register-major (thread t's register r at
// (r / v * threads + t) * v + r % v elements, v-element vectors), for the whole block.
int cluster_tile_smem_bytes(const GpuPlan& plan, const ir::Op& op) {
  const ir::Value* x = op.operand(0);
  return plan.layout(x)->ll.num_regs() * 32 * plan.num_warps * byte_size(x->type.dtype);
}

namespace {
int acc_bytes(const Op& op) { return byte_size(accumulate_dtype(op)); }

int scratch_bytes(const Op& op, const GpuPlan& plan, int cluster_size) {
  if (!op.results.empty() && plan.lazy.count(op.result())) return 0;
  const OpPlan& p = plan.op(&op);
  int bytes = 0;
  auto async_operand = [&](const ir::Value* v) { return async_source(plan, v) != nullptr; };
  for (size_t i = 0; i < p.operands.size() && i < op.operands.size(); ++i) {
    const ir::Value* v = op.operands[i];
    LayoutRef want = p.operands[i];
    if (!want || async_operand(v) || !conversion_needs_smem(plan, v, want->ll)) continue;
    bytes = std::max<int>(bytes, static_cast<int>(v->type.numel()) * smem_elem_bytes(v->type));
  }
  switch (op.kind) {
    case OpKind::Reduce: {
      const ir::Value* x = op.operand(0);
      LayoutRef l = plan.layout(x);
      int warps_on_axis = 1;
      for (uint32_t b : l->ll.warps())
        if (l->ll.coord(b, op.axis) != 0) warps_on_axis *= 2;
      if (warps_on_axis > 1) {
        int res = static_cast<int>(x->type.numel() / x->type.shape[op.axis]);
        bool arg = op.red() == ir::ReduceKind::Argmax || op.red() == ir::ReduceKind::Argmin;
        int vals = round_up(res * warps_on_axis * acc_bytes(op), 16);
        bytes = std::max(bytes, vals + (arg ? res * warps_on_axis * 4 : 0));
      }
      break;
    }
    case OpKind::ClusterReduce:
      if (ir::cluster_reduces_tile(op)) {  // every thread's registers, read by the peers
        bytes = std::max(bytes, cluster_tile_smem_bytes(plan, op));
        break;
      }
      // one slot per program of the cluster, then an mbarrier (in memory: global slots)
      if (!plan.clusters_in_memory) bytes = std::max(bytes, cluster_reduce_smem_bytes(cluster_size, op.num_operands()));
      break;
    case OpKind::Scan: {
      const ir::Value* x = op.operand(0);
      bytes = std::max<int>(bytes, 2 * round_up(static_cast<int>(x->type.numel()) * acc_bytes(op), 16));
      break;
    }
    case OpKind::Dot: {  // operand staging (not for operands copied there by cp.async)
      const auto& a = op.operand(0)->type;
      const auto& b = op.operand(1)->type;
      if (p.wgmma) {  // B staged for its descriptor (first, 1024-aligned), A's conversion after it
        int staged = wgmma_smem_source(plan, op.operand(1), 1) ? 0 : round_up(static_cast<int>(b.numel()) * byte_size(b.dtype), 16);
        bytes = staged + bytes;
        break;
      }
      int a_bytes = async_operand(op.operand(0)) ? 0 : static_cast<int>(a.numel()) * smem_elem_bytes(a);
      int b_bytes = async_operand(op.operand(1)) ? 0 : static_cast<int>(b.numel()) * smem_elem_bytes(b);
      bytes = std::max<int>(bytes, round_up(a_bytes, 16) + b_bytes);
      break;
    }
    case OpKind::Load: {  // async copy destination: one tile per pipeline stage (+ TMA's mbarriers)
      auto ring = plan.ring_leader.find(&op);
      if (ring != plan.ring_leader.end() && ring->second != &op) break;  // uses its leader's stages
      if (p.async_copy) bytes = std::max(bytes, p.stages * async_stage_bytes(plan, &op));  // barriers: own buffer
      if (p.held) bytes = std::max(bytes, held_buffer_bytes(plan, &op));
      break;
    }
    case OpKind::Store:  // a TMA store's block, swizzled as its boxes
      if (p.tma_map >= 0) {
        const ir::Type& t = op.operand(1)->type;
        bytes = std::max<int>(bytes, static_cast<int>(t.numel()) * byte_size(t.dtype));
      }
      break;
    case OpKind::AtomicRMW: case OpKind::AtomicCas: {
      // Old values travel from the one thread that performed the atomic to the copies.
      const ir::Type& t = op.result()->type;
      bytes = std::max<int>(bytes, static_cast<int>(t.numel()) * smem_elem_bytes(t));
      break;
    }
    default: break;
  }
  return round_up(bytes, 16);
}

// wgmma descriptors read swizzled tiles whose swizzle works on absolute address bits.
int alignment(const Op& op, const GpuPlan& plan) {
  const OpPlan& p = plan.op(&op);
  if (p.async_copy && read_by_wgmma(plan, &op)) return 1024;
  if (op.kind == OpKind::Store && p.tma_map >= 0) return 1024;
  if (p.wgmma && !wgmma_smem_source(plan, op.operand(1), 1)) return 1024;
  return 16;
}

struct Buffer {
  const Op* op;
  int size, begin, end, align, offset = 0;
  bool barriers = false;  // a TMA copy's mbarriers (OpPlan::barrier_offset)
};

}  // namespace

void allocate_shared_memory(const ir::Function& f, GpuPlan& plan) {
  std::vector<Buffer> bufs;
  std::unordered_map<const Op*, int> index_of;
  int counter = 0;
  ir::walk(f.body, [&](Op& op) { index_of[&op] = counter++; });
  // A wgmma left in flight (OpPlan::wgmma_defer) reads its shared-memory operands until
  // the wait that completes it, not only at its issue: their buffers live until then.
  // (A single-stage copy of V placed over K's bytes, after Q.K^T's issue but before its
  // wait, gave wrong attention outputs on the H200 once ptxas scheduled the copy early.)
  std::unordered_map<const Op*, int> completed_at;
  for (auto& [at, w] : plan.wgmma_waits)
    for (const ir::Value* v : w.values)
      if (v->def && v->def->kind == OpKind::Dot)
        completed_at[v->def] = std::max(completed_at[v->def], index_of.at(at));
  auto last_read = [&](const Op* d) {
    auto it = completed_at.find(d);
    return it == completed_at.end() ? index_of.at(d) : std::max(index_of.at(d), it->second);
  };
  int index = 0;
  ir::walk(f.body, [&](Op& op) {
    int b = scratch_bytes(op, plan, f.cluster_size);
    // A cluster reduction's slots receive the peers' values whenever the peers get
    // there, before or after this program does: they are reserved for the whole kernel.
    // (A tile's cluster reduction has barriers around its exchange: op-local.)
    bool whole_kernel = op.kind == OpKind::ClusterReduce && !ir::cluster_reduces_tile(op);
    // The reductions of a group all use their scratch during the group's exchange.
    int begin = index, end = index;
    if (plan.op(&op).async_copy) {
      // Live from the copy to its last dot; a pipelined copy for its whole loop
      // (prologue copies land before the loop, the last ones at its end).
      for (const Op* d : plan.async_users.at(&op)) {
        end = std::max(end, last_read(d));
        // Read in every iteration of a loop below: live to the end of that loop.
        if (d->parent != op.parent) ir::walk(*d->parent, [&](Op& o) { end = std::max(end, index_of.at(&o)); });
      }
      const Op* loop = op.parent->parent;
      if (plan.is_producer_copy(&op)) {
        // Its barriers are set up at kernel entry, and the producer copies it whenever
        // it gets there (persistent: again for the next program, after the release).
        begin = 0;
        if (f.persistent) end = std::numeric_limits<int>::max();
      }
      if (plan.op(&op).stages > 1 && loop) {
        begin = index_of.at(loop);
        end = std::max(end, index_of.at(op.parent->ops.back().get()));
        if (plan.warp_specialized() && plan.op(&op).tma_map >= 0) {
          // A ring of stages: barriers set up at kernel entry, filled by the producer
          // until the last producer loop ends.
          begin = 0;
          end = std::max(end, index_of.at(plan.producer_loops.back()->regions[0]->ops.back().get()));
          // Persistent: the producer fills it for the next program during this one's epilogue.
          if (f.persistent) end = std::numeric_limits<int>::max();
        }
        if (loop == plan.prefetch_loop) {  // filled for the next program during the epilogue
          begin = 0;
          end = std::numeric_limits<int>::max();
        }
      }
    }
    if (auto h = plan.held_last_reader.find(&op); h != plan.held_last_reader.end()) {
      // Live until its last reader (and everything inside that reader's regions) is done.
      end = std::max(end, index_of.at(h->second));
      for (auto& r : h->second->regions) ir::walk(*r, [&](Op& o) { end = std::max(end, index_of.at(&o)); });
    }
    if (op.kind == OpKind::Dot) end = std::max(end, last_read(&op));  // its staged operands
    auto g = plan.reduce_group_leader.find(&op);
    if (g != plan.reduce_group_leader.end()) {
      const auto& members = plan.reduce_groups.at(g->second);
      begin = index_of.at(members.front());
      end = index_of.at(members.back());
    }
    if (b > 0)
      bufs.push_back(Buffer{&op, b, whole_kernel ? 0 : begin, whole_kernel ? std::numeric_limits<int>::max() : end,
                            alignment(op, plan)});
    bool ring_follower = plan.ring_leader.count(&op) && plan.ring_leader.at(&op) != &op;
    if (int bars = plan.op(&op).async_copy && !ring_follower ? tma_barrier_bytes(plan, &op) : 0)
      bufs.push_back(Buffer{&op, bars, begin, end, 16, 0, true});
    ++index;
  });
  std::vector<Buffer*> order;
  for (auto& b : bufs) order.push_back(&b);
  std::stable_sort(order.begin(), order.end(), [](Buffer* a, Buffer* b) { return a->size > b->size; });
  std::vector<Buffer*> placed;
  int total = 0;
  for (Buffer* b : order) {
    int offset = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (Buffer* o : placed) {
        bool live_overlap = !(o->end < b->begin || b->end < o->begin);
        bool mem_overlap = offset < o->offset + o->size && o->offset < offset + b->size;
        if (live_overlap && mem_overlap) {
          offset = round_up(o->offset + o->size, b->align);
          moved = true;
        }
      }
    }
    b->offset = offset;
    placed.push_back(b);
    total = std::max(total, offset + b->size);
  }
  for (auto& b : bufs) {
    OpPlan& p = plan.op(b.op);
    if (b.barriers) {
      p.barrier_offset = b.offset;
      continue;
    }
    p.smem_offset = b.offset;
    p.smem_bytes = b.size;
  }
  for (auto& [ld, leader] : plan.ring_leader) {
    plan.op(ld).smem_offset = plan.op(leader).smem_offset;
    plan.op(ld).barrier_offset = plan.op(leader).barrier_offset;
  }
  plan.shared_bytes = total;
}

GpuPlan plan_kernel(const ir::Function& f, const Target& t) {
  GpuPlan plan;
  plan.axis = analyze_axis_info(f);
  find_tma_stores(f, t, plan);
  assign_layouts(f, t, plan);
  group_reductions(f, plan);
  plan_async_copies(f, t, plan);
  plan_held_loads(f, t, plan);
  plan_tma_copies(f, t, plan);
  plan_wgmma_waits(f, plan);
  allocate_shared_memory(f, plan);
  return plan;
}

}  // namespace tilefuse::nvptx
