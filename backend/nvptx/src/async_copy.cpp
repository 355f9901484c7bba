// Which loads become cp.async copies into shared memory, and which of those are
// software-pipelined over their loop (see OpPlan::async_copy and GpuPlan::pipelines).
// A load qualifies when every use is a tensor-core dot operand in the same block after
// it, directly or through a transpose (the dot reads the copy from shared memory, so
// the tile never lives in registers), its elements (16-bit, or f32 for tf32 dots) move in runs of 4, 8 or 16 bytes along
// the dimension the shared encoding keeps contiguous, and masked-off elements read 0
// (cp.async zero-fills).
//
// With num_stages > 1, the other loads of a loop body whose addresses the pipeline can
// compute ahead are *staged*: copied the same way, S - 1 iterations early, into a
// buffer where each thread keeps the runs it reads back into registers itself, so the
// next iterations' data is in flight without holding registers (the row kernels'
// persistent and looped programs). A load is not staged when a store in the loop may
// write what it reads (the same base argument, or one not known).
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_set>

#include "passes.hpp"
#include "tilefuse/nvptx/shared_encoding.hpp"

namespace tilefuse::nvptx {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

// Ops that may be evaluated again for a later iteration (pure, cheap, no shared memory).
bool recomputable(OpKind k) {
  switch (k) {
    case OpKind::Constant: case OpKind::Arange: case OpKind::Splat: case OpKind::Broadcast:
    case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Trans: case OpKind::Binary: case OpKind::Unary:
    case OpKind::Compare: case OpKind::Select: case OpKind::Cast: case OpKind::AddPtr: case OpKind::Fma:
    case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::AlignPtr:
      return true;
    default: return false;
  }
}

// Collects (post-order) the body ops `v` depends on; false when it depends on a
// loop-carried value or on an op that cannot be evaluated for another iteration.
bool address_slice(const Value* v, const Block& body, std::vector<const Op*>& slice,
                   std::unordered_set<const Op*>& seen) {
  if (v == body.args[0] || !defined_within(v, body)) return true;
  if (!v->def || v->def->parent != &body || !recomputable(v->def->kind)) return false;
  const Op* d = v->def;
  if (seen.count(d)) return true;
  for (const Value* x : d->operands)
    if (!address_slice(x, body, slice, seen)) return false;
  seen.insert(d);
  slice.push_back(d);
  return true;
}

using Uses = std::unordered_map<const Value*, std::vector<std::pair<const Op*, int>>>;

}  // namespace

const Value* base_argument(const Value* v) {
  while (v->def) {
    switch (v->def->kind) {
      case OpKind::AddPtr: case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims:
      case OpKind::Reshape: case OpKind::Trans: case OpKind::AlignPtr:
        v = v->def->operand(0);
        break;
      default: return nullptr;
    }
  }
  return v->block && !v->block->parent ? v : nullptr;
}

namespace {

// Whether a store or atomic in `body` (nested regions included) may write memory that
// load `ld` reads: the same base argument, or either base unknown.
bool may_be_written(const Op& ld, const Block& body) {
  const Value* base = base_argument(ld.operand(0));
  bool hit = false;
  ir::walk(const_cast<Block&>(body), [&](Op& o) {
    if (o.kind != OpKind::Store && o.kind != OpKind::AtomicRMW && o.kind != OpKind::AtomicCas) return;
    const Value* other = base_argument(o.operand(0));
    hit = hit || !base || !other || other == base;
  });
  return hit;
}

// A load of a loop body to stage (OpPlan::staged): a tile whose runs are 4, 8 or 16
// aligned bytes, operands at hand in registers, nothing in the loop writing its memory.
// Checked loads (aligned runs whose mask is tested per run: rows indexed from their
// aligned start) qualify when their fill is zero: the copies move whole the runs all
// valid or readable, zero-fill the rest, and the read-back finishes the partly valid.
bool stageable(const Op& op, const GpuPlan& plan) {
  const Op* loop = op.parent->parent;
  if (!loop || loop->kind != OpKind::For || op.view_rank) return false;
  const Value* r = op.result();
  const OpPlan& p = plan.op(&op);
  LayoutRef l = plan.layout(r);
  bool checked = p.checked && !p.realign && op.num_operands() > 1 &&
                 (op.num_operands() < 3 || is_zero_constant(op.operand(2)));
  int bytes = (checked ? p.vec : p.aligned_vec) * byte_size(r->type.dtype);
  if (!l || r->type.dtype == DType::i1 || p.fast_dim < 0 || (bytes != 4 && bytes != 8 && bytes != 16)) return false;
  if ((p.vec != p.aligned_vec && !checked) || p.realign) return false;
  for (size_t i = 0; i < p.operands.size() && i < op.operands.size(); ++i)
    if (p.operands[i] && conversion_needs_smem(plan, op.operands[i], p.operands[i]->ll)) return false;
  return !may_be_written(op, *op.parent);
}

}  // namespace

bool is_zero_constant(const Value* v) {
  return v->def && v->def->kind == OpKind::Constant && v->def->fval == 0 && !std::signbit(v->def->fval) &&
         v->def->ival == 0;
}

SharedEncoding async_encoding(const GpuPlan& plan, const ir::Op* ld) {
  const LinearLayout& l = plan.layout(ld->result())->ll;
  return swizzled_encoding(l.shape(), contiguous_dim(l), byte_size(ld->result()->type.dtype), read_by_wgmma(plan, ld));
}

bool read_by_wgmma(const GpuPlan& plan, const ir::Op* ld) {
  auto it = plan.async_users.find(ld);
  if (it == plan.async_users.end()) return false;
  for (const Op* d : it->second)
    if (plan.op(d).wgmma) return true;
  return false;
}

int async_stage_bytes(const GpuPlan& plan, const ir::Op* ld) {
  if (plan.op(ld).staged) {  // every thread's registers, replicas included
    const LinearLayout& l = plan.layout(ld->result())->ll;
    return (l.num_regs() * 32 * plan.num_warps * byte_size(ld->result()->type.dtype) + 15) / 16 * 16;
  }
  int bytes = static_cast<int>(ld->result()->type.numel() * smem_elem_bytes(ld->result()->type));
  int align = read_by_wgmma(plan, ld) ? 1024 : 16;
  return (bytes + align - 1) / align * align;
}

const ir::Op* async_source(const GpuPlan& plan, const ir::Value* v) {
  if (v->def && v->def->kind == OpKind::Trans) v = v->def->operand(0);
  const Op* ld = v->def;
  // A staged load's tile is read back into registers: its users see a register value.
  return ld && plan.op(ld).async_copy && !plan.op(ld).staged ? ld : nullptr;
}

const ir::Op* wgmma_smem_source(const GpuPlan& plan, const ir::Value* v, int operand) {
  const Op* ld = async_source(plan, v);
  if (!ld) return nullptr;
  const LinearLayout& l = plan.layout(ld->result())->ll;
  int cd = contiguous_dim(l);
  if (!swizzle_bytes(l.shape(), cd, byte_size(v->type.dtype))) return nullptr;
  // 8-bit operands must be K-major in shared memory (wgmma cannot transpose them); the
  // others go through registers (A) or the dot's own K-major copy (B).
  int kdim = operand == 0 ? 1 : 0;
  int k_in_tile = ld->result() != v ? 1 - kdim : kdim;
  return is_float8(v->type.dtype) && k_in_tile != cd ? nullptr : ld;
}

namespace {

// The pipeline of `loads` over their loop (S stages): their address ops, in body order;
// none when an address depends on a loop-carried value or on an op that cannot be
// evaluated again for a later iteration.
std::optional<GpuPlan::Pipeline> pipeline_of(const GpuPlan& plan, const Block& block,
                                             const std::vector<const Op*>& loads, int stages) {
  GpuPlan::Pipeline pl;
  pl.stages = stages;
  pl.loads = loads;
  std::unordered_set<const Op*> seen;
  for (const Op* ld : loads)
    for (const Value* v : ld->operands)
      if (!address_slice(v, block, pl.slice, seen)) return std::nullopt;
  // Re-evaluating the slice later in the iteration must not touch shared memory (its
  // scratch is only reserved at the op's own position).
  for (const Op* o : pl.slice) {
    const OpPlan& op_plan = plan.op(o);
    for (size_t i = 0; i < op_plan.operands.size() && i < o->operands.size(); ++i)
      if (op_plan.operands[i] && conversion_needs_smem(plan, o->operands[i], op_plan.operands[i]->ll))
        return std::nullopt;
  }
  // Keep the body's order so each op's operands are evaluated before it.
  std::unordered_map<const Op*, int> pos;
  int i = 0;
  for (auto& o : block.ops) pos[o.get()] = i++;
  std::sort(pl.slice.begin(), pl.slice.end(), [&](const Op* a, const Op* b) { return pos[a] < pos[b]; });
  return pl;
}

}  // namespace

void plan_async_copies(const ir::Function& f, const Target& t, GpuPlan& plan) {
  if (t.sm < 80) return;
  // Uses of every value.
  Uses uses;
  ir::walk(f.body, [&](Op& op) {
    for (int i = 0; i < op.num_operands(); ++i) uses[op.operand(i)].push_back({&op, i});
  });
  std::unordered_map<const Block*, std::vector<const Op*>> per_block;
  ir::walk(f.body, [&](Op& op) {
    if (op.kind != OpKind::Load || op.results.empty() || !op.result()->type.is_tile()) return;
    const Value* r = op.result();
    DType d = r->type.dtype;
    if (r->type.rank() != 2 || (d != DType::f16 && d != DType::bf16 && d != DType::f32 && !is_float8(d))) return;
    if (op.num_operands() > 2 && !is_zero_constant(op.operand(2))) return;
    OpPlan& p = plan.op(&op);
    LayoutRef l = plan.layout(r);
    // Its pointers and mask must be at hand in registers (a conversion would use the
    // copy's own buffer as scratch).
    for (size_t i = 0; i < p.operands.size() && i < op.operands.size(); ++i)
      if (p.operands[i] && conversion_needs_smem(plan, op.operands[i], p.operands[i]->ll)) return;
    int bytes = p.aligned_vec * byte_size(d);  // cp.async needs aligned sources
    if (!l || p.fast_dim != contiguous_dim(l->ll)) return;
    // Runs cp.async cannot copy whole (a mask changing inside them): TMA only.
    bool tma_only = bytes != 4 && bytes != 8 && bytes != 16;
    if (tma_only && (f.num_stages < 2 || !tma_view_possible(f, t, plan, &op))) return;
    auto it = uses.find(r);
    if (it == uses.end() || it->second.empty()) return;
    std::vector<const Op*> dots;
    auto dot_operand = [&](const Op* user, int idx) {
      return user->kind == OpKind::Dot && idx <= 1 && plan.op(user).mma && user->parent == op.parent;
    };
    // The A operand of a wgmma dot in a loop right below (FlashAttention's Q): copied
    // once and read by descriptor every iteration instead of held in registers. Not
    // from a loop body itself (its copies there would be pipelined by the outer loop).
    const Op* owner = op.parent->parent;
    auto loop_invariant_a = [&](const Op* user, int idx) {
      const Op* loop = user->parent->parent;
      return user->kind == OpKind::Dot && idx == 0 && plan.op(user).wgmma && loop && loop->kind == OpKind::For &&
             loop->parent == op.parent && (!owner || owner->kind != OpKind::For);
    };
    std::vector<const Op*> outer_loops;
    for (auto [user, idx] : it->second) {
      if (dot_operand(user, idx)) {
        dots.push_back(user);
        continue;
      }
      if (loop_invariant_a(user, idx)) {
        dots.push_back(user);
        outer_loops.push_back(user->parent->parent);
        continue;
      }
      // A transpose feeding only dots (B stored [N, K]): they read the copy transposed.
      if (user->kind != OpKind::Trans) return;
      auto t = uses.find(user->result());
      if (t == uses.end() || t->second.empty()) return;
      for (auto [u, i] : t->second) {
        if (!dot_operand(u, i)) return;
        dots.push_back(u);
      }
    }
    if (tma_only)
      for (const Op* d : dots)
        if (!plan.op(d).wgmma || d->parent->parent == nullptr || d->parent->parent->kind != OpKind::For) return;
    p.async_copy = true;
    p.tma_only = tma_only;
    p.vec = p.aligned_vec;
    p.realign = false;
    p.checked = false;
    plan.async_users[&op] = dots;
    for (const Op* loop : outer_loops) plan.loops_reading_copies.insert(loop);
    per_block[op.parent].push_back(&op);
  });
  // Staging candidates: loads of loop bodies not copied for a dot.
  std::unordered_map<const Block*, std::vector<const Op*>> staged_in;
  if (f.num_stages > 1 && plan.stage_loads)
    ir::walk(f.body, [&](Op& op) {
      if (op.kind == OpKind::Load && !op.results.empty() && op.result()->type.is_tile() && !plan.op(&op).async_copy &&
          stageable(op, plan))
        staged_in[op.parent].push_back(&op);
    });
  for (auto& [block, loads] : staged_in) per_block[block];
  for (auto& [block, dot_loads] : per_block) {
    // Body order of the block's ops.
    std::unordered_map<const Op*, int> pos;
    int i = 0;
    for (auto& o : block->ops) pos[o.get()] = i++;
    std::vector<const Op*> loads = dot_loads;
    auto sc = staged_in.find(block);
    if (sc != staged_in.end()) loads.insert(loads.end(), sc->second.begin(), sc->second.end());
    std::sort(loads.begin(), loads.end(), [&](const Op* a, const Op* b) { return pos[a] < pos[b]; });
    auto number = [&](const std::vector<const Op*>& ls) {  // positions among the block's async loads
      for (size_t k = 0; k < ls.size(); ++k) {
        plan.op(ls[k]).async_index = static_cast<int>(k) + 1;
        plan.op(ls[k]).async_count = static_cast<int>(ls.size());
      }
    };
    const Op* loop = block->parent;
    std::optional<GpuPlan::Pipeline> pl;
    if (f.num_stages > 1 && loop && loop->kind == OpKind::For) {
      pl = pipeline_of(plan, *block, loads, f.num_stages);
      // Staged loads only pay when pipelined: without them the dots' copies may still be.
      if (!pl && loads.size() != dot_loads.size()) {
        loads = dot_loads;
        pl = pipeline_of(plan, *block, loads, f.num_stages);
      }
    } else {
      loads = dot_loads;
    }
    // TMA-only copies need the pipeline (TMA moves pipelined blocks only): without one
    // they stay plain loads.
    auto drop_tma_only = [&](std::vector<const Op*>& ls) {
      std::vector<const Op*> kept;
      for (const Op* ld : ls) {
        OpPlan& p = plan.op(ld);
        if (!p.tma_only) {
          kept.push_back(ld);
          continue;
        }
        p.async_copy = p.tma_only = false;
        plan.async_users.erase(ld);
      }
      ls = kept;
    };
    if (!pl) drop_tma_only(loads);
    if (loads.empty()) continue;
    if (!pl) {
      number(loads);
      continue;  // copies stay unpipelined
    }
    for (const Op* ld : loads) {
      OpPlan& p = plan.op(ld);
      if (p.async_copy) continue;
      p.async_copy = p.staged = true;
      plan.async_users[ld] = {};
    }
    // Issue order: a dot's copies where its first dot reads them, a staged load's where
    // it reads its own; then body order.
    auto issue_pos = [&](const Op* ld) { return pos[plan.op(ld).issue_at ? plan.op(ld).issue_at : ld]; };
    for (const Op* ld : loads) {
      const Op* first = nullptr;
      for (const Op* d : plan.async_users.at(ld))
        if (!first || pos[d] < pos[first]) first = d;
      plan.op(ld).issue_at = first;
      plan.op(ld).stages = pl->stages;
      plan.op(ld).ahead = pl->ahead();
    }
    std::stable_sort(pl->loads.begin(), pl->loads.end(), [&](const Op* a, const Op* b) { return issue_pos(a) < issue_pos(b); });
    number(pl->loads);
    plan.pipelines[loop] = std::move(*pl);
  }
}

}  // namespace tilefuse::nvptx
