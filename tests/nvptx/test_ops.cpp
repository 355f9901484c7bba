// Every op kind through the GPU compiler, on several dtypes, shapes and warp counts;
// the PTX must assemble for sm_80 and sm_90a. Plus the compiler's user errors.
#include <doctest/doctest.h>

#include "check.hpp"
#include "ir_kernels.hpp"
#include "tilefuse/nvptx/gpu_plan.hpp"

using namespace tilefuse;
using ir::BinaryOp;
using ir::Builder;
using ir::Type;
using ir::UnaryOp;
using ir::Value;
using tftest::compile_and_assemble;

namespace {

// A kernel with `n` input pointers of `in` and an output pointer of `out`, each tile of
// `shape` loaded row-major (masked by the flat index < n_valid when masked).
struct TileKernel {
  std::unique_ptr<ir::Function> f;
  Builder b;
  std::vector<Value*> inputs;
  Value* out_ptr;
  Value* offsets;
  Value* mask = nullptr;
  ir::Shape shape;

  TileKernel(const std::string& name, int warps, ir::Shape s, std::vector<DType> in, DType out, bool masked = false)
      : f(tftest::new_kernel(name, warps)), b(*f), shape(s) {
    out_ptr = b.param("out", Type::pointer(out));
    std::vector<Value*> ptrs;
    for (size_t i = 0; i < in.size(); ++i) ptrs.push_back(b.param("in" + std::to_string(i), Type::pointer(in[i]), true));
    Value* n = b.param("n", Type::scalar(DType::i32));
    offsets = flat_offsets();
    if (masked) mask = b.compare(ir::CmpPred::Lt, offsets, n);
    for (Value* p : ptrs) {
      Value* other = mask ? b.constant(0, Type::scalar(p->type.dtype)) : nullptr;
      inputs.push_back(b.load(b.add_ptr(p, offsets), mask, other));
    }
    tftest::specialize16(*f);
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
};

std::string tag(const std::string& base, std::initializer_list<std::string> parts) {
  std::string s = base;
  for (auto& p : parts) s += "_" + p;
  return s;
}

}  // namespace

TEST_CASE("binary ops on every dtype") {
  std::vector<DType> dts = {DType::i32, DType::u32, DType::i64, DType::f32, DType::f16,
                            DType::bf16, DType::f64, DType::i8, DType::u8, DType::i16};
  for (DType dt : dts) {
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
    compile_and_assemble(*k.f, tag("binary", {name(dt)}));
  }
}

TEST_CASE("unary math, exact and approximate, and integer unary ops") {
  for (DType dt : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    for (bool approx : {false, true}) {
      TileKernel k("unary", 4, {512}, {dt}, dt);
      Value* acc = k.inputs[0];
      for (int op = 0; op <= static_cast<int>(UnaryOp::Ceil); ++op) {
        auto o = static_cast<UnaryOp>(op);
        if (o == UnaryOp::Not) continue;
        acc = k.b.binary(BinaryOp::Add, acc, k.b.unary(o, k.inputs[0], approx));
      }
      k.store(acc);
      auto art = compile_and_assemble(*k.f, tag("unary", {name(dt), approx ? "approx" : "exact"}));
      if (approx && dt == DType::f32) CHECK(art.kernel.ptx.find("ex2.approx") != std::string::npos);
    }
  }
  for (DType dt : {DType::i32, DType::u32, DType::i64, DType::i8}) {
    TileKernel k("intunary", 2, {128}, {dt}, dt);
    Value* x = k.inputs[0];
    Value* y = k.b.binary(BinaryOp::Add, k.b.unary(UnaryOp::Neg, x), k.b.unary(UnaryOp::Not, x));
    k.store(k.b.binary(BinaryOp::Add, y, k.b.unary(UnaryOp::Abs, x)));
    compile_and_assemble(*k.f, tag("intunary", {name(dt)}));
  }
}

TEST_CASE("compare, select, fma, logical ops on masks") {
  for (DType dt : {DType::i32, DType::u32, DType::f32, DType::f16, DType::i64}) {
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
    compile_and_assemble(*k.f, tag("cmpsel", {name(dt)}));
  }
}

TEST_CASE("casts between every pair of dtypes") {
  std::vector<DType> dts = {DType::i1, DType::i8, DType::i16, DType::i32, DType::i64, DType::u8,
                            DType::u32, DType::f16, DType::bf16, DType::f32, DType::f64};
  for (DType from : dts) {
    std::vector<DType> outs;
    TileKernel k("casts", 2, {64}, {from}, DType::f64);
    Value* acc = k.b.const_float(0, Type::tile(DType::f64, {64}));
    for (DType to : dts) acc = k.b.binary(BinaryOp::Add, acc, k.b.cast(k.b.cast(k.inputs[0], to), DType::f64));
    k.store(acc);
    compile_and_assemble(*k.f, tag("casts", {name(from)}));
  }
}

TEST_CASE("program ids, constants, shape ops (expand, broadcast, reshape, trans)") {
  TileKernel k("shapes", 4, {16, 32}, {DType::f32}, DType::f32);
  auto& b = k.b;
  Value* x = k.inputs[0];
  Value* ids = b.binary(BinaryOp::Add, b.binary(BinaryOp::Add, b.program_id(0), b.program_id(1)),
                        b.binary(BinaryOp::Mul, b.program_id(2), b.num_programs(0)));
  ids = b.binary(BinaryOp::Add, ids, b.binary(BinaryOp::Add, b.num_programs(1), b.num_programs(2)));
  Value* t = b.trans(b.trans(x));                                     // [16,32] -> [32,16] -> [16,32]
  Value* r = b.reshape(b.reshape(x, {512}), {16, 32});                // through 1-D
  Value* r3 = b.reshape(b.trans(b.reshape(x, {4, 4, 32}), {2, 0, 1}), {16, 32});  // a 3-D permutation
  Value* col = b.expand_dims(b.reduce(x, 1, ir::ReduceKind::Sum), 1);  // [16,1]
  Value* row = b.expand_dims(b.reduce(x, 0, ir::ReduceKind::Max), 0);  // [1,32]
  Value* y = b.binary(BinaryOp::Add, b.binary(BinaryOp::Add, t, r), b.binary(BinaryOp::Sub, col, row));
  y = b.binary(BinaryOp::Add, y, b.binary(BinaryOp::Mul, r3, b.cast(ids, DType::f32)));
  y = b.binary(BinaryOp::Add, y, b.trans(b.load(b.add_ptr(b.splat(k.f->params[1].value, {32, 16}),
                                                          b.trans(k.offsets)))));
  Value* flags = b.const_int(1, Type::tile(DType::i1, {16, 32}));
  k.store(b.select(flags, y, b.const_float(2.5, Type::tile(DType::f32, {16, 32}))));
  compile_and_assemble(*k.f, "shapes");
}

TEST_CASE("loads and stores: masks, other values, eviction hints, bools, bytes, scalars") {
  for (DType dt : {DType::i1, DType::i8, DType::f16, DType::f32, DType::i64, DType::f64}) {
    for (int64_t n : {int64_t(16), int64_t(128), int64_t(2048)}) {
      auto f = tftest::new_kernel("memory", n >= 2048 ? 8 : 2);
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
      Value* s = b.load(in);  // scalar
      Value* sum = dt == DType::i1 ? b.binary(BinaryOp::Or, b.binary(BinaryOp::Xor, x, y), b.binary(BinaryOp::And, z, s))
                                   : b.binary(BinaryOp::Add, b.binary(BinaryOp::Add, x, y), b.binary(BinaryOp::Mul, z, s));
      b.store(b.add_ptr(out, offs), sum, m, ir::Evict::First);
      b.store(b.add_ptr(out, offs), sum);
      b.store(out, s);  // scalar store: one thread
      tftest::specialize16(*f);
      compile_and_assemble(*f, tag("memory", {name(dt), std::to_string(n)}));
    }
  }
}

TEST_CASE("atomics: every op and dtype, masked, replicated tiles, scalars, cas") {
  struct A {
    ir::AtomicOp op;
    DType dt;
  };
  std::vector<A> as = {{ir::AtomicOp::Add, DType::i32}, {ir::AtomicOp::Add, DType::u32}, {ir::AtomicOp::Add, DType::i64},
                       {ir::AtomicOp::Add, DType::f32}, {ir::AtomicOp::Add, DType::f64}, {ir::AtomicOp::Max, DType::i32},
                       {ir::AtomicOp::Min, DType::u32}, {ir::AtomicOp::Max, DType::f32}, {ir::AtomicOp::Min, DType::f32},
                       {ir::AtomicOp::Max, DType::i64}, {ir::AtomicOp::Xchg, DType::f32}, {ir::AtomicOp::Xchg, DType::i64}};
  for (auto& a : as)
    for (int64_t n : {int64_t(16), int64_t(256)}) {
      auto f = tftest::new_kernel("atomics", 4);
      Builder b(*f);
      Value* p = b.param("p", Type::pointer(a.dt));
      Value* old_out = b.param("old", Type::pointer(a.dt));
      Value* lim = b.param("lim", Type::scalar(DType::i32));
      Value* offs = b.arange(0, n);
      Value* m = b.compare(ir::CmpPred::Lt, offs, lim);
      Value* v = b.cast(offs, a.dt);
      Value* old = b.atomic_rmw(a.op, b.add_ptr(p, offs), v, m);
      Value* old2 = b.atomic_rmw(a.op, b.add_ptr(p, offs), v);
      b.store(b.add_ptr(old_out, offs), b.binary(BinaryOp::Add, old, old2));
      Value* s = b.atomic_rmw(a.op, p, b.constant(3, Type::scalar(a.dt)));  // scalar: one thread
      b.store(old_out, s);
      tftest::specialize16(*f);
      compile_and_assemble(*f, tag("atomics", {ir::name(a.op), name(a.dt), std::to_string(n)}));
    }
  for (DType dt : {DType::i32, DType::u32, DType::i64, DType::f32}) {
    auto f = tftest::new_kernel("cas", 2);
    Builder b(*f);
    Value* p = b.param("p", Type::pointer(dt));
    Value* offs = b.arange(0, 64);
    Value* old = b.atomic_cas(b.add_ptr(p, offs), b.constant(0, Type::scalar(dt)), b.cast(offs, dt));
    b.store(b.add_ptr(p, offs), old);
    b.atomic_cas(p, b.constant(0, Type::scalar(dt)), b.constant(1, Type::scalar(dt)));
    compile_and_assemble(*f, tag("cas", {name(dt)}));
  }
}

TEST_CASE("reductions: every kind, both axes, 1-D to scalar, small and large tiles") {
  using ir::ReduceKind;
  struct R {
    ir::Shape shape;
    int warps;
  };
  std::vector<R> rs = {{{16}, 4}, {{1024}, 4}, {{4096}, 8}, {{32, 64}, 4}, {{64, 16}, 8}, {{8, 8}, 1}, {{2, 256}, 2}};
  for (auto& r : rs)
    for (DType dt : {DType::f32, DType::i32, DType::f16}) {
      TileKernel k("reduce", r.warps, r.shape, {dt}, DType::f32);
      auto& b = k.b;
      Value* x = k.inputs[0];
      Value* total = b.const_float(0, Type::scalar(DType::f32));
      for (int axis = 0; axis < static_cast<int>(r.shape.size()); ++axis) {
        for (auto kind : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min, ReduceKind::Argmax, ReduceKind::Argmin}) {
          Value* red = b.reduce(x, axis, kind);
          while (!red->type.is_scalar()) red = b.reduce(red, 0, ReduceKind::Sum);
          total = b.binary(BinaryOp::Add, total, b.cast(red, DType::f32));
        }
        Value* custom = b.reduce_custom(x, axis, [](Builder& bb, Value* l, Value* rr) {
          return bb.binary(BinaryOp::Add, bb.binary(BinaryOp::Max, l, rr), bb.binary(BinaryOp::Min, l, rr));
        });
        while (!custom->type.is_scalar()) custom = b.reduce(custom, 0, ReduceKind::Max);
        total = b.binary(BinaryOp::Add, total, b.cast(custom, DType::f32));
      }
      k.store(b.binary(BinaryOp::Add, b.cast(x, DType::f32), total));
      compile_and_assemble(*k.f, tag("reduce", {ir::shape_str(r.shape), name(dt), std::to_string(r.warps)}));
    }
}

TEST_CASE("scans along either axis") {
  for (auto [shape, warps] : {std::pair{ir::Shape{256}, 4}, std::pair{ir::Shape{16, 64}, 4}, std::pair{ir::Shape{8}, 2},
                              std::pair{ir::Shape{64, 8}, 1}})
    for (DType dt : {DType::f32, DType::i32, DType::f16}) {
      TileKernel k("scan", warps, shape, {dt}, dt);
      Value* acc = k.b.scan(k.inputs[0], 0);
      if (shape.size() == 2) acc = k.b.binary(BinaryOp::Add, acc, k.b.scan(k.inputs[0], 1));
      k.store(acc);
      auto art = compile_and_assemble(*k.f, tag("scan", {ir::shape_str(shape), name(dt)}));
      CHECK(art.kernel.shared_bytes > 0);
    }
}

TEST_CASE("dot: f16, bf16 and f32 operands, several shapes and warp counts") {
  struct D {
    int64_t m, n, k;
    int warps;
  };
  for (auto d : {D{16, 16, 16, 1}, D{64, 64, 32, 4}, D{32, 128, 16, 4}, D{128, 64, 64, 8}, D{16, 32, 64, 2}})
    for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
      auto f = tftest::new_kernel("dot", d.warps);
      Builder b(*f);
      Value* c = b.param("c", Type::pointer(DType::f32));
      Value* a = b.param("a", Type::pointer(dt), true);
      Value* bp = b.param("b", Type::pointer(dt), true);
      auto tile = [&](Value* p, int64_t r, int64_t cc) {
        Value* off = b.binary(BinaryOp::Add,
                              b.binary(BinaryOp::Mul, b.expand_dims(b.arange(0, r), 1), b.const_int(cc, Type::scalar(DType::i32))),
                              b.expand_dims(b.arange(0, cc), 0));
        return std::pair{b.add_ptr(p, off), off};
      };
      auto [pa, oa] = tile(a, d.m, d.k);
      auto [pb, ob] = tile(bp, d.k, d.n);
      auto [pc, oc] = tile(c, d.m, d.n);
      Value* acc = b.dot(b.load(pa), b.load(pb), b.load(pc));
      b.store(pc, acc);
      tftest::specialize16(*f);
      auto art = compile_and_assemble(*f, tag("dot", {std::to_string(d.m), std::to_string(d.n), std::to_string(d.k), name(dt)}));
      CHECK(art.kernel.ptx.find("fma.rn.f32") != std::string::npos);
    }
}

TEST_CASE("control flow: loops with tile and scalar iteration values, nested loops, if with results") {
  auto f = tftest::new_kernel("control", 4);
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
                          return std::vector<Value*>{b.binary(BinaryOp::Mul, jt[0], jt[0])};
                        });
    Value* odd = b.compare(ir::CmpPred::Eq, b.binary(BinaryOp::Rem, i, b.const_int(2, Type::scalar(DType::i32))), one);
    auto sel = b.if_(
        odd, [&](Builder& b) { return std::vector<Value*>{b.binary(BinaryOp::Add, it[0], inner[0]), b.reduce(x, 0, ir::ReduceKind::Max)}; },
        [&](Builder& b) { return std::vector<Value*>{b.binary(BinaryOp::Sub, it[0], x), b.reduce(inner[0], 0, ir::ReduceKind::Sum)}; });
    Value* cnt = b.binary(BinaryOp::Add, it[1], b.cast(sel[1], DType::i32));
    return std::vector<Value*>{sel[0], cnt};
  });
  b.if_(b.compare(ir::CmpPred::Gt, res[1], zero), [&](Builder& b) {
    b.store(b.add_ptr(out, offs), res[0]);
    return std::vector<Value*>{};
  });
  tftest::specialize16(*f);
  compile_and_assemble(*f, "control");
}

TEST_CASE("user errors name the kernel, the parameter and the fix") {
  {
    auto f = tftest::new_kernel("badparam", 4);
    Builder b(*f);
    b.param("flag", Type::scalar(DType::i16));
    try {
      nvptx::compile(*f, tftest::opts_for("sm_90a"));
      FAIL("expected a UserError");
    } catch (const UserError& e) {
      CHECK(std::string(e.what()) ==
            "kernel 'badparam' parameter 'flag' has type i16, which the GPU backend cannot pass. Use i32, u32, i64, "
            "f32, f64 or a pointer (widen narrow integers and bools to i32)");
    }
  }
  {
    auto f = tftest::new_kernel("bad name", 4);
    CHECK_THROWS_WITH_AS(nvptx::compile(*f, tftest::opts_for("sm_80")),
                         "kernel name 'bad name' is not a valid PTX entry name. Use letters, digits and underscores, "
                         "not starting with a digit",
                         UserError);
  }
  {
    auto f = tftest::new_kernel("warps", 3);
    CHECK_THROWS_AS(nvptx::compile(*f, tftest::opts_for("sm_80")), UserError);
  }
  {
    // A 256x256 f32 scan needs 2 x 256 KB of scratch.
    TileKernel k("bigscan", 4, {256, 256}, {DType::f32}, DType::f32);
    k.store(k.b.scan(k.inputs[0], 1));
    try {
      nvptx::compile(*k.f, tftest::opts_for("sm_80"));
      FAIL("expected a UserError");
    } catch (const UserError& e) {
      CHECK(std::string(e.what()).find("kernel 'bigscan' needs 524288 bytes of shared memory but sm_80 allows") == 0);
    }
  }
  CHECK_THROWS_WITH_AS(nvptx::parse_target("sm_70"),
                       "unsupported GPU target 'sm_70'. Use sm_80, sm_86, sm_89, sm_90 or sm_90a (the compute "
                       "capability, e.g. sm_90a for H100)",
                       UserError);
  CHECK(nvptx::parse_target("sm_90a") == nvptx::Target{90, true});
  CHECK(nvptx::parse_target("sm_80") == nvptx::Target{80, false});
}
