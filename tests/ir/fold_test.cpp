// Constant folding: exact integer and float semantics, identities, nested regions.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

#include "ir_test_util.hpp"
#include "tilefuse/ir/half.hpp"

using namespace tilefuse;
using namespace tilefuse::ir;
using test::contains;

namespace {

// Builds kernel @k(%out: ptr<d>) { store %out, expr } and canonicalizes it.
std::unique_ptr<Function> canon(DType d, const std::function<Value*(Builder&)>& expr) {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(d));
  b.store(out, expr(b));
  canonicalize(*f);
  verify(*f);
  return f;
}

// The op defining the stored value after canonicalization.
const Op* stored_def(const Function& f) { return test::first_op(f, OpKind::Store)->operand(1)->def; }

// The folded integer constant, or nullopt when `expr` did not fold to one constant.
std::optional<int64_t> fold_int(DType d, const std::function<Value*(Builder&)>& expr) {
  auto f = canon(d, expr);
  const Op* c = stored_def(*f);
  if (!c || c->kind != OpKind::Constant) return std::nullopt;
  return c->ival;
}

std::optional<double> fold_float(DType d, const std::function<Value*(Builder&)>& expr) {
  auto f = canon(d, expr);
  const Op* c = stored_def(*f);
  if (!c || c->kind != OpKind::Constant) return std::nullopt;
  return c->fval;
}

Value* ci(Builder& b, int64_t v, DType d) { return b.const_int(v, Type::scalar(d)); }
Value* cf(Builder& b, double v, DType d) { return b.const_float(v, Type::scalar(d)); }

std::optional<int64_t> bin_int(BinaryOp op, DType d, int64_t x, int64_t y) {
  return fold_int(d, [&](Builder& b) { return b.binary(op, ci(b, x, d), ci(b, y, d)); });
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("ir fold: (a+b)*x becomes (a+b wrapped)*x") {
  uint64_t seed = test::random_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto a = static_cast<int32_t>(rng()), c = static_cast<int32_t>(rng());
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* x = b.param("x", Type::scalar(DType::i32));
  Value* sum = b.binary(BinaryOp::Add, ci(b, a, DType::i32), ci(b, c, DType::i32));
  b.store(out, b.binary(BinaryOp::Mul, sum, x));
  canonicalize(*f);
  verify(*f);
  auto want = static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(c));
  CHECK(to_string(*f) ==
        "kernel @k(%out: ptr<i32>, %x: i32) warps 4 stages 1 {\n"
        "  %0 = constant " + std::to_string(want) + " : i32\n"
        "  %1 = mul %0, %x : i32\n"
        "  store %out, %1\n"
        "}\n");
}

TEST_CASE("ir fold: integer ops match C semantics on random operands") {
  uint64_t seed = test::random_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int rep = 0; rep < 20; ++rep) {
    int32_t x = static_cast<int32_t>(rng()), y = static_cast<int32_t>(rng() >> (rng() % 32));
    if (y == 0) y = 7;
    uint32_t ux = static_cast<uint32_t>(x), uy = static_cast<uint32_t>(y);
    CAPTURE(x);
    CAPTURE(y);
    CHECK(bin_int(BinaryOp::Add, DType::i32, x, y) == static_cast<int32_t>(ux + uy));
    CHECK(bin_int(BinaryOp::Sub, DType::i32, x, y) == static_cast<int32_t>(ux - uy));
    CHECK(bin_int(BinaryOp::Mul, DType::i32, x, y) == static_cast<int32_t>(ux * uy));
    CHECK(bin_int(BinaryOp::Div, DType::i32, x, y) == x / y);
    CHECK(bin_int(BinaryOp::Rem, DType::i32, x, y) == x % y);
    CHECK(bin_int(BinaryOp::Min, DType::i32, x, y) == std::min(x, y));
    CHECK(bin_int(BinaryOp::Max, DType::i32, x, y) == std::max(x, y));
    CHECK(bin_int(BinaryOp::Xor, DType::i32, x, y) == (x ^ y));
    int s = static_cast<int>(rng() % 32);
    CHECK(bin_int(BinaryOp::Shl, DType::i32, x, s) == static_cast<int32_t>(ux << s));
    CHECK(bin_int(BinaryOp::Shr, DType::i32, x, s) == (x >> s));
    // Unsigned: logical shift, unsigned division and comparison.
    CHECK(bin_int(BinaryOp::Shr, DType::u32, x, s) == static_cast<int64_t>(ux >> s));
    CHECK(bin_int(BinaryOp::Div, DType::u32, x, y) == static_cast<int64_t>(ux / uy));
    CHECK(bin_int(BinaryOp::Max, DType::u32, x, y) == static_cast<int64_t>(std::max(ux, uy)));
    // Narrow types wrap.
    auto i8x = static_cast<int8_t>(x), i8y = static_cast<int8_t>(y);
    CHECK(bin_int(BinaryOp::Mul, DType::i8, i8x, i8y) == static_cast<int8_t>(static_cast<uint8_t>(i8x * i8y)));
    CHECK(bin_int(BinaryOp::Add, DType::u8, x & 0xff, y & 0xff) == ((x + y) & 0xff));
    auto i16x = static_cast<int16_t>(x);
    CHECK(bin_int(BinaryOp::Sub, DType::i16, i16x, 0x7fff) == static_cast<int16_t>(static_cast<uint16_t>(i16x - 0x7fff)));
  }
}

TEST_CASE("ir fold: integer division edge cases") {
  CHECK(bin_int(BinaryOp::Div, DType::i32, -7, 2) == -3);  // truncates toward zero
  CHECK(bin_int(BinaryOp::Rem, DType::i32, -7, 2) == -1);  // sign of the dividend
  CHECK(bin_int(BinaryOp::Div, DType::i32, 7, -2) == -3);
  CHECK(bin_int(BinaryOp::Rem, DType::i32, 7, -2) == 1);
  CHECK(bin_int(BinaryOp::Add, DType::i8, 100, 100) == -56);
  CHECK(bin_int(BinaryOp::Add, DType::i32, std::numeric_limits<int32_t>::max(), 1) ==
        std::numeric_limits<int32_t>::min());
  CHECK(bin_int(BinaryOp::Mul, DType::i64, int64_t(1) << 62, 4) == 0);
  // Undefined results stay in the program.
  CHECK_FALSE(bin_int(BinaryOp::Div, DType::i32, 5, 0).has_value());
  CHECK_FALSE(bin_int(BinaryOp::Rem, DType::i64, 5, 0).has_value());
  CHECK_FALSE(bin_int(BinaryOp::Div, DType::i32, std::numeric_limits<int32_t>::min(), -1).has_value());
  CHECK_FALSE(bin_int(BinaryOp::Shl, DType::i32, 1, 32).has_value());
  CHECK_FALSE(bin_int(BinaryOp::Shr, DType::i32, 1, -1).has_value());
  auto f = canon(DType::i32, [](Builder& b) { return b.binary(BinaryOp::Div, ci(b, 5, DType::i32), ci(b, 0, DType::i32)); });
  CHECK(test::count_binary(*f, BinaryOp::Div) == 1);
}

TEST_CASE("ir fold: float results are rounded to the result dtype") {
  uint64_t seed = test::random_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-100.0, 100.0);
  for (int rep = 0; rep < 20; ++rep) {
    double x = dist(rng), y = dist(rng);
    CAPTURE(x);
    CAPTURE(y);
    // f32: float arithmetic, not double.
    float fx = static_cast<float>(x), fy = static_cast<float>(y);
    CHECK(same_bits(*fold_float(DType::f32, [&](Builder& b) { return b.binary(BinaryOp::Mul, cf(b, x, DType::f32), cf(b, y, DType::f32)); }),
                    static_cast<double>(fx * fy)));
    CHECK(same_bits(*fold_float(DType::f32, [&](Builder& b) { return b.binary(BinaryOp::Div, cf(b, x, DType::f32), cf(b, y, DType::f32)); }),
                    static_cast<double>(fx / fy)));
    // f16 and bf16: operands are the constants' rounded values, so is the result.
    float hx = half(static_cast<float>(x)), hy = half(static_cast<float>(y));
    CHECK(same_bits(*fold_float(DType::f16, [&](Builder& b) { return b.binary(BinaryOp::Add, cf(b, x, DType::f16), cf(b, y, DType::f16)); }),
                    static_cast<double>(static_cast<float>(half(hx + hy)))));
    float bx = bfloat16(static_cast<float>(x)), by = bfloat16(static_cast<float>(y));
    CHECK(same_bits(*fold_float(DType::bf16, [&](Builder& b) { return b.binary(BinaryOp::Mul, cf(b, x, DType::bf16), cf(b, y, DType::bf16)); }),
                    static_cast<double>(static_cast<float>(bfloat16(bx * by)))));
    // f64 is exact double arithmetic.
    CHECK(same_bits(*fold_float(DType::f64, [&](Builder& b) { return b.binary(BinaryOp::Sub, cf(b, x, DType::f64), cf(b, y, DType::f64)); }),
                    x - y));
  }
  // 0.1 + 0.2 in f16 is 0.2998046875 (0.1 -> 0.0999755859375, 0.2 -> 0.199951171875).
  CHECK(*fold_float(DType::f16, [](Builder& b) { return b.binary(BinaryOp::Add, cf(b, 0.1, DType::f16), cf(b, 0.2, DType::f16)); }) ==
        0.2998046875);
  // f16 overflows to inf.
  CHECK(std::isinf(*fold_float(DType::f16, [](Builder& b) { return b.binary(BinaryOp::Mul, cf(b, 300, DType::f16), cf(b, 300, DType::f16)); })));
}

TEST_CASE("ir fold: casts") {
  CHECK(fold_int(DType::i32, [](Builder& b) { return b.cast(cf(b, 3.75, DType::f32), DType::i32); }) == 3);
  CHECK(fold_int(DType::i32, [](Builder& b) { return b.cast(cf(b, -3.75, DType::f32), DType::i32); }) == -3);
  CHECK(fold_int(DType::u8, [](Builder& b) { return b.cast(ci(b, -1, DType::i32), DType::u8); }) == 255);
  CHECK(fold_int(DType::i8, [](Builder& b) { return b.cast(ci(b, 300, DType::i32), DType::i8); }) == 44);
  CHECK(fold_int(DType::i64, [](Builder& b) { return b.cast(ci(b, -5, DType::i8), DType::i64); }) == -5);
  CHECK(fold_int(DType::i64, [](Builder& b) { return b.cast(ci(b, 0xffffffff, DType::u32), DType::i64); }) == 0xffffffffll);
  CHECK(fold_int(DType::i1, [](Builder& b) { return b.cast(ci(b, 4, DType::i32), DType::i1); }) == 1);
  CHECK_FALSE(fold_int(DType::i32, [](Builder& b) { return b.cast(cf(b, 1e10, DType::f32), DType::i32); }).has_value());
  CHECK_FALSE(fold_int(DType::i32, [](Builder& b) { return b.cast(cf(b, NAN, DType::f32), DType::i32); }).has_value());
  CHECK(fold_float(DType::f32, [](Builder& b) { return b.cast(ci(b, 16777217, DType::i32), DType::f32); }) == 16777216.0);
  // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the midpoint between 1 and
  // 1 + 2^-10, although rounding through f32 first would land on the midpoint and give 1.
  double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(fold_float(DType::f16, [&](Builder& b) { return b.cast(cf(b, v, DType::f64), DType::f16); }) ==
        1.0 + std::ldexp(1.0, -10));
  CHECK(fold_float(DType::bf16, [](Builder& b) { return b.cast(cf(b, 1.00390625, DType::f32), DType::bf16); }) == 1.0);
}

TEST_CASE("ir fold: unary, compare and select of constants") {
  CHECK(fold_float(DType::f32, [](Builder& b) { return b.unary(UnaryOp::Sqrt, cf(b, 2.0, DType::f32)); }) ==
        static_cast<double>(std::sqrt(2.0f)));
  CHECK(fold_float(DType::f32, [](Builder& b) { return b.unary(UnaryOp::Floor, cf(b, -2.5, DType::f32)); }) == -3.0);
  CHECK(fold_int(DType::i32, [](Builder& b) { return b.unary(UnaryOp::Neg, ci(b, std::numeric_limits<int32_t>::min(), DType::i32)); }) ==
        std::numeric_limits<int32_t>::min());
  CHECK(fold_int(DType::u8, [](Builder& b) { return b.unary(UnaryOp::Not, ci(b, 0x0f, DType::u8)); }) == 0xf0);
  // Approximate math is left to the target.
  CHECK_FALSE(fold_float(DType::f32, [](Builder& b) { return b.unary(UnaryOp::Exp, cf(b, 1.0, DType::f32), true); }).has_value());
  CHECK(fold_int(DType::i1, [](Builder& b) { return b.compare(CmpPred::Lt, ci(b, -1, DType::i32), ci(b, 1, DType::i32)); }) == 1);
  CHECK(fold_int(DType::i1, [](Builder& b) { return b.compare(CmpPred::Lt, ci(b, -1, DType::u32), ci(b, 1, DType::u32)); }) == 0);
  CHECK(fold_int(DType::i1, [](Builder& b) { return b.compare(CmpPred::Ne, cf(b, NAN, DType::f32), cf(b, NAN, DType::f32)); }) == 1);
  CHECK(fold_int(DType::i1, [](Builder& b) { return b.compare(CmpPred::Eq, cf(b, NAN, DType::f32), cf(b, NAN, DType::f32)); }) == 0);
}

TEST_CASE("ir fold: algebraic identities") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* fout = b.param("fout", Type::pointer(DType::f32));
  Value* x = b.param("x", Type::scalar(DType::i32));
  Value* y = b.param("y", Type::scalar(DType::f32));
  Value* c = b.param("c", Type::scalar(DType::i1));
  Value* zero = ci(b, 0, DType::i32);
  Value* one = ci(b, 1, DType::i32);
  b.store(out, b.binary(BinaryOp::Add, x, zero));                                 // x
  b.store(out, b.binary(BinaryOp::Mul, one, x));                                  // x
  b.store(out, b.binary(BinaryOp::Mul, x, zero));                                 // 0
  b.store(out, b.binary(BinaryOp::Xor, x, x));                                    // 0
  b.store(out, b.select(ci(b, 1, DType::i1), x, one));                            // x
  b.store(out, b.select(c, x, x));                                                // x
  b.store(out, b.create(OpKind::Cast, {x}, {x->type})->result());                 // x
  b.store(fout, b.binary(BinaryOp::Mul, y, cf(b, 1.0, DType::f32)));              // y
  b.store(fout, b.binary(BinaryOp::Add, y, cf(b, -0.0, DType::f32)));             // y
  b.store(fout, b.binary(BinaryOp::Add, y, cf(b, 0.0, DType::f32)));              // kept: -0 + 0 is +0
  b.store(fout, b.binary(BinaryOp::Mul, y, cf(b, 0.0, DType::f32)));              // kept: inf * 0 is NaN
  canonicalize(*f);
  verify(*f);
  CHECK(to_string(*f) ==
        "kernel @k(%out: ptr<i32>, %fout: ptr<f32>, %x: i32, %y: f32, %c: i1) warps 4 stages 1 {\n"
        "  %0 = constant 0 : i32\n"
        "  store %out, %x\n"
        "  store %out, %x\n"
        "  store %out, %0\n"
        "  store %out, %0\n"
        "  store %out, %x\n"
        "  store %out, %x\n"
        "  store %out, %x\n"
        "  store %fout, %y\n"
        "  store %fout, %y\n"
        "  %1 = constant 0 : f32\n"
        "  %2 = add %y, %1 : f32\n"
        "  store %fout, %2\n"
        "  %3 = mul %y, %1 : f32\n"
        "  store %fout, %3\n"
        "}\n");
}

TEST_CASE("ir fold: uniform tiles stay uniform through shape ops") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* s = b.param("s", Type::scalar(DType::f32));
  Value* ptrs = b.add_ptr(out, b.binary(BinaryOp::Add, b.expand_dims(b.arange(0, 16), 1),
                                         b.expand_dims(b.arange(0, 8), 0)));  // [16, 8]
  // splat of a constant -> constant tile; broadcast/trans of it -> constant tile.
  Value* k = b.expand_dims(b.splat(cf(b, 1.5, DType::f32), {8}), 0);
  b.store(ptrs, b.broadcast_to(k, {16, 8}));
  // broadcast of a splat -> splat of the scalar.
  Value* sp = b.expand_dims(b.splat(s, {16}), 1);
  b.store(ptrs, b.broadcast_to(sp, {16, 8}));
  canonicalize(*f);
  verify(*f);
  std::string text = to_string(*f);
  int float_broadcasts = 0;
  walk(f->body, [&](Op& op) { float_broadcasts += op.kind == OpKind::Broadcast && op.result()->type.dtype == DType::f32; });
  CHECK(float_broadcasts == 0);
  CHECK(contains(text, "= constant 1.5 : tile<16x8xf32>"));
  CHECK(contains(text, "= splat %s : tile<16x8xf32>"));
  CHECK_FALSE(contains(text, "tile<16xf32>"));
}

TEST_CASE("ir fold: folds inside loop bodies and inlines ifs on constant conditions") {
  uint64_t seed = test::random_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  int a = static_cast<int>(rng() % 1000), c = static_cast<int>(rng() % 1000);
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* lo = ci(b, 0, DType::i32);
  Value* step = ci(b, 1, DType::i32);
  auto r = b.for_(lo, n, step, {n},
                  [&](Builder& bb, Value* iv, const std::vector<Value*>& it) {
                    Value* k = bb.binary(BinaryOp::Mul, ci(bb, a, DType::i32), ci(bb, c, DType::i32));
                    auto br = bb.if_(bb.compare(CmpPred::Lt, ci(bb, a, DType::i32), ci(bb, a + 1, DType::i32)),
                                     [&](Builder& t) { return std::vector<Value*>{t.binary(BinaryOp::Add, it[0], k)}; },
                                     [&](Builder&) { return std::vector<Value*>{iv}; });
                    return std::vector<Value*>{br[0]};
                  });
  b.store(out, r[0]);
  canonicalize(*f);
  verify(*f);
  CHECK(test::count_kind(*f, OpKind::If) == 0);
  CHECK(to_string(*f) ==
        "kernel @k(%out: ptr<i32>, %n: i32) warps 4 stages 1 {\n"
        "  %0 = constant 0 : i32\n"
        "  %1 = constant 1 : i32\n"
        "  %2 = for %3 = %0 to %n step %1 iter(%4 = %n) : i32 {\n"
        "    %5 = constant " + std::to_string(a * c) + " : i32\n"
        "    %6 = add %4, %5 : i32\n"
        "    yield %6\n"
        "  }\n"
        "  store %out, %2\n"
        "}\n");
}

TEST_CASE("ir fold: loop values that become invariant after folding leave the loop") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  auto r = b.for_(ci(b, 0, DType::i32), n, ci(b, 1, DType::i32), {n, n},
                  [&](Builder& bb, Value* iv, const std::vector<Value*>& it) {
                    // it[1] * 1 is it[1]: only visible to the folder, not to the Builder.
                    return std::vector<Value*>{bb.binary(BinaryOp::Add, it[0], iv),
                                               bb.binary(BinaryOp::Mul, it[1], ci(bb, 1, DType::i32))};
                  });
  REQUIRE(r[0]->def->results.size() == 2);
  b.store(out, b.binary(BinaryOp::Add, r[0], r[1]));
  canonicalize(*f);
  verify(*f);
  const Op* loop = test::first_op(*f, OpKind::For);
  REQUIRE(loop);
  CHECK(loop->results.size() == 1);
  CHECK(contains(to_string(*f), "add %2, %n : i32"));
}

TEST_CASE("ir fold: an if result both branches yield alike is that value") {
  auto f = test::make_function("k");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* zero = ci(b, 0, DType::i32);
  Value* cond = b.compare(CmpPred::Gt, n, zero);
  auto r = b.if_(cond, [&](Builder& t) { return std::vector<Value*>{t.binary(BinaryOp::Add, n, zero)}; },
                 [&](Builder&) { return std::vector<Value*>{n}; });
  REQUIRE(r[0]->def);
  b.store(out, r[0]);
  canonicalize(*f);
  verify(*f);
  CHECK(to_string(*f) ==
        "kernel @k(%out: ptr<i32>, %n: i32) warps 4 stages 1 {\n"
        "  store %out, %n\n"
        "}\n");
}
