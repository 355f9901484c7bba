// Casts: float narrowing (round to nearest even, no double rounding), float -> int
// (truncation, saturation, NaN -> 0), int -> float, int -> int (wrap), to i1 (!= 0).
#include <limits>

#include "interp_test_util.hpp"

using namespace tf_test;

namespace {

HostArray cast(HostArray& in, DType to) {
  return run_map(to, {&in}, [to](Kernel& k, auto& x) { return k.b.cast(x[0], to); }, 64);
}

HostArray from_values(DType d, const std::vector<double>& v) {
  HostArray a(d, static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) a.set(static_cast<int64_t>(i), v[i]);
  return a;
}
HostArray from_ints(DType d, const std::vector<int64_t>& v) {
  HostArray a(d, static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) a.seti(static_cast<int64_t>(i), v[i]);
  return a;
}

}  // namespace

TEST_CASE("interp: f32 -> f16/bf16 rounds to nearest even, like tilefuse::half") {
  HostArray a = random_array(DType::f32, 501, -70000, 70000);  // includes f16 overflow
  HostArray small = random_array(DType::f32, 301, -1e-6, 1e-6);  // f16 subnormals
  for (HostArray* in : {&a, &small}) {
    HostArray h = cast(*in, DType::f16), bf = cast(*in, DType::bf16);
    for (int64_t i = 0; i < in->n; ++i) {
      float x = static_cast<float>(in->get(i));
      REQUIRE(same_float(h.get(i), static_cast<float>(half(x))));
      REQUIRE(same_float(bf.get(i), static_cast<float>(bfloat16(x))));
    }
  }
  // Exact ties go to the even neighbour.
  HostArray ties = from_values(DType::f32, {1 + std::ldexp(1.0, -11), 1 + 3 * std::ldexp(1.0, -11),
                                            1 + std::ldexp(1.0, -8), 1 + 3 * std::ldexp(1.0, -8)});
  HostArray h = cast(ties, DType::f16), bf = cast(ties, DType::bf16);
  CHECK(h.get(0) == 1.0);
  CHECK(h.get(1) == 1 + std::ldexp(1.0, -9));
  CHECK(bf.get(2) == 1.0);
  CHECK(bf.get(3) == 1 + std::ldexp(1.0, -6));
}

TEST_CASE("interp: f64 -> f16/bf16 rounds once (no double rounding through f32)") {
  // 1 + 2^-11 + 2^-40 rounds to the f16 tie 1 + 2^-11 in f32; rounded once it is 1 + 2^-10.
  HostArray a = from_values(DType::f64, {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
                                         1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), 1e300, -1e-300, 0.1});
  HostArray h = cast(a, DType::f16), bf = cast(a, DType::bf16), f = cast(a, DType::f32);
  CHECK(h.get(0) == 1 + std::ldexp(1.0, -10));
  CHECK(bf.get(1) == 1 + std::ldexp(1.0, -7));
  CHECK(std::isinf(h.get(2)));
  CHECK(std::isinf(bf.get(2)));
  CHECK(h.get(3) == 0.0);
  CHECK(std::signbit(h.get(3)));
  CHECK(f.get(4) == static_cast<float>(0.1));
  HostArray r = random_array(DType::f64, 257, -10, 10);
  HostArray rh = cast(r, DType::f16);
  for (int64_t i = 0; i < r.n; ++i) {  // the nearest f16 of the double, found by neighbours
    float got = static_cast<float>(rh.get(i));
    half hv(got);
    half up = half::from_bits(hv.bits + 1), down = half::from_bits(hv.bits - 1);
    double err = std::fabs(r.get(i) - got);
    REQUIRE(err <= std::fabs(r.get(i) - static_cast<float>(up)));
    REQUIRE(err <= std::fabs(r.get(i) - static_cast<float>(down)));
  }
}

TEST_CASE("interp: widening float casts are exact") {
  HostArray h = random_array(DType::bf16, 99), f = random_array(DType::f16, 99);
  HostArray a = cast(h, DType::f32), b = cast(f, DType::f64), c = cast(f, DType::bf16);
  for (int64_t i = 0; i < 99; ++i) {
    REQUIRE(a.get(i) == h.get(i));
    REQUIRE(b.get(i) == f.get(i));
    REQUIRE(c.get(i) == static_cast<float>(bfloat16(static_cast<float>(f.get(i)))));
  }
}

TEST_CASE("interp: float -> int truncates toward zero, saturates, NaN -> 0") {
  double nan = std::nan(""), inf = INFINITY;
  HostArray a = from_values(DType::f32, {2.9, -2.9, 0.5, -0.5, 1e10, -1e10, nan, inf, -inf, 300, -300, 127.9, -129});
  HostArray i32 = cast(a, DType::i32), i8 = cast(a, DType::i8), u32 = cast(a, DType::u32), u8 = cast(a, DType::u8);
  HostArray i64 = cast(a, DType::i64), b = cast(a, DType::i1);
  std::vector<int64_t> w32 = {2, -2, 0, 0, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, 300, -300, 127, -129};
  std::vector<int64_t> w8 = {2, -2, 0, 0, 127, -128, 0, 127, -128, 127, -128, 127, -128};
  std::vector<int64_t> wu32 = {2, 0, 0, 0, UINT32_MAX, 0, 0, UINT32_MAX, 0, 300, 0, 127, 0};
  std::vector<int64_t> wu8 = {2, 0, 0, 0, 255, 0, 0, 255, 0, 255, 0, 127, 0};
  std::vector<int64_t> w64 = {2, -2, 0, 0, 10000000000, -10000000000, 0, INT64_MAX, INT64_MIN, 300, -300, 127, -129};
  std::vector<int64_t> wb = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  for (int64_t i = 0; i < a.n; ++i) {
    CAPTURE(i);
    CHECK(i32.geti(i) == w32[i]);
    CHECK(i8.geti(i) == w8[i]);
    CHECK(u32.geti(i) == wu32[i]);
    CHECK(u8.geti(i) == wu8[i]);
    CHECK(i64.geti(i) == w64[i]);
    CHECK(b.geti(i) == wb[i]);
  }
  HostArray z = from_values(DType::f32, {0.0, -0.0});
  HostArray zb = cast(z, DType::i1);
  CHECK(zb.geti(0) == 0);
  CHECK(zb.geti(1) == 0);
  HostArray r = random_array(DType::f32, 333, -1000, 1000);
  HostArray ri = cast(r, DType::i32);
  for (int64_t i = 0; i < r.n; ++i) REQUIRE(ri.geti(i) == static_cast<int32_t>(static_cast<float>(r.get(i))));
}

TEST_CASE("interp: int -> float rounds to nearest even") {
  HostArray a = from_ints(DType::i32, {16777217, -16777219, 2049, 2051, 65519, 65520, 7, -3});
  HostArray f = cast(a, DType::f32), h = cast(a, DType::f16), bf = cast(a, DType::bf16), d = cast(a, DType::f64);
  CHECK(f.get(0) == 16777216);
  CHECK(f.get(1) == -16777220);
  CHECK(h.get(2) == 2048);
  CHECK(h.get(3) == 2052);
  CHECK(h.get(4) == 65504);
  CHECK(std::isinf(h.get(5)));
  CHECK(d.get(0) == 16777217);
  CHECK(bf.get(6) == 7);
  CHECK(bf.get(7) == -3);
  // 2^24 + 2^16 + 1 rounds to the bf16 tie 2^24 + 2^16 through f32; rounded once: 2^24 + 2^17.
  HostArray big = from_ints(DType::i64, {(int64_t(1) << 24) + (int64_t(1) << 16) + 1, INT64_MAX, INT64_MIN});
  HostArray bb = cast(big, DType::bf16), bd = cast(big, DType::f64);
  CHECK(bb.get(0) == std::ldexp(1.0, 24) + std::ldexp(1.0, 17));
  CHECK(bd.get(1) == std::ldexp(1.0, 63));
  CHECK(bd.get(2) == -std::ldexp(1.0, 63));
  HostArray u = from_ints(DType::u32, {UINT32_MAX, 0x80000000u});
  HostArray uf = cast(u, DType::f64);
  CHECK(uf.get(0) == 4294967295.0);
  CHECK(uf.get(1) == 2147483648.0);
  HostArray r = full_range_ints(DType::i32, 400);
  HostArray rf = cast(r, DType::f32);
  for (int64_t i = 0; i < r.n; ++i) REQUIRE(rf.get(i) == static_cast<float>(static_cast<int32_t>(r.geti(i))));
}

TEST_CASE("interp: int -> int wraps and extends by the source's signedness, to i1 is != 0") {
  HostArray a = full_range_ints(DType::i32, 300);
  HostArray i8 = cast(a, DType::i8), u8 = cast(a, DType::u8), i16 = cast(a, DType::i16), i64 = cast(a, DType::i64);
  HostArray u32 = cast(a, DType::u32), b = cast(a, DType::i1);
  for (int64_t i = 0; i < a.n; ++i) {
    int32_t x = static_cast<int32_t>(a.geti(i));
    REQUIRE(i8.geti(i) == static_cast<int8_t>(x));
    REQUIRE(u8.geti(i) == static_cast<uint8_t>(x));
    REQUIRE(i16.geti(i) == static_cast<int16_t>(x));
    REQUIRE(i64.geti(i) == x);
    REQUIRE(u32.geti(i) == static_cast<uint32_t>(x));
    REQUIRE(b.geti(i) == (x != 0));
  }
  HostArray s = from_ints(DType::i8, {-1, -128, 5});
  HostArray su = cast(s, DType::u32);
  CHECK(su.geti(0) == 0xFFFFFFFFu);
  CHECK(su.geti(1) == 0xFFFFFF80u);
  HostArray u = from_ints(DType::u8, {255, 128});
  HostArray ui = cast(u, DType::i32);
  CHECK(ui.geti(0) == 255);
  CHECK(ui.geti(1) == 128);
  HostArray bits = from_ints(DType::i1, {1, 0});
  HostArray bi = cast(bits, DType::i32), bf = cast(bits, DType::f32);
  CHECK(bi.geti(0) == 1);
  CHECK(bi.geti(1) == 0);
  CHECK(bf.get(0) == 1.0);
}
