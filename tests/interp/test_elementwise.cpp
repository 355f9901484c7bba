// Element-wise ops against plain C++ references on random inputs.
#include "interp_test_util.hpp"

using namespace tf_test;
using ir::BinaryOp;
using ir::CmpPred;
using ir::UnaryOp;

namespace {

constexpr int64_t N = 777;  // odd: the last program is masked

// Rounds a float result to the storage format of d (f16/bf16/f32).
double round_ref(DType d, float x) {
  if (d == DType::f16) return static_cast<float>(half(x));
  if (d == DType::bf16) return static_cast<float>(bfloat16(x));
  return x;
}

template <class F32, class F64>
void check_float_binary(BinaryOp op, F32 ref32, F64 ref64) {
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    CAPTURE(name(d));
    CAPTURE(ir::name(op));
    HostArray a = random_array(d, N), b = random_array(d, N);
    HostArray out = run_map(d, {&a, &b}, [&](Kernel& k, auto& x) { return k.b.binary(op, x[0], x[1]); });
    for (int64_t i = 0; i < N; ++i) {
      double want = d == DType::f64 ? ref64(a.get(i), b.get(i))
                                    : round_ref(d, ref32(static_cast<float>(a.get(i)), static_cast<float>(b.get(i))));
      REQUIRE(same_float(out.get(i), want));
    }
  }
}

}  // namespace

TEST_CASE("interp: float binary ops round to their dtype") {
  check_float_binary(BinaryOp::Add, [](float x, float y) { return x + y; }, [](double x, double y) { return x + y; });
  check_float_binary(BinaryOp::Sub, [](float x, float y) { return x - y; }, [](double x, double y) { return x - y; });
  check_float_binary(BinaryOp::Mul, [](float x, float y) { return x * y; }, [](double x, double y) { return x * y; });
  check_float_binary(BinaryOp::Div, [](float x, float y) { return x / y; }, [](double x, double y) { return x / y; });
  check_float_binary(BinaryOp::Rem, [](float x, float y) { return fmodf(x, y); },
                     [](double x, double y) { return fmod(x, y); });
  check_float_binary(BinaryOp::Min, [](float x, float y) { return x < y ? x : y; },
                     [](double x, double y) { return x < y ? x : y; });
  check_float_binary(BinaryOp::Max, [](float x, float y) { return x > y ? x : y; },
                     [](double x, double y) { return x > y ? x : y; });
}

TEST_CASE("interp: f16 add rounds to nearest even") {
  HostArray a(DType::f16, 3), b(DType::f16, 3);
  a.set(0, 1.0); b.set(0, std::ldexp(1.0, -11));      // exact tie -> even (1.0)
  a.set(1, 1.0); b.set(1, 3 * std::ldexp(1.0, -11));  // tie -> even (1 + 2^-9)
  a.set(2, 2048); b.set(2, 1);                         // 2049 is a tie -> 2048
  HostArray out = run_map(DType::f16, {&a, &b}, [](Kernel& k, auto& x) { return k.add(x[0], x[1]); });
  CHECK(out.get(0) == 1.0);
  CHECK(out.get(1) == 1.0 + std::ldexp(1.0, -9));
  CHECK(out.get(2) == 2048);
}

TEST_CASE("interp: float min/max propagate NaN") {
  HostArray a(DType::f32, 4), b(DType::f32, 4);
  double nan = std::nan("");
  a.set(0, nan); b.set(0, 1);
  a.set(1, 2); b.set(1, nan);
  a.set(2, -0.0); b.set(2, 0.0);
  a.set(3, 3); b.set(3, -5);
  HostArray mn = run_map(DType::f32, {&a, &b}, [](Kernel& k, auto& x) { return k.b.binary(BinaryOp::Min, x[0], x[1]); });
  HostArray mx = run_map(DType::f32, {&a, &b}, [](Kernel& k, auto& x) { return k.b.binary(BinaryOp::Max, x[0], x[1]); });
  CHECK(std::isnan(mn.get(0)));
  CHECK(std::isnan(mn.get(1)));
  CHECK(std::isnan(mx.get(0)));
  CHECK(std::isnan(mx.get(1)));
  CHECK(std::signbit(mn.get(2)));
  CHECK(!std::signbit(mx.get(2)));
  CHECK(mn.get(3) == -5);
  CHECK(mx.get(3) == 3);
}

namespace {

template <class T>
void check_int_binary(DType d) {
  CAPTURE(name(d));
  const int width = bit_width(d);
  HostArray a = full_range_ints(d, N), b = full_range_ints(d, N);
  HostArray s = random_array(d, N, 0, width - 1);  // shift amounts
  HostArray nz = full_range_ints(d, N);            // divisors: never zero, never -1 with the minimum
  for (int64_t i = 0; i < N; ++i) {
    if (i % 5 == 0) nz.seti(i, uniform_int(1, 9) * (std::is_signed_v<T> && i % 2 ? -1 : 1));  // small divisors too
    if (nz.geti(i) == 0 || (std::is_signed_v<T> && nz.geti(i) == -1)) nz.seti(i, 3);
  }
  using U = std::make_unsigned_t<T>;
  auto run = [&](BinaryOp op, HostArray& x, HostArray& y) {
    return run_map(d, {&x, &y}, [&](Kernel& k, auto& v) { return k.b.binary(op, v[0], v[1]); });
  };
  HostArray add = run(BinaryOp::Add, a, b), sub = run(BinaryOp::Sub, a, b), mul = run(BinaryOp::Mul, a, b);
  HostArray div = run(BinaryOp::Div, a, nz), rem = run(BinaryOp::Rem, a, nz);
  HostArray mn = run(BinaryOp::Min, a, b), mx = run(BinaryOp::Max, a, b);
  HostArray band = run(BinaryOp::And, a, b), bor = run(BinaryOp::Or, a, b), bxor = run(BinaryOp::Xor, a, b);
  HostArray shl = run(BinaryOp::Shl, a, s), shr = run(BinaryOp::Shr, a, s);
  for (int64_t i = 0; i < N; ++i) {
    T x = static_cast<T>(a.geti(i)), y = static_cast<T>(b.geti(i)), z = static_cast<T>(nz.geti(i));
    int sh = static_cast<int>(s.geti(i));
    REQUIRE(add.geti(i) == static_cast<T>(static_cast<U>(x) + static_cast<U>(y)));
    REQUIRE(sub.geti(i) == static_cast<T>(static_cast<U>(x) - static_cast<U>(y)));
    REQUIRE(mul.geti(i) == static_cast<T>(static_cast<U>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y))));
    REQUIRE(div.geti(i) == static_cast<T>(x / z));
    REQUIRE(rem.geti(i) == static_cast<T>(x % z));
    REQUIRE(mn.geti(i) == std::min(x, y));
    REQUIRE(mx.geti(i) == std::max(x, y));
    REQUIRE(band.geti(i) == static_cast<T>(x & y));
    REQUIRE(bor.geti(i) == static_cast<T>(x | y));
    REQUIRE(bxor.geti(i) == static_cast<T>(x ^ y));
    REQUIRE(shl.geti(i) == static_cast<T>(static_cast<U>(static_cast<uint64_t>(static_cast<U>(x)) << sh)));
    REQUIRE(shr.geti(i) == static_cast<T>(x >> sh));  // arithmetic for signed T, logical for unsigned
  }
}

}  // namespace

TEST_CASE("interp: integer binary ops wrap and follow C semantics") {
  check_int_binary<int32_t>(DType::i32);
  check_int_binary<int64_t>(DType::i64);
  check_int_binary<int8_t>(DType::i8);
  check_int_binary<int16_t>(DType::i16);
  check_int_binary<uint8_t>(DType::u8);
  check_int_binary<uint32_t>(DType::u32);
}

TEST_CASE("interp: integer division truncates, remainder takes the dividend's sign") {
  HostArray a(DType::i32, 6), b(DType::i32, 6);
  int64_t av[] = {7, -7, 7, -7, INT32_MIN, INT32_MIN};
  int64_t bv[] = {2, 2, -2, -2, -1, 3};
  for (int i = 0; i < 6; ++i) { a.seti(i, av[i]); b.seti(i, bv[i]); }
  HostArray q = run_map(DType::i32, {&a, &b}, [](Kernel& k, auto& x) { return k.b.binary(BinaryOp::Div, x[0], x[1]); });
  HostArray r = run_map(DType::i32, {&a, &b}, [](Kernel& k, auto& x) { return k.b.binary(BinaryOp::Rem, x[0], x[1]); });
  int64_t qv[] = {3, -3, -3, 3, INT32_MIN, INT32_MIN / 3};
  int64_t rv[] = {1, -1, 1, -1, 0, INT32_MIN % 3};
  for (int i = 0; i < 6; ++i) {
    CHECK(q.geti(i) == qv[i]);
    CHECK(r.geti(i) == rv[i]);
  }
}

TEST_CASE("interp: integer division by zero is a user error") {
  HostArray a = random_array(DType::i32, 40, 1, 100), b = random_array(DType::i32, 40, 1, 100);
  b.seti(37, 0);
  std::string msg = user_error_text([&] {
    run_map(DType::i32, {&a, &b}, [](Kernel& k, auto& x) {
      k.at();
      return k.b.binary(BinaryOp::Div, x[0], x[1]);
    });
  });
  CHECK(msg.find("integer division by zero") != std::string::npos);
  CHECK(msg.find("kernel 'map'") != std::string::npos);
  CHECK(msg.find("program id (0, 0, 0)") != std::string::npos);
  CHECK(msg.find("test_elementwise.cpp:") != std::string::npos);
}

TEST_CASE("interp: i1 logic") {
  HostArray a = random_array(DType::f32, N), b = random_array(DType::f32, N);
  auto logic = [&](BinaryOp op) {
    return run_map(DType::i1, {&a, &b}, [op](Kernel& k, auto& x) {
      Value* zero = k.b.const_float(0, Type::scalar(DType::f32));
      return k.b.binary(op, k.lt(x[0], zero), k.lt(x[1], zero));
    });
  };
  HostArray land = logic(BinaryOp::And), lor = logic(BinaryOp::Or), lxor = logic(BinaryOp::Xor);
  HostArray lnot = run_map(DType::i1, {&a}, [](Kernel& k, auto& x) {
    return k.b.unary(UnaryOp::Not, k.lt(x[0], k.b.const_float(0, Type::scalar(DType::f32))));
  });
  for (int64_t i = 0; i < N; ++i) {
    bool p = a.get(i) < 0, q = b.get(i) < 0;
    REQUIRE(land.geti(i) == (p && q));
    REQUIRE(lor.geti(i) == (p || q));
    REQUIRE(lxor.geti(i) == (p != q));
    REQUIRE(lnot.geti(i) == !p);
  }
}

TEST_CASE("interp: unary math in f32 (f16/bf16 rounded after), f64 in double") {
  struct Case {
    UnaryOp op;
    float (*f)(float);
    double (*d)(double);
  };
  const Case cases[] = {
      {UnaryOp::Neg, [](float x) { return -x; }, [](double x) { return -x; }},
      {UnaryOp::Exp, expf, [](double x) { return std::exp(x); }},
      {UnaryOp::Exp2, exp2f, [](double x) { return std::exp2(x); }},
      {UnaryOp::Log, logf, [](double x) { return std::log(x); }},
      {UnaryOp::Log2, log2f, [](double x) { return std::log2(x); }},
      {UnaryOp::Sqrt, sqrtf, [](double x) { return std::sqrt(x); }},
      {UnaryOp::Rsqrt, [](float x) { return 1.0f / sqrtf(x); }, [](double x) { return 1.0 / std::sqrt(x); }},
      {UnaryOp::Sin, sinf, [](double x) { return std::sin(x); }},
      {UnaryOp::Cos, cosf, [](double x) { return std::cos(x); }},
      {UnaryOp::Tanh, tanhf, [](double x) { return std::tanh(x); }},
      {UnaryOp::Erf, erff, [](double x) { return std::erf(x); }},
      {UnaryOp::Sigmoid, [](float x) { return 1.0f / (1.0f + expf(-x)); },
       [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {UnaryOp::Abs, fabsf, [](double x) { return std::fabs(x); }},
      {UnaryOp::Floor, floorf, [](double x) { return std::floor(x); }},
      {UnaryOp::Ceil, ceilf, [](double x) { return std::ceil(x); }},
  };
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    HostArray a = random_array(d, 131, -4, 4);  // negative inputs give NaN for log/sqrt: NaN must match NaN
    for (const Case& c : cases) {
      CAPTURE(name(d));
      CAPTURE(ir::name(c.op));
      HostArray out = run_map(d, {&a}, [&](Kernel& k, auto& x) { return k.b.unary(c.op, x[0]); }, 64);
      for (int64_t i = 0; i < a.n; ++i) {
        double want = d == DType::f64 ? c.d(a.get(i)) : round_ref(d, c.f(static_cast<float>(a.get(i))));
        REQUIRE(same_float(out.get(i), want));
      }
    }
  }
}

TEST_CASE("interp: integer unary ops") {
  HostArray a = full_range_ints(DType::i32, N);
  a.seti(0, INT32_MIN);
  HostArray neg = run_map(DType::i32, {&a}, [](Kernel& k, auto& x) { return k.b.unary(UnaryOp::Neg, x[0]); });
  HostArray inv = run_map(DType::i32, {&a}, [](Kernel& k, auto& x) { return k.b.unary(UnaryOp::Not, x[0]); });
  HostArray abs = run_map(DType::i32, {&a}, [](Kernel& k, auto& x) { return k.b.unary(UnaryOp::Abs, x[0]); });
  for (int64_t i = 0; i < N; ++i) {
    int32_t x = static_cast<int32_t>(a.geti(i));
    REQUIRE(neg.geti(i) == static_cast<int32_t>(0u - static_cast<uint32_t>(x)));
    REQUIRE(inv.geti(i) == ~x);
    REQUIRE(abs.geti(i) == static_cast<int32_t>(x < 0 ? 0u - static_cast<uint32_t>(x) : static_cast<uint32_t>(x)));
  }
  HostArray u = full_range_ints(DType::u8, 100);
  HostArray unot = run_map(DType::u8, {&u}, [](Kernel& k, auto& x) { return k.b.unary(UnaryOp::Not, x[0]); });
  for (int64_t i = 0; i < 100; ++i) REQUIRE(unot.geti(i) == static_cast<uint8_t>(~static_cast<uint8_t>(u.geti(i))));
}

TEST_CASE("interp: compare predicates on floats (with NaN) and signed/unsigned ints") {
  const CmpPred preds[] = {CmpPred::Eq, CmpPred::Ne, CmpPred::Lt, CmpPred::Le, CmpPred::Gt, CmpPred::Ge};
  auto ref = [](CmpPred p, auto x, auto y) -> bool {
    switch (p) {
      case CmpPred::Eq: return x == y;
      case CmpPred::Ne: return x != y;
      case CmpPred::Lt: return x < y;
      case CmpPred::Le: return x <= y;
      case CmpPred::Gt: return x > y;
      case CmpPred::Ge: return x >= y;
    }
    return false;
  };
  HostArray fa = random_array(DType::f32, N), fb = random_array(DType::f32, N);
  for (int64_t i = 0; i < N; i += 4) fb.set(i, fa.get(i));
  fa.set(1, std::nan(""));
  HostArray ia = full_range_ints(DType::u32, N), ib = full_range_ints(DType::u32, N);
  HostArray sa = full_range_ints(DType::i16, N), sb = full_range_ints(DType::i16, N);
  for (int64_t i = 0; i < N; i += 4) { ib.seti(i, ia.geti(i)); sb.seti(i, sa.geti(i)); }
  for (CmpPred p : preds) {
    CAPTURE(ir::name(p));
    auto cmp = [p](Kernel& k, auto& x) { return k.b.compare(p, x[0], x[1]); };
    HostArray f = run_map(DType::i1, {&fa, &fb}, cmp);
    HostArray u = run_map(DType::i1, {&ia, &ib}, cmp);
    HostArray s = run_map(DType::i1, {&sa, &sb}, cmp);
    for (int64_t i = 0; i < N; ++i) {
      REQUIRE(f.geti(i) == ref(p, static_cast<float>(fa.get(i)), static_cast<float>(fb.get(i))));
      REQUIRE(u.geti(i) == ref(p, static_cast<uint32_t>(ia.geti(i)), static_cast<uint32_t>(ib.geti(i))));
      REQUIRE(s.geti(i) == ref(p, static_cast<int16_t>(sa.geti(i)), static_cast<int16_t>(sb.geti(i))));
    }
  }
}

TEST_CASE("interp: select and fma") {
  HostArray a = random_array(DType::f32, N), b = random_array(DType::f32, N), c = random_array(DType::f32, N);
  HostArray sel = run_map(DType::f32, {&a, &b}, [](Kernel& k, auto& x) {
    return k.b.select(k.lt(x[0], x[1]), x[0], k.mul(x[1], k.b.const_float(2, Type::scalar(DType::f32))));
  });
  HostArray fma = run_map(DType::f32, {&a, &b, &c}, [](Kernel& k, auto& x) { return k.b.fma(x[0], x[1], x[2]); });
  HostArray ha = random_array(DType::f16, N), hb = random_array(DType::f16, N), hc = random_array(DType::f16, N);
  HostArray hfma = run_map(DType::f16, {&ha, &hb, &hc}, [](Kernel& k, auto& x) { return k.b.fma(x[0], x[1], x[2]); });
  for (int64_t i = 0; i < N; ++i) {
    float x = static_cast<float>(a.get(i)), y = static_cast<float>(b.get(i)), z = static_cast<float>(c.get(i));
    REQUIRE(sel.get(i) == (x < y ? x : y * 2));
    REQUIRE(fma.get(i) == fmaf(x, y, z));
    float hx = static_cast<float>(ha.get(i)), hy = static_cast<float>(hb.get(i)), hz = static_cast<float>(hc.get(i));
    REQUIRE(hfma.get(i) == static_cast<float>(half(fmaf(hx, hy, hz))));
  }
}
