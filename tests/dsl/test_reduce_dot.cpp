// Reductions (sum/max/min/argmax/argmin, custom combine), cumsum and dot on the
// interpreter against plain C++ loops, on odd-sized matrices in masked tiles.
#include <algorithm>
#include <limits>

#include "dsl_test_util.hpp"

using namespace tilefuse;
using dsltest::first_mismatch;

namespace {
constexpr int kM = 13, kN = 27;  // odd matrix inside a [16, 32] tile
constexpr int64_t kBM = 16, kBN = 32;

// Reductions of a kM x kN matrix along `axis` (0: over rows -> kN results, 1: over columns -> kM results).
template <class F>
std::vector<double> reduce_ref(const std::vector<float>& x, int axis, F f) {
  std::vector<double> out;
  int outer = axis == 0 ? kN : kM, inner = axis == 0 ? kM : kN;
  for (int o = 0; o < outer; ++o) {
    std::vector<float> line;
    for (int i = 0; i < inner; ++i) line.push_back(axis == 0 ? x[i * kN + o] : x[o * kN + i]);
    out.push_back(f(line));
  }
  return out;
}
}  // namespace

TEST_CASE("sum/max/min/argmax/argmin along axis 0 and 1 of a masked 2-D tile") {
  // The axis is a meta-parameter; masked lanes are filled with the reduction's
  // neutral element through load's `other`.
  auto k = kernel("reductions", {"out", "idx", "x", "m", "n"},
                  [](Ptr<f32> out, Ptr<i32> idx, Ptr<const f32> x, I32 m, I32 n, Meta<"AXIS"> AXIS, Meta<"BM"> BM,
                     Meta<"BN"> BN) {
                    auto r = arange(0, BM);
                    auto c = arange(0, BN);
                    auto mask = (r < m).col() && (c < n).row();
                    auto offs = r.col() * n + c.row();
                    int axis = static_cast<int>(AXIS);
                    auto lanes = axis == 0 ? arange(0, BN) : arange(0, BM);
                    auto lm = lanes < (axis == 0 ? n : m);
                    auto s = sum(load(x + offs, mask, 0.0f), axis);
                    auto mx = max(load(x + offs, mask, -inf), axis);
                    auto mn = min(load(x + offs, mask, inf), axis);
                    auto am = argmax(load(x + offs, mask, -inf), axis);
                    auto an = argmin(load(x + offs, mask, inf), axis);
                    static_assert(std::is_same_v<decltype(s), Tile<f32, 1>>);
                    static_assert(std::is_same_v<decltype(am), Tile<i32, 1>>);
                    int64_t len = axis == 0 ? int64_t(BN) : int64_t(BM);
                    store(out + lanes, s, lm);
                    store(out + len + lanes, mx, lm);
                    store(out + 2 * len + lanes, mn, lm);
                    store(idx + lanes, am, lm);
                    store(idx + len + lanes, an, lm);
                  });
  auto x = dsltest::rand_f(kM * kN, 60);
  for (int axis : {0, 1}) {
    CAPTURE(axis);
    int len = axis == 0 ? kN : kM;
    int64_t blen = axis == 0 ? kBN : kBM;
    std::vector<float> out(3 * blen, 0.0f);
    std::vector<int32_t> idx(2 * blen, -1);
    k.launch(grid(1), {{"AXIS", axis}, {"BM", kBM}, {"BN", kBN}}, out, idx, x, kM, kN);
    auto s = reduce_ref(x, axis, [](auto& l) { double a = 0; for (float v : l) a += v; return a; });
    auto mx = reduce_ref(x, axis, [](auto& l) { return double(*std::max_element(l.begin(), l.end())); });
    auto mn = reduce_ref(x, axis, [](auto& l) { return double(*std::min_element(l.begin(), l.end())); });
    auto am = reduce_ref(x, axis, [](auto& l) { return double(std::max_element(l.begin(), l.end()) - l.begin()); });
    auto an = reduce_ref(x, axis, [](auto& l) { return double(std::min_element(l.begin(), l.end()) - l.begin()); });
    std::vector<float> gs(out.begin(), out.begin() + len), gmx(out.begin() + blen, out.begin() + blen + len),
        gmn(out.begin() + 2 * blen, out.begin() + 2 * blen + len);
    std::vector<int32_t> gam(idx.begin(), idx.begin() + len), gan(idx.begin() + blen, idx.begin() + blen + len);
    CHECK(first_mismatch(gs, s, 1e-5, 1e-5) == "");
    CHECK(first_mismatch(gmx, mx) == "");
    CHECK(first_mismatch(gmn, mn) == "");
    CHECK(first_mismatch(gam, am) == "");
    CHECK(first_mismatch(gan, an) == "");
  }
}

TEST_CASE("integer and bool reductions") {
  auto k = kernel("ireduce", {"out", "x", "n"}, [](Ptr<i32> out, Ptr<const i32> x, I32 n, Meta<"B"> B) {
    auto offs = arange(0, B);
    auto m = offs < n;
    auto v = load(x + offs, m, 0);
    store(out, sum(v, 0));
    store(out + 1, max(load(x + offs, m, std::numeric_limits<int32_t>::min()), 0));
    store(out + 2, min(load(x + offs, m, std::numeric_limits<int32_t>::max()), -1));
    auto positives = sum(v > 0, 0);  // a bool sum counts
    static_assert(std::is_same_v<decltype(positives), I32>);
    store(out + 3, positives);
    auto two_d = reshape(v, {B / 8, 8});
    store(out + 4 + arange(0, 8), sum(two_d, 0));
  });
  int n = 53;
  auto x = dsltest::rand_i(n, 61, -1000, 1000);
  std::vector<int32_t> out(12, 0);
  k.launch(grid(1), {{"B", 64}}, out, x, n);
  std::vector<int32_t> want(12, 0);
  want[1] = INT32_MIN;
  want[2] = INT32_MAX;
  for (int i = 0; i < n; ++i) {
    want[0] += x[i];
    want[1] = std::max(want[1], x[i]);
    want[2] = std::min(want[2], x[i]);
    want[3] += x[i] > 0;
    want[4 + i % 8] += x[i];
  }
  CHECK(first_mismatch(out, want) == "");
}

TEST_CASE("reduce with a custom combine lambda") {
  auto k = kernel("custom", {"out", "iout", "x", "xi", "m", "n"},
                  [](Ptr<f32> out, Ptr<i32> iout, Ptr<const f32> x, Ptr<const i32> xi, I32 m, I32 n, Meta<"BM"> BM,
                     Meta<"BN"> BN) {
                    auto r = arange(0, BM);
                    auto c = arange(0, BN);
                    auto mask = (r < m).col() && (c < n).row();
                    auto offs = r.col() * n + c.row();
                    auto v = load(x + offs, mask, 0.0f);
                    // the largest magnitude of each row
                    auto amax = reduce(v, 1, [](F32 a, F32 b) { return maximum(abs(a), abs(b)); });
                    store(out + r, amax, r < m);
                    // the xor of each column
                    auto vi = load(xi + offs, mask, 0);
                    auto x0 = reduce(vi, 0, [](I32 a, I32 b) { return a ^ b; });
                    store(iout + c, x0, c < n);
                    // the product along axis -1 (the last one)
                    auto p = reduce(load(x + offs, mask, 1.0f), -1, [](F32 a, F32 b) { return a * b; });
                    store(out + BM + r, p, r < m);
                  });
  auto x = dsltest::rand_f(kM * kN, 62, 0.5f, 1.5f);
  auto xi = dsltest::rand_i(kM * kN, 63, -100000, 100000);
  std::vector<float> out(2 * kBM, 0.0f);
  std::vector<int32_t> iout(kBN, 0);
  k.launch(grid(1), {{"BM", kBM}, {"BN", kBN}}, out, iout, x, xi, kM, kN);
  std::vector<float> amax(kM), prod(kM);
  std::vector<int32_t> xr(kN, 0);
  for (int r = 0; r < kM; ++r) {
    float a = 0, p = 1;
    for (int c = 0; c < kN; ++c) {
      a = std::max(a, std::fabs(x[r * kN + c]));
      p *= x[r * kN + c];  // a left fold in index order
      xr[c] ^= xi[r * kN + c];
    }
    amax[r] = a;
    prod[r] = p;
  }
  CHECK(first_mismatch(std::vector<float>(out.begin(), out.begin() + kM), amax) == "");
  CHECK(first_mismatch(std::vector<float>(out.begin() + kBM, out.begin() + kBM + kM), prod, 1e-5) == "");
  CHECK(first_mismatch(std::vector<int32_t>(iout.begin(), iout.begin() + kN), xr) == "");
}

TEST_CASE("cumsum along both axes") {
  auto k = kernel("cumsum", {"out", "iout", "x", "m", "n"},
                  [](Ptr<f32> out, Ptr<i32> iout, Ptr<const f32> x, I32 m, I32 n, Meta<"BM"> BM, Meta<"BN"> BN) {
                    auto r = arange(0, BM);
                    auto c = arange(0, BN);
                    auto mask = (r < m).col() && (c < n).row();
                    auto offs = r.col() * n + c.row();
                    auto v = load(x + offs, mask, 0.0f);
                    store(out + offs, cumsum(v, 1), mask);
                    store(out + m * n + offs, cumsum(v, 0), mask);
                    auto cnt = cumsum(v > 0.0f, 1);  // a running count of positives
                    static_assert(std::is_same_v<decltype(cnt), Tile<i32, 2>>);
                    store(iout + offs, cnt, mask);
                  });
  auto x = dsltest::rand_f(kM * kN, 64);
  std::vector<float> out(2 * kM * kN, 0.0f);
  std::vector<int32_t> iout(kM * kN, 0);
  k.launch(grid(1), {{"BM", kBM}, {"BN", kBN}}, out, iout, x, kM, kN);
  std::vector<double> want(2 * kM * kN), abs_run(2 * kM * kN);
  std::vector<int32_t> iw(kM * kN);
  for (int r = 0; r < kM; ++r) {
    double s = 0, a = 0;
    int cnt = 0;
    for (int c = 0; c < kN; ++c) {
      s += x[r * kN + c];
      a += std::fabs(x[r * kN + c]);
      cnt += x[r * kN + c] > 0;
      want[r * kN + c] = s;
      abs_run[r * kN + c] = a;
      iw[r * kN + c] = cnt;
    }
  }
  for (int c = 0; c < kN; ++c) {
    double s = 0, a = 0;
    for (int r = 0; r < kM; ++r) {
      s += x[r * kN + c];
      a += std::fabs(x[r * kN + c]);
      want[kM * kN + r * kN + c] = s;
      abs_run[kM * kN + r * kN + c] = a;
    }
  }
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(out[i] - want[i]) <= 1e-6 * abs_run[i]);
  }
  CHECK(first_mismatch(iout, iw) == "");
}

namespace {
// c[m, n] = acc[m, n] + sum_k a[m, k] * b[k, n]; mag = the sum of magnitudes (for the tolerance).
void matmul_ref(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>* acc, int M, int N,
                int K, std::vector<double>& c, std::vector<double>& mag) {
  c.assign(M * N, 0);
  mag.assign(M * N, 0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = acc ? (*acc)[i * N + j] : 0.0, g = acc ? std::fabs((*acc)[i * N + j]) : 0.0;
      for (int t = 0; t < K; ++t) {
        s += double(a[i * K + t]) * b[t * N + j];
        g += std::fabs(double(a[i * K + t]) * b[t * N + j]);
      }
      c[i * N + j] = s;
      mag[i * N + j] = g;
    }
}

template <class T>
void check_dot() {
  // Odd M, N, K in [16, 16] x [16, 32] tiles; masked lanes load 0 and add nothing.
  auto k = kernel("dot", {"c", "c2", "a", "b", "acc", "M", "N", "K"},
                  [](Ptr<f32> c, Ptr<T> c2, Ptr<const T> a, Ptr<const T> b, Ptr<const f32> acc, I32 M, I32 N, I32 K,
                     Meta<"BM"> BM, Meta<"BN"> BN, Meta<"BK"> BK) {
                    auto rm = program_id(0) * BM + arange(0, BM);
                    auto rn = program_id(1) * BN + arange(0, BN);
                    auto rk = arange(0, BK);
                    auto av = load(a + rm.col() * K + rk.row(), (rm < M).col() && (rk < K).row());
                    auto bv = load(b + rk.col() * N + rn.row(), (rk < K).col() && (rn < N).row());
                    auto cmask = (rm < M).col() && (rn < N).row();
                    auto coffs = rm.col() * N + rn.row();
                    auto d = dot(av, bv);
                    static_assert(std::is_same_v<decltype(d), Tile<f32, 2>>);
                    store(c + coffs, d, cmask);
                    auto cacc = load(acc + coffs, cmask);
                    store(c + M * N + coffs, dot(av, bv, cacc), cmask);
                    // b loaded transposed ([BN, BK], like k in attention) and put back with trans()
                    auto bt = load(b + rn.col() + rk.row() * N, (rn < N).col() && (rk < K).row());
                    store(c2 + coffs, dot(av, trans(bt)).template cast<T>(), cmask);
                  });
  int M = 19, N = 23, K = 13;
  std::vector<T> a = dsltest::rand_f<T>(M * K, 70), b = dsltest::rand_f<T>(K * N, 71);
  std::vector<float> acc = dsltest::rand_f(M * N, 72, -10.0f, 10.0f);
  std::vector<float> c(2 * M * N, 0.0f);
  std::vector<T> c2(M * N, T(0.0f));
  k.launch(grid(2, 1), {{"BM", 16}, {"BN", 32}, {"BK", 16}, num_warps(4)}, c, c2, a, b, acc, M, N, K);
  std::vector<float> fa(a.begin(), a.end()), fb(b.begin(), b.end());
  std::vector<double> want, mag;
  // Products of f16/bf16/f32 inputs are exact in f32 or nearly so; the sum is the only error.
  matmul_ref(fa, fb, nullptr, M, N, K, want, mag);
  for (int i = 0; i < M * N; ++i) {
    CAPTURE(i);
    CHECK(std::fabs(c[i] - want[i]) <= 1e-5 * mag[i] + 1e-6);
    CHECK(std::fabs(float(c2[i]) - want[i]) <= 1e-2 * std::fabs(want[i]) + 1e-5 * mag[i] + 1e-6);
  }
  matmul_ref(fa, fb, &acc, M, N, K, want, mag);
  for (int i = 0; i < M * N; ++i) {
    CAPTURE(i);
    CHECK(std::fabs(c[M * N + i] - want[i]) <= 1e-5 * mag[i] + 1e-6);
  }
}
}  // namespace

TEST_CASE("dot: f32 inputs, with and without acc, vs a triple loop") { check_dot<float>(); }
TEST_CASE("dot: f16 inputs accumulate in f32") { check_dot<half>(); }
TEST_CASE("dot: bf16 inputs accumulate in f32") { check_dot<bfloat16>(); }

TEST_CASE("dot with Precision::tf32 rounds f32 inputs to 10 mantissa bits (to nearest, ties away)") {
  // Reference rounding by frexp/ldexp (independent of the interpreter's bit arithmetic).
  auto tf32 = [](float x) {
    int e = 0;
    double m = std::frexp(static_cast<double>(x), &e);  // |m| in [0.5, 1): 11 significant bits kept
    return static_cast<float>(std::ldexp(std::round(std::ldexp(m, 11)), e - 11));
  };
  auto k = kernel("dot_tf32", [](Ptr<f32> c, Ptr<f32> exact, Ptr<const f32> a, Ptr<const f32> b, I32 M, I32 N, I32 K) {
    auto rm = arange(0, 32);
    auto rn = arange(0, 16);
    auto rk = arange(0, 64);
    auto av = load(a + rm.col() * K + rk.row(), (rm < M).col() && (rk < K).row(), 0.0f);
    auto bv = load(b + rk.col() * N + rn.row(), (rk < K).col() && (rn < N).row(), 0.0f);
    auto mask = (rm < M).col() && (rn < N).row();
    store(c + rm.col() * N + rn.row(), dot(av, bv, Precision::tf32), mask);
    store(exact + rm.col() * N + rn.row(), dot(av, bv), mask);
  });
  int M = 29, N = 13, K = 61;
  std::vector<float> a = dsltest::rand_f(M * K, 81), b = dsltest::rand_f(K * N, 82);
  a[0] = 1.0f + 0x1.0p-20f;    // rounds down to 1
  a[1] = 1.0f + 0x1.8p-11f;    // 1.5 ulp of tf32: rounds up to 1 + 2^-10
  a[2] = -(1.0f + 0x1.0p-11f);  // a tie: away from zero, to -(1 + 2^-10)
  std::vector<float> c(M * N), exact(M * N);
  k.launch(grid(1), {num_warps(4)}, c, exact, a, b, M, N, K);
  double worst_exact_diff = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0, mag = 0;
      for (int kk = 0; kk < K; ++kk) {
        double p = double(tf32(a[i * K + kk])) * tf32(b[kk * N + j]);
        want += p;
        mag += std::fabs(p);
      }
      CAPTURE(i);
      CAPTURE(j);
      CHECK(std::fabs(c[i * N + j] - want) <= 1e-6 * mag + 1e-7);
      worst_exact_diff = std::max(worst_exact_diff, std::fabs(double(c[i * N + j]) - exact[i * N + j]) / (mag + 1e-30));
    }
  CHECK(worst_exact_diff > 1e-6);  // the rounding is applied ...
  CHECK(worst_exact_diff < 2e-3);  // ... and stays within tf32's bound (2 x 2^-11 per product)
}
