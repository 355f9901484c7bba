// Sibling-reduction scheduling: independent reductions of the same shape become
// adjacent (with the pure ops only they need), dependent ones and loads stay put.
#include <doctest/doctest.h>

#include "ir_test_util.hpp"

using namespace tilefuse;
using namespace tilefuse::ir;

namespace {

// Positions of the ops of `kind` in the body, in order.
std::vector<int> positions(const Function& f, OpKind kind) {
  std::vector<int> p;
  for (size_t i = 0; i < f.body.ops.size(); ++i)
    if (f.body.ops[i]->kind == kind) p.push_back(static_cast<int>(i));
  return p;
}

}  // namespace

TEST_CASE("ir group-reductions: an independent sum moves next to the first, with its operand") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* in = b.param("in", Type::pointer(DType::f32), true);
  Value* x = b.load(b.add_ptr(in, b.arange(0, 64)));
  Value* s1 = b.reduce(x, 0, ReduceKind::Sum);
  Value* mean = b.binary(BinaryOp::Div, s1, b.const_float(64, Type::scalar(DType::f32)));
  Value* sq = b.binary(BinaryOp::Mul, x, x);  // needed only by the second sum
  Value* s2 = b.reduce(sq, 0, ReduceKind::Max);
  Value* c1 = b.cluster_reduce(s1, ReduceKind::Sum);
  Value* other = b.binary(BinaryOp::Mul, c1, mean);
  Value* c2 = b.cluster_reduce(s2, ReduceKind::Max);
  b.store(out, b.binary(BinaryOp::Add, other, c2));
  CHECK(group_sibling_reductions(*f));
  verify(*f);
  auto r = positions(*f, OpKind::Reduce);
  REQUIRE(r.size() == 2);
  CHECK(r[1] == r[0] + 1);
  CHECK(f->body.ops[r[0]]->result() == s1);
  CHECK(f->body.ops[r[1]]->result() == s2);
  auto c = positions(*f, OpKind::ClusterReduce);
  REQUIRE(c.size() == 2);
  CHECK(c[1] == c[0] + 1);
  CHECK_FALSE(group_sibling_reductions(*f));  // a fixed point
}

TEST_CASE("ir group-reductions: dependent reductions, loads and other shapes stay in place") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* in = b.param("in", Type::pointer(DType::f32), true);
  Value* x = b.load(b.add_ptr(in, b.arange(0, 64)));
  Value* m = b.reduce(x, 0, ReduceKind::Max);
  Value* e = b.binary(BinaryOp::Sub, x, m);  // depends on the first reduction
  Value* s = b.reduce(e, 0, ReduceKind::Sum);
  Value* y = b.load(b.add_ptr(in, b.arange(64, 128)));  // a load: never moved
  Value* t = b.reduce(y, 0, ReduceKind::Sum);
  Value* z = b.load(b.add_ptr(in, b.arange(0, 32)));
  Value* u = b.reduce(z, 0, ReduceKind::Sum);  // another shape
  b.store(out, b.binary(BinaryOp::Add, b.binary(BinaryOp::Add, s, t), u));
  std::vector<const Op*> before;
  for (auto& op : f->body.ops) before.push_back(op.get());
  CHECK_FALSE(group_sibling_reductions(*f));
  for (size_t i = 0; i < before.size(); ++i) CHECK(f->body.ops[i].get() == before[i]);
}

TEST_CASE("ir verifier: the cluster size is a power of two from 1 to 1024") {
  for (int size : {0, 3, 48, 2048}) {
    auto f = test::make_function("k");
    f->cluster_size = size;
    Builder b(*f);
    b.store(b.param("out", Type::pointer(DType::i32)), b.program_id(0));
    try {
      verify(*f);
      FAIL("accepted cluster size " << size);
    } catch (const std::exception& e) {
      CHECK(std::string(e.what()).find("cluster size " + std::to_string(size) + " is not a power of two from 1 to 1024") !=
            std::string::npos);
    }
  }
}
