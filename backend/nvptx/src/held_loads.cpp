// Loads kept in shared memory (DSL Cache::KeepInShared, OpPlan::held): which loads
// outside loops can be, the casts computed again at each reader, and how long each buffer lives.
// A load qualifies when each thread can copy the runs it would hold with cp.async (4, 8
// or 16 aligned bytes whose mask holds for the whole run) and every reader of the tile,
// or of a cast of it, is an op that reads its operands where it is lowered (see
// can_read_back).
#include <iostream>

#include "passes.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

using ir::Op;
using ir::OpKind;
using ir::Value;

int held_buffer_bytes(const GpuPlan& plan, const ir::Op* ld) {
  const LinearLayout& l = plan.layout(ld->result())->ll;
  return (l.num_regs() * 32 * plan.num_warps * byte_size(ld->result()->type.dtype) + 15) / 16 * 16;
}

namespace {

using Uses = std::unordered_map<const Value*, std::vector<std::pair<const Op*, int>>>;

// A reader that materializes its operands where it is lowered. Not: loop-carried values
// and branch results, shape ops produced lazily in their consumers' layouts, nor dots
// (a loop converts the operands of its dots that it only reads once, before it starts).
bool can_read_back(const Op& user, const GpuPlan& plan) {
  if (user.kind == OpKind::Yield || user.kind == OpKind::For || user.kind == OpKind::If || user.kind == OpKind::Dot)
    return false;
  return user.results.empty() || !plan.lazy.count(user.result());
}

// The op of `block` that contains `op` (op itself when it is in the block).
const Op* ancestor_in(const Op* op, const ir::Block* block) {
  while (op->parent != block) op = op->parent->parent;
  return op;
}

bool inside_loop(const Op& op) {
  for (const ir::Block* b = op.parent; b->parent; b = b->parent->parent)
    if (b->parent->kind == OpKind::For) return true;
  return false;
}

// Why load `op` cannot be held ("" when it can); its casts read back at each reader go
// to `casts`, the readers (casts' readers included) to `readers`.
std::string obstacle(const Op& op, const Target& t, const GpuPlan& plan, const Uses& uses,
                     std::vector<const Op*>& casts, std::vector<const Op*>& readers) {
  if (t.sm < 80) return "cp.async needs sm_80 or later";
  const Value* r = op.result();
  LayoutRef l = plan.layout(r);
  if (!r->type.is_tile() || !l) return "the load is of a scalar";
  if (r->type.dtype == DType::i1) return "boolean tiles are not copied";
  if (op.view_rank) return "tensor-view blocks are not held (their copies are TMA's)";
  const OpPlan& p = plan.op(&op);
  if (p.async_copy) return "a tensor-core dot already reads it from shared memory";
  int bytes = p.vec * byte_size(r->type.dtype);
  if (p.realign || p.checked || p.vec != p.aligned_vec || (bytes != 4 && bytes != 8 && bytes != 16))
    return "its runs are " + std::to_string(bytes) +
           " bytes or not known to be aligned with a mask constant over them (cp.async copies aligned 4, 8 or "
           "16-byte runs; make the width and row stride multiples of 16 bytes)";
  for (size_t i = 0; i < p.operands.size() && i < op.operands.size(); ++i)
    if (p.operands[i] && conversion_needs_smem(plan, op.operands[i], p.operands[i]->ll))
      return "its pointers or mask come in another layout";
  auto it = uses.find(r);
  if (it == uses.end()) return "nothing reads it";
  for (auto [user, idx] : it->second) {
    const OpPlan& up = plan.op(user);
    bool same_layout = idx < static_cast<int>(up.operands.size()) && up.operands[idx] &&
                       up.operands[idx]->ll == l->ll;
    if (user->kind == OpKind::Cast && same_layout && !plan.lazy.count(user->result())) {
      auto cu = uses.find(user->result());
      bool ok = true;
      if (cu != uses.end())
        for (auto [u2, i2] : cu->second) ok = ok && can_read_back(*u2, plan);
      if (ok) {
        casts.push_back(user);
        if (cu != uses.end())
          for (auto [u2, i2] : cu->second) readers.push_back(u2);
        continue;
      }
    }
    if (!can_read_back(*user, plan)) return std::string("it is read by a ") + ir::name(user->kind) +
                                             " (loop-carried, a branch result, a dot, or a lazily laid out shape op)";
    readers.push_back(user);
  }
  return "";
}

}  // namespace

void plan_held_loads(const ir::Function& f, const Target& t, GpuPlan& plan) {
  bool any = false;
  ir::walk(f.body, [&](Op& op) { any = any || (op.kind == OpKind::Load && op.evict == ir::Evict::Shared); });
  if (!any) return;
  bool debug = knob_on("TILEFUSE_DEBUG");
  auto note = [&](const Op& op, const std::string& why) {
    if (debug)
      std::cerr << "tilefuse: load at " << op.loc.str() << " of '" << f.name
                << "' is not kept in shared memory: " << why << "\n";
  };
  if (!plan.hold_loads) {
    ir::walk(f.body, [&](Op& op) {
      if (op.kind == OpKind::Load && op.evict == ir::Evict::Shared)
        note(op, "the kernel's held tiles do not fit in shared memory beside the rest");
    });
    return;
  }
  Uses uses;
  ir::walk(f.body, [&](Op& op) {
    for (int i = 0; i < op.num_operands(); ++i) uses[op.operand(i)].push_back({&op, i});
  });
  std::unordered_map<const Op*, int> order;
  int n = 0;
  ir::walk(f.body, [&](Op& op) { order[&op] = n++; });
  int index = 0;
  ir::walk(f.body, [&](Op& op) {
    if (op.kind != OpKind::Load || op.evict != ir::Evict::Shared) return;
    // A loop would copy its next iteration's tile over one that a branch may have left
    // unread, still in flight.
    if (inside_loop(op)) return note(op, "loads inside loops are not held (stage them with num_stages instead)");
    std::vector<const Op*> casts, readers;
    std::string why = obstacle(op, t, plan, uses, casts, readers);
    if (!why.empty()) return note(op, why);
    OpPlan& p = plan.op(&op);
    p.held = true;
    p.held_index = index++;
    plan.held_casts.insert(casts.begin(), casts.end());
    const Op* last = &op;
    for (const Op* u : readers) {
      const Op* top = ancestor_in(u, op.parent);
      if (order.at(top) > order.at(last)) last = top;
    }
    plan.held_last_reader[&op] = last;
  });
}

}  // namespace tilefuse::nvptx
