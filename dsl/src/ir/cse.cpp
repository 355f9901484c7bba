// Common subexpression elimination with scoped tables (see passes.hpp).
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "tilefuse/ir/passes.hpp"

namespace tilefuse::ir {
namespace {

bool mergeable(const Op& op) {
  switch (op.kind) {
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::AtomicRMW:
    case OpKind::AtomicCas:
    case OpKind::Barrier:
    case OpKind::For:
    case OpKind::If:
    case OpKind::Yield: return false;
    default: return op.regions.empty() && op.results.size() == 1;
  }
}

uint64_t bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

struct OpHash {
  size_t operator()(const Op* op) const {
    size_t h = static_cast<size_t>(op->kind) * 0x9e3779b97f4a7c15ull;
    auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(op->code);
    mix(static_cast<uint64_t>(op->axis));
    mix(static_cast<uint64_t>(op->start));
    mix(static_cast<uint64_t>(op->end));
    mix(static_cast<uint64_t>(op->ival));
    mix(bits(op->fval));
    for (const Value* v : op->operands) mix(reinterpret_cast<uintptr_t>(v));
    for (const Value* v : op->results) {
      mix(static_cast<uint64_t>(v->type.dtype));
      for (auto d : v->type.shape) mix(static_cast<uint64_t>(d));
    }
    return h;
  }
};

struct OpEq {
  bool operator()(const Op* a, const Op* b) const {
    if (a->kind != b->kind || a->code != b->code || a->axis != b->axis || a->start != b->start ||
        a->end != b->end || a->ival != b->ival || bits(a->fval) != bits(b->fval) || a->perm != b->perm ||
        a->evict != b->evict || a->approx != b->approx || a->view_rank != b->view_rank || a->operands != b->operands ||
        a->results.size() != b->results.size())
      return false;
    for (size_t i = 0; i < a->results.size(); ++i)
      if (a->results[i]->type != b->results[i]->type) return false;
    return true;
  }
};

class Cse {
 public:
  bool run(Function& f) {
    block(f.body);
    return changed_;
  }

 private:
  Value* get(Value* v) const {
    for (auto it = repl_.find(v); it != repl_.end(); it = repl_.find(v)) v = it->second;
    return v;
  }

  const Op* lookup(const Op* op) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto hit = it->find(op);
      if (hit != it->end()) return *hit;
    }
    return nullptr;
  }

  // A scope per block: an op in a region may reuse an equal op of an enclosing block
  // (which dominates it), never one of a sibling or nested region.
  void block(Block& b) {
    scopes_.emplace_back();
    std::unordered_set<const Op*> dead;
    for (auto& p : b.ops) {
      Op& op = *p;
      for (auto*& v : op.operands) v = get(v);
      for (auto& r : op.regions) block(*r);
      if (!mergeable(op)) continue;
      if (const Op* prev = lookup(&op)) {
        for (size_t i = 0; i < op.results.size(); ++i) repl_[op.results[i]] = prev->results[i];
        dead.insert(&op);
        changed_ = true;
      } else {
        scopes_.back().insert(&op);
      }
    }
    scopes_.pop_back();
    std::erase_if(b.ops, [&](const std::unique_ptr<Op>& p) {
      if (!dead.count(p.get())) return false;
      for (Value* r : p->results) r->def = nullptr;
      return true;
    });
  }

  std::vector<std::unordered_set<const Op*, OpHash, OpEq>> scopes_;
  std::unordered_map<Value*, Value*> repl_;
  bool changed_ = false;
};

}  // namespace

bool cse(Function& f) { return Cse().run(f); }

}  // namespace tilefuse::ir
