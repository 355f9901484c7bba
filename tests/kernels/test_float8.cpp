// 8-bit floats: the host formats against their definitions (every bit pattern, ties,
// saturation), arithmetic on them promoted to f32, and the 8-bit GEMM (scaled_matmul)
// on the interpreter against plain C++ at odd shapes; bad input is a user error.
#include <doctest/doctest.h>

#include <cmath>

#include "reference.hpp"
#include "tilefuse/kernels/kernels.hpp"
#include "tilefuse/kernels/tuned.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;

namespace {

// The value of an 8-bit pattern from the formats' definitions (OCP FP8: E4M3 bias 7 with
// only S.1111.111 NaN; E5M2 bias 15 with IEEE infinities and NaNs).
double decode(uint8_t bits, int exp_bits) {
  int man_bits = 7 - exp_bits, bias = (1 << (exp_bits - 1)) - 1;
  int e = (bits >> man_bits) & ((1 << exp_bits) - 1), m = bits & ((1 << man_bits) - 1);
  double sign = bits & 0x80 ? -1 : 1;
  if (exp_bits == 4 && e == 15 && m == 7) return NAN;
  if (exp_bits == 5 && e == 31) return m ? NAN : sign * INFINITY;
  if (e == 0) return sign * m * std::pow(2.0, 1 - bias - man_bits);
  return sign * (1 + m / double(1 << man_bits)) * std::pow(2.0, e - bias);
}

template <class F>
void check_format(int exp_bits, double max_finite) {
  CAPTURE(exp_bits);
  std::vector<double> finite;  // the non-negative finite values, ascending
  for (int b = 0; b < 256; ++b) {
    double want = decode(static_cast<uint8_t>(b), exp_bits);
    double got = static_cast<float>(F::from_bits(static_cast<uint8_t>(b)));
    CAPTURE(b);
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
      CHECK(F(static_cast<float>(got)).bits == 0x7F);  // NaN in, canonical NaN out
      continue;
    }
    CHECK(got == want);
    if (std::isinf(want)) continue;
    CHECK(F(static_cast<float>(want)).bits == (want == 0 ? (b & 0x80) : b));  // every value round-trips
    if (b < 0x80) finite.push_back(want);
  }
  std::sort(finite.begin(), finite.end());
  CHECK(finite.back() == max_finite);
  // Between two neighbours: below the midpoint down, above up, on it to the even pattern.
  for (size_t i = 0; i + 1 < finite.size(); ++i) {
    double lo = finite[i], hi = finite[i + 1], mid = (lo + hi) / 2;
    CAPTURE(lo);
    CHECK(static_cast<float>(F(static_cast<float>(mid - (hi - lo) / 8))) == lo);
    CHECK(static_cast<float>(F(static_cast<float>(mid + (hi - lo) / 8))) == hi);
    uint8_t even = F(static_cast<float>(lo)).bits % 2 == 0 ? F(static_cast<float>(lo)).bits : F(static_cast<float>(hi)).bits;
    CHECK(F(static_cast<float>(mid)).bits == even);
    CHECK(F(static_cast<float>(-mid)).bits == (even | 0x80));
  }
  // Saturation: past the largest finite value (infinity included) to it, sign kept.
  for (double v : {max_finite * 1.01, max_finite * 1.2, 1e30, double(INFINITY)}) {
    CHECK(static_cast<float>(F(static_cast<float>(v))) == max_finite);
    CHECK(static_cast<float>(F(static_cast<float>(-v))) == -max_finite);
  }
  // Below half the smallest subnormal: zero of the same sign.
  CHECK(F(static_cast<float>(finite[1] / 2.5)).bits == 0);
  CHECK(F(static_cast<float>(-finite[1] / 2.5)).bits == 0x80);
}

}  // namespace

TEST_CASE("f8e4m3 and f8e5m2: every pattern decodes to its value, rounding to nearest even, saturating") {
  check_format<float8_e4m3>(4, 448);
  check_format<float8_e5m2>(5, 57344);
  CHECK(promote(DType::f8e4m3, DType::f8e5m2) == DType::f32);
  CHECK(promote(DType::f8e4m3, DType::bf16) == DType::bf16);
  DType d;
  CHECK((parse_dtype("f8e5m2", d) && d == DType::f8e5m2));
}

TEST_CASE("8-bit float tiles: casts round like the host format, arithmetic happens in f32") {
  // y = f32(f8(x)) and s = f8a + f8b (stored as f32: arithmetic on 8-bit floats is f32).
  auto k = kernel("f8_casts", {"y", "s", "x", "a", "b", "n"},
                  [](Ptr<float> y, Ptr<float> s, Ptr<const float> x, Ptr<const f8e4m3> a, Ptr<const f8e5m2> b, I32 n,
                     Meta<"BLOCK"> BLOCK) {
                    auto i = program_id(0) * BLOCK + arange(0, BLOCK);
                    auto m = i < n;
                    store(y + i, load(x + i, m, 0.0f).cast<f8e4m3>().cast<f32>(), m);
                    store(s + i, load(a + i, m) + load(b + i, m), m);
                  });
  int n = 1000;
  auto x = ref::random_vec<float>(n, 3, -600, 600);
  x[0] = 1e9f;
  x[1] = -0.0f;
  x[2] = 0.001f;  // a subnormal of e4m3 (2^-9 steps)
  auto a = ref::random_vec<float8_e4m3>(n, 4, -448, 448);
  auto b = ref::random_vec<float8_e5m2>(n, 5, -1000, 1000);
  std::vector<float> y(n), s(n);
  k.launch(grid(4), Config{{"BLOCK", 256}}, y, s, x, a, b, n);
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(y[i] == static_cast<float>(float8_e4m3(x[i])));
    CHECK(s[i] == static_cast<float>(a[i]) + static_cast<float>(b[i]));
  }
  CHECK(y[0] == 448.0f);
}

TEST_CASE("scaled_matmul (8-bit GEMM) matches the reference at odd M, N, K, both B layouts and operand formats") {
  struct Case { int64_t m, n, k; bool b_trans; tk::Activation act; bool bias; Config cfg; };
  Config small{{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 32}, {"GROUP_M", 2}, num_warps(4)};
  Case cases[] = {
      {37, 45, 53, true, tk::Activation::none, false, small},
      {61, 29, 70, false, tk::Activation::gelu_tanh, true, small},
      {16, 64, 96, true, tk::Activation::relu, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, num_warps(2)}},
      {9, 7, 5, true, tk::Activation::none, false, Config{}},  // the heuristic's config
      // Split-K (gemm_split_k.hpp): 7 K blocks in slices of 3, 3 and 1, the scales applied
      // to the slices' partials, bias and activation in the reduction.
      {37, 45, 203, false, tk::Activation::gelu_tanh, true, Config(small).set("SPLIT_K", 3)},
      {20, 33, 160, true, tk::Activation::relu, false, Config(small).set("SPLIT_K", 2)},
  };
  for (auto& c : cases) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    auto a = ref::random_vec<float8_e4m3>(c.m * c.k, 61, -4.0f, 4.0f);
    auto a5 = ref::random_vec<float8_e5m2>(c.m * c.k, 62, -4.0f, 4.0f);
    auto b = ref::random_vec<float8_e4m3>(c.k * c.n, 63, -4.0f, 4.0f);
    auto bias = ref::random_vec<bfloat16>(c.n, 64, -1.0f, 1.0f);
    std::vector<float> scale_a{0.125f}, scale_b{1.5f};
    tk::ConfigOverride cfg;
    if (!c.cfg.meta.empty()) cfg = c.cfg;
    tk::ScaledMatmulOptions o{c.b_trans, c.act};
    std::vector<bfloat16> out(c.m * c.n, bfloat16(7.0f));
    std::vector<float> out5(c.m * c.n, 7.0f);
    if (c.bias) tk::scaled_matmul(out, a, b, scale_a, scale_b, c.m, c.n, c.k, o, bias, cfg);
    else tk::scaled_matmul(out, a, b, scale_a, scale_b, c.m, c.n, c.k, o, nullptr, cfg);
    tk::scaled_matmul(out5, a5, b, scale_a, scale_b, c.m, c.n, c.k, {c.b_trans}, nullptr, cfg);  // f32 out, no epilogue
    auto want = ref::matmul(ref::to_float(a), ref::to_float(b), c.m, c.n, c.k, c.b_trans, 0.1875, static_cast<int>(c.act),
                            c.bias ? ref::to_float(bias) : std::vector<float>{}, {});
    auto want5 = ref::matmul(ref::to_float(a5), ref::to_float(b), c.m, c.n, c.k, c.b_trans, 0.1875, 0, {}, {});
    CHECK(ref::max_rel_err(out, want, 1e-2, 1e-2) <= 1.0);
    CHECK(ref::max_rel_err(out5, want5, 1e-4, 1e-4) <= 1.0);
  }
}

TEST_CASE("scaled_matmul: a split into fewer than one slice is a user error") {
  std::vector<float8_e4m3> a(64), b(64);
  std::vector<float> c(16), sa{1.0f}, sb{1.0f};
  try {
    tk::scaled_matmul(c, a, b, sa, sb, 4, 4, 16, {}, nullptr,
                      Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 32}, {"SPLIT_K", -2}, num_warps(1)});
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("scaled_matmul: SPLIT_K must be at least 1 (the number of slices K is split into), got -2") !=
          std::string::npos);
  }
}

TEST_CASE("8-bit floats: a dot mixing them with 16-bit floats is a user error naming the types") {
  auto k = kernel("f8_mixed_dot", {"c", "a", "b"}, [](Ptr<float> c, Ptr<const f8e4m3> a, Ptr<const bf16> b) {
    auto r = arange(0, 16);
    auto offs = r.col() * 16 + r.row();
    store(c + offs, dot(load(a + offs), load(b + offs)));
  });
  std::vector<float8_e4m3> a(256, float8_e4m3(1.0f));
  std::vector<bfloat16> b(256, bfloat16(1.0f));
  std::vector<float> c(256);
  try {
    k.launch(grid(1), Config{}, c, a, b);
    FAIL("no error");
  } catch (const UserError& e) {
    std::string msg = e.what();
    CHECK(msg.find("dot does not support tile<16x16xf8e4m3> x tile<16x16xbf16> inputs") != std::string::npos);
    CHECK(msg.find("8-bit floats (f8e4m3/f8e5m2, either with either)") != std::string::npos);
    CHECK(msg.find("test_float8.cpp") != std::string::npos);  // the user's line
  }
}

TEST_CASE("tuned_scaled_matmul on host buffers: the heuristic's config, precise accumulation included") {
  int64_t m = 33, n = 20, k = 70;
  auto a = ref::random_vec<float8_e4m3>(m * k, 91, -2.0f, 2.0f), b = ref::random_vec<float8_e4m3>(n * k, 92, -2.0f, 2.0f);
  std::vector<float> sa{0.5f}, sb{2.0f};
  auto want = ref::matmul(ref::to_float(a), ref::to_float(b), m, n, k, true, 1.0, 0, {}, {});
  for (bool precise : {false, true}) {
    CAPTURE(precise);
    std::vector<float> out(m * n);
    tk::ScaledMatmulOptions o;
    o.precise_accumulation = precise;
    tk::tuned_scaled_matmul(out, a, b, sa, sb, m, n, k, o);
    CHECK(ref::max_rel_err(out, want, 1e-4, 1e-4) <= 1.0);
  }
}

// The host GEMM functions transpose an 8-bit B [K, N] into [N, K] rows of a 16-byte
// multiple before the GEMM (device buffers only); the kernel on the interpreter here,
// at odd shapes and with the destination's padding left alone.
template <class T>
void check_transpose(int64_t rows, int64_t cols, int64_t ld_src, int64_t ld_dst) {
  CAPTURE(rows);
  CAPTURE(cols);
  auto src = ref::random_vec<T>(size_t(rows * ld_src), 101, -4.0f, 4.0f);
  std::vector<T> dst(size_t(cols * ld_dst), T(0.5f));
  Config cfg = tk::transpose_config<T>();
  int64_t tiles = ((rows + cfg.get("BLOCK_R") - 1) / cfg.get("BLOCK_R")) * ((cols + cfg.get("BLOCK_C") - 1) / cfg.get("BLOCK_C"));
  tk::transpose_kernel<T>().launch(grid(tiles), cfg, dst, src, rows, cols, ld_dst, ld_src);
  int64_t wrong = 0;
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < ld_dst; ++r) {
      float want = r < rows ? static_cast<float>(src[r * ld_src + c]) : 0.5f;
      wrong += static_cast<float>(dst[c * ld_dst + r]) != want;
    }
  CHECK(wrong == 0);
}

TEST_CASE("the 8-bit GEMM's operand transposition matches plain C++ at odd shapes, padding untouched") {
  check_transpose<float8_e4m3>(333, 257, 257, 336);
  check_transpose<float8_e4m3>(129, 300, 301, 144);
  check_transpose<float8_e5m2>(64, 128, 128, 64);
  check_transpose<bfloat16>(70, 45, 47, 72);
}
