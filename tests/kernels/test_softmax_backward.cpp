// Softmax backward on the interpreter against a double-precision reference: the
// one-row program, rows split over a cluster, the looped program (small BLOCK), in place
// (dx = dy), the formula against finite differences of softmax; argument errors.
#include <doctest/doctest.h>

#include <string>

#include <tilefuse/kernels/kernels.hpp>
#include <tilefuse/kernels/tuned.hpp>

#include "reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using ref::rtol;
using ref::error_of;
using ref::softmax_of_random;

namespace {

// dx = y * (dy - sum(dy * y)) per row, from the rounded y and dy the kernel reads.
std::vector<double> softmax_grad(const std::vector<float>& y, const std::vector<float>& dy, int64_t rows,
                                 int64_t cols) {
  std::vector<double> dx(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0;
    for (int64_t c = 0; c < cols; ++c) dot += double(dy[r * cols + c]) * y[r * cols + c];
    for (int64_t c = 0; c < cols; ++c) dx[r * cols + c] = y[r * cols + c] * (dy[r * cols + c] - dot);
  }
  return dx;
}

// dx's tolerance: absolute terms scale with the largest |dx|, plus f16's subnormal
// spacing (2^-24): small gradients of long rows round there.
template <class T>
void check_grad(const std::vector<T>& dx, const std::vector<T>& y, const std::vector<T>& dy, int64_t rows,
                int64_t cols) {
  auto want = softmax_grad(ref::to_float(y), ref::to_float(dy), rows, cols);
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  double subnormal = std::is_same_v<T, half> ? 6e-8 : 0;
  CHECK(ref::max_rel_err(dx, want, 1e-6 * scale + subnormal + 1e-12, rtol<T>()) <= 1.0);
}

}  // namespace

TEST_CASE("the reference gradient matches finite differences of softmax") {
  int64_t cols = 9;
  auto x = ref::random_vec<float>(cols, 3, -2, 2);
  auto dy = ref::random_vec<float>(cols, 4);
  std::vector<double> y;
  ref::softmax(y, x, 1, cols);
  auto dx = softmax_grad(std::vector<float>(y.begin(), y.end()), dy, 1, cols);
  // d/dx_j of L = sum_i dy_i * softmax(x)_i, by central differences in double.
  auto loss = [&](std::vector<float> xs, int j, double by) {
    std::vector<double> xd(xs.begin(), xs.end());
    xd[j] += by;
    double m = *std::max_element(xd.begin(), xd.end()), s = 0, l = 0;
    for (double v : xd) s += std::exp(v - m);
    for (int i = 0; i < cols; ++i) l += dy[i] * std::exp(xd[i] - m) / s;
    return l;
  };
  for (int j = 0; j < cols; ++j) {
    double fd = (loss(x, j, 1e-6) - loss(x, j, -1e-6)) / 2e-6;
    CAPTURE(j);
    CHECK(std::fabs(dx[j] - fd) < 1e-6);  // y is rounded to f32
  }
}

TEST_CASE_TEMPLATE("softmax backward matches the reference at odd widths", T, float, half, bfloat16) {
  struct Shape { int64_t rows, cols; };
  for (Shape s : {Shape{5, 1}, Shape{4, 7}, Shape{3, 300}, Shape{2, 4099}}) {
    CAPTURE(s.cols);
    auto y = softmax_of_random<T>(s.rows, s.cols, 10 + s.cols);
    auto dy = ref::random_vec<T>(s.rows * s.cols, 20 + s.cols);
    std::vector<T> dx(y.size());
    tk::softmax_backward(dx, dy, y, s.rows, s.cols);
    check_grad(dx, y, dy, s.rows, s.cols);
  }
}

TEST_CASE_TEMPLATE("softmax backward: looped program with a small BLOCK, and rows over a cluster", T, float,
                   bfloat16) {
  int64_t rows = 3, cols = 333;
  auto y = softmax_of_random<T>(rows, cols, 31);
  auto dy = ref::random_vec<T>(rows * cols, 32);
  for (Config cfg : {Config{{"BLOCK", 64}, num_warps(2)}, Config{{"BLOCK", 128}, num_warps(1), cluster(4)}}) {
    CAPTURE(cfg.str());
    std::vector<T> dx(y.size());
    tk::softmax_backward(dx, dy, y, rows, cols, cfg);
    check_grad(dx, y, dy, rows, cols);
  }
}

TEST_CASE_TEMPLATE("softmax backward in place (dx = dy), one-tile, cluster and looped", T, float, half) {
  int64_t rows = 4, cols = 301;
  auto y = softmax_of_random<T>(rows, cols, 41);
  auto dy = ref::random_vec<T>(rows * cols, 42);
  // The cluster config indexes rows from their aligned start for 16-bit data (the rule
  // for odd widths on clusters); the last one asks for it in one program.
  for (Config cfg : {tk::softmax_backward_heuristic(cols, dtype_v<T>), Config{{"BLOCK", 32}, num_warps(1)},
                     Config{{"BLOCK", 128}, num_warps(2), cluster(4)},
                     Config{{"BLOCK", 512}, {"ALIGN_ROWS", 1}, num_warps(2)}}) {
    CAPTURE(cfg.str());
    auto g = dy;
    tk::softmax_backward(g, g, y, rows, cols, cfg);
    check_grad(g, y, dy, rows, cols);
  }
}

TEST_CASE("softmax backward argument errors name the buffer, its size or dtype, and the fix") {
  int64_t rows = 4, cols = 6;
  std::vector<float> y(rows * cols, 0.1f), dy(rows * cols, 1.0f), dx(rows * cols);
  std::string m = error_of([&] { tk::softmax_backward(dx, dy, std::vector<float>(23, 0.1f), rows, cols); });
  CHECK(m.find("softmax_backward: y has 23 elements, but rows x cols = 4 x 6 needs 24") != std::string::npos);
  CHECK(m.find("Pass y with rows x cols elements, or fix the sizes") != std::string::npos);

  std::vector<bfloat16> yb(rows * cols, bfloat16(0.1f));
  m = error_of([&] { tk::softmax_backward(dx, dy, yb, rows, cols); });
  CHECK(m.find("softmax_backward: y has dtype bf16, but dx has f32") != std::string::npos);
  CHECK(m.find("Pass every buffer of one softmax_backward call in the same dtype") != std::string::npos);

  m = error_of([&] { tk::softmax_backward(dx, dy, y, rows, cols, Config{{"BLOCK", 2}, num_warps(1), cluster(2)}); });
  CHECK(m.find("softmax_backward: the config {") != std::string::npos);
  CHECK(m.find("covers 4 columns per row ((BLOCK x CHUNKS + TAIL) x cluster), but rows have 6") != std::string::npos);

  m = error_of([&] { tk::softmax_backward(dx, dy, y, rows, 0); });
  CHECK(m.find("softmax_backward: sizes 4 x 0 are out of range") != std::string::npos);
}

TEST_CASE("tuned_softmax_backward on host buffers runs the heuristic's config, in place too") {
  int64_t rows = 3, cols = 700;
  auto y = softmax_of_random<float>(rows, cols, 51);
  auto dy = ref::random_vec<float>(rows * cols, 52);
  std::vector<float> dx(y.size());
  tk::tuned_softmax_backward(dx, dy, y, rows, cols);
  check_grad(dx, y, dy, rows, cols);
  auto g = dy;
  tk::tuned_softmax_backward(g, g, y, rows, cols);
  CHECK(g == dx);
}

// Short rows in batches (row_batches.hpp): about 2 KB of dy and y per program.
TEST_CASE_TEMPLATE("softmax_backward of short rows in batches, in place too", T, float, bfloat16) {
  CHECK(tk::softmax_backward_config(128, DType::bf16, true, false).get("ROWS") == 4);
  CHECK(!tk::softmax_backward_config(256, DType::f32, true, false).has("ROWS"));  // 2 KB of dy and y
  CHECK(!tk::softmax_backward_config(512, DType::bf16, true, false).has("ROWS"));
  for (auto [rows, cols] : {std::pair{37, 1}, std::pair{29, 7}, std::pair{13, 100}, std::pair{11, 250}}) {
    CAPTURE(cols);
    auto y = softmax_of_random<T>(rows, cols, 5 + cols);
    auto dy = ref::random_vec<T>(rows * cols, 6 + cols);
    std::vector<T> dx(y.size());
    tk::softmax_backward(dx, dy, y, rows, cols);
    check_grad(dx, y, dy, rows, cols);
    auto in_place = dy;
    tk::softmax_backward(in_place, in_place, y, rows, cols, Config{{"BLOCK", tk::next_pow2(cols)}, {"ROWS", 8}});
    check_grad(in_place, y, dy, rows, cols);
  }
  std::string m = error_of([] {
    std::vector<float> a(400);
    tk::softmax_backward(a, a, a, 4, 100, Config{{"BLOCK", 128}, {"ROWS", 2}, cluster(2)});
  });
  CHECK(m.find("softmax_backward: the config {BLOCK=128 ROWS=2 num_warps=4 num_stages=1 cluster=2} combines ROWS with "
               "clusters") != std::string::npos);
}
