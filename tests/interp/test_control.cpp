// Control flow: for loops with carried tiles, nested loops, if/else, and a softmax
// kernel as an end-to-end check.
#include <chrono>

#include "interp_test_util.hpp"

using namespace tf_test;
using ir::BinaryOp;
using ir::ReduceKind;

TEST_CASE("interp: for loop carries a tile and a scalar (chunked row sums)") {
  const int64_t rows = 9, cols = 300, BN = 64;
  Kernel k("rowsum");
  Value* out = k.ptr("out", DType::f32);
  Value* cnt = k.ptr("cnt", DType::i32);
  Value* in = k.ptr("in", DType::f32, true);
  Value* n = k.scalar("n", DType::i32);
  Value* row = k.b.program_id(0);
  Value* base = k.at_ptr(in, k.mul(row, n));
  Value* acc0 = k.b.const_float(0, Type::tile(DType::f32, {BN}));
  auto res = k.b.for_(k.i32(0), n, k.i32(BN), {acc0, k.i32(0)},
                      [&](ir::Builder& b, Value* start, const std::vector<Value*>& it) -> std::vector<Value*> {
                        Value* cols_ = k.add(b.arange(0, BN), start);
                        Value* m = k.lt(cols_, n);
                        Value* x = b.load(b.add_ptr(base, cols_), m, b.const_float(0, Type::scalar(DType::f32)));
                        return {k.add(it[0], x), k.add(it[1], k.i32(1))};
                      });
  k.b.store(k.at_ptr(out, row), k.b.reduce(res[0], 0, ReduceKind::Sum));
  k.b.store(k.at_ptr(cnt, row), res[1]);
  HostArray a = random_array(DType::f32, rows * cols), o(DType::f32, rows), c(DType::i32, rows);
  k.run(Grid(rows), {o.arg(), c.arg(), a.arg(), ArgValue::integer(cols, DType::i32)});
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0, mag = 0;
    for (int64_t j = 0; j < cols; ++j) {
      s += a.get(r * cols + j);
      mag += std::fabs(a.get(r * cols + j));
    }
    CHECK(std::fabs(o.get(r) - s) <= 1e-5 * mag);
    CHECK(c.geti(r) == cdiv(cols, BN));
  }
}

TEST_CASE("interp: loop values that swap, fibonacci tiles, zero-trip loops") {
  Kernel k("fib");
  Value* out = k.ptr("out", DType::i32);
  Value* n = k.scalar("n", DType::i32);
  Value* lo = k.scalar("lo", DType::i32);
  Value* r = k.b.arange(0, 8);
  // (a, b) -> (b, a + b) from (r, 1) and (x, y) -> (y, x) from (r, -r).
  auto fib = k.b.for_(lo, n, k.i32(1), {r, k.b.const_int(1, Type::tile(DType::i32, {8}))},
                      [&](ir::Builder&, Value*, const std::vector<Value*>& it) -> std::vector<Value*> {
                        return {it[1], k.add(it[0], it[1])};
                      });
  Value* neg = k.b.binary(BinaryOp::Sub, k.i32(0), r);
  auto sw = k.b.for_(lo, n, k.i32(1), {r, neg},
                     [&](ir::Builder&, Value*, const std::vector<Value*>& it) -> std::vector<Value*> {
                       return {it[1], it[0]};
                     });
  k.b.store(k.at_ptr(out, r), fib[0]);
  k.b.store(k.at_ptr(out, k.add(r, k.i32(8))), sw[0]);
  for (int64_t iters : {0, 1, 5, 10}) {
    CAPTURE(iters);
    HostArray o(DType::i32, 16);
    k.run(Grid(1), {o.arg(), ArgValue::integer(3 + iters, DType::i32), ArgValue::integer(3, DType::i32)});
    for (int i = 0; i < 8; ++i) {
      int64_t a = i, b = 1;
      for (int64_t t = 0; t < iters; ++t) {
        int64_t nb = a + b;
        a = b;
        b = nb;
      }
      CHECK(o.geti(i) == a);
      CHECK(o.geti(8 + i) == (iters % 2 ? -i : i));
    }
  }
}

TEST_CASE("interp: nested loops with odd steps and negative bounds use the induction variable") {
  Kernel k("nested");
  Value* out = k.ptr("out", DType::i64);
  Value* zero = k.b.const_int(0, Type::scalar(DType::i64));
  auto outer = k.b.for_(k.i32(-7), k.i32(20), k.i32(3), {zero},
                        [&](ir::Builder& b, Value* i, const std::vector<Value*>& it) -> std::vector<Value*> {
                          auto inner = b.for_(i, k.i32(11), k.i32(2), {it[0]},
                                              [&](ir::Builder&, Value* j, const std::vector<Value*>& jt) {
                                                return std::vector<Value*>{k.add(jt[0], k.mul(i, j))};
                                              });
                          return {inner[0]};
                        });
  k.b.store(out, outer[0]);
  HostArray o(DType::i64, 1);
  k.run(Grid(1), {o.arg()});
  int64_t want = 0;
  for (int64_t i = -7; i < 20; i += 3)
    for (int64_t j = i; j < 11; j += 2) want += i * j;
  CHECK(o.geti(0) == want);
}

TEST_CASE("interp: a zero or negative loop step is a user error with the line") {
  Kernel k("stepper");
  Value* out = k.ptr("out", DType::i32);
  Value* step = k.scalar("step", DType::i32);
  k.at(); const int line = __LINE__;
  auto res = k.b.for_(k.i32(0), k.i32(10), step, {k.i32(0)},
                      [&](ir::Builder&, Value*, const std::vector<Value*>& it) -> std::vector<Value*> {
                        return {k.add(it[0], k.i32(1))};
                      });
  k.b.store(out, res[0]);
  HostArray o(DType::i32, 1);
  k.run(Grid(1), {o.arg(), ArgValue::integer(4, DType::i32)});
  CHECK(o.geti(0) == 3);
  for (int64_t s : {0, -2}) {
    std::string msg = user_error_text([&] { k.run(Grid(1), {o.arg(), ArgValue::integer(s, DType::i32)}); });
    CHECK(msg.find("for_range step is " + std::to_string(s)) != std::string::npos);
    CHECK(msg.find("kernel 'stepper'") != std::string::npos);
    CHECK(msg.find("test_control.cpp:" + std::to_string(line)) != std::string::npos);
  }
}

TEST_CASE("interp: if/else yields tiles, if without else runs side effects only when taken") {
  Kernel k("branch");
  Value* out = k.ptr("out", DType::f32);
  Value* flags = k.ptr("flags", DType::i32);
  Value* in = k.ptr("in", DType::f32, true);
  Value* pid = k.b.program_id(0);
  Value* offs = k.offsets(16);
  Value* x = k.b.load(k.at_ptr(in, offs));
  Value* even = k.b.compare(ir::CmpPred::Eq, k.b.binary(BinaryOp::Rem, pid, k.i32(2)), k.i32(0));
  auto res = k.b.if_(
      even, [&](ir::Builder& b) { return std::vector<Value*>{k.mul(x, b.const_float(2, Type::scalar(DType::f32)))}; },
      [&](ir::Builder& b) { return std::vector<Value*>{k.add(x, b.const_float(1, Type::scalar(DType::f32)))}; });
  k.b.store(k.at_ptr(out, offs), res[0]);
  k.b.if_(k.lt(pid, k.i32(2)), [&](ir::Builder& b) {
    b.store(b.add_ptr(flags, pid), k.i32(1));
    return std::vector<Value*>{};
  });
  HostArray a = random_array(DType::f32, 80), o(DType::f32, 80), f(DType::i32, 5);
  k.run(Grid(5), {o.arg(), f.arg(), a.arg()});
  for (int64_t i = 0; i < 80; ++i) {
    float v = static_cast<float>(a.get(i));
    CHECK(o.get(i) == ((i / 16) % 2 == 0 ? v * 2 : v + 1));
  }
  for (int p = 0; p < 5; ++p) CHECK(f.geti(p) == (p < 2 ? 1 : 0));
}

TEST_CASE("interp: softmax over bf16 rows (end to end, a grid of many programs)") {
  const int64_t rows = 500, cols = 1000, BLOCK = 1024;
  Kernel k("softmax");
  Value* out = k.ptr("out", DType::bf16);
  Value* in = k.ptr("in", DType::bf16, true);
  Value* n = k.scalar("n_cols", DType::i32);
  Value* stride = k.scalar("stride", DType::i64);
  Value* row = k.b.program_id(0);
  Value* c = k.b.arange(0, BLOCK);
  Value* mask = k.lt(c, n);
  Value* off = k.add(k.mul(k.b.cast(row, DType::i64), stride), c);
  Value* x = k.b.cast(k.b.load(k.at_ptr(in, off), mask, k.b.const_float(-INFINITY, Type::scalar(DType::bf16))),
                      DType::f32);
  Value* e = k.b.unary(ir::UnaryOp::Exp, k.b.binary(BinaryOp::Sub, x, k.b.reduce(x, 0, ReduceKind::Max)));
  Value* y = k.b.binary(BinaryOp::Div, e, k.b.reduce(e, 0, ReduceKind::Sum));
  k.b.store(k.at_ptr(out, off), k.b.cast(y, DType::bf16), mask);
  HostArray a = random_array(DType::bf16, rows * cols), o(DType::bf16, rows * cols);
  auto t0 = std::chrono::steady_clock::now();
  k.run(Grid(rows), {o.arg(), a.arg(), ArgValue::integer(cols, DType::i32), ArgValue::integer(cols, DType::i64)});
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("softmax " << rows << "x" << cols << " interpreted in " << ms << " ms");
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, a.get(r * cols + j));
    for (int64_t j = 0; j < cols; ++j) s += std::exp(a.get(r * cols + j) - m);
    for (int64_t j = 0; j < cols; ++j) {
      double want = std::exp(a.get(r * cols + j) - m) / s;
      REQUIRE(std::fabs(o.get(r * cols + j) - want) <= 1e-2 * want + 1e-6);
    }
  }
}
