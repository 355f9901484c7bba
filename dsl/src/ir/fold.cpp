// Constant folding and algebraic simplification (see passes.hpp for the rules).
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "const_eval.hpp"
#include "tilefuse/ir/builder.hpp"
#include "tilefuse/ir/passes.hpp"

namespace tilefuse::ir {
namespace {

using detail::constant_of;
using detail::Scalar;

class Folder {
 public:
  explicit Folder(Function& f) : f_(f) {}
  bool run() {
    block(f_.body);
    return changed_;
  }

 private:
  Value* get(Value* v) const {
    for (auto it = repl_.find(v); it != repl_.end(); it = repl_.find(v)) v = it->second;
    return v;
  }

  // Ops are visited in program order, so a replacement is recorded before any use of
  // the replaced value is visited and operands are simply remapped on the way.
  void block(Block& b) {
    for (size_t i = 0; i < b.ops.size(); ++i) {
      Op& op = *b.ops[i];
      for (auto*& v : op.operands) v = get(v);
      if (op.kind == OpKind::If && inline_if(b, i)) {
        --i;  // continue with the first inlined op
        continue;
      }
      for (auto& r : op.regions) block(*r);
      simplify(op);
    }
    std::erase_if(b.ops, [&](const std::unique_ptr<Op>& p) {
      if (!dead_.erase(p.get())) return false;
      for (Value* r : p->results) r->def = nullptr;
      return true;
    });
  }

  void replace(Op& op, Value* with) {
    repl_[op.result()] = with;
    dead_.insert(&op);
    changed_ = true;
  }

  void make_constant(Op& op, Scalar s) {
    DType d = op.result()->type.dtype;
    op.kind = OpKind::Constant;
    op.operands.clear();
    op.code = 0;
    op.axis = 0;
    op.start = op.end = 0;
    op.perm.clear();
    op.approx = false;
    op.ival = is_float(d) ? 0 : s.i;
    op.fval = is_float(d) ? s.f : 0;
    changed_ = true;
  }

  void make_splat(Op& op, Value* scalar) {
    op.kind = OpKind::Splat;
    op.operands = {scalar};
    op.axis = 0;
    op.perm.clear();
    changed_ = true;
  }

  void simplify(Op& op) {
    switch (op.kind) {
      case OpKind::Binary: binary(op); break;
      case OpKind::Unary: unary(op); break;
      case OpKind::Compare: compare(op); break;
      case OpKind::Select: select(op); break;
      case OpKind::Fma: fma(op); break;
      case OpKind::Cast: cast(op); break;
      case OpKind::AddPtr: {
        auto c = constant_of(op.operand(1));
        if (c && c->i == 0) replace(op, op.operand(0));
        break;
      }
      case OpKind::Splat:
      case OpKind::Broadcast:
      case OpKind::ExpandDims:
      case OpKind::Reshape:
      case OpKind::Trans: shape(op); break;
      case OpKind::For: loop_invariants(op); break;
      case OpKind::ClusterReduce:  // a cluster of one program: the value itself
        if (f_.cluster_size == 1) {
          for (size_t i = 1; i < op.results.size(); ++i) repl_[op.results[i]] = op.operands[i];
          replace(op, op.operand(0));
        }
        break;
      case OpKind::If: same_in_both_branches(op); break;
      default: break;
    }
  }

  void binary(Op& op) {
    Value *x = op.operand(0), *y = op.operand(1);
    DType d = op.result()->type.dtype;
    auto a = constant_of(x), b = constant_of(y);
    if (a && b) {
      if (auto r = detail::eval_binary(op.bin(), d, *a, *b)) return make_constant(op, *r);
    }
    bool fl = is_float(d);
    auto int_is = [&](const std::optional<Scalar>& c, int64_t v) { return !fl && c && c->i == detail::wrap_int(v, d); };
    auto float_is = [&](const std::optional<Scalar>& c, double v) {
      return fl && c && c->f == v && std::signbit(c->f) == std::signbit(v);
    };
    auto one = [&](const std::optional<Scalar>& c) { return int_is(c, 1) || float_is(c, 1.0); };
    switch (op.bin()) {
      case BinaryOp::Add:  // for floats only -0.0 is the identity (+0.0 + -0.0 is +0.0)
        if (int_is(b, 0) || float_is(b, -0.0)) return replace(op, x);
        if (int_is(a, 0) || float_is(a, -0.0)) return replace(op, y);
        break;
      case BinaryOp::Sub:
        if (int_is(b, 0) || float_is(b, 0.0)) return replace(op, x);
        if (!fl && x == y) return make_constant(op, Scalar::of_int(0));
        break;
      case BinaryOp::Mul:
        if (one(b)) return replace(op, x);
        if (one(a)) return replace(op, y);
        if (int_is(b, 0)) return replace(op, y);  // x*0 is not 0 for float inf/NaN/-x
        if (int_is(a, 0)) return replace(op, x);
        break;
      case BinaryOp::Div:
        if (one(b)) return replace(op, x);
        break;
      case BinaryOp::Rem:
        if (int_is(b, 1)) return make_constant(op, Scalar::of_int(0));
        break;
      case BinaryOp::Min:
      case BinaryOp::Max:
        if (x == y) return replace(op, x);
        break;
      case BinaryOp::And:
        if (x == y || int_is(b, -1)) return replace(op, x);
        if (int_is(a, -1)) return replace(op, y);
        if (int_is(b, 0)) return replace(op, y);
        if (int_is(a, 0)) return replace(op, x);
        break;
      case BinaryOp::Or:
        if (x == y || int_is(b, 0)) return replace(op, x);
        if (int_is(a, 0)) return replace(op, y);
        if (int_is(b, -1)) return replace(op, y);
        if (int_is(a, -1)) return replace(op, x);
        break;
      case BinaryOp::Xor:
        if (int_is(b, 0)) return replace(op, x);
        if (int_is(a, 0)) return replace(op, y);
        if (x == y) return make_constant(op, Scalar::of_int(0));
        break;
      case BinaryOp::Shl:
      case BinaryOp::Shr:
        if (int_is(b, 0)) return replace(op, x);
        break;
    }
  }

  void unary(Op& op) {
    Value* x = op.operand(0);
    if (auto a = constant_of(x)) {
      if (auto r = detail::eval_unary(op.un(), op.result()->type.dtype, *a, op.approx)) return make_constant(op, *r);
    }
    // neg(neg(x)) and not(not(x)) are x (exact, integers wrap).
    const Op* d = x->def;
    if ((op.un() == UnaryOp::Neg || op.un() == UnaryOp::Not) && d && d->kind == OpKind::Unary && d->code == op.code)
      replace(op, d->operand(0));
  }

  void compare(Op& op) {
    Value *x = op.operand(0), *y = op.operand(1);
    DType d = x->type.dtype;
    auto a = constant_of(x), b = constant_of(y);
    if (a && b) {
      if (auto r = detail::eval_compare(op.cmp(), d, *a, *b)) return make_constant(op, Scalar::of_int(*r));
    }
    if (x == y && !is_float(d)) {  // floats: NaN compares unequal to itself
      CmpPred p = op.cmp();
      make_constant(op, Scalar::of_int(p == CmpPred::Eq || p == CmpPred::Le || p == CmpPred::Ge));
    }
  }

  void select(Op& op) {
    if (auto c = constant_of(op.operand(0))) return replace(op, op.operand(c->i ? 1 : 2));
    if (op.operand(1) == op.operand(2)) replace(op, op.operand(1));
  }

  void fma(Op& op) {
    auto a = constant_of(op.operand(0)), b = constant_of(op.operand(1)), c = constant_of(op.operand(2));
    if (a && b && c) {
      if (auto r = detail::eval_fma(op.result()->type.dtype, *a, *b, *c)) make_constant(op, *r);
    }
  }

  void cast(Op& op) {
    Value* x = op.operand(0);
    if (x->type == op.result()->type) return replace(op, x);
    if (auto a = constant_of(x)) {
      if (auto r = detail::eval_cast(x->type.dtype, op.result()->type.dtype, *a)) make_constant(op, *r);
    }
  }

  // Shape ops of uniform tiles stay uniform: constants stay constants, splats splats.
  void shape(Op& op) {
    Value* x = op.operand(0);
    const Type& t = op.result()->type;
    bool identity_perm = true;
    for (size_t k = 0; k < op.perm.size(); ++k) identity_perm = identity_perm && op.perm[k] == static_cast<int>(k);
    if (x->type == t && (op.kind != OpKind::Trans || identity_perm)) return replace(op, x);
    if (auto c = constant_of(x)) return make_constant(op, *c);
    const Op* d = x->def;
    if (!d) return;
    if (d->kind == OpKind::Splat && op.kind != OpKind::Splat) return make_splat(op, d->operand(0));
    if ((op.kind == OpKind::Broadcast || op.kind == OpKind::Reshape) && d->kind == op.kind) {
      op.operands = {d->operand(0)};  // broadcast(broadcast(x)), reshape(reshape(x))
      changed_ = true;
      if (op.operand(0)->type == t) replace(op, op.operand(0));
    }
  }

  // Iteration values the body yields unchanged (or yields as their initial value) are
  // the init throughout: drop them from the loop.
  void loop_invariants(Op& op) {
    Block& body = *op.region(0);
    Op* y = body.terminator();
    for (int i = static_cast<int>(op.results.size()) - 1; i >= 0; --i) {
      Value* arg = body.args[i + 1];
      Value* init = op.operand(i + 3);
      Value* next = y->operand(i);
      if (next != arg && next != init) continue;
      replace_uses(body, arg, init);
      repl_[op.results[i]] = init;
      op.results[i]->def = nullptr;
      op.results.erase(op.results.begin() + i);
      op.operands.erase(op.operands.begin() + 3 + i);
      body.args.erase(body.args.begin() + 1 + i);
      y->operands.erase(y->operands.begin() + i);
      changed_ = true;
    }
    for (size_t i = 0; i < op.results.size(); ++i) {
      op.results[i]->index = static_cast<int>(i);
      body.args[i + 1]->index = static_cast<int>(i + 1);
    }
  }

  // A value both branches yield is defined before the If (it is visible in both): use it.
  void same_in_both_branches(Op& op) {
    Op* y0 = op.region(0)->terminator();
    Op* y1 = op.region(1)->terminator();
    for (int i = static_cast<int>(op.results.size()) - 1; i >= 0; --i) {
      if (y0->operand(i) != y1->operand(i)) continue;
      repl_[op.results[i]] = y0->operand(i);
      op.results[i]->def = nullptr;
      op.results.erase(op.results.begin() + i);
      y0->operands.erase(y0->operands.begin() + i);
      y1->operands.erase(y1->operands.begin() + i);
      changed_ = true;
    }
    for (size_t i = 0; i < op.results.size(); ++i) op.results[i]->index = static_cast<int>(i);
  }

  // If with a constant condition: splice the taken branch in place of the If.
  bool inline_if(Block& b, size_t i) {
    Op& op = *b.ops[i];
    auto c = constant_of(op.operand(0));
    if (!c) return false;
    Block& taken = *op.region(c->i ? 0 : 1);
    Op* y = taken.terminator();
    for (size_t k = 0; k < op.results.size(); ++k) {
      repl_[op.results[k]] = y->operand(static_cast<int>(k));
      op.results[k]->def = nullptr;
    }
    std::vector<std::unique_ptr<Op>> moved;
    for (size_t k = 0; k + 1 < taken.ops.size(); ++k) {
      taken.ops[k]->parent = &b;
      moved.push_back(std::move(taken.ops[k]));
    }
    b.ops.erase(b.ops.begin() + i);  // destroys the If with its regions
    b.ops.insert(b.ops.begin() + i, std::make_move_iterator(moved.begin()), std::make_move_iterator(moved.end()));
    changed_ = true;
    return true;
  }

  Function& f_;
  std::unordered_map<Value*, Value*> repl_;
  std::unordered_set<const Op*> dead_;
  bool changed_ = false;
};

}  // namespace

bool fold_constants(Function& f) { return Folder(f).run(); }

}  // namespace tilefuse::ir
