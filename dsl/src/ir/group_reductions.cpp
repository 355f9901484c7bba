// Sibling-reduction scheduling (see passes.hpp): moves an independent reduction, with
// the pure ops it alone needs, next to an earlier reduction of the same shape, so the
// backend can combine them in one exchange.
#include <algorithm>
#include <unordered_set>

#include "tilefuse/ir/passes.hpp"

namespace tilefuse::ir {
namespace {

bool pure(const Op& op) {
  switch (op.kind) {
    case OpKind::Load: case OpKind::Store: case OpKind::AtomicRMW: case OpKind::AtomicCas:
    case OpKind::For: case OpKind::If: case OpKind::Yield: case OpKind::Reduce: case OpKind::Scan:
    case OpKind::ClusterReduce: case OpKind::Dot: case OpKind::Barrier:
      return false;
    default: return op.regions.empty();
  }
}

bool plain_reduce(const Op& op) {
  if (op.kind != OpKind::Reduce && op.kind != OpKind::ClusterReduce) return false;
  ReduceKind k = op.red();
  return k == ReduceKind::Sum || k == ReduceKind::Max || k == ReduceKind::Min;
}

bool siblings(const Op& a, const Op& b) {
  if (a.kind != b.kind || !plain_reduce(a) || !plain_reduce(b)) return false;
  if (a.kind == OpKind::ClusterReduce) return !cluster_reduces_tile(a) && !cluster_reduces_tile(b);
  return a.axis == b.axis && a.operand(0)->type.shape == b.operand(0)->type.shape;
}

// Whether `op` reads a result of one of the ops [first, last) of `b`.
bool uses_results(const Op& op, const Block& b, size_t first, size_t last) {
  for (size_t k = first; k < last; ++k)
    for (auto* r : b.ops[k]->results)
      if (std::find(op.operands.begin(), op.operands.end(), r) != op.operands.end()) return true;
  return false;
}

class Scheduler {
 public:
  bool run(Block& b) {
    bool changed = false;
    for (auto& op : b.ops)
      for (auto& r : op->regions) changed |= run(*r);
    for (size_t i = 0; i < b.ops.size(); ++i) {
      if (!plain_reduce(*b.ops[i])) continue;
      size_t end = i + 1;  // the group so far: [i, end)
      while (end < b.ops.size() && siblings(*b.ops[i], *b.ops[end]) && !uses_results(*b.ops[end], b, i, end)) ++end;
      for (size_t j = end; j < b.ops.size(); ++j) {
        if (!siblings(*b.ops[i], *b.ops[j])) continue;
        int shift = move_next_to(b, i, end, j);
        if (shift < 0) continue;
        i += shift;
        end += shift + 1;
        changed = true;
      }
      i = end - 1;
    }
    return changed;
  }

 private:
  // Makes op j the next member of the group [i, end): the ops in [end, j) it depends on
  // (all pure, none using a group result) move in front of the group, op j right after
  // it. Returns how many ops moved in front, or -1 when op j cannot join.
  int move_next_to(Block& b, size_t i, size_t end, size_t j) {
    std::unordered_set<const Value*> group_results;
    for (size_t k = i; k < end; ++k)
      for (auto* r : b.ops[k]->results) group_results.insert(r);
    std::unordered_set<const Op*> needed{b.ops[j].get()};
    for (size_t k = j; k-- > end;) {
      const Op& op = *b.ops[k];
      bool used = false;
      for (auto* r : op.results)
        for (size_t u = k + 1; u <= j && !used; ++u)
          if (needed.count(b.ops[u].get()))
            used = std::find(b.ops[u]->operands.begin(), b.ops[u]->operands.end(), r) != b.ops[u]->operands.end();
      if (!used) continue;
      if (!pure(op)) return -1;
      needed.insert(&op);
    }
    for (size_t k = end; k <= j; ++k) {
      if (!needed.count(b.ops[k].get())) continue;
      for (auto* v : b.ops[k]->operands)
        if (group_results.count(v)) return -1;
    }
    // Stable partition of [end, j]: the needed ops first, in their order.
    std::stable_partition(b.ops.begin() + static_cast<std::ptrdiff_t>(end),
                          b.ops.begin() + static_cast<std::ptrdiff_t>(j) + 1,
                          [&](const std::unique_ptr<Op>& op) { return needed.count(op.get()) != 0; });
    // Now [end, end + n) holds the slice then op j: rotate the slice in front of the group.
    size_t n = needed.size();
    std::rotate(b.ops.begin() + static_cast<std::ptrdiff_t>(i), b.ops.begin() + static_cast<std::ptrdiff_t>(end),
                b.ops.begin() + static_cast<std::ptrdiff_t>(end + n - 1));
    return static_cast<int>(n - 1);
  }
};

}  // namespace

bool group_sibling_reductions(Function& f) { return Scheduler().run(f.body); }

}  // namespace tilefuse::ir
