// Which loads become cp.async copies into shared memory, and which of those are
// software-pipelined over their loop (see OpPlan::async_copy and GpuPlan::pipelines).
// A load qualifies when every use is a tensor-core dot operand in the same block after
// it, directly or through a transpose (the dot reads the copy from shared memory, so
// the tile never lives in registers), its elements (16-bit, or f32 for tf32 dots) move in runs of 4, 8 or 16 bytes along
// the dimension the shared encoding keeps contiguous, and masked-off elements read 0
// (cp.async zero-fills).
#include <algorithm>
#include <unordered_set>

#include "passes.hpp"
#include "tilefuse/nvptx/shared_encoding.hpp"

namespace tilefuse::nvptx {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

bool is_zero_constant(const Value* v) {
  return v->def && v->def->kind == OpKind::Constant && v->def->fval == 0 && v->def->ival == 0;
}

// Ops that may be evaluated again for a later iteration (pure, cheap, no shared memory).
bool recomputable(OpKind k) {
  switch (k) {
    case OpKind::Constant: case OpKind::Arange: case OpKind::Splat: case OpKind::Broadcast:
    case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Trans: case OpKind::Binary: case OpKind::Unary:
    case OpKind::Compare: case OpKind::Select: case OpKind::Cast: case OpKind::AddPtr: case OpKind::Fma:
    case OpKind::ProgramId: case OpKind::NumPrograms:
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
  int bytes = static_cast<int>(ld->result()->type.numel() * smem_elem_bytes(ld->result()->type));
  int align = read_by_wgmma(plan, ld) ? 1024 : 16;
  return (bytes + align - 1) / align * align;
}

const ir::Op* async_source(const GpuPlan& plan, const ir::Value* v) {
  if (v->def && v->def->kind == OpKind::Trans) v = v->def->operand(0);
  const Op* ld = v->def;
  return ld && plan.op(ld).async_copy ? ld : nullptr;
}

const ir::Op* wgmma_smem_source(const GpuPlan& plan, const ir::Value* v) {
  const Op* ld = async_source(plan, v);
  if (!ld) return nullptr;
  v = ld->result();
  const LinearLayout& l = plan.layout(ld->result())->ll;
  return swizzle_bytes(l.shape(), contiguous_dim(l), byte_size(v->type.dtype)) ? ld : nullptr;
}

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
    if (r->type.rank() != 2 || (d != DType::f16 && d != DType::bf16 && d != DType::f32)) return;
    if (op.num_operands() > 2 && !is_zero_constant(op.operand(2))) return;
    OpPlan& p = plan.op(&op);
    LayoutRef l = plan.layout(r);
    // Its pointers and mask must be at hand in registers (a conversion would use the
    // copy's own buffer as scratch).
    for (size_t i = 0; i < p.operands.size() && i < op.operands.size(); ++i)
      if (p.operands[i] && conversion_needs_smem(plan, op.operands[i], p.operands[i]->ll)) return;
    int bytes = p.aligned_vec * byte_size(d);  // cp.async needs aligned sources
    if (!l || p.fast_dim != contiguous_dim(l->ll) || (bytes != 4 && bytes != 8 && bytes != 16)) return;
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
    p.async_copy = true;
    p.vec = p.aligned_vec;
    p.realign = false;
    plan.async_users[&op] = dots;
    for (const Op* loop : outer_loops) plan.loops_reading_copies.insert(loop);
    per_block[op.parent].push_back(&op);
  });
  for (auto& [block, loads] : per_block) {
    // Block order (the walk visits ops in order), positions among the block's async loads.
    for (size_t i = 0; i < loads.size(); ++i) {
      plan.op(loads[i]).async_index = static_cast<int>(i) + 1;
      plan.op(loads[i]).async_count = static_cast<int>(loads.size());
    }
    const Op* loop = block->parent;
    if (f.num_stages <= 1 || !loop || loop->kind != OpKind::For) continue;
    GpuPlan::Pipeline pl;
    pl.stages = f.num_stages;
    pl.loads = loads;
    std::unordered_set<const Op*> seen;
    bool ok = true;
    for (const Op* ld : loads)
      for (const Value* v : ld->operands) ok = ok && address_slice(v, *block, pl.slice, seen);
    // Re-evaluating the slice later in the iteration must not touch shared memory (its
    // scratch is only reserved at the op's own position).
    for (const Op* o : pl.slice) {
      const OpPlan& op_plan = plan.op(o);
      for (size_t i = 0; ok && i < op_plan.operands.size() && i < o->operands.size(); ++i)
        if (op_plan.operands[i] && conversion_needs_smem(plan, o->operands[i], op_plan.operands[i]->ll)) ok = false;
    }
    if (!ok) continue;  // copies stay unpipelined
    // Keep the body's order so each op's operands are evaluated before it.
    std::unordered_map<const Op*, int> pos;
    int i = 0;
    for (auto& o : block->ops) pos[o.get()] = i++;
    std::sort(pl.slice.begin(), pl.slice.end(), [&](const Op* a, const Op* b) { return pos[a] < pos[b]; });
    // Issue order: by the first dot reading each copy, then body order.
    for (const Op* ld : loads) {
      const Op* first = nullptr;
      for (const Op* d : plan.async_users.at(ld))
        if (!first || pos[d] < pos[first]) first = d;
      plan.op(ld).issue_at = first;
      plan.op(ld).stages = pl.stages;
      plan.op(ld).ahead = pl.ahead();
    }
    std::stable_sort(pl.loads.begin(), pl.loads.end(), [&](const Op* a, const Op* b) {
      return pos[plan.op(a).issue_at] < pos[plan.op(b).issue_at];
    });
    for (size_t i = 0; i < pl.loads.size(); ++i) plan.op(pl.loads[i]).async_index = static_cast<int>(i) + 1;
    plan.pipelines[loop] = std::move(pl);
  }
}

}  // namespace tilefuse::nvptx
