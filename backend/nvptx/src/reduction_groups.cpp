// Reduction groups: adjacent reductions (sum/max/min) that can share one exchange.
// The front end's sibling scheduling (ir::group_sibling_reductions) makes independent
// reductions adjacent; here those whose operands have the same layout and axis (Reduce),
// and adjacent cluster reductions (all in one block, so reached together), become one group.
#include "passes.hpp"

namespace tilefuse::nvptx {

namespace {

bool plain(const ir::Op& op) {
  ir::ReduceKind k = op.red();
  return (op.kind == ir::OpKind::Reduce || (op.kind == ir::OpKind::ClusterReduce && !ir::cluster_reduces_tile(op))) &&
         (k == ir::ReduceKind::Sum || k == ir::ReduceKind::Max || k == ir::ReduceKind::Min);
}

bool joinable(const GpuPlan& plan, const ir::Op& a, const ir::Op& b) {
  if (!plain(a) || !plain(b) || a.kind != b.kind) return false;
  if (a.kind == ir::OpKind::ClusterReduce) return true;
  LayoutRef la = plan.op(&a).operands[0], lb = plan.op(&b).operands[0];
  return a.axis == b.axis && la && lb && la->ll == lb->ll;
}

void group_block(const ir::Block& b, GpuPlan& plan) {
  for (size_t i = 0; i < b.ops.size(); ++i) {
    for (auto& r : b.ops[i]->regions) group_block(*r, plan);
    const ir::Op& first = *b.ops[i];
    if (!plain(first)) continue;
    size_t end = i + 1;
    auto independent = [&](const ir::Op& op) {  // reads no result of the group so far
      for (size_t k = i; k < end; ++k)
        for (auto* r : b.ops[k]->results)
          for (auto* v : op.operands)
            if (v == r) return false;
      return true;
    };
    while (end < b.ops.size() && joinable(plan, first, *b.ops[end]) && independent(*b.ops[end])) ++end;
    if (end - i < 2) continue;
    std::vector<const ir::Op*> members;
    for (size_t k = i; k < end; ++k) {
      members.push_back(b.ops[k].get());
      plan.reduce_group_leader[b.ops[k].get()] = &first;
    }
    plan.reduce_groups[&first] = std::move(members);
    i = end - 1;
  }
}

}  // namespace

void group_reductions(const ir::Function& f, GpuPlan& plan) {
  plan.reduce_groups.clear();
  plan.reduce_group_leader.clear();
  group_block(f.body, plan);
}

}  // namespace tilefuse::nvptx
