#include "tilefuse/ir/ir.hpp"

#include <unordered_map>

namespace tilefuse::ir {

const char* name(OpKind k) {
  switch (k) {
#define TF_X(n) case OpKind::n: return #n;
    TILEFUSE_OP_KINDS(TF_X)
#undef TF_X
  }
  return "?";
}
const char* name(BinaryOp k) {
  static const char* n[] = {"add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr"};
  return n[static_cast<int>(k)];
}
const char* name(UnaryOp k) {
  static const char* n[] = {"neg", "not", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin",
                            "cos", "tanh", "erf", "sigmoid", "abs", "floor", "ceil"};
  return n[static_cast<int>(k)];
}
const char* name(CmpPred k) {
  static const char* n[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return n[static_cast<int>(k)];
}
const char* name(ReduceKind k) {
  static const char* n[] = {"sum", "max", "min", "argmax", "argmin", "custom"};
  return n[static_cast<int>(k)];
}
const char* name(AtomicOp k) {
  static const char* n[] = {"add", "max", "min", "xchg", "wait_at_least", "read"};
  return n[static_cast<int>(k)];
}
const char* name(Evict k) {
  static const char* n[] = {"normal", "evict_first", "evict_last", "keep_in_shared"};
  return n[static_cast<int>(k)];
}

Value* Op::mask() const {
  if (kind == OpKind::Load) return operands.size() > 1 ? operands[1] : nullptr;
  if (kind == OpKind::Store || kind == OpKind::AtomicRMW) return operands.size() > 2 ? operands[2] : nullptr;
  return nullptr;
}
Value* Op::other() const { return kind == OpKind::Load && operands.size() > 2 ? operands[2] : nullptr; }
Value* Op::readable() const {
  return kind == OpKind::Load && view_rank == 0 && operands.size() > 3 ? operands[3] : nullptr;
}

Value* Function::new_value(Type t) {
  auto v = std::make_unique<Value>();
  v->id = static_cast<int>(values_.size());
  v->type = std::move(t);
  values_.push_back(std::move(v));
  return values_.back().get();
}

void walk(const Block& b, const std::function<void(Op&)>& fn) {
  for (auto& op : b.ops) {
    fn(*op);
    for (auto& r : op->regions) walk(*r, fn);
  }
}

int count_ops(const Function& f) {
  int n = 0;
  walk(f.body, [&](Op&) { ++n; });
  return n;
}

namespace {
// Deep copy of blocks; `map` takes each source value to its copy.
struct Cloner {
  Function& dst;
  std::unordered_map<const Value*, Value*> map;

  Value* get(const Value* v) const {
    auto it = map.find(v);
    TF_ASSERT(it != map.end(), "clone: value used before definition");
    return it->second;
  }
  void args(const Block& src, Block& out) {
    for (auto* a : src.args) {
      Value* na = dst.new_value(a->type);
      na->block = &out;
      na->index = a->index;
      out.args.push_back(na);
      map[a] = na;
    }
  }
  void ops(const Block& src, Block& out) {
    for (auto& op : src.ops) {
      auto n = std::make_unique<Op>(op->kind);
      n->axis = op->axis; n->start = op->start; n->end = op->end; n->ival = op->ival;
      n->fval = op->fval; n->code = op->code; n->perm = op->perm; n->evict = op->evict;
      n->approx = op->approx; n->acq_rel = op->acq_rel; n->view_rank = op->view_rank; n->loc = op->loc; n->parent = &out;
      for (auto* o : op->operands) n->operands.push_back(get(o));
      for (auto& r : op->regions) {
        auto nb = std::make_unique<Block>();
        nb->parent = n.get();
        args(*r, *nb);
        ops(*r, *nb);
        n->regions.push_back(std::move(nb));
      }
      for (auto* r : op->results) {
        Value* nr = dst.new_value(r->type);
        nr->def = n.get();
        nr->index = r->index;
        n->results.push_back(nr);
        map[r] = nr;
      }
      out.ops.push_back(std::move(n));
    }
  }
};
}  // namespace

std::unique_ptr<Function> clone(const Function& f) {
  auto out = std::make_unique<Function>();
  out->name = f.name; out->meta = f.meta; out->num_warps = f.num_warps; out->num_stages = f.num_stages;
  out->cluster_size = f.cluster_size; out->warp_specialize = f.warp_specialize;
  out->persistent = f.persistent;
  out->min_programs_per_sm = f.min_programs_per_sm;
  Cloner c{*out, {}};
  c.args(f.body, out->body);
  for (auto& p : f.params) out->params.push_back(Param{p.name, c.get(p.value), p.is_const, p.divisibility});
  c.ops(f.body, out->body);
  return out;
}

}  // namespace tilefuse::ir
