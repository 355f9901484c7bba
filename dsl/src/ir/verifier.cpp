// The tile IR verifier: structural and type invariants per op kind (see verifier.hpp).
#include "tilefuse/ir/verifier.hpp"

#include "tilefuse/ir/cluster_uniform.hpp"

#include <algorithm>
#include <unordered_set>

namespace tilefuse::ir {

std::string describe(const Op& op) {
  std::string r = name(op.kind);
  switch (op.kind) {
    case OpKind::Binary: r += std::string(".") + name(op.bin()); break;
    case OpKind::Unary: r += std::string(".") + name(op.un()); break;
    case OpKind::Compare: r += std::string(".") + name(op.cmp()); break;
    case OpKind::Reduce:
    case OpKind::Scan:
    case OpKind::ClusterReduce: r += std::string(".") + name(op.red()); break;
    case OpKind::AtomicRMW: r += std::string(".") + name(op.atomic()); break;
    default: break;
  }
  r += "(";
  for (size_t i = 0; i < op.operands.size(); ++i)
    r += (i ? ", " : "") + (op.operands[i] ? op.operands[i]->type.str() : std::string("<null>"));
  r += ")";
  if (!op.results.empty()) {
    r += " -> ";
    for (size_t i = 0; i < op.results.size(); ++i)
      r += (i ? ", " : "") + (op.results[i] ? op.results[i]->type.str() : std::string("<null>"));
  }
  return r;
}

namespace {

std::string list_types(const std::vector<Value*>& vs, size_t from = 0) {
  std::string r = "(";
  for (size_t i = from; i < vs.size(); ++i) r += (i > from ? ", " : "") + vs[i]->type.str();
  return r + ")";
}

class Verifier {
 public:
  explicit Verifier(const Function& f) : f_(f) {}

  void run() {
    if (f_.body.parent) fail_fn("the function body has a parent op");
    int cs = f_.cluster_size;
    if (cs < 1 || cs > kMaxClusterSize || (cs & (cs - 1)))
      fail_fn("cluster size " + std::to_string(cs) + " is not a power of two from 1 to " +
              std::to_string(kMaxClusterSize));
    if (f_.params.size() != f_.body.args.size())
      fail_fn("the function has " + std::to_string(f_.params.size()) + " params but its body has " +
              std::to_string(f_.body.args.size()) + " arguments");
    for (size_t i = 0; i < f_.params.size(); ++i)
      if (f_.params[i].value != f_.body.args[i])
        fail_fn("param '" + f_.params[i].name + "' is not body argument #" + std::to_string(i));
    block(f_.body, nullptr);
  }

 private:
  [[noreturn]] void fail(const Op& op, const std::string& what) const {
    user_error("verifier: " + what + " in " + describe(op), op.loc);
  }
  [[noreturn]] void fail_fn(const std::string& what) const {
    throw UserError("verifier: " + what + " in kernel @" + f_.name);
  }

  void define(const Op* op, Value* v, const std::string& what) {
    if (!v) {
      if (op) fail(*op, what + " is null");
      fail_fn(what + " is null");
    }
    if (!defined_.insert(v).second) {
      if (op) fail(*op, what + " is defined twice");
      fail_fn(what + " is defined twice");
    }
    if (op) check_shape(*op, v->type, what);
    scopes_.back().insert(v);
  }

  bool visible(Value* v) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (it->count(v)) return true;
    return false;
  }

  void check_shape(const Op& op, const Type& t, const std::string& what) const {
    for (auto d : t.shape)
      if (!is_pow2(d)) fail(op, what + " has type " + t.str() + " whose dimensions are not powers of two");
  }

  // `owner` is the op owning the region, null for the function body.
  void block(const Block& b, const Op* owner) {
    scopes_.emplace_back();
    for (size_t i = 0; i < b.args.size(); ++i) {
      Value* a = b.args[i];
      std::string what = "block argument #" + std::to_string(i);
      if (a && (a->def || a->block != &b || a->index != static_cast<int>(i))) {
        if (owner) fail(*owner, what + " has a stale owner or index");
        fail_fn(what + " has a stale owner or index");
      }
      define(owner, a, what);
    }
    for (size_t i = 0; i < b.ops.size(); ++i) {
      const Op& op = *b.ops[i];
      if (op.parent != &b) fail(op, "the op's parent pointer is not its block");
      if (op.kind == OpKind::Yield && !owner) fail(op, "yield outside a region");
      if (op.kind == OpKind::Yield && i + 1 != b.ops.size()) fail(op, "yield is not the last op of its region");
      this->op(op);
    }
    if (owner && (b.ops.empty() || b.ops.back()->kind != OpKind::Yield))
      fail(*owner, "a region does not end with a yield");
    scopes_.pop_back();
  }

  void op(const Op& op) {
    for (size_t i = 0; i < op.operands.size(); ++i) {
      Value* v = op.operands[i];
      if (!v) fail(op, "operand #" + std::to_string(i) + " is null");
      if (!visible(v))
        fail(op, "operand #" + std::to_string(i) + " (" + v->type.str() + ") is " +
                     (defined_.count(v) ? "not visible here (defined inside another region)"
                                        : "used before its definition"));
    }
    for (size_t r = 0; r < op.regions.size(); ++r) {
      const Block* b = op.regions[r].get();
      if (!b) fail(op, "region #" + std::to_string(r) + " is null");
      if (b->parent != &op) fail(op, "region #" + std::to_string(r) + " has a stale parent pointer");
      block(*b, &op);
    }
    for (size_t i = 0; i < op.results.size(); ++i) {
      Value* v = op.results[i];
      std::string what = "result #" + std::to_string(i);
      if (v && (v->def != &op || v->index != static_cast<int>(i) || v->block))
        fail(op, what + " has a stale def pointer or index");
      define(&op, v, what);
    }
    check(op);
  }

  // --- per-kind checks -------------------------------------------------------------

  void counts(const Op& op, size_t lo, size_t hi, size_t results, size_t regions = 0) const {
    size_t n = op.operands.size();
    if (n < lo || n > hi)
      fail(op, "expected " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                   " operands, got " + std::to_string(n));
    if (op.results.size() != results)
      fail(op, "expected " + std::to_string(results) + " results, got " + std::to_string(op.results.size()));
    if (op.regions.size() != regions)
      fail(op, "expected " + std::to_string(regions) + " regions, got " + std::to_string(op.regions.size()));
  }

  void not_ptr(const Op& op, const Value* v, const char* what) const {
    if (v->type.is_ptr) fail(op, std::string(what) + " is a pointer " + v->type.str());
  }
  void same(const Op& op, const Value* a, const Value* b, const char* what) const {
    if (a->type != b->type) fail(op, std::string(what) + ": " + a->type.str() + " vs " + b->type.str());
  }
  void is_bool_of(const Op& op, const Value* m, const Shape& s, const char* what) const {
    if (m->type.is_ptr || m->type.dtype != DType::i1 || m->type.shape != s)
      fail(op, std::string(what) + " has type " + m->type.str() + ", expected " +
                   Type::tile(DType::i1, s).str());
  }
  // A view load's or store's operands 3..: base, dims[R], strides[R], coords[R] after
  // three data operands (load: ptr, mask, other; store: ptr, value, mask).
  void view_description(const Op& op, size_t results, const char* moved) const {
    const auto& o = op.operands;
    size_t r = static_cast<size_t>(op.view_rank);
    counts(op, 4 + 3 * r, 4 + 3 * r, results);
    if (!o[3]->type.is_ptr || !o[3]->type.is_scalar() || o[3]->type.dtype != o[0]->type.dtype)
      fail(op, "view base " + o[3]->type.str() + " is not a scalar pointer to the " + moved + " dtype");
    for (size_t i = 4; i < o.size(); ++i)
      if (!o[i]->type.is_scalar() || o[i]->type.is_ptr || !is_int(o[i]->type.dtype))
        fail(op, "view dimension, stride or coordinate " + o[i]->type.str() + " is not an integer scalar");
    if (static_cast<size_t>(o[0]->type.rank()) > r)
      fail(op, "view block of rank " + std::to_string(o[0]->type.rank()) + " on a view of rank " + std::to_string(r));
  }

  void result_is(const Op& op, const Type& t) const {
    if (op.result()->type != t)
      fail(op, "result type " + op.result()->type.str() + " should be " + t.str());
  }
  int axis_in(const Op& op, int rank) const {
    if (op.axis < 0 || op.axis >= rank)
      fail(op, "axis " + std::to_string(op.axis) + " is out of range for rank " + std::to_string(rank));
    return op.axis;
  }
  const Op& yield_of(const Op& op, int region) const { return *op.region(region)->ops.back(); }
  void yields_match(const Op& op, int region, const std::vector<Value*>& want, const char* what) const {
    const Op& y = yield_of(op, region);
    bool ok = y.operands.size() == want.size();
    for (size_t i = 0; ok && i < want.size(); ++i) ok = y.operands[i]->type == want[i]->type;
    if (!ok) fail(op, std::string(what) + " yields " + list_types(y.operands) + ", expected " + list_types(want));
  }

  void check(const Op& op) const {
    const auto& o = op.operands;
    switch (op.kind) {
      case OpKind::ProgramId:
      case OpKind::NumPrograms:
        counts(op, 0, 0, 1);
        if (op.axis < 0 || op.axis > 2) fail(op, "axis " + std::to_string(op.axis) + " is not 0, 1 or 2");
        result_is(op, Type::scalar(DType::i32));
        break;
      case OpKind::Constant:
        counts(op, 0, 0, 1);
        not_ptr(op, op.result(), "constant");
        if (op.result()->type.dtype == DType::i1 && op.ival != 0 && op.ival != 1)
          fail(op, "i1 constant has value " + std::to_string(op.ival));
        break;
      case OpKind::Arange:
        counts(op, 0, 0, 1);
        if (op.end <= op.start)
          fail(op, "arange(" + std::to_string(op.start) + ", " + std::to_string(op.end) + ") is empty");
        result_is(op, Type::tile(DType::i32, {op.end - op.start}));
        break;
      case OpKind::Splat:
        counts(op, 1, 1, 1);
        if (!o[0]->type.is_scalar()) fail(op, "splat operand " + o[0]->type.str() + " is not a scalar");
        if (!op.result()->type.is_tile() || op.result()->type.element() != o[0]->type)
          fail(op, "splat result " + op.result()->type.str() + " is not a tile of " + o[0]->type.str());
        break;
      case OpKind::Broadcast: {
        counts(op, 1, 1, 1);
        const Type& in = o[0]->type;
        const Type& out = op.result()->type;
        bool ok = in.is_tile() && in.element() == out.element() && in.rank() == out.rank();
        for (int i = 0; ok && i < in.rank(); ++i) ok = in.shape[i] == out.shape[i] || in.shape[i] == 1;
        if (!ok) fail(op, "cannot broadcast " + in.str() + " to " + out.str());
        break;
      }
      case OpKind::ExpandDims: {
        counts(op, 1, 1, 1);
        if (op.axis < 0 || op.axis > o[0]->type.rank())
          fail(op, "axis " + std::to_string(op.axis) + " is out of range for rank " + std::to_string(o[0]->type.rank()));
        Shape s = o[0]->type.shape;
        s.insert(s.begin() + op.axis, 1);
        result_is(op, o[0]->type.with_shape(s));
        break;
      }
      case OpKind::Reshape:
        counts(op, 1, 1, 1);
        if (op.result()->type.element() != o[0]->type.element() || op.result()->type.numel() != o[0]->type.numel())
          fail(op, "reshape changes the element type or the number of elements");
        break;
      case OpKind::Trans: {
        counts(op, 1, 1, 1);
        int r = o[0]->type.rank();
        std::vector<int> sorted = op.perm;
        std::sort(sorted.begin(), sorted.end());
        bool ok = r >= 2 && static_cast<int>(sorted.size()) == r;
        for (int i = 0; ok && i < r; ++i) ok = sorted[i] == i;
        if (!ok) fail(op, "perm is not a permutation of the " + std::to_string(r) + " axes");
        Shape s(r);
        for (int i = 0; i < r; ++i) s[i] = o[0]->type.shape[op.perm[i]];
        result_is(op, o[0]->type.with_shape(s));
        break;
      }
      case OpKind::Binary: {
        counts(op, 2, 2, 1);
        same(op, o[0], o[1], "operand types differ");
        not_ptr(op, o[0], "operand");
        if (op.code > static_cast<uint8_t>(BinaryOp::Shr)) fail(op, "unknown binary code " + std::to_string(op.code));
        BinaryOp b = op.bin();
        bool bitwise = b == BinaryOp::And || b == BinaryOp::Or || b == BinaryOp::Xor || b == BinaryOp::Shl ||
                       b == BinaryOp::Shr;
        if (bitwise && is_float(o[0]->type.dtype))
          fail(op, std::string("bitwise ") + name(b) + " of float operands " + o[0]->type.str());
        result_is(op, o[0]->type);
        break;
      }
      case OpKind::Unary: {
        counts(op, 1, 1, 1);
        not_ptr(op, o[0], "operand");
        if (op.code > static_cast<uint8_t>(UnaryOp::Ceil)) fail(op, "unknown unary code " + std::to_string(op.code));
        UnaryOp u = op.un();
        bool math = u != UnaryOp::Neg && u != UnaryOp::Not && u != UnaryOp::Abs;
        if (math && !is_float(o[0]->type.dtype))
          fail(op, std::string(name(u)) + " of a non-float operand " + o[0]->type.str());
        if (u == UnaryOp::Not && is_float(o[0]->type.dtype)) fail(op, "not of a float operand " + o[0]->type.str());
        result_is(op, o[0]->type);
        break;
      }
      case OpKind::Compare:
        counts(op, 2, 2, 1);
        same(op, o[0], o[1], "operand types differ");
        not_ptr(op, o[0], "operand");
        if (op.code > static_cast<uint8_t>(CmpPred::Ge)) fail(op, "unknown predicate " + std::to_string(op.code));
        result_is(op, o[0]->type.with_dtype(DType::i1));
        break;
      case OpKind::Select:
        counts(op, 3, 3, 1);
        same(op, o[1], o[2], "select arms differ");
        is_bool_of(op, o[0], o[1]->type.shape, "condition");
        result_is(op, o[1]->type);
        break;
      case OpKind::Fma:
        counts(op, 3, 3, 1);
        same(op, o[0], o[1], "operand types differ");
        same(op, o[0], o[2], "operand types differ");
        if (o[0]->type.is_ptr || !is_float(o[0]->type.dtype)) fail(op, "fma of non-float " + o[0]->type.str());
        result_is(op, o[0]->type);
        break;
      case OpKind::Cast:
        counts(op, 1, 1, 1);
        not_ptr(op, o[0], "operand");
        not_ptr(op, op.result(), "result");
        if (op.result()->type.shape != o[0]->type.shape)
          fail(op, "cast changes the shape from " + shape_str(o[0]->type.shape) + " to " +
                       shape_str(op.result()->type.shape));
        break;
      case OpKind::AddPtr:
        counts(op, 2, 2, 1);
        if (!o[0]->type.is_ptr) fail(op, "first operand " + o[0]->type.str() + " is not a pointer");
        if (o[1]->type.is_ptr || !is_int(o[1]->type.dtype) || o[1]->type.dtype == DType::i1)
          fail(op, "offset " + o[1]->type.str() + " is not an integer");
        if (o[1]->type.shape != o[0]->type.shape)
          fail(op, "offset shape " + shape_str(o[1]->type.shape) + " differs from pointer shape " +
                       shape_str(o[0]->type.shape));
        result_is(op, o[0]->type);
        break;
      case OpKind::AlignPtr:
        counts(op, 1, 1, 1);
        if (!o[0]->type.is_ptr || !o[0]->type.is_scalar()) fail(op, "operand " + o[0]->type.str() + " is not a scalar pointer");
        if (op.ival < byte_size(o[0]->type.dtype) || op.ival > 128 || (op.ival & (op.ival - 1)))
          fail(op, "alignment " + std::to_string(op.ival) + " is not a power of two in [element size, 128]");
        if (op.code > 1) fail(op, "code " + std::to_string(op.code) + " is not 0 (pointer) or 1 (elements)");
        result_is(op, op.code ? Type::scalar(DType::i32) : o[0]->type);
        break;
      case OpKind::Load: {
        if (op.view_rank) {
          view_description(op, 1, "loaded");
        } else {
          counts(op, 1, 4, 1);
        }
        const Type& p = o[0]->type;
        if (!p.is_ptr) fail(op, "load from " + p.str() + ", which is not a pointer");
        Type val{p.dtype, false, p.shape};
        if (o.size() > 1) is_bool_of(op, o[1], p.shape, "mask");
        if (o.size() > 2 && o[2]->type != val)
          fail(op, "other has type " + o[2]->type.str() + ", expected " + val.str());
        if (op.readable()) is_bool_of(op, op.readable(), p.shape, "readable");
        result_is(op, val);
        break;
      }
      case OpKind::Store:
      case OpKind::AtomicRMW: {
        bool st = op.kind == OpKind::Store;
        if (op.view_rank && st) {  // (ptr, value, mask, base, dims[R], strides[R], coords[R])
          view_description(op, 0, "stored");
        } else if (op.view_rank) {
          fail(op, "only loads and stores describe a tensor view");
        } else {
          counts(op, 2, 3, st ? 0 : 1);
        }
        const Type& p = o[0]->type;
        if (!p.is_ptr) fail(op, std::string(st ? "store" : "atomic") + " to " + p.str() + ", which is not a pointer");
        const Type& v = o[1]->type;
        if (v.is_ptr) fail(op, "value is a pointer " + v.str());
        if (v.dtype != p.dtype)
          fail(op, std::string(st ? "store" : "atomic") + " value dtype " + name(v.dtype) + " differs from pointee " +
                       name(p.dtype));
        if (v.shape != p.shape)
          fail(op, "value shape " + shape_str(v.shape) + " differs from pointer shape " + shape_str(p.shape));
        if (o.size() > 2) is_bool_of(op, o[2], p.shape, "mask");
        if (!st) {
          if (op.code > static_cast<uint8_t>(AtomicOp::Read))
            fail(op, "unknown atomic code " + std::to_string(op.code));
          if (op.atomic() == AtomicOp::WaitAtLeast &&
              (!p.shape.empty() || (p.dtype != DType::i32 && (p.dtype != DType::i64 || op.acq_rel)) || o.size() > 2))
            fail(op, "wait_at_least takes one scalar i32 element (i32 or i64 relaxed) without a mask");
          if (op.atomic() == AtomicOp::Read &&
              (!p.shape.empty() || (p.dtype != DType::i32 && p.dtype != DType::i64) || o.size() > 2 || op.acq_rel))
            fail(op, "load_relaxed takes one scalar i32 or i64 element without a mask");
          result_is(op, v);
        }
        break;
      }
      case OpKind::AtomicCas: {
        counts(op, 3, 3, 1);
        const Type& p = o[0]->type;
        if (!p.is_ptr) fail(op, "atomic_cas on " + p.str() + ", which is not a pointer");
        Type val{p.dtype, false, p.shape};
        if (o[1]->type != val || o[2]->type != val)
          fail(op, "compare/value types " + o[1]->type.str() + ", " + o[2]->type.str() + " should be " + val.str());
        result_is(op, val);
        break;
      }
      case OpKind::Reduce:
      case OpKind::Scan: {
        bool custom = op.kind == OpKind::Reduce && op.red() == ReduceKind::Custom;
        counts(op, 1, 1, 1, custom ? 1 : 0);
        const Type& in = o[0]->type;
        if (!in.is_tile() || in.is_ptr) fail(op, "operand " + in.str() + " is not a tile of values");
        if (op.code > static_cast<uint8_t>(ReduceKind::Custom)) fail(op, "unknown reduce kind " + std::to_string(op.code));
        int a = axis_in(op, in.rank());
        if (op.kind == OpKind::Scan) {
          if (op.red() != ReduceKind::Sum) fail(op, std::string("scan with ") + name(op.red()));
          result_is(op, in);
          break;
        }
        Shape s = in.shape;
        s.erase(s.begin() + a);
        bool arg = op.red() == ReduceKind::Argmax || op.red() == ReduceKind::Argmin;
        result_is(op, Type{arg ? DType::i32 : in.dtype, false, s});
        if (custom) {
          const Block& b = *op.region(0);
          if (b.args.size() != 2 || b.args[0]->type != in.element() || b.args[1]->type != in.element())
            fail(op, "combine region takes " + list_types(b.args) + ", expected (" + in.element().str() + ", " +
                         in.element().str() + ")");
          yields_match(op, 0, {b.args[0]}, "combine region");
        }
        break;
      }
      case OpKind::ClusterReduce: {
        bool custom = op.red() == ReduceKind::Custom;
        size_t n = custom ? o.size() : 1;
        if (n < 1 || n > kMaxClusterValues) fail(op, std::to_string(n) + " values (1 to 8 allowed)");
        counts(op, n, n, n, custom ? 1 : 0);
        const Type& in = o[0]->type;
        if ((custom && !in.is_scalar()) || in.is_ptr || in.dtype == DType::i1 || byte_size(in.dtype) < 4)
          fail(op, "operand " + in.str() + (custom ? " is not a numeric scalar" : " is not a 32- or 64-bit number"));
        for (auto* v : o)
          if (v->type != in) fail(op, "operands " + list_types(o) + " differ in type");
        if (!custom && op.red() != ReduceKind::Sum && op.red() != ReduceKind::Max && op.red() != ReduceKind::Min)
          fail(op, std::string("cluster reduction with ") + name(op.red()));
        if (std::string why; op.parent && !reached_by_whole_cluster(*op.parent, f_.cluster_size, &why))
          fail(op, "cluster reduction " + why + "; every program of the cluster must reach it equally often");
        for (auto* r : op.results)
          if (r->type != in) fail(op, "result " + r->type.str() + " should be " + in.str());
        if (custom) {
          const Block& b = *op.region(0);
          bool args_ok = b.args.size() == 2 * n;
          for (auto* a : b.args) args_ok = args_ok && a->type == in;
          if (!args_ok)
            fail(op, "combine region takes " + list_types(b.args) + ", expected " + std::to_string(2 * n) + " x " +
                         in.str());
          yields_match(op, 0, std::vector<Value*>(b.args.begin(), b.args.begin() + static_cast<long>(n)),
                       "combine region");
        }
        break;
      }
      case OpKind::Dot: {
        counts(op, 3, 3, 1);
        const Type &a = o[0]->type, &b = o[1]->type, &c = o[2]->type;
        if (a.rank() != 2 || b.rank() != 2) fail(op, "operands are not rank-2 tiles");
        bool same_16_32 = a.dtype == b.dtype && (a.dtype == DType::f16 || a.dtype == DType::bf16 || a.dtype == DType::f32);
        if (a.is_ptr || b.is_ptr || !(same_16_32 || (is_float8(a.dtype) && is_float8(b.dtype))))
          fail(op, "unsupported input types " + a.str() + " x " + b.str());
        if (a.shape[1] != b.shape[0])
          fail(op, "inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
        if (op.code > static_cast<uint8_t>(DotPrecision::Tf32) ||
            (op.precision() == DotPrecision::Tf32 && a.dtype != DType::f32))
          fail(op, "precision tf32 needs f32 inputs, got " + a.str());
        Type want = Type::tile(DType::f32, {a.shape[0], b.shape[1]});
        if (c != want) fail(op, "accumulator " + c.str() + " should be " + want.str());
        result_is(op, want);
        break;
      }
      case OpKind::For: {
        if (o.size() < 3) fail(op, "expected at least 3 operands (lo, hi, step), got " + std::to_string(o.size()));
        size_t n = o.size() - 3;
        counts(op, o.size(), o.size(), n, 1);
        for (int i = 0; i < 3; ++i) {
          const Type& t = o[i]->type;
          if (!t.is_scalar() || t.is_ptr || !is_int(t.dtype) || t.dtype == DType::i1)
            fail(op, "loop bound #" + std::to_string(i) + " has type " + t.str() + ", not an integer scalar");
          same(op, o[0], o[i], "loop bounds differ in type");
        }
        const Block& b = *op.region(0);
        bool ok = b.args.size() == n + 1 && b.args[0]->type == o[0]->type;
        for (size_t i = 0; ok && i < n; ++i) ok = b.args[i + 1]->type == o[i + 3]->type;
        if (!ok)
          fail(op, "body arguments " + list_types(b.args) + " should be the induction variable and the iteration "
                   "types (" + o[0]->type.str() + ", " + list_types(o, 3).substr(1));
        for (size_t i = 0; i < n; ++i)
          if (op.results[i]->type != o[i + 3]->type)
            fail(op, "result #" + std::to_string(i) + " has type " + op.results[i]->type.str() + " but its init is " +
                         o[i + 3]->type.str());
        yields_match(op, 0, op.results, "loop body");
        break;
      }
      case OpKind::If:
        counts(op, 1, 1, op.results.size(), 2);
        if (!o[0]->type.is_scalar() || o[0]->type.is_ptr || o[0]->type.dtype != DType::i1)
          fail(op, "condition has type " + o[0]->type.str() + ", not i1");
        for (int r = 0; r < 2; ++r) {
          if (!op.region(r)->args.empty()) fail(op, "branch region has arguments");
          yields_match(op, r, op.results, r == 0 ? "then branch" : "else branch");
        }
        break;
      case OpKind::Yield:
        if (!op.results.empty() || !op.regions.empty()) fail(op, "yield has results or regions");
        break;
      case OpKind::Barrier:
        counts(op, 0, 0, 0);
        break;
    }
  }

  const Function& f_;
  std::vector<std::unordered_set<const Value*>> scopes_;
  std::unordered_set<const Value*> defined_;
};

}  // namespace

void verify(const Function& f) { Verifier(f).run(); }

}  // namespace tilefuse::ir
