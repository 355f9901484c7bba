// The verifier accepts Builder output and names op, types and source line on broken IR.
#include <doctest/doctest.h>

#include <source_location>

#include "ir_test_util.hpp"

using namespace tilefuse;
using namespace tilefuse::ir;
using test::contains;

namespace {

// The message of the UserError verify(f) raises ("" when it passes).
std::string verify_error(const Function& f) {
  try {
    verify(f);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

std::string line_here(const std::source_location& l = std::source_location::current()) {
  return "verifier_test.cpp:" + std::to_string(l.line());
}

}  // namespace

TEST_CASE("ir verifier: accepts IR built by the Builder, with loops, ifs and custom reductions") {
  auto f = test::make_function("ok");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* a = b.param("a", Type::pointer(DType::f16), true);
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* rows = b.arange(0, 16);
  Value* cols = b.arange(0, 32);
  Value* offs = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, b.expand_dims(rows, 1), b.const_int(32, Type::scalar(DType::i32))),
                         b.expand_dims(cols, 0));
  Value* tile = b.load(b.add_ptr(a, offs));
  Value* acc = b.dot(tile, b.trans(tile));
  auto loop = b.for_(b.const_int(0, Type::scalar(DType::i32)), n, b.const_int(1, Type::scalar(DType::i32)), {acc},
                     [&](Builder& bb, Value*, const std::vector<Value*>& it) {
                       return std::vector<Value*>{bb.unary(UnaryOp::Exp, it[0])};
                     });
  Value* s = b.reduce(loop[0], 1, ReduceKind::Max);
  Value* c = b.reduce_custom(s, 0, [](Builder& bb, Value* l, Value* r) { return bb.binary(BinaryOp::Add, l, r); });
  auto branch = b.if_(b.compare(CmpPred::Gt, n, b.const_int(0, Type::scalar(DType::i32))),
                      [&](Builder& bb) { return std::vector<Value*>{bb.unary(UnaryOp::Neg, c)}; },
                      [&](Builder&) { return std::vector<Value*>{c}; });
  b.store(out, branch[0]);
  b.atomic_rmw(AtomicOp::Add, out, b.const_float(1.0, Type::scalar(DType::f32)));
  CHECK(verify_error(*f) == "");
}

TEST_CASE("ir verifier: an operand of the wrong type names the op, the types and the source line") {
  auto f = test::make_function("broken");
  Builder b(*f);
  Value* x = b.param("x", Type::scalar(DType::f32));
  Value* h = b.param("h", Type::scalar(DType::f16));
  std::string where = line_here(); b.set_loc(std::source_location::current());
  Value* y = b.binary(BinaryOp::Add, x, x);
  (void)y;
  y->def->operands[1] = h;  // a pass bug: an f16 operand in an f32 add
  std::string msg = verify_error(*f);
  CHECK(contains(msg, "verifier: operand types differ: f32 vs f16"));
  CHECK(contains(msg, "Binary.add(f32, f16) -> f32"));
  CHECK(contains(msg, "(at " + where + ")"));
}

TEST_CASE("ir verifier: store value dtype differs from the pointee") {
  auto f = test::make_function("store");
  Builder b(*f);
  Value* p = b.param("p", Type::pointer(DType::bf16));
  Value* v = b.param("v", Type::scalar(DType::f32));
  std::string where = line_here(); b.set_loc(std::source_location::current());
  b.create(OpKind::Store, {p, v}, {});  // the Builder's store() would refuse this
  std::string msg = verify_error(*f);
  CHECK(msg == "verifier: store value dtype f32 differs from pointee bf16 in Store(ptr<bf16>, f32) (at " + where + ")");
}

TEST_CASE("ir verifier: result types must follow the attributes") {
  auto f = test::make_function("attrs");
  Builder b(*f);
  Value* x = b.param("x", Type::pointer(DType::f32));
  Value* t = b.load(b.add_ptr(x, b.arange(0, 64)));
  SUBCASE("reduce keeps the reduced axis") {
    Value* r = b.reduce(t, 0, ReduceKind::Sum);
    r->type = Type::tile(DType::f32, {64});
    CHECK(contains(verify_error(*f), "result type tile<64xf32> should be f32 in Reduce.sum(tile<64xf32>)"));
  }
  SUBCASE("arange length") {
    Value* a = b.arange(0, 32);
    a->def->end = 16;
    CHECK(contains(verify_error(*f), "result type tile<32xi32> should be tile<16xi32> in Arange"));
  }
  SUBCASE("load gives the pointee") {
    t->type = Type::tile(DType::f16, {64});
    CHECK(contains(verify_error(*f), "result type tile<64xf16> should be tile<64xf32> in Load"));
  }
  SUBCASE("dot shapes") {
    Value* m = b.reshape(t, {8, 8});
    Value* bad = b.reshape(t, {16, 4});
    Value* d = b.dot(m, m);
    d->def->operands[1] = bad;
    CHECK(contains(verify_error(*f), "inner dimensions differ: [8, 8] x [16, 4] in Dot"));
  }
  SUBCASE("compare gives i1") {
    Value* c = b.compare(CmpPred::Lt, t, t);
    c->type = t->type;
    CHECK(contains(verify_error(*f), "should be tile<64xi1> in Compare.lt"));
  }
  SUBCASE("select condition is i1") {
    Value* s = b.select(b.compare(CmpPred::Lt, t, t), t, t);
    s->def->operands[0] = t;
    CHECK(contains(verify_error(*f), "condition has type tile<64xf32>, expected tile<64xi1> in Select"));
  }
  SUBCASE("tile dimensions are powers of two") {
    b.create(OpKind::Constant, {}, {Type::tile(DType::f32, {48})});
    CHECK(contains(verify_error(*f), "result #0 has type tile<48xf32> whose dimensions are not powers of two"));
  }
}

TEST_CASE("ir verifier: SSA dominance and region scoping") {
  auto f = test::make_function("scopes");
  Builder b(*f);
  Value* p = b.param("p", Type::pointer(DType::i32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  SUBCASE("use before definition") {
    Value* a = b.binary(BinaryOp::Add, n, n);
    Value* c = b.binary(BinaryOp::Mul, a, n);
    std::swap(f->body.ops[0], f->body.ops[1]);
    (void)c;
    CHECK(contains(verify_error(*f), "operand #0 (i32) is used before its definition in Binary.mul"));
  }
  SUBCASE("a value defined in a loop body is not visible after the loop") {
    Value* inner = nullptr;
    b.for_(b.const_int(0, Type::scalar(DType::i32)), n, b.const_int(1, Type::scalar(DType::i32)), {},
           [&](Builder& bb, Value* iv, const std::vector<Value*>&) {
             inner = bb.binary(BinaryOp::Add, iv, iv);
             return std::vector<Value*>{};
           });
    std::string where = line_here(); b.set_loc(std::source_location::current());
    b.store(p, inner);
    std::string msg = verify_error(*f);
    CHECK(contains(msg, "operand #1 (i32) is not visible here (defined inside another region) in Store(ptr<i32>, i32)"));
    CHECK(contains(msg, where));
  }
  SUBCASE("every region ends in a yield") {
    auto r = b.for_(b.const_int(0, Type::scalar(DType::i32)), n, b.const_int(1, Type::scalar(DType::i32)), {n},
                    [&](Builder& bb, Value* iv, const std::vector<Value*>& it) {
                      return std::vector<Value*>{bb.binary(BinaryOp::Add, it[0], iv)};
                    });
    r[0]->def->region(0)->ops.pop_back();
    CHECK(contains(verify_error(*f), "a region does not end with a yield in For"));
  }
  SUBCASE("loop yields match the results") {
    auto r = b.for_(b.const_int(0, Type::scalar(DType::i32)), n, b.const_int(1, Type::scalar(DType::i32)), {n},
                    [&](Builder& bb, Value* iv, const std::vector<Value*>& it) {
                      return std::vector<Value*>{bb.binary(BinaryOp::Add, it[0], iv)};
                    });
    Block* body = r[0]->def->region(0);
    body->terminator()->operands.push_back(n);
    CHECK(contains(verify_error(*f), "loop body yields (i32, i32), expected (i32) in For(i32, i32, i32, i32) -> i32"));
  }
  SUBCASE("if branches yield the result types") {
    Value* cond = b.compare(CmpPred::Gt, n, b.const_int(0, Type::scalar(DType::i32)));
    auto r = b.if_(cond, [&](Builder&) { return std::vector<Value*>{n}; },
                   [&](Builder& e) { return std::vector<Value*>{e.binary(BinaryOp::Add, n, n)}; });
    r[0]->def->region(1)->terminator()->operands[0] = cond;
    CHECK(contains(verify_error(*f), "else branch yields (i1), expected (i32) in If(i1) -> i32"));
  }
  SUBCASE("yield only at the end of a region") {
    b.create(OpKind::Yield, {n}, {});
    CHECK(contains(verify_error(*f), "yield outside a region in Yield(i32)"));
  }
}

TEST_CASE("ir verifier: cluster reductions only where every program of the cluster reaches them equally often") {
  auto f = test::make_function("cluster_loop");
  f->cluster_size = 2;
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* one = b.const_int(1, Type::scalar(DType::i32));
  // Bounds from an argument and cluster_id (program_id(0) >> 1): allowed.
  Value* cluster_id = b.binary(BinaryOp::Shr, b.program_id(0), one);
  auto r = b.for_(cluster_id, n, one, {b.const_float(0, Type::scalar(DType::f32))},
                  [&](Builder& bb, Value*, const std::vector<Value*>& it) {
                    return std::vector<Value*>{bb.binary(BinaryOp::Add, it[0],
                                                         bb.cluster_reduce(bb.const_float(1, Type::scalar(DType::f32)),
                                                                           ReduceKind::Sum))};
                  });
  b.store(out, r[0]);
  CHECK(verify_error(*f) == "");
  // The same loop bounded by program_id(0) (hand-edited IR): rejected, naming the region.
  Op* loop = nullptr;
  walk(f->body, [&](Op& o) {
    if (o.kind == OpKind::For) loop = &o;
  });
  REQUIRE(loop);
  Value* pid = loop->operands[0]->def->operands[0];  // program_id(0), defined before the loop
  loop->operands[1] = pid;
  std::string m = verify_error(*f);
  CHECK(contains(m, "cluster reduction inside a for_range whose bounds may differ between the programs of a cluster"));
  CHECK(contains(m, "every program of the cluster must reach it equally often"));
}
