// Arithmetic, comparison, bitwise and logical operators and dtype promotion, on the
// interpreter against plain C++ (C semantics for negative integer operands).
#include "dsl_test_util.hpp"

using namespace tilefuse;
using dsltest::first_mismatch;

namespace {
constexpr int64_t kB = 64;
}

TEST_CASE("+ - * / % on ints follow C semantics for negative operands") {
  auto k = kernel("int_arith", {"out", "a", "b", "n"},
                  [](Ptr<i32> out, Ptr<const i32> a, Ptr<const i32> b, I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto x = load(a + offs, m);
                    auto y = load(b + offs, m, 1);  // masked lanes divide by 1
                    store(out + offs, x + y, m);
                    store(out + n + offs, x - y, m);
                    store(out + 2 * n + offs, x * y, m);
                    store(out + 3 * n + offs, x / y, m);
                    store(out + 4 * n + offs, x % y, m);
                    store(out + 5 * n + offs, x / 7 + x % -7 + 3 - x * 2, m);  // literals on the right
                    store(out + 6 * n + offs, 100 - x + (1000 / y) + (-999 % y), m);  // and on the left
                  });
  int n = 333;
  auto a = dsltest::rand_i(n, 10, -30000, 30000);
  auto b = dsltest::rand_i(n, 11, -200, 200);
  std::vector<int32_t> out(7 * n, 0);
  k.launch(grid(6), {{"B", kB}}, out, a, b, n);
  std::vector<int32_t> want(7 * n);
  for (int i = 0; i < n; ++i) {
    int32_t x = a[i], y = b[i];
    want[i] = x + y;
    want[n + i] = x - y;
    want[2 * n + i] = x * y;
    want[3 * n + i] = x / y;
    want[4 * n + i] = x % y;
    want[5 * n + i] = x / 7 + x % -7 + 3 - x * 2;
    want[6 * n + i] = 100 - x + (1000 / y) + (-999 % y);
  }
  CHECK(first_mismatch(out, want) == "");
}

TEST_CASE("+ - * / % on floats") {
  auto k = kernel("float_arith", {"out", "a", "b", "n"},
                  [](Ptr<f32> out, Ptr<const f32> a, Ptr<const f32> b, I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto x = load(a + offs, m, 1.0f);
                    auto y = load(b + offs, m, 1.0f);
                    store(out + offs, x + y, m);
                    store(out + n + offs, x - y, m);
                    store(out + 2 * n + offs, x * y, m);
                    store(out + 3 * n + offs, x / y, m);
                    store(out + 4 * n + offs, x % y, m);
                    store(out + 5 * n + offs, 2.5f - x / 3 + 0.5 * y, m);
                  });
  int n = 201;
  auto a = dsltest::rand_f(n, 12, -50.0f, 50.0f);
  auto b = dsltest::rand_f(n, 13);
  std::vector<float> out(6 * n, 0.0f);
  k.launch(grid(4), {{"B", kB}}, out, a, b, n);
  std::vector<float> want(6 * n);
  for (int i = 0; i < n; ++i) {
    float x = a[i], y = b[i];
    want[i] = x + y;
    want[n + i] = x - y;
    want[2 * n + i] = x * y;
    want[3 * n + i] = x / y;
    want[4 * n + i] = std::fmod(x, y);
    want[5 * n + i] = 2.5f - x / 3.0f + 0.5f * y;
  }
  CHECK(first_mismatch(out, want, 1e-6) == "");
}

TEST_CASE("comparisons on ints and floats give bool tiles") {
  auto k = kernel("cmp", {"out", "a", "b", "fa", "n"},
                  [](Ptr<i32> out, Ptr<const i32> a, Ptr<const i32> b, Ptr<const f32> fa, I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto x = load(a + offs, m);
                    auto y = load(b + offs, m);
                    auto f = load(fa + offs, m);
                    auto lt = x < y;
                    static_assert(std::is_same_v<decltype(lt), Tile<bool, 1>>);
                    store(out + offs, lt.cast<i32>(), m);
                    store(out + n + offs, (x <= y).cast<i32>() * 2 + (x == y).cast<i32>(), m);
                    store(out + 2 * n + offs, (x > y).cast<i32>() + (x >= 0).cast<i32>() * 2 + (x != y).cast<i32>() * 4, m);
                    store(out + 3 * n + offs, (f < 0.5f).cast<i32>() + (f >= x).cast<i32>() * 2 + (1 > f).cast<i32>() * 4, m);
                  });
  int n = 150;
  auto a = dsltest::rand_i(n, 14, -5, 5);  // small range: many equal pairs
  auto b = dsltest::rand_i(n, 15, -5, 5);
  auto fa = dsltest::rand_f(n, 16, -6.0f, 6.0f);
  std::vector<int32_t> out(4 * n, -1);
  k.launch(grid(3), {{"B", kB}}, out, a, b, fa, n);
  std::vector<int32_t> want(4 * n);
  for (int i = 0; i < n; ++i) {
    int x = a[i], y = b[i];
    float f = fa[i];
    want[i] = x < y;
    want[n + i] = (x <= y) * 2 + (x == y);
    want[2 * n + i] = (x > y) + (x >= 0) * 2 + (x != y) * 4;
    want[3 * n + i] = (f < 0.5f) + (f >= float(x)) * 2 + (1.0f > f) * 4;
  }
  CHECK(first_mismatch(out, want) == "");
}

TEST_CASE("& | ^ << >> on ints, unary - and ~") {
  auto k = kernel("bits", {"out", "uout", "a", "b", "s", "u", "n"},
                  [](Ptr<i32> out, Ptr<u32> uout, Ptr<const i32> a, Ptr<const i32> b, Ptr<const i32> s,
                     Ptr<const u32> u, I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto x = load(a + offs, m);
                    auto y = load(b + offs, m);
                    auto sh = load(s + offs, m);
                    auto ux = load(u + offs, m);
                    store(out + offs, x & y, m);
                    store(out + n + offs, x | y, m);
                    store(out + 2 * n + offs, x ^ y, m);
                    store(out + 3 * n + offs, x << sh, m);
                    store(out + 4 * n + offs, x >> sh, m);  // arithmetic for signed
                    store(out + 5 * n + offs, -x, m);
                    store(out + 6 * n + offs, ~x, m);
                    store(out + 7 * n + offs, (x & 0xff) | (y << 3) ^ 5, m);
                    store(uout + offs, ux >> sh.cast<u32>(), m);  // logical for unsigned
                    store(uout + n + offs, ~ux ^ ux << 4u, m);
                  });
  int n = 99;
  auto a = dsltest::rand_i(n, 17, -2000000000, 2000000000);
  auto b = dsltest::rand_i(n, 18, -2000000000, 2000000000);
  auto s = dsltest::rand_i(n, 19, 1, 31);
  auto u = dsltest::rand_i<uint32_t>(n, 20, 1, 4000000000LL);
  std::vector<int32_t> out(8 * n, 0);
  std::vector<uint32_t> uout(2 * n, 0);
  k.launch(grid(2), {{"B", kB}}, out, uout, a, b, s, u, n);
  std::vector<int32_t> want(8 * n);
  std::vector<uint32_t> uwant(2 * n);
  for (int i = 0; i < n; ++i) {
    int32_t x = a[i], y = b[i], sh = s[i];
    want[i] = x & y;
    want[n + i] = x | y;
    want[2 * n + i] = x ^ y;
    want[3 * n + i] = static_cast<int32_t>(static_cast<uint32_t>(x) << sh);
    want[4 * n + i] = x >> sh;
    want[5 * n + i] = -x;
    want[6 * n + i] = ~x;
    want[7 * n + i] = (x & 0xff) | (static_cast<int32_t>(static_cast<uint32_t>(y) << 3) ^ 5);
    uwant[i] = u[i] >> sh;
    uwant[n + i] = ~u[i] ^ (u[i] << 4u);
  }
  CHECK(first_mismatch(out, want) == "");
  CHECK(first_mismatch(uout, uwant) == "");
}

TEST_CASE("&& || ! on bool tiles and unary - on floats") {
  auto k = kernel("logic", {"out", "fout", "a", "b", "n"},
                  [](Ptr<i32> out, Ptr<f32> fout, Ptr<const f32> a, Ptr<const f32> b, I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto x = load(a + offs, m);
                    auto y = load(b + offs, m);
                    auto p = x > 0.0f;
                    auto q = y < x;
                    store(out + offs, (p && q).cast<i32>(), m);
                    store(out + n + offs, (p || q).cast<i32>(), m);
                    store(out + 2 * n + offs, (!p).cast<i32>(), m);
                    store(out + 3 * n + offs, (!(p && !q) || (y > 1.0f)).cast<i32>(), m);
                    store(out + 4 * n + offs, (p ^ q).cast<i32>(), m);
                    store(fout + offs, -x, m);
                  });
  int n = 77;
  auto a = dsltest::rand_f(n, 21);
  auto b = dsltest::rand_f(n, 22);
  std::vector<int32_t> out(5 * n, -1);
  std::vector<float> fout(n, 0.0f);
  k.launch(grid(2), {{"B", kB}}, out, fout, a, b, n);
  std::vector<int32_t> want(5 * n);
  std::vector<float> fwant(n);
  for (int i = 0; i < n; ++i) {
    bool p = a[i] > 0.0f, q = b[i] < a[i];
    want[i] = p && q;
    want[n + i] = p || q;
    want[2 * n + i] = !p;
    want[3 * n + i] = !(p && !q) || (b[i] > 1.0f);
    want[4 * n + i] = p != q;
    fwant[i] = -a[i];
  }
  CHECK(first_mismatch(out, want) == "");
  CHECK(first_mismatch(fout, fwant) == "");
}

TEST_CASE("promotion: i32+f32 -> f32, i32*i64 -> i64") {
  auto k = kernel("promote1", {"of", "ol", "ai", "af", "al", "n"},
                  [](Ptr<f32> of, Ptr<i64> ol, Ptr<const i32> ai, Ptr<const f32> af, Ptr<const i64> al, I32 n,
                     Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto xi = load(ai + offs, m);
                    auto xf = load(af + offs, m);
                    auto xl = load(al + offs, m);
                    auto s = xi + xf;
                    static_assert(std::is_same_v<decltype(s), Tile<f32, 1>>);
                    auto p = xi * xl;
                    static_assert(std::is_same_v<decltype(p), Tile<i64, 1>>);
                    auto q = xi * 3;  // an int literal keeps i32
                    static_assert(std::is_same_v<decltype(q), Tile<i32, 1>>);
                    auto h = xi + 0.5;  // a float literal next to an int tile gives f32
                    static_assert(std::is_same_v<decltype(h), Tile<f32, 1>>);
                    auto l = xl + 1;  // int literal keeps i64
                    static_assert(std::is_same_v<decltype(l), Tile<i64, 1>>);
                    store(of + offs, s, m);
                    store(of + n + offs, h, m);
                    store(ol + offs, p, m);
                    store(ol + n + offs, l * xl, m);
                  });
  int n = 71;
  auto ai = dsltest::rand_i(n, 23, -100000, 100000);
  auto af = dsltest::rand_f(n, 24);
  auto al = dsltest::rand_i<int64_t>(n, 25, -3000000, 3000000);
  std::vector<float> of(2 * n, 0.0f);
  std::vector<int64_t> ol(2 * n, 0);
  k.launch(grid(2), {{"B", kB}}, of, ol, ai, af, al, n);
  std::vector<float> fw(2 * n);
  std::vector<int64_t> lw(2 * n);
  for (int i = 0; i < n; ++i) {
    fw[i] = static_cast<float>(ai[i]) + af[i];
    fw[n + i] = static_cast<float>(ai[i]) + 0.5f;
    lw[i] = static_cast<int64_t>(ai[i]) * al[i];  // overflows i32: promotion happens first
    lw[n + i] = (al[i] + 1) * al[i];
  }
  CHECK(first_mismatch(of, fw) == "");
  CHECK(first_mismatch(ol, lw) == "");
}

TEST_CASE("promotion: bf16+f16 -> f32, literals keep the tile's dtype") {
  auto k = kernel("promote2", {"of", "ob", "oh", "b", "h", "n"},
                  [](Ptr<f32> of, Ptr<bf16> ob, Ptr<f16> oh, Ptr<const bf16> b, Ptr<const f16> h, I32 n,
                     Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto xb = load(b + offs, m);
                    auto xh = load(h + offs, m);
                    auto s = xb + xh;
                    static_assert(std::is_same_v<decltype(s), Tile<f32, 1>>);
                    auto sb = xb * 3 + 0.5;  // stays bf16
                    static_assert(std::is_same_v<decltype(sb), Tile<bf16, 1>>);
                    auto sh = 1.5f - xh;  // stays f16
                    static_assert(std::is_same_v<decltype(sh), Tile<f16, 1>>);
                    store(of + offs, s, m);
                    store(ob + offs, sb, m);
                    store(oh + offs, sh, m);
                  });
  int n = 90;
  auto b = dsltest::rand_f<bf16>(n, 26);
  auto h = dsltest::rand_f<f16>(n, 27);
  std::vector<float> of(n, 0.0f);
  std::vector<bf16> ob(n);
  std::vector<f16> oh(n);
  k.launch(grid(2), {{"B", kB}}, of, ob, oh, b, h, n);
  std::vector<float> fw(n);
  std::vector<bf16> bw(n);
  std::vector<f16> hw(n);
  for (int i = 0; i < n; ++i) {
    fw[i] = float(b[i]) + float(h[i]);  // exact in f32
    bw[i] = bf16(float(bf16(float(b[i]) * 3.0f)) + 0.5f);  // each op rounds to bf16
    hw[i] = f16(1.5f - float(h[i]));
  }
  CHECK(first_mismatch(of, fw) == "");
  CHECK(dsltest::bits_mismatch(ob, bw) == "");
  CHECK(dsltest::bits_mismatch(oh, hw) == "");
}

TEST_CASE("cdiv on tiles, scalars and meta-parameters") {
  auto k = kernel("cdiv", {"out", "a", "n", "d"}, [](Ptr<i32> out, Ptr<const i32> a, I32 n, I32 d, Meta<"B"> B) {
    auto offs = program_id(0) * B + arange(0, B);
    auto m = offs < n;
    auto x = load(a + offs, m);
    store(out + offs, cdiv(x, d), m);
    store(out + n + offs, cdiv(x, 16), m);
    if_(program_id(0) == 0, [&] {
      store(out + 2 * n, cdiv(n, B));  // a traced scalar
      auto c = cdiv(B, 3);             // plain integers: computed while tracing
      static_assert(std::is_same_v<decltype(c), int64_t>);
      store(out + 2 * n + 1, scalar<i32>(static_cast<double>(c)));
    });
  });
  int n = 130, d = 7;
  auto a = dsltest::rand_i(n, 28, 1, 5000);
  std::vector<int32_t> out(2 * n + 2, -1);
  k.launch(grid(3), {{"B", kB}}, out, a, n, d);
  std::vector<int32_t> want(2 * n + 2);
  for (int i = 0; i < n; ++i) {
    want[i] = (a[i] + d - 1) / d;
    want[n + i] = (a[i] + 15) / 16;
  }
  want[2 * n] = (n + kB - 1) / kB;
  want[2 * n + 1] = (kB + 2) / 3;
  CHECK(first_mismatch(out, want) == "");
}
