#pragma once
// One tile-IR kernel per op family, shared by the ptxas tests (test_ops.cpp) and the
// GPU differential tests (test_gpu_diff.cpp). Signature of TileKernel-based kernels:
// (out, in0, in1, ..., n) with tiles of `shape` at row-major offsets, masked by
// offset < n when `masked`.
#include <array>

#include "ir_kernels.hpp"

namespace tftest {

using ir::UnaryOp;

struct TileKernel {
  std::unique_ptr<ir::Function> f;
  Builder b;
  std::vector<Value*> inputs;
  Value* out_ptr;
  Value* offsets;
  Value* mask = nullptr;
  ir::Shape shape;

  TileKernel(const std::string& name, int warps, ir::Shape s, std::vector<DType> in, DType out, bool masked = false)
      : f(new_kernel(name, warps)), b(*f), shape(s) {
    out_ptr = b.param("out", Type::pointer(out));
    std::vector<Value*> ptrs;
    for (size_t i = 0; i < in.size(); ++i) ptrs.push_back(b.param("in" + std::to_string(i), Type::pointer(in[i]), true));
    Value* n = b.param("n", Type::scalar(DType::i32));
    offsets = flat_offsets();
    if (masked) mask = b.compare(ir::CmpPred::Lt, offsets, n);
    for (Value* p : ptrs) {
      Value* other = mask ? b.constant(1, Type::scalar(p->type.dtype)) : nullptr;
      inputs.push_back(b.load(b.add_ptr(p, offsets), mask, other));
    }
    specialize16(*f);
    if (masked) f->params.back().divisibility = 1;  // n is arbitrary
  }
  Value* flat_offsets() {
    if (shape.size() == 1) return b.arange(0, shape[0]);
    Value* r = b.expand_dims(b.arange(0, shape[0]), 1);
    Value* c = b.expand_dims(b.arange(0, shape[1]), 0);
    return b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, r, b.const_int(shape[1], Type::scalar(DType::i32))), c);
  }
  void store(Value* v) {
    if (v->type.dtype != out_ptr->type.dtype) v = b.cast(v, out_ptr->type.dtype);
    b.store(b.add_ptr(out_ptr, offsets), v, mask);
  }
  int64_t numel() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

// Sum of every applicable binary op of in0 and in1.
inline std::unique_ptr<ir::Function> binary_kernel(DType dt) {
  TileKernel k("binary", 4, {256}, {dt, dt}, dt, true);
  Value* acc = k.inputs[0];
  for (int op = 0; op <= static_cast<int>(BinaryOp::Shr); ++op) {
    auto o = static_cast<BinaryOp>(op);
    bool bitwise = o == BinaryOp::And || o == BinaryOp::Or || o == BinaryOp::Xor || o == BinaryOp::Shl ||
                   o == BinaryOp::Shr;
    if (bitwise && is_float(dt)) continue;
    acc = k.b.binary(BinaryOp::Add, acc, k.b.binary(o, k.inputs[0], k.inputs[1]));
  }
  k.store(acc);
  return std::move(k.f);
}

inline std::unique_ptr<ir::Function> unary_kernel(DType dt, bool approx) {
  TileKernel k("unary", 4, {512}, {dt}, dt);
  Value* acc = k.inputs[0];
  for (int op = 0; op <= static_cast<int>(UnaryOp::Ceil); ++op) {
    auto o = static_cast<UnaryOp>(op);
    if (o == UnaryOp::Not) continue;
    acc = k.b.binary(BinaryOp::Add, acc, k.b.unary(o, k.inputs[0], approx));
  }
  k.store(acc);
  return std::move(k.f);
}

inline std::unique_ptr<ir::Function> int_unary_kernel(DType dt) {
  TileKernel k("intunary", 2, {128}, {dt}, dt);
  Value* x = k.inputs[0];
  Value* y = k.b.binary(BinaryOp::Add, k.b.unary(UnaryOp::Neg, x), k.b.unary(UnaryOp::Not, x));
  k.store(k.b.binary(BinaryOp::Add, y, k.b.unary(UnaryOp::Abs, x)));
  return std::move(k.f);
}

inline std::unique_ptr<ir::Function> cmpsel_kernel(DType dt) {
  TileKernel k("cmpsel", 4, {16, 32}, {dt, dt}, dt, true);
  Value* a = k.inputs[0];
  Value* c = k.inputs[1];
  Value* m = k.b.compare(ir::CmpPred::Eq, a, c);
  for (int p = 1; p <= static_cast<int>(ir::CmpPred::Ge); ++p) {
    Value* q = k.b.compare(static_cast<ir::CmpPred>(p), a, c);
    m = k.b.binary(p % 2 ? BinaryOp::Xor : BinaryOp::Or, m, q);
  }
  m = k.b.binary(BinaryOp::And, m, k.b.unary(UnaryOp::Not, k.b.compare(ir::CmpPred::Lt, a, c)));
  Value* s = k.b.select(m, a, c);
  if (is_float(dt)) s = k.b.fma(s, a, c);
  k.store(s);
  return std::move(k.f);
}

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> d = {DType::i1, DType::i8, DType::i16, DType::i32, DType::i64, DType::u8,
                                       DType::u32, DType::f16, DType::bf16, DType::f32, DType::f64};
  return d;
}

// out = sum over every dtype `to` of f64(cast(cast(in0, to))).
inline std::unique_ptr<ir::Function> cast_kernel(DType from) {
  TileKernel k("casts", 2, {64}, {from}, DType::f64);
  Value* acc = k.b.const_float(0, Type::tile(DType::f64, {64}));
  for (DType to : all_dtypes()) acc = k.b.binary(BinaryOp::Add, acc, k.b.cast(k.b.cast(k.inputs[0], to), DType::f64));
  k.store(acc);
  return std::move(k.f);
}

// Program ids, constants, trans, reshape (1-D and 3-D), expand/broadcast of reductions.
inline std::unique_ptr<ir::Function> shapes_kernel() {
  TileKernel k("shapes", 4, {16, 32}, {DType::f32}, DType::f32);
  auto& b = k.b;
  Value* x = k.inputs[0];
  Value* ids = b.binary(BinaryOp::Add, b.binary(BinaryOp::Add, b.program_id(0), b.program_id(1)),
                        b.binary(BinaryOp::Mul, b.program_id(2), b.num_programs(0)));
  ids = b.binary(BinaryOp::Add, ids, b.binary(BinaryOp::Add, b.num_programs(1), b.num_programs(2)));
  Value* t = b.trans(b.trans(x));
  Value* r = b.reshape(b.reshape(x, {512}), {16, 32});
  Value* r3 = b.reshape(b.trans(b.reshape(x, {4, 4, 32}), {2, 0, 1}), {16, 32});
  Value* col = b.expand_dims(b.reduce(x, 1, ir::ReduceKind::Sum), 1);
  Value* row = b.expand_dims(b.reduce(x, 0, ir::ReduceKind::Max), 0);
  Value* y = b.binary(BinaryOp::Add, b.binary(BinaryOp::Add, t, r), b.binary(BinaryOp::Sub, col, row));
  y = b.binary(BinaryOp::Add, y, b.binary(BinaryOp::Mul, r3, b.cast(ids, DType::f32)));
  y = b.binary(BinaryOp::Add, y,
               b.trans(b.load(b.add_ptr(b.splat(k.f->params[1].value, {32, 16}), b.trans(k.offsets)))));
  Value* flags = b.const_int(1, Type::tile(DType::i1, {16, 32}));
  y = b.select(flags, y, b.const_float(2.5, Type::tile(DType::f32, {16, 32})));
  // Each program writes its own 512 elements: out + 512 * (x + nx * (y + ny * z)).
  Value* lin = b.binary(BinaryOp::Add, b.program_id(0),
                        b.binary(BinaryOp::Mul, b.num_programs(0),
                                 b.binary(BinaryOp::Add, b.program_id(1),
                                          b.binary(BinaryOp::Mul, b.num_programs(1), b.program_id(2)))));
  Value* base = b.add_ptr(k.out_ptr, b.binary(BinaryOp::Mul, lin, b.const_int(512, Type::scalar(DType::i32))));
  b.store(b.add_ptr(base, k.offsets), y);
  return std::move(k.f);
}

// (out, in, lim): masked loads with other / eviction hints, unmasked, scalar; stores.
// With lim16 the bound is specialized as a multiple of 16 (vectorized masked accesses).
inline std::unique_ptr<ir::Function> memory_kernel(DType dt, int64_t n, bool lim16 = true) {
  auto f = new_kernel("memory", n >= 2048 ? 8 : 2);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(dt));
  Value* in = b.param("in", Type::pointer(dt));
  Value* lim = b.param("lim", Type::scalar(DType::i32));
  Value* offs = b.arange(0, n);
  Value* m = b.compare(ir::CmpPred::Lt, offs, lim);
  Value* other = b.constant(1, Type::scalar(dt));
  Value* x = b.load(b.add_ptr(in, offs), m, other, ir::Evict::First);
  Value* y = b.load(b.add_ptr(in, offs), m, nullptr, ir::Evict::Last);
  Value* z = b.load(b.add_ptr(in, offs));
  Value* s = b.load(in);
  Value* sum = dt == DType::i1 ? b.binary(BinaryOp::Or, b.binary(BinaryOp::Xor, x, y), b.binary(BinaryOp::And, z, s))
                               : b.binary(BinaryOp::Add, b.binary(BinaryOp::Add, x, y), b.binary(BinaryOp::Mul, z, s));
  b.store(b.add_ptr(out, offs), sum, m, ir::Evict::First);
  b.store(b.add_ptr(out, b.binary(BinaryOp::Add, offs, b.const_int(n, Type::scalar(DType::i32)))), sum);
  b.store(out, s);
  specialize16(*f);
  if (!lim16) f->params[2].divisibility = 1;
  return f;
}

// (p, old, lim): masked and unmasked tile atomics at p[offs], a scalar one at p[0].
inline std::unique_ptr<ir::Function> atomic_kernel(ir::AtomicOp op, DType dt, int64_t n) {
  auto f = new_kernel("atomics", 4);
  Builder b(*f);
  Value* p = b.param("p", Type::pointer(dt));
  Value* old_out = b.param("old", Type::pointer(dt));
  Value* lim = b.param("lim", Type::scalar(DType::i32));
  Value* offs = b.arange(0, n);
  Value* m = b.compare(ir::CmpPred::Lt, offs, lim);
  Value* v = b.cast(b.binary(BinaryOp::Sub, offs, b.const_int(n / 2, Type::scalar(DType::i32))), dt);
  Value* old = b.atomic_rmw(op, b.add_ptr(p, offs), v, m);
  Value* old2 = b.atomic_rmw(op, b.add_ptr(p, offs), b.binary(BinaryOp::Add, v, v));
  b.store(b.add_ptr(old_out, offs), b.binary(BinaryOp::Add, b.select(m, old, b.constant(0, Type::scalar(dt))), old2));
  Value* s = b.atomic_rmw(op, p, b.constant(3, Type::scalar(dt)));
  b.store(b.add_ptr(old_out, b.const_int(n, Type::scalar(DType::i32))), s);
  specialize16(*f);
  f->params[2].divisibility = 1;
  return f;
}

// (data, count, old): a tile stored to data, then an ordered scalar count (u32) and an
// ordered f32 tile add at data, their old values stored to old.
inline std::unique_ptr<ir::Function> ordered_atomic_kernel() {
  auto f = new_kernel("ordered_atomics", 4);
  Builder b(*f);
  Value* data = b.param("data", Type::pointer(DType::f32));
  Value* count = b.param("count", Type::pointer(DType::u32));
  Value* old_out = b.param("old", Type::pointer(DType::f32));
  Value* offs = b.arange(0, 256);
  b.store(b.add_ptr(data, offs), b.cast(offs, DType::f32));
  Value* before = b.atomic_rmw(ir::AtomicOp::Add, count, b.constant(1, Type::scalar(DType::u32)), nullptr, true);
  Value* olds = b.atomic_rmw(ir::AtomicOp::Add, b.add_ptr(data, offs), b.cast(before, DType::f32), nullptr, true);
  b.store(b.add_ptr(old_out, offs), olds);
  specialize16(*f);
  return f;
}

inline std::unique_ptr<ir::Function> cas_kernel(DType dt) {
  auto f = new_kernel("cas", 2);
  Builder b(*f);
  Value* p = b.param("p", Type::pointer(dt));
  Value* o = b.param("old", Type::pointer(dt));
  Value* offs = b.arange(0, 64);
  Value* old = b.atomic_cas(b.add_ptr(p, offs), b.constant(0, Type::scalar(dt)), b.cast(offs, dt));
  b.store(b.add_ptr(o, offs), old);
  Value* s = b.atomic_cas(b.add_ptr(p, b.const_int(64, Type::scalar(DType::i32))), b.constant(0, Type::scalar(dt)),
                          b.constant(1, Type::scalar(dt)));
  b.store(b.add_ptr(o, b.const_int(64, Type::scalar(DType::i32))), s);
  specialize16(*f);
  return f;
}

// Every reduction kind along every axis, folded to scalars and added to each element.
inline std::unique_ptr<ir::Function> reduce_kernel(const ir::Shape& shape, int warps, DType dt, bool custom = true) {
  using ir::ReduceKind;
  TileKernel k("reduce", warps, shape, {dt}, DType::f32);
  auto& b = k.b;
  Value* x = k.inputs[0];
  Value* out = b.cast(x, DType::f32);
  for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
    for (auto kind : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min, ReduceKind::Argmax, ReduceKind::Argmin}) {
      Value* red = b.cast(b.reduce(x, axis, kind), DType::f32);
      // Keep the per-row/column results distinguishable: weight by position.
      if (!red->type.is_scalar()) {
        Value* e = b.expand_dims(red, axis);
        red = b.reduce(b.binary(BinaryOp::Mul, b.broadcast_to(e, shape), b.cast(k.offsets, DType::f32)), 0,
                       ReduceKind::Sum);
        while (!red->type.is_scalar()) red = b.reduce(red, 0, ReduceKind::Sum);
      }
      out = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, out, b.const_float(0.5, Type::scalar(DType::f32))), red);
    }
    if (custom) {
      Value* c = b.reduce_custom(x, axis, [](Builder& bb, Value* l, Value* r) {
        return bb.binary(BinaryOp::Add, bb.binary(BinaryOp::Max, l, r), bb.binary(BinaryOp::Min, l, r));
      });
      while (!c->type.is_scalar()) c = b.reduce(c, 0, ReduceKind::Max);
      out = b.binary(BinaryOp::Add, out, b.cast(c, DType::f32));
    }
  }
  k.store(out);
  return std::move(k.f);
}

inline std::unique_ptr<ir::Function> scan_kernel(const ir::Shape& shape, int warps, DType dt) {
  TileKernel k("scan", warps, shape, {dt}, dt);
  Value* acc = k.b.scan(k.inputs[0], 0);
  if (shape.size() == 2) acc = k.b.binary(BinaryOp::Add, acc, k.b.scan(k.inputs[0], 1));
  k.store(acc);
  return std::move(k.f);
}

// Row-major element offsets r * cols + c of a [rows, cols] tile.
inline Value* row_major_offsets(Builder& b, int64_t rows, int64_t cols) {
  return b.binary(BinaryOp::Add,
                  b.binary(BinaryOp::Mul, b.expand_dims(b.arange(0, rows), 1), b.const_int(cols, Type::scalar(DType::i32))),
                  b.expand_dims(b.arange(0, cols), 0));
}

// Where each operand of a Hopper warpgroup MMA comes from (sm_90a; mma.sync elsewhere).
enum class DotOperands {
  Copied,       // both loaded only for the dot: read by descriptor from the cp.async tiles
  BTransposed,  // B = trans(load of [n, k]): a K-major descriptor
  AComputed,    // A = a * a: in registers (the A fragment)
  BComputed,    // B = b + b: staged into shared memory for its descriptor
};

// (c, a, b): c[m, n] += A . B with A, B made from a[m, k] and b[k, n] (or b[n, k] for
// BTransposed) as `how` says.
inline std::unique_ptr<ir::Function> dot_operands_kernel(int64_t m, int64_t n, int64_t kk, int warps, DType dt,
                                                         DotOperands how,
                                                         ir::DotPrecision precision = ir::DotPrecision::Exact) {
  auto f = new_kernel("dot", warps);
  Builder b(*f);
  Value* c = b.param("c", Type::pointer(DType::f32));
  Value* a = b.param("a", Type::pointer(dt), true);
  Value* bp = b.param("b", Type::pointer(dt), true);
  auto tile = [&](Value* p, int64_t r, int64_t cc) { return b.add_ptr(p, row_major_offsets(b, r, cc)); };
  Value* pc = tile(c, m, n);
  Value* x = b.load(tile(a, m, kk));
  Value* y = how == DotOperands::BTransposed ? b.trans(b.load(tile(bp, n, kk))) : b.load(tile(bp, kk, n));
  if (how == DotOperands::AComputed) x = b.binary(BinaryOp::Mul, x, x);
  if (how == DotOperands::BComputed) y = b.binary(BinaryOp::Add, y, y);
  b.store(pc, b.dot(x, y, b.load(pc), precision));
  specialize16(*f);
  return f;
}

// (c, a, b): c[m, n] += a[m, k] . b[k, n], row-major.
inline std::unique_ptr<ir::Function> dot_kernel(int64_t m, int64_t n, int64_t kk, int warps, DType dt,
                                                ir::DotPrecision precision = ir::DotPrecision::Exact) {
  return dot_operands_kernel(m, n, kk, warps, dt, DotOperands::Copied, precision);
}

// (out, a, n): a loop whose tile pointers are loop-carried (advanced by 2048 elements
// per iteration), x = load(ptrs) feeding both sides of a dot, y = load(ptrs + 1024)
// feeding a dot and an elementwise add: out = sum over n iterations of x.x + y.x + y.
inline std::unique_ptr<ir::Function> carried_pointer_dot_kernel() {
  auto f = new_kernel("carried", 4);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* a = b.param("a", Type::pointer(DType::f16), true);
  Value* n = b.param("n", Type::scalar(DType::i32));
  auto i32 = [&](int64_t v) { return b.const_int(v, Type::scalar(DType::i32)); };
  Value* off = row_major_offsets(b, 32, 32);
  Value* acc0 = b.const_float(0, Type::tile(DType::f32, {32, 32}));
  auto res = b.for_(i32(0), n, i32(1), {acc0, b.add_ptr(a, off)}, [&](Builder& b, Value*, const std::vector<Value*>& it) {
    Value* x = b.load(it[1]);
    Value* acc = b.dot(x, x, it[0]);
    Value* y = b.load(b.add_ptr(it[1], i32(1024)));
    acc = b.dot(y, x, acc);
    acc = b.binary(BinaryOp::Add, acc, b.cast(y, DType::f32));
    return std::vector<Value*>{acc, b.add_ptr(it[1], i32(2048))};
  });
  b.store(b.add_ptr(out, off), res[0]);
  specialize16(*f);
  f->params.back().divisibility = 1;
  return f;
}

// (out, a, k, n, c): q = a-tile used by a dot in a loop inside an if (converted once
// before that loop) and again by a dot after the if, where the hoisted copy does not
// dominate: out = q.(k*k) [+ n x q.(k*k) when c < 1].
inline std::unique_ptr<ir::Function> hoist_across_if_kernel() {
  auto f = new_kernel("hoist_if", 4);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* a = b.param("a", Type::pointer(DType::f16), true);
  Value* kp = b.param("k", Type::pointer(DType::f16), true);
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* c = b.param("c", Type::scalar(DType::i32));
  auto i32 = [&](int64_t v) { return b.const_int(v, Type::scalar(DType::i32)); };
  auto tile = [&](Value* p) { return b.add_ptr(p, row_major_offsets(b, 32, 32)); };
  Value* q = b.load(tile(a));
  Value* acc0 = b.const_float(0, Type::tile(DType::f32, {32, 32}));
  auto r = b.if_(
      b.compare(ir::CmpPred::Lt, c, i32(1)),
      [&](Builder& b) {
        auto res = b.for_(i32(0), n, i32(1), {acc0}, [&](Builder& b, Value*, const std::vector<Value*>& it) {
          Value* kt = b.load(tile(kp));
          return std::vector<Value*>{b.dot(q, b.binary(BinaryOp::Mul, kt, kt), it[0])};
        });
        return std::vector<Value*>{res[0]};
      },
      [&](Builder&) { return std::vector<Value*>{acc0}; });
  Value* kt = b.load(tile(kp));
  b.store(tile(out), b.dot(q, b.binary(BinaryOp::Mul, kt, kt), r[0]));
  specialize16(*f);
  f->params[3].divisibility = 1;
  f->params[4].divisibility = 1;
  return f;
}

// (out, in, n): nested loops with tile and scalar iteration values, if with results.
inline std::unique_ptr<ir::Function> control_kernel() {
  auto f = new_kernel("control", 4);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* in = b.param("in", Type::pointer(DType::f32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* offs = b.arange(0, 256);
  Value* zero = b.const_int(0, Type::scalar(DType::i32));
  Value* one = b.const_int(1, Type::scalar(DType::i32));
  Value* acc0 = b.const_float(0, Type::tile(DType::f32, {256}));
  Value* cnt0 = b.const_int(0, Type::scalar(DType::i32));
  auto res = b.for_(zero, n, one, {acc0, cnt0}, [&](Builder& b, Value* i, const std::vector<Value*>& it) {
    Value* x = b.load(b.add_ptr(b.add_ptr(in, b.binary(BinaryOp::Mul, i, b.const_int(256, Type::scalar(DType::i32)))), offs));
    auto inner = b.for_(zero, b.const_int(3, Type::scalar(DType::i32)), one, {x},
                        [&](Builder& b, Value*, const std::vector<Value*>& jt) {
                          return std::vector<Value*>{b.binary(BinaryOp::Mul, jt[0], b.const_float(0.5, Type::scalar(DType::f32)))};
                        });
    Value* odd = b.compare(ir::CmpPred::Eq, b.binary(BinaryOp::Rem, i, b.const_int(2, Type::scalar(DType::i32))), one);
    auto sel = b.if_(
        odd,
        [&](Builder& b) {
          return std::vector<Value*>{b.binary(BinaryOp::Add, it[0], inner[0]), b.reduce(x, 0, ir::ReduceKind::Max)};
        },
        [&](Builder& b) {
          return std::vector<Value*>{b.binary(BinaryOp::Sub, it[0], x), b.reduce(inner[0], 0, ir::ReduceKind::Sum)};
        });
    Value* cnt = b.binary(BinaryOp::Add, it[1], b.cast(sel[1], DType::i32));
    return std::vector<Value*>{sel[0], cnt};
  });
  b.if_(b.compare(ir::CmpPred::Ne, res[1], b.const_int(-12345, Type::scalar(DType::i32))), [&](Builder& b) {
    b.store(b.add_ptr(out, offs), b.binary(BinaryOp::Add, res[0], b.cast(res[1], DType::f32)));
    return std::vector<Value*>{};
  });
  specialize16(*f);
  return f;
}

// (out, in): out[c, r] = in[r, c] * 2 for an [r, c] tile: the load and the store are
// coalesced along different axes, so the value changes layout through shared memory;
// `via_trans` transposes the tile itself instead of the addresses.
inline std::unique_ptr<ir::Function> transpose_kernel(DType dt, int64_t rows, int64_t cols, int warps, bool via_trans) {
  auto f = new_kernel("transpose", warps);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* in = b.param("in", Type::pointer(dt), true);
  Value* r = b.expand_dims(b.arange(0, rows), 1);
  Value* c = b.expand_dims(b.arange(0, cols), 0);
  auto i32 = [&](int64_t v) { return b.const_int(v, Type::scalar(DType::i32)); };
  Value* x = b.cast(b.load(b.add_ptr(in, b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, r, i32(cols)), c))), DType::f32);
  x = b.binary(BinaryOp::Mul, x, b.const_float(2, Type::scalar(DType::f32)));
  if (via_trans) {
    Value* rr = b.expand_dims(b.arange(0, cols), 1);
    Value* cc = b.expand_dims(b.arange(0, rows), 0);
    b.store(b.add_ptr(out, b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, rr, i32(rows)), cc)), b.trans(x));
  } else {
    b.store(b.add_ptr(out, b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, c, i32(rows)), r)), x);
  }
  specialize16(*f);
  return f;
}

// The configurations both test files sweep.
inline std::vector<std::pair<ir::AtomicOp, DType>> atomic_cases() {
  using A = ir::AtomicOp;
  return {{A::Add, DType::i32}, {A::Add, DType::u32},  {A::Add, DType::i64}, {A::Add, DType::f32},
          {A::Add, DType::f64}, {A::Max, DType::i32},  {A::Min, DType::u32}, {A::Max, DType::f32},
          {A::Min, DType::f32}, {A::Max, DType::i64},  {A::Xchg, DType::f32}, {A::Xchg, DType::i64}};
}
inline std::vector<std::pair<ir::Shape, int>> reduce_shapes() {
  return {{{16}, 4}, {{1024}, 4}, {{4096}, 8}, {{32, 64}, 4}, {{64, 16}, 8}, {{8, 8}, 1}, {{2, 256}, 2}};
}
inline std::vector<std::pair<ir::Shape, int>> scan_shapes() {
  return {{{256}, 4}, {{16, 64}, 4}, {{8}, 2}, {{64, 8}, 1}};
}
inline std::vector<std::array<int64_t, 4>> dot_shapes() {  // m, n, k, warps
  // Tensor-core tilings: one instruction, balanced warp grids, warps along one side,
  // more warps than 16x8 tiles (replicated warps), N = 8, long K.
  return {{16, 16, 16, 1}, {64, 64, 32, 4}, {32, 128, 16, 4}, {128, 64, 64, 8}, {16, 32, 64, 2},
          {16, 8, 16, 4},  {128, 128, 32, 4}, {64, 16, 128, 8}, {32, 256, 16, 8}};
}

}  // namespace tftest
