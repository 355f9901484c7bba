// Cluster-uniform values and regions (see cluster_uniform.hpp).
#include "tilefuse/ir/cluster_uniform.hpp"

#include <bit>

namespace tilefuse::ir {

namespace {

bool loop_bounds_uniform(const Op& loop, int cluster_size) {
  for (int i = 0; i < 3; ++i)
    if (!cluster_uniform(loop.operand(i), cluster_size)) return false;
  return true;
}

}  // namespace

bool cluster_uniform(const Value* v, int cluster_size) {
  if (!v->def) {
    const Block* b = v->block;
    if (b && !b->parent) return true;  // a kernel argument
    // A loop's induction variable (its carried values may differ from program to program).
    return b && b->parent->kind == OpKind::For && v->index == 0 && loop_bounds_uniform(*b->parent, cluster_size);
  }
  const Op& op = *v->def;
  if (!v->type.is_scalar()) return false;
  switch (op.kind) {
    case OpKind::Constant: case OpKind::NumPrograms: case OpKind::ClusterReduce: return true;
    case OpKind::ProgramId: return op.axis != 0;
    case OpKind::Binary: {
      const Value* c = op.operand(1);
      bool cluster_id = op.bin() == BinaryOp::Shr && op.operand(0)->def &&
                        op.operand(0)->def->kind == OpKind::ProgramId && op.operand(0)->def->axis == 0 && c->def &&
                        c->def->kind == OpKind::Constant && c->def->ival >= std::countr_zero(unsigned(cluster_size));
      if (cluster_id) return true;
      [[fallthrough]];
    }
    case OpKind::Unary: case OpKind::Cast: case OpKind::Compare: case OpKind::Select: case OpKind::Fma:
      for (const Value* x : op.operands)
        if (!cluster_uniform(x, cluster_size)) return false;
      return true;
    default: return false;
  }
}

bool reached_by_whole_cluster(const Block& block, int cluster_size, std::string* why) {
  if (cluster_size == 1) return true;
  for (const Block* b = &block; b->parent; b = b->parent->parent) {
    const Op& region = *b->parent;
    if (region.kind == OpKind::If) {
      if (cluster_uniform(region.operand(0), cluster_size)) continue;  // e.g. cluster_id() < n
      if (why) *why = "inside if_, whose branch may differ between the programs of a cluster";
      return false;
    }
    if (region.kind != OpKind::For) {
      if (why) *why = "inside a region that not every program of a cluster may reach";
      return false;
    }
    if (!loop_bounds_uniform(region, cluster_size)) {
      if (why)
        *why = "inside a for_range whose bounds may differ between the programs of a cluster (they depend on "
               "program_id(0), a loaded value or a loop-carried value)";
      return false;
    }
  }
  return true;
}

}  // namespace tilefuse::ir
