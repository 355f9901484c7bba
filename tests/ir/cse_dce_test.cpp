// CSE merges pure duplicates within dominance scopes; DCE removes dead code but keeps
// side effects; Builder::for_ prunes invariant iteration values.
#include <doctest/doctest.h>

#include "ir_test_util.hpp"

using namespace tilefuse;
using namespace tilefuse::ir;
using test::contains;

namespace {

Value* ci(Builder& b, int64_t v) { return b.const_int(v, Type::scalar(DType::i32)); }

}  // namespace

TEST_CASE("ir cse: merges identical pure ops but not loads") {
  uint64_t seed = test::random_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  int k = static_cast<int>(rng() % 1000) + 2;
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* in = b.param("in", Type::pointer(DType::i32), true);
  Value* ptrs1 = b.add_ptr(in, b.binary(BinaryOp::Mul, b.program_id(0), ci(b, k)));
  Value* ptrs2 = b.add_ptr(in, b.binary(BinaryOp::Mul, b.program_id(0), ci(b, k)));
  Value* x1 = b.load(ptrs1);
  Value* x2 = b.load(ptrs2);
  b.store(out, b.binary(BinaryOp::Add, x1, x2));
  CHECK(cse(*f));
  verify(*f);
  CHECK(test::count_kind(*f, OpKind::ProgramId) == 1);
  CHECK(test::count_kind(*f, OpKind::Constant) == 1);
  CHECK(test::count_binary(*f, BinaryOp::Mul) == 1);
  CHECK(test::count_kind(*f, OpKind::AddPtr) == 1);
  CHECK(test::count_kind(*f, OpKind::Load) == 2);  // memory may change between loads
  const Op* load = test::first_op(*f, OpKind::Load);
  CHECK(load->operand(0) == test::first_op(*f, OpKind::AddPtr)->result());
  CHECK_FALSE(cse(*f));  // a fixed point
}

TEST_CASE("ir cse: attributes and result types distinguish ops") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* a = b.binary(BinaryOp::Add, b.program_id(0), b.program_id(1));
  Value* c = b.binary(BinaryOp::Sub, b.program_id(0), b.program_id(1));
  b.store(out, b.binary(BinaryOp::Mul, a, c));
  b.store(out, b.cast(b.const_int(3, Type::scalar(DType::i64)), DType::i32));
  b.store(out, b.const_int(3, Type::scalar(DType::i32)));
  cse(*f);
  verify(*f);
  CHECK(test::count_kind(*f, OpKind::ProgramId) == 2);  // axes 0 and 1
  CHECK(test::count_binary(*f, BinaryOp::Add) == 1);
  CHECK(test::count_binary(*f, BinaryOp::Sub) == 1);
  CHECK(test::count_kind(*f, OpKind::Constant) == 2);  // i64 3 and i32 3
}

TEST_CASE("ir cse: reuses values of enclosing blocks, never values of regions") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* before = b.binary(BinaryOp::Mul, n, n);
  Value* in_loop_outer = nullptr;
  Value* in_loop_local = nullptr;
  auto r = b.for_(ci(b, 0), n, ci(b, 1), {n}, [&](Builder& bb, Value* iv, const std::vector<Value*>& it) {
    in_loop_outer = bb.binary(BinaryOp::Mul, n, n);     // same as `before`: reuses it
    in_loop_local = bb.binary(BinaryOp::Add, n, n);     // first occurrence is inside the loop
    Value* t = bb.binary(BinaryOp::Add, in_loop_outer, in_loop_local);
    return std::vector<Value*>{bb.binary(BinaryOp::Add, it[0], bb.binary(BinaryOp::Add, t, iv))};
  });
  Value* after = b.binary(BinaryOp::Add, n, n);  // must not be replaced by the loop's copy
  auto br = b.if_(b.compare(CmpPred::Lt, n, ci(b, 0)),
                  [&](Builder& t) { return std::vector<Value*>{t.binary(BinaryOp::Sub, n, ci(t, 5))}; },
                  [&](Builder& e) { return std::vector<Value*>{e.binary(BinaryOp::Sub, n, ci(e, 5))}; });
  b.store(out, b.binary(BinaryOp::Add, b.binary(BinaryOp::Add, before, after), b.binary(BinaryOp::Add, r[0], br[0])));
  cse(*f);
  verify(*f);  // would fail if `after` were replaced by the value defined in the loop
  const Op* loop = test::first_op(*f, OpKind::For);
  int muls_in_loop = 0, adds_nn_in_loop = 0;
  walk(*loop->region(0), [&](Op& op) {
    muls_in_loop += op.kind == OpKind::Binary && op.bin() == BinaryOp::Mul;
    adds_nn_in_loop += op.kind == OpKind::Binary && op.operand(0) == n && op.operand(1) == n;
  });
  CHECK(muls_in_loop == 0);
  CHECK(adds_nn_in_loop == 1);
  int adds_nn_top = 0;
  for (auto& op : f->body.ops) adds_nn_top += op->kind == OpKind::Binary && op->bin() == BinaryOp::Add &&
                                             op->operand(0) == n && op->operand(1) == n;
  CHECK(adds_nn_top == 1);
  // Both branches keep their own copy.
  const Op* iff = test::first_op(*f, OpKind::If);
  CHECK(iff->region(0)->ops.size() == 3);
  CHECK(iff->region(1)->ops.size() == 3);
}

TEST_CASE("ir dce: removes dead ops, keeps stores and the loads feeding them") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* in = b.param("in", Type::pointer(DType::f32), true);
  Value* offs = b.arange(0, 64);
  Value* x = b.load(b.add_ptr(in, offs));
  Value* unused_load = b.load(b.add_ptr(in, b.binary(BinaryOp::Add, offs, ci(b, 64))));
  Value* dead = b.unary(UnaryOp::Exp, b.binary(BinaryOp::Mul, unused_load, x));
  (void)dead;
  b.store(b.add_ptr(out, offs), b.unary(UnaryOp::Abs, x));
  b.atomic_rmw(AtomicOp::Add, out, b.const_float(1.0, Type::scalar(DType::f32)));  // result unused, kept
  CHECK(dce(*f));
  verify(*f);
  CHECK(test::count_kind(*f, OpKind::Load) == 1);
  CHECK(test::count_kind(*f, OpKind::Store) == 1);
  CHECK(test::count_kind(*f, OpKind::AtomicRMW) == 1);
  CHECK(test::count_kind(*f, OpKind::Binary) == 0);
  CHECK(test::count_binary(*f, BinaryOp::Mul) == 0);
  CHECK_FALSE(contains(to_string(*f), "exp"));
  CHECK_FALSE(dce(*f));
}

TEST_CASE("ir dce: loops and ifs") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  SUBCASE("a loop without side effects and unused results goes") {
    b.for_(ci(b, 0), n, ci(b, 1), {n}, [&](Builder& bb, Value* iv, const std::vector<Value*>& it) {
      return std::vector<Value*>{bb.binary(BinaryOp::Add, it[0], iv)};
    });
    canonicalize(*f);
    verify(*f);
    CHECK(count_ops(*f) == 0);
  }
  SUBCASE("a loop with a store inside stays") {
    b.for_(ci(b, 0), n, ci(b, 1), {}, [&](Builder& bb, Value* iv, const std::vector<Value*>&) {
      bb.store(out, iv);
      return std::vector<Value*>{};
    });
    canonicalize(*f);
    verify(*f);
    CHECK(test::count_kind(*f, OpKind::For) == 1);
    CHECK(test::count_kind(*f, OpKind::Store) == 1);
  }
  SUBCASE("an unused iteration value whose update feeds nothing else is pruned") {
    auto r = b.for_(ci(b, 0), n, ci(b, 1), {n, n}, [&](Builder& bb, Value* iv, const std::vector<Value*>& it) {
      Value* junk = bb.binary(BinaryOp::Mul, bb.binary(BinaryOp::Add, it[1], iv), ci(bb, 3));
      return std::vector<Value*>{bb.binary(BinaryOp::Add, it[0], iv), junk};
    });
    b.store(out, r[0]);
    canonicalize(*f);
    verify(*f);
    const Op* loop = test::first_op(*f, OpKind::For);
    REQUIRE(loop);
    CHECK(loop->results.size() == 1);
    CHECK(loop->operands.size() == 4);
    CHECK(loop->region(0)->args.size() == 2);
    CHECK(test::count_binary(*f, BinaryOp::Mul) == 0);
  }
  SUBCASE("an unused iteration value that feeds a used one stays") {
    auto r = b.for_(ci(b, 0), n, ci(b, 1), {n, n}, [&](Builder& bb, Value* iv, const std::vector<Value*>& it) {
      return std::vector<Value*>{bb.binary(BinaryOp::Add, it[0], it[1]), bb.binary(BinaryOp::Add, it[1], iv)};
    });
    b.store(out, r[0]);
    canonicalize(*f);
    verify(*f);
    CHECK(test::first_op(*f, OpKind::For)->results.size() == 2);
  }
  SUBCASE("unused if results are dropped from both branches") {
    Value* cond = b.compare(CmpPred::Gt, n, ci(b, 0));
    auto r = b.if_(cond,
                   [&](Builder& t) {
                     t.store(out, n);
                     return std::vector<Value*>{t.binary(BinaryOp::Add, n, ci(t, 1)), t.binary(BinaryOp::Mul, n, n)};
                   },
                   [&](Builder& e) { return std::vector<Value*>{n, e.binary(BinaryOp::Sub, n, ci(e, 1))}; });
    b.store(out, r[1]);
    canonicalize(*f);
    verify(*f);
    const Op* iff = test::first_op(*f, OpKind::If);
    REQUIRE(iff);
    CHECK(iff->results.size() == 1);
    CHECK(test::count_binary(*f, BinaryOp::Add) == 0);
    CHECK(test::count_binary(*f, BinaryOp::Mul) == 1);
  }
}

TEST_CASE("ir builder: for_ removes iteration values the body returns unchanged") {
  uint64_t seed = test::random_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* scale = b.const_float(static_cast<double>(rng() % 100) / 8, Type::tile(DType::f32, {32}));
  Value* acc = b.const_float(0.0, Type::tile(DType::f32, {32}));
  Value* inner_scale = nullptr;
  auto r = b.for_(ci(b, 0), n, ci(b, 1), {scale, acc}, [&](Builder& bb, Value*, const std::vector<Value*>& it) {
    inner_scale = it[0];
    return std::vector<Value*>{it[0], bb.binary(BinaryOp::Add, it[1], it[0])};
  });
  REQUIRE(r.size() == 2);
  CHECK(r[0] == scale);  // invariant: the init itself
  const Op* loop = r[1]->def;
  REQUIRE(loop);
  CHECK(loop->results.size() == 1);
  CHECK(loop->operands.size() == 4);
  CHECK(loop->region(0)->args.size() == 2);
  CHECK(r[1]->index == 0);
  // Uses of the dropped body argument now read the init.
  const Op* add = test::first_op(*f, OpKind::Binary);
  CHECK(add->operand(1) == scale);
  CHECK(add->operand(0) == loop->region(0)->args[1]);
  b.store(b.add_ptr(out, b.arange(0, 32)), r[1]);
  verify(*f);
}
