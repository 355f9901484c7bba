// Dead code elimination (see passes.hpp).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tilefuse/ir/passes.hpp"

namespace tilefuse::ir {
namespace {

bool effectful(const Op& op) {
  return op.kind == OpKind::Store || op.kind == OpKind::AtomicRMW || op.kind == OpKind::AtomicCas ||
         op.kind == OpKind::Barrier;
}

bool has_side_effects(const Op& op) {
  if (effectful(op)) return true;
  for (auto& r : op.regions)
    for (auto& o : r->ops)
      if (has_side_effects(*o)) return true;
  return false;
}

class Dce {
 public:
  bool run(Function& f) {
    walk(f.body, [&](Op& op) {
      for (Value* v : op.operands) ++uses_[v];
    });
    block(f.body);
    return changed_;
  }

 private:
  bool unused(const Value* v) const {
    auto it = uses_.find(v);
    return it == uses_.end() || it->second == 0;
  }
  void drop_uses(Op& op) {
    for (Value* v : op.operands) --uses_[v];
    for (auto& r : op.regions)
      for (auto& o : r->ops) drop_uses(*o);
  }
  void erase(Block& b, const std::unordered_set<const Op*>& ops) {
    std::erase_if(b.ops, [&](const std::unique_ptr<Op>& p) {
      if (!ops.count(p.get())) return false;
      for (Value* r : p->results) r->def = nullptr;
      return true;
    });
  }

  // Reverse program order: an op's users are visited (and possibly removed) before it.
  void block(Block& b) {
    std::unordered_set<const Op*> dead;
    for (size_t i = b.ops.size(); i-- > 0;) {
      Op& op = *b.ops[i];
      if (op.kind == OpKind::For) prune_for(op);
      if (op.kind == OpKind::If) prune_if(op);
      bool removable = op.kind != OpKind::Yield && !has_side_effects(op) &&
                       std::all_of(op.results.begin(), op.results.end(), [&](Value* v) { return unused(v); });
      if (removable) {
        drop_uses(op);
        dead.insert(&op);
        changed_ = true;
        continue;
      }
      for (auto& r : op.regions) block(*r);
    }
    erase(b, dead);
  }

  void prune_if(Op& op) {
    for (int i = static_cast<int>(op.results.size()) - 1; i >= 0; --i) {
      if (!unused(op.results[i])) continue;
      for (auto& r : op.regions) {
        Op* y = r->terminator();
        --uses_[y->operands[i]];
        y->operands.erase(y->operands.begin() + i);
      }
      op.results[i]->def = nullptr;
      op.results.erase(op.results.begin() + i);
      changed_ = true;
    }
    for (size_t i = 0; i < op.results.size(); ++i) op.results[i]->index = static_cast<int>(i);
  }

  // An unused loop result can go when its iteration value only feeds its own update:
  // every (transitive) user of the body argument is a pure op without regions, and
  // none reaches another yield operand or a nested yield.
  void prune_for(Op& op) {
    Block& body = *op.region(0);
    for (int i = static_cast<int>(op.results.size()) - 1; i >= 0; --i) {
      if (!unused(op.results[i])) continue;
      std::unordered_map<const Value*, std::vector<Op*>> users;
      walk(body, [&](Op& o) {
        for (Value* v : o.operands) users[v].push_back(&o);
      });
      Op* y = body.terminator();
      std::vector<const Value*> work{body.args[i + 1]};
      std::unordered_set<const Value*> seen{body.args[i + 1]};
      std::unordered_set<const Op*> slice;
      bool ok = true;
      while (ok && !work.empty()) {
        const Value* v = work.back();
        work.pop_back();
        for (Op* u : users[v]) {
          if (u == y) {
            for (size_t k = 0; k < y->operands.size(); ++k)
              if (y->operands[k] == v && k != static_cast<size_t>(i)) ok = false;
            continue;
          }
          if (u->kind == OpKind::Yield || effectful(*u) || !u->regions.empty()) {
            ok = false;
            break;
          }
          if (!slice.insert(u).second) continue;
          for (Value* r : u->results)
            if (seen.insert(r).second) work.push_back(r);
        }
      }
      if (!ok) continue;
      // Remove the slice, the yield operand, the body argument, the init and the result.
      std::unordered_map<Block*, std::unordered_set<const Op*>> by_block;
      for (const Op* s : slice) {
        Op* m = const_cast<Op*>(s);
        for (Value* v : m->operands) --uses_[v];
        by_block[m->parent].insert(s);
      }
      for (auto& [blk, ops] : by_block) erase(*blk, ops);
      --uses_[y->operands[i]];
      y->operands.erase(y->operands.begin() + i);
      --uses_[op.operands[i + 3]];
      op.operands.erase(op.operands.begin() + 3 + i);
      body.args[i + 1]->block = nullptr;
      body.args.erase(body.args.begin() + 1 + i);
      op.results[i]->def = nullptr;
      op.results.erase(op.results.begin() + i);
      changed_ = true;
    }
    for (size_t i = 0; i < op.results.size(); ++i) {
      op.results[i]->index = static_cast<int>(i);
      body.args[i + 1]->index = static_cast<int>(i + 1);
    }
  }

  std::unordered_map<const Value*, int> uses_;
  bool changed_ = false;
};

}  // namespace

bool dce(Function& f) { return Dce().run(f); }

}  // namespace tilefuse::ir
