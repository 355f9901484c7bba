// Op dispatch and structured control flow: blocks, for loops with iteration values,
// if/else, yield.
#include <algorithm>

#include "exec.hpp"

namespace tilefuse::interp::detail {
namespace {

bool defined_in(const ir::Value* v, const ir::Block& b) { return v->def && v->def->parent == &b; }

// Moves the values `from` (operands of a yield ending `region`) into `to`. A yielded
// value computed inside `region` is dead after the yield, so it is swapped instead of
// copied; values from outside the region, region arguments and values yielded twice
// are copied (through a temporary when they alias a destination).
void transfer(Exec& ex, const ir::Block& region, const std::vector<ir::Value*>& from,
              const std::vector<ir::Value*>& to) {
  TF_ASSERT(from.size() == to.size(), "yield arity does not match");
  bool alias = false;
  for (const ir::Value* f : from)
    for (const ir::Value* t : to) alias |= f == t;
  std::vector<Slot> tmp;
  if (alias) {  // e.g. a loop that swaps two iteration values
    tmp.resize(from.size());
    for (size_t i = 0; i < from.size(); ++i) copy_slot(tmp[i], ex.at(from[i]), kind_of(from[i]->type));
    for (size_t i = 0; i < from.size(); ++i) std::swap(ex.at(to[i]), tmp[i]);
    return;
  }
  for (size_t i = 0; i < from.size(); ++i) {
    bool once = std::count(from.begin(), from.end(), from[i]) == 1;
    if (defined_in(from[i], region) && once)
      std::swap(ex.at(to[i]), ex.at(from[i]));
    else
      copy_slot(ex.at(to[i]), ex.at(from[i]), kind_of(from[i]->type));
  }
}

const ir::Op& yield_of(const ir::Block& b) {
  const ir::Op* y = b.terminator();
  TF_ASSERT(y && y->kind == ir::OpKind::Yield, "region without a yield");
  return *y;
}

void exec_for(Exec& ex, const ir::Op& op) {
  const int64_t lo = ex.at(op.operand(0)).i[0];
  const int64_t hi = ex.at(op.operand(1)).i[0];
  const int64_t step = ex.at(op.operand(2)).i[0];
  const ir::Block& body = *op.region(0);
  TF_ASSERT(body.args.size() == op.results.size() + 1 && op.operands.size() == op.results.size() + 3,
            "malformed for");
  if (step <= 0)
    ex.fail(op, "for_range step is " + std::to_string(step) + " (from " + std::to_string(lo) + " to " +
                    std::to_string(hi) + ")",
            "The step must be positive");
  const std::vector<ir::Value*> inits(op.operands.begin() + 3, op.operands.end());
  const std::vector<ir::Value*> iters(body.args.begin() + 1, body.args.end());
  for (size_t i = 0; i < inits.size(); ++i) copy_slot(ex.at(iters[i]), ex.at(inits[i]), kind_of(inits[i]->type));
  const ir::Op& yield = yield_of(body);
  Slot& iv = ex.at(body.args[0]);
  iv.i.resize(1);
  for (int64_t v = lo; v < hi;) {
    iv.i[0] = v;
    exec_block(ex, body);
    transfer(ex, body, yield.operands, iters);
    if (v > INT64_MAX - step) break;  // the next value would overflow: the loop is done
    v += step;
  }
  for (size_t i = 0; i < iters.size(); ++i) std::swap(ex.at(op.results[i]), ex.at(iters[i]));
}

void exec_if(Exec& ex, const ir::Op& op) {
  TF_ASSERT(op.regions.size() == 2, "malformed if");
  const ir::Block& taken = *op.region(ex.at(op.operand(0)).i[0] ? 0 : 1);
  exec_block(ex, taken);
  transfer(ex, taken, yield_of(taken).operands, op.results);
}

void exec_op(Exec& ex, const ir::Op& op) {
  using ir::OpKind;
  switch (op.kind) {
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
    case OpKind::Constant:
    case OpKind::Arange:
    case OpKind::Splat:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Trans: return exec_index_op(ex, op);
    case OpKind::Binary:
    case OpKind::Unary:
    case OpKind::Compare:
    case OpKind::Select:
    case OpKind::Fma: return exec_elementwise(ex, op);
    case OpKind::Cast: return exec_cast(ex, op);
    case OpKind::AddPtr:
    case OpKind::AlignPtr:
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::AtomicRMW:
    case OpKind::AtomicCas: return exec_memory(ex, op);
    case OpKind::Reduce:
    case OpKind::Scan: return exec_reduce(ex, op);
    case OpKind::Dot: return exec_dot(ex, op);
    case OpKind::ClusterReduce: return exec_cluster_reduce(ex, op);
    case OpKind::For: return exec_for(ex, op);
    case OpKind::If: return exec_if(ex, op);
    case OpKind::Yield: return;  // read by the parent op
    case OpKind::Barrier: return;  // one thread per program: its accesses are in program order
  }
  internal_error("exec_op: unknown op kind");
}

}  // namespace

void exec_block(Exec& ex, const ir::Block& b) {
  for (const auto& op : b.ops) exec_op(ex, *op);
}

}  // namespace tilefuse::interp::detail
