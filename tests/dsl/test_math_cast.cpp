// Casts (rounding and truncation), where, minimum/maximum and the element-wise math
// functions, on the interpreter against the same C++ float functions.
#include <functional>

#include "dsl_test_util.hpp"

using namespace tilefuse;
using dsltest::first_mismatch;

namespace {
constexpr int64_t kB = 64;

// Inputs with full f32 mantissas plus exact ties and edge cases of bf16/f16 rounding.
std::vector<float> cast_inputs() {
  auto v = dsltest::rand_f(150, 30, -1000.0f, 1000.0f);
  for (float x : {1.00390625f,     // 1 + 2^-8: a bf16 tie, rounds to even (1.0)
                  1.01171875f,     // 1 + 3 * 2^-8: a bf16 tie, rounds up to even
                  1.00048828125f,  // 1 + 2^-11: an f16 tie, rounds to 1.0
                  1.00146484375f,  // 1 + 3 * 2^-11: an f16 tie, rounds up
                  -2.7f, 2.7f, -0.5f, 0.99999f, 65519.0f, 70000.0f, -70000.0f, 3.0e-6f, -1.0e-7f, 123456.789f})
    v.push_back(x);
  return v;
}
}  // namespace

TEST_CASE("cast<T>: f32 -> bf16/f16 rounds to nearest even, float -> int truncates") {
  auto k = kernel("casts", {"ob", "oh", "oi", "ol", "of", "x", "n"},
                  [](Ptr<bf16> ob, Ptr<f16> oh, Ptr<i32> oi, Ptr<i64> ol, Ptr<f32> of, Ptr<const f32> x, I32 n,
                     Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto v = load(x + offs, m);
                    store(ob + offs, v.cast<bf16>(), m);
                    store(oh + offs, cast<f16>(v), m);
                    store(oi + offs, v.cast<i32>(), m);
                    store(ol + offs, (v * 1000.0f).cast<i64>(), m);
                    // int -> float and bf16 -> f32 (exact) round trips
                    store(of + offs, v.cast<i32>().cast<f32>() + v.cast<bf16>().cast<f32>(), m);
                  });
  auto x = cast_inputs();
  int n = static_cast<int>(x.size());
  std::vector<bf16> ob(n);
  std::vector<f16> oh(n);
  std::vector<int32_t> oi(n, 0);
  std::vector<int64_t> ol(n, 0);
  std::vector<float> of(n, 0.0f);
  k.launch(grid(3), {{"B", kB}}, ob, oh, oi, ol, of, x, n);
  std::vector<bf16> bw(n);
  std::vector<f16> hw(n);
  std::vector<int32_t> iw(n);
  std::vector<int64_t> lw(n);
  std::vector<float> fw(n);
  for (int i = 0; i < n; ++i) {
    bw[i] = bf16(x[i]);
    hw[i] = f16(x[i]);
    iw[i] = static_cast<int32_t>(x[i]);  // truncation toward zero
    lw[i] = static_cast<int64_t>(x[i] * 1000.0f);
    fw[i] = static_cast<float>(static_cast<int32_t>(x[i])) + float(bf16(x[i]));
  }
  CHECK(dsltest::bits_mismatch(ob, bw) == "");
  CHECK(dsltest::bits_mismatch(oh, hw) == "");
  CHECK(first_mismatch(oi, iw) == "");
  CHECK(first_mismatch(ol, lw) == "");
  CHECK(first_mismatch(of, fw) == "");
  // the ties, spelled out
  CHECK(float(ob[150]) == 1.0f);
  CHECK(float(ob[151]) == 1.015625f);
  CHECK(float(oh[152]) == 1.0f);
  CHECK(float(oh[153]) == 1.001953125f);
  CHECK(std::isinf(float(oh[159])));  // 70000 overflows f16
  CHECK(oi[154] == -2);
  CHECK(oi[155] == 2);
}

TEST_CASE("cast: float -> int saturates out of range, int -> int wraps, int -> float rounds") {
  auto k = kernel("casts2", {"oi", "o8", "of", "x", "xi"},
                  [](Ptr<i32> oi, Ptr<i8> o8, Ptr<f32> of, Ptr<const f32> x, Ptr<const i32> xi) {
                    auto offs = arange(0, 4);
                    store(oi + offs, load(x + offs).cast<i32>());
                    auto vi = load(xi + offs);
                    store(o8 + offs, vi.cast<i8>());
                    store(of + offs, vi.cast<f32>());
                  });
  std::vector<float> x = {3.0e9f, -3.0e9f, 2147483520.0f, -7.9f};
  std::vector<int32_t> xi = {300, -129, 16777217, -16777219};
  std::vector<int32_t> oi(4, 0);
  std::vector<int8_t> o8(4, 0);
  std::vector<float> of(4, 0);
  k.launch(grid(1), {}, oi, o8, of, x, xi);
  CHECK(first_mismatch(oi, std::vector<int32_t>{INT32_MAX, INT32_MIN, 2147483520, -7}) == "");
  CHECK(first_mismatch(o8, std::vector<int8_t>{44, 127, 1, -3}) == "");
  CHECK(first_mismatch(of, std::vector<float>{300.0f, -129.0f, 16777216.0f, -16777220.0f}) == "");
}

TEST_CASE("where and minimum/maximum broadcast and promote") {
  auto k = kernel("where", {"out", "oi", "a", "b", "ia", "n", "m"},
                  [](Ptr<f32> out, Ptr<i32> oi, Ptr<const f32> a, Ptr<const f32> b, Ptr<const i32> ia, I32 n, I32 m,
                     Meta<"BM"> BM, Meta<"BN"> BN) {
                    auto r = program_id(0) * BM + arange(0, BM);
                    auto c = arange(0, BN);
                    auto mask = (r < n).col() && (c < m).row();
                    auto offs = r.col() * m + c.row();
                    auto x = load(a + offs, mask);
                    auto y = load(b + offs, mask);
                    auto xi = load(ia + offs, mask);
                    auto sz = n * m;
                    store(out + offs, where(x > y, x, y * 2.0f), mask);
                    store(out + sz + offs, where(x > 0.0f, x, 0.25f), mask);   // literal other
                    store(out + 2 * sz + offs, where((r % 3 == 0).col(), x, -1.0f), mask);  // [BM,1] cond
                    store(out + 3 * sz + offs, minimum(x, y) + maximum(x, 0.5f), mask);
                    store(out + 4 * sz + offs, maximum(y, x.cast<bf16>()), mask);  // f32 with bf16 -> f32
                    store(oi + offs, maximum(xi, 3) - minimum(xi, -3) + where(xi > 0, xi, 7), mask);
                  });
  int n = 21, m = 13;
  auto a = dsltest::rand_f(n * m, 31);
  auto b = dsltest::rand_f(n * m, 32);
  auto ia = dsltest::rand_i(n * m, 33, -10, 10);
  std::vector<float> out(5 * n * m, 0.0f);
  std::vector<int32_t> oi(n * m, 0);
  k.launch(grid(3), {{"BM", 8}, {"BN", 16}}, out, oi, a, b, ia, n, m);
  int sz = n * m;
  std::vector<float> want(5 * sz);
  std::vector<int32_t> iw(sz);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < m; ++c) {
      int i = r * m + c;
      float x = a[i], y = b[i];
      want[i] = x > y ? x : y * 2.0f;
      want[sz + i] = x > 0.0f ? x : 0.25f;
      want[2 * sz + i] = r % 3 == 0 ? x : -1.0f;
      want[3 * sz + i] = std::min(x, y) + std::max(x, 0.5f);
      want[4 * sz + i] = std::max(y, float(bf16(x)));
      iw[i] = std::max(ia[i], 3) - std::min(ia[i], -3) + (ia[i] > 0 ? ia[i] : 7);
    }
  CHECK(first_mismatch(out, want) == "");
  CHECK(first_mismatch(oi, iw) == "");
}

namespace {
struct MathCase {
  const char* name;
  int op;
  bool positive;  // needs inputs > 0
  std::function<float(float)> ref;
};
}  // namespace

TEST_CASE("element-wise math functions match the C++ float functions") {
  // OP selects the function while tracing (plain C++ switch on a meta-parameter).
  auto k = kernel("math", {"out", "in", "n"}, [](Ptr<f32> out, Ptr<const f32> in, I32 n, Meta<"OP"> OP, Meta<"B"> B) {
    auto offs = program_id(0) * B + arange(0, B);
    auto m = offs < n;
    auto x = load(in + offs, m, 1.0f);
    Tile<f32, 1> y;
    switch (static_cast<int>(OP)) {
      case 0: y = exp(x); break;
      case 1: y = exp2(x); break;
      case 2: y = log(x); break;
      case 3: y = log2(x); break;
      case 4: y = sqrt(x); break;
      case 5: y = rsqrt(x); break;
      case 6: y = sin(x); break;
      case 7: y = cos(x); break;
      case 8: y = tanh(x); break;
      case 9: y = erf(x); break;
      case 10: y = sigmoid(x); break;
      case 11: y = abs(x); break;
      case 12: y = floor(x); break;
      case 13: y = ceil(x); break;
      default: y = x;
    }
    store(out + offs, y, m);
  });
  const MathCase cases[] = {
      {"exp", 0, false, [](float x) { return std::exp(x); }},
      {"exp2", 1, false, [](float x) { return std::exp2(x); }},
      {"log", 2, true, [](float x) { return std::log(x); }},
      {"log2", 3, true, [](float x) { return std::log2(x); }},
      {"sqrt", 4, true, [](float x) { return std::sqrt(x); }},
      {"rsqrt", 5, true, [](float x) { return 1.0f / std::sqrt(x); }},
      {"sin", 6, false, [](float x) { return std::sin(x); }},
      {"cos", 7, false, [](float x) { return std::cos(x); }},
      {"tanh", 8, false, [](float x) { return std::tanh(x); }},
      {"erf", 9, false, [](float x) { return std::erf(x); }},
      {"sigmoid", 10, false, [](float x) { return 1.0f / (1.0f + std::exp(-x)); }},
      {"abs", 11, false, [](float x) { return std::fabs(x); }},
      {"floor", 12, false, [](float x) { return std::floor(x); }},
      {"ceil", 13, false, [](float x) { return std::ceil(x); }},
  };
  int n = 173;
  auto signed_in = dsltest::rand_f(n, 34, -6.0f, 6.0f);
  auto pos_in = dsltest::rand_f(n, 35, 0.01f, 50.0f);
  for (const MathCase& c : cases) {
    CAPTURE(c.name);
    const auto& in = c.positive ? pos_in : signed_in;
    std::vector<float> out(n, 0.0f);
    k.launch(grid(3), {{"OP", c.op}, {"B", kB}}, out, in, n);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = c.ref(in[i]);
    CHECK(first_mismatch(out, want, 1e-5, 1e-7) == "");
  }
}

TEST_CASE("math on bf16/f16 tiles rounds to the tile's dtype, on int tiles it gives f32") {
  auto k = kernel("math16", {"ob", "oh", "of", "b", "h", "xi", "n"},
                  [](Ptr<bf16> ob, Ptr<f16> oh, Ptr<f32> of, Ptr<const bf16> b, Ptr<const f16> h, Ptr<const i32> xi,
                     I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto eb = exp(load(b + offs, m));
                    static_assert(std::is_same_v<decltype(eb), Tile<bf16, 1>>);
                    auto th = tanh(load(h + offs, m)) + sqrt(abs(load(h + offs, m)));
                    static_assert(std::is_same_v<decltype(th), Tile<f16, 1>>);
                    auto si = sqrt(load(xi + offs, m));
                    static_assert(std::is_same_v<decltype(si), Tile<f32, 1>>);
                    store(ob + offs, eb, m);
                    store(oh + offs, th, m);
                    store(of + offs, si, m);
                  });
  int n = 80;
  auto b = dsltest::rand_f<bf16>(n, 36, -3.0f, 3.0f);
  auto h = dsltest::rand_f<f16>(n, 37, -3.0f, 3.0f);
  auto xi = dsltest::rand_i(n, 38, 1, 100000);
  std::vector<bf16> ob(n);
  std::vector<f16> oh(n);
  std::vector<float> of(n);
  k.launch(grid(2), {{"B", kB}}, ob, oh, of, b, h, xi, n);
  std::vector<double> bw(n), hw(n), fw(n);
  for (int i = 0; i < n; ++i) {
    bw[i] = std::exp(double(float(b[i])));
    hw[i] = std::tanh(double(float(h[i]))) + std::sqrt(std::fabs(double(float(h[i]))));
    fw[i] = std::sqrt(double(xi[i]));
  }
  CHECK(first_mismatch(ob, bw, 1e-2) == "");
  CHECK(first_mismatch(oh, hw, 1e-2, 1e-3) == "");
  CHECK(first_mismatch(of, fw, 1e-6) == "");
}

TEST_CASE("fma rounds once") {
  auto k = kernel("fma", {"out", "a", "b", "c", "n"},
                  [](Ptr<f32> out, Ptr<const f32> a, Ptr<const f32> b, Ptr<const f32> c, I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto x = load(a + offs, m);
                    auto y = load(b + offs, m);
                    auto z = load(c + offs, m);
                    store(out + offs, fma(x, y, z), m);
                    store(out + n + offs, fma(x, 3.0f, -1.5f), m);
                  });
  int n = 100;
  auto a = dsltest::rand_f(n, 39);
  auto b = dsltest::rand_f(n, 40);
  auto c = dsltest::rand_f(n, 41);
  std::vector<float> out(2 * n, 0.0f);
  k.launch(grid(2), {{"B", kB}}, out, a, b, c, n);
  std::vector<float> want(2 * n);
  for (int i = 0; i < n; ++i) {
    want[i] = std::fma(a[i], b[i], c[i]);
    want[n + i] = std::fma(a[i], 3.0f, -1.5f);
  }
  CHECK(first_mismatch(out, want) == "");
}
