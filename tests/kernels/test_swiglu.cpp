// SwiGLU forward and backward on the interpreter against double-precision references,
// both input layouts (separate a, b and packed [gate | up] rows), odd widths; the
// gradient formula against finite differences of the forward; argument errors.
#include <doctest/doctest.h>

#include <string>

#include <tilefuse/kernels/kernels.hpp>
#include <tilefuse/kernels/tuned.hpp>

#include "reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using ref::rtol;
using ref::error_of;

namespace {

double silu(double a) { return a / (1 + std::exp(-a)); }

// Reference backward written from the chain rule of y = a * sigmoid(a) * b.
void swiglu_grad(double a, double b, double dy, double& da, double& db) {
  double s = 1 / (1 + std::exp(-a));
  da = dy * b * (s + a * s * (1 - s));
  db = dy * a * s;
}

// Splits packed rows [gate | up] of [M, 2N] into a and b of [M, N].
template <class T>
void unpack(const std::vector<T>& ab, int64_t M, int64_t N, std::vector<float>& a, std::vector<float>& b) {
  a.resize(M * N), b.resize(M * N);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < N; ++c) {
      a[r * N + c] = float(ab[r * 2 * N + c]);
      b[r * N + c] = float(ab[r * 2 * N + N + c]);
    }
}

struct Shape {
  int64_t M, N;
};
const Shape kShapes[] = {{5, 1}, {4, 7}, {3, 300}, {2, 4099}};

}  // namespace

TEST_CASE("silu's derivative in the reference matches finite differences of the forward") {
  for (double a : {-6.0, -1.3, -0.2, 0.0, 0.7, 2.5, 9.0}) {
    double b = 1.7, h = 1e-6, da, db;
    swiglu_grad(a, b, 1.0, da, db);
    double fd_a = (silu(a + h) * b - silu(a - h) * b) / (2 * h);
    double fd_b = (silu(a) * (b + h) - silu(a) * (b - h)) / (2 * h);
    CAPTURE(a);
    CHECK(std::fabs(da - fd_a) < 1e-7);
    CHECK(std::fabs(db - fd_b) < 1e-7);
  }
}

TEST_CASE_TEMPLATE("swiglu forward matches the reference, separate and packed inputs", T, float, half, bfloat16) {
  for (Shape s : kShapes) {
    CAPTURE(s.N);
    auto a = ref::random_vec<T>(s.M * s.N, 100 + s.N, -6, 6);
    auto b = ref::random_vec<T>(s.M * s.N, 200 + s.N);
    std::vector<double> want(a.size());
    for (size_t i = 0; i < a.size(); ++i) want[i] = silu(float(a[i])) * float(b[i]);
    std::vector<T> y(a.size());
    tk::swiglu(y, a, b, s.M, s.N);
    CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);

    auto ab = ref::random_vec<T>(s.M * 2 * s.N, 300 + s.N, -6, 6);
    std::vector<float> pa, pb;
    unpack(ab, s.M, s.N, pa, pb);
    for (size_t i = 0; i < pa.size(); ++i) want[i] = silu(pa[i]) * pb[i];
    std::vector<T> yp(pa.size());
    tk::swiglu_packed(yp, ab, s.M, s.N);
    CHECK(ref::max_rel_err(yp, want, 1e-6, rtol<T>()) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("swiglu backward matches the reference, separate and packed inputs", T, float, half, bfloat16) {
  for (Shape s : kShapes) {
    CAPTURE(s.N);
    size_t n = s.M * s.N;
    auto a = ref::random_vec<T>(n, 400 + s.N, -6, 6);
    auto b = ref::random_vec<T>(n, 500 + s.N);
    auto dy = ref::random_vec<T>(n, 600 + s.N);
    std::vector<double> want_a(n), want_b(n);
    for (size_t i = 0; i < n; ++i) swiglu_grad(float(a[i]), float(b[i]), float(dy[i]), want_a[i], want_b[i]);
    std::vector<T> da(n), db(n);
    tk::swiglu_backward(da, db, dy, a, b, s.M, s.N);
    CHECK(ref::max_rel_err(da, want_a, 1e-5, rtol<T>()) <= 1.0);
    CHECK(ref::max_rel_err(db, want_b, 1e-5, rtol<T>()) <= 1.0);

    auto ab = ref::random_vec<T>(2 * n, 700 + s.N, -6, 6);
    std::vector<float> pa, pb;
    unpack(ab, s.M, s.N, pa, pb);
    for (size_t i = 0; i < n; ++i) swiglu_grad(pa[i], pb[i], float(dy[i]), want_a[i], want_b[i]);
    std::vector<T> dab(2 * n);
    tk::swiglu_backward_packed(dab, dy, ab, s.M, s.N);
    std::vector<float> got_a, got_b;
    unpack(dab, s.M, s.N, got_a, got_b);
    CHECK(ref::max_rel_err(got_a, want_a, 1e-5, rtol<T>()) <= 1.0);
    CHECK(ref::max_rel_err(got_b, want_b, 1e-5, rtol<T>()) <= 1.0);
  }
}

TEST_CASE("swiglu backward agrees with finite differences of the gallery's own forward") {
  // f64 differences of f32 kernel outputs: h large enough that f32 rounding stays small.
  int64_t M = 2, N = 37;
  auto a = ref::random_vec<float>(M * N, 1, -4, 4), b = ref::random_vec<float>(M * N, 2);
  auto dy = ref::random_vec<float>(M * N, 3);
  std::vector<float> da(a.size()), db(a.size());
  tk::swiglu_backward(da, db, dy, a, b, M, N);
  const float h = 1e-2f;
  auto shifted = [&](std::vector<float> v, float by) {
    for (auto& x : v) x += by;
    return v;
  };
  std::vector<float> yp(a.size()), ym(a.size());
  tk::swiglu(yp, shifted(a, h), b, M, N);
  tk::swiglu(ym, shifted(a, -h), b, M, N);
  for (size_t i = 0; i < a.size(); ++i) {
    double fd = dy[i] * (double(yp[i]) - ym[i]) / (2 * h);
    CHECK(std::fabs(da[i] - fd) <= 2e-3 * (1 + std::fabs(fd)));
  }
  tk::swiglu(yp, a, shifted(b, h), M, N);
  tk::swiglu(ym, a, shifted(b, -h), M, N);
  for (size_t i = 0; i < a.size(); ++i) {
    double fd = dy[i] * (double(yp[i]) - ym[i]) / (2 * h);
    CHECK(std::fabs(db[i] - fd) <= 1e-4 * (1 + std::fabs(fd)));
  }
}

TEST_CASE("swiglu saturates for large |a| and honours a BLOCK override narrower than the row") {
  int64_t M = 3, N = 45;
  auto a = ref::random_vec<float>(M * N, 8, -3, 3);
  a[0] = -200.0f, a[1] = 200.0f, a[2] = -90.0f, a[3] = 90.0f;
  auto b = ref::random_vec<float>(M * N, 9);
  std::vector<float> y(a.size());
  tk::swiglu(y, a, b, M, N, Config{{"BLOCK", 16}, num_warps(1)});  // 3 column blocks per row
  std::vector<double> want(a.size());
  for (size_t i = 0; i < a.size(); ++i) want[i] = silu(a[i]) * b[i];
  CHECK(ref::max_rel_err(y, want, 1e-6, 1e-5) <= 1.0);
  std::vector<float> da(a.size()), db(a.size());
  tk::swiglu_backward(da, db, b, a, b, M, N, Config{{"BLOCK", 16}, num_warps(1)});
  for (size_t i = 0; i < 4; ++i) {
    double wa, wb;
    swiglu_grad(a[i], b[i], b[i], wa, wb);
    CHECK(std::isfinite(da[i]));
    CHECK(std::fabs(da[i] - wa) <= 1e-5 * (1 + std::fabs(wa)));
    CHECK(std::fabs(db[i] - wb) <= 1e-5 * (1 + std::fabs(wb)));
  }
}

TEST_CASE("swiglu argument errors name the buffer, its size or dtype, and the fix") {
  int64_t M = 3, N = 5;
  std::vector<float> a(M * N, 1.0f), b(M * N, 1.0f), y(M * N), short_b(M * N - 1, 1.0f);
  std::vector<half> h(M * N, half(1.0f));
  std::string m = error_of([&] { tk::swiglu(y, a, short_b, M, N); });
  CHECK(m.find("swiglu: b has 14 elements, but M x N = 3 x 5 needs 15") != std::string::npos);
  CHECK(m.find("Pass b with M x N elements, or fix the sizes") != std::string::npos);

  m = error_of([&] { tk::swiglu(y, a, h, M, N); });
  CHECK(m.find("swiglu: b has dtype f16, but y has f32") != std::string::npos);
  CHECK(m.find("Pass every buffer of one swiglu call in the same dtype") != std::string::npos);

  m = error_of([&] { tk::swiglu_packed(y, a, M, N); });  // a is [M, N], not [M, 2N]
  CHECK(m.find("swiglu_packed: ab has 15 elements, but M x 2N = 3 x 10 needs 30") != std::string::npos);

  std::vector<float> dab(M * N);
  m = error_of([&] { tk::swiglu_backward_packed(dab, y, std::vector<float>(2 * M * N, 1.0f), M, N); });
  CHECK(m.find("swiglu_backward_packed: dab has 15 elements, but M x 2N = 3 x 10 needs 30") != std::string::npos);

  std::vector<half> dh(M * N);
  m = error_of([&] { tk::swiglu_backward(a, b, dh, a, b, M, N); });
  CHECK(m.find("swiglu_backward: dy has dtype f16, but da has f32") != std::string::npos);

  m = error_of([&] { tk::swiglu(y, a, b, 0, N); });
  CHECK(m.find("swiglu: sizes 0 x 5 are out of range") != std::string::npos);
  CHECK(m.find("Pass at least one row and between 1 and 2^30 columns") != std::string::npos);
}

TEST_CASE("tuned swiglu entry points on host buffers run the heuristic's config, both layouts") {
  int64_t M = 3, N = 50;
  auto a = ref::random_vec<bfloat16>(M * N, 11, -5, 5), b = ref::random_vec<bfloat16>(M * N, 12);
  auto ab = ref::random_vec<bfloat16>(2 * M * N, 13, -5, 5), dy = ref::random_vec<bfloat16>(M * N, 14);
  std::vector<bfloat16> y(M * N), want(M * N);
  tk::tuned_swiglu(y, a, b, M, N);
  tk::swiglu(want, a, b, M, N);
  CHECK(ref::max_rel_err(y, std::vector<double>(want.begin(), want.end()), 0, 0) == 0.0);
  tk::tuned_swiglu_packed(y, ab, M, N);
  tk::swiglu_packed(want, ab, M, N);
  CHECK(ref::max_rel_err(y, std::vector<double>(want.begin(), want.end()), 0, 0) == 0.0);
  std::vector<bfloat16> da(M * N), db(M * N), wa(M * N), wb(M * N), dab(2 * M * N), wab(2 * M * N);
  tk::tuned_swiglu_backward(da, db, dy, a, b, M, N);
  tk::swiglu_backward(wa, wb, dy, a, b, M, N);
  CHECK(ref::max_rel_err(da, std::vector<double>(wa.begin(), wa.end()), 0, 0) == 0.0);
  CHECK(ref::max_rel_err(db, std::vector<double>(wb.begin(), wb.end()), 0, 0) == 0.0);
  tk::tuned_swiglu_backward_packed(dab, dy, ab, M, N);
  tk::swiglu_backward_packed(wab, dy, ab, M, N);
  CHECK(ref::max_rel_err(dab, std::vector<double>(wab.begin(), wab.end()), 0, 0) == 0.0);
}

// Short rows in batches (row_batches.hpp): ROWS rows x BLOCK columns per program, the last
// row group partly past M, and column blocks narrower than the row; the heuristic's ROWS.
TEST_CASE_TEMPLATE("swiglu forward and backward with several rows per program, both layouts", T, float, bfloat16) {
  CHECK(tk::swiglu_heuristic(128, DType::bf16).get("ROWS") == 4);
  CHECK(tk::swiglu_heuristic(128, DType::bf16, true).get("ROWS") == 2);
  CHECK(!tk::swiglu_heuristic(512, DType::bf16).has("ROWS"));
  for (auto [M, N, block, rows] : {std::tuple{13, 100, 128, 4}, std::tuple{9, 300, 128, 2}, std::tuple{37, 5, 8, 16}}) {
    CAPTURE(N);
    Config c{{"BLOCK", block}, {"ROWS", rows}, num_warps(1)};
    size_t n = M * N;
    auto ab = ref::random_vec<T>(2 * n, 800 + N, -6, 6);
    auto dy = ref::random_vec<T>(n, 900 + N);
    std::vector<float> pa, pb;
    unpack(ab, M, N, pa, pb);
    std::vector<double> want(n), want_a(n), want_b(n);
    for (size_t i = 0; i < n; ++i) {
      want[i] = silu(pa[i]) * pb[i];
      swiglu_grad(pa[i], pb[i], float(dy[i]), want_a[i], want_b[i]);
    }
    std::vector<T> a(pa.begin(), pa.end()), b(pb.begin(), pb.end()), y(n), da(n), db(n), dab(2 * n);
    tk::swiglu(y, a, b, M, N, c);
    CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
    tk::swiglu_packed(y, ab, M, N, c);
    CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
    tk::swiglu_backward(da, db, dy, a, b, M, N, c);
    CHECK(ref::max_rel_err(da, want_a, 1e-5, rtol<T>()) <= 1.0);
    CHECK(ref::max_rel_err(db, want_b, 1e-5, rtol<T>()) <= 1.0);
    tk::swiglu_backward_packed(dab, dy, ab, M, N, c);
    std::vector<float> got_a, got_b;
    unpack(dab, M, N, got_a, got_b);
    CHECK(ref::max_rel_err(got_a, want_a, 1e-5, rtol<T>()) <= 1.0);
    CHECK(ref::max_rel_err(got_b, want_b, 1e-5, rtol<T>()) <= 1.0);
  }
  std::vector<float> x(40);
  CHECK(ref::error_of([&] { tk::swiglu(x, x, x, 4, 10, Config{{"BLOCK", 16}, {"ROWS", 3}}); })
            .find("swiglu: the config {BLOCK=16 ROWS=3 num_warps=4 num_stages=1} has ROWS = 3, not a power of two") !=
        std::string::npos);
}
