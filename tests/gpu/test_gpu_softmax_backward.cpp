// Softmax backward on the GPU against the interpreter: one-tile rows, the looped
// program, rows over a thread-block cluster (sm_90+), and in place (dx = dy on the
// device too). Label: gpu (skips without a driver).
#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;

namespace {

template <class T>
difftest::Tolerance tol() {
  if constexpr (std::is_same_v<T, float>) return {1e-7, 1e-4};  // reduction order differs
  else if constexpr (std::is_same_v<T, half>) return {1e-6, 2e-3};
  else return {1e-5, 1.6e-2};
}

// Host function on the interpreter and on the GPU, out of place and in place.
template <class T>
void check(int64_t rows, int64_t cols, tk::ConfigOverride cfg) {
  auto y = ref::softmax_of_random<T>(rows, cols, 10 + cols);
  auto dy = ref::random_vec<T>(rows * cols, 20 + cols);
  std::vector<T> dx(y.size());
  tk::softmax_backward(dx, dy, y, rows, cols, cfg);
  if (!difftest::have_gpu()) return;
  auto d_y = to_device(y), d_dy = to_device(dy);
  DeviceBuffer<T> d_dx(y.size());
  tk::softmax_backward(d_dx, d_dy, d_y, rows, cols, cfg);
  difftest::compare(d_dx.to_host(), dx, tol<T>(), 0);
  tk::softmax_backward(d_dy, d_dy, d_y, rows, cols, cfg);  // in place
  difftest::compare(d_dy.to_host(), dx, tol<T>(), 1);
}

}  // namespace

TEST_CASE_TEMPLATE("gpu: softmax backward, one tile per row and looped", T, float, half, bfloat16) {
  struct Case { int64_t rows, cols; tk::ConfigOverride cfg; };
  for (const Case& c : {Case{7, 1, {}}, Case{33, 1000, {}}, Case{5, 5000, {}}, Case{4, 4096, {}},
                        Case{3, 3333, Config{{"BLOCK", 512}, num_warps(4)}},
                        Case{2, 40000, Config{{"BLOCK", 16384}, num_warps(16)}}}) {
    CAPTURE(c.cols);
    check<T>(c.rows, c.cols, c.cfg);
  }
}

TEST_CASE_TEMPLATE("gpu: softmax backward with rows split over a thread-block cluster", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  if (!gpu_has_clusters()) {
    MESSAGE("cluster test skipped: the GPU has no thread-block clusters (needs sm_90)");
    return;
  }
  check<T>(9, 3000, Config{{"BLOCK", 1024}, num_warps(4), cluster(4)});
  check<T>(3, 20000, Config{{"BLOCK", 8192}, num_warps(16), cluster(4)});
  check<T>(2, 65536, tk::softmax_backward_heuristic(65536, dtype_v<T>, true));
  // Odd widths: rows from their aligned start (on by the rule on clusters; forced in one program).
  check<T>(5, 16383, Config{{"BLOCK", 8192}, num_warps(8), cluster(4)});
  check<T>(5, 4099, Config{{"BLOCK", 8192}, {"ALIGN_ROWS", 1}, num_warps(8)});
}
