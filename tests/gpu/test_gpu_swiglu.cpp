// SwiGLU forward and backward on the GPU against the interpreter: both input layouts
// (the packed one with a, b and da, db really sharing one buffer), odd and 128-bit
// friendly widths, the heuristic and a narrower BLOCK. Label: gpu (skips without a driver).
#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;

namespace {

// fast_sigmoid (ex2.approx, div.approx) on the GPU, exact on the interpreter: a few f32 ulps apart.
template <class T>
difftest::Tolerance tol() {
  if constexpr (std::is_same_v<T, float>) return {1e-5, 1e-5};
  else if constexpr (std::is_same_v<T, half>) return {1e-4, 2e-3};
  else return {1e-3, 1.6e-2};
}

struct Case {
  int64_t M, N;
  tk::ConfigOverride cfg;
};
std::vector<Case> cases() {
  return {{7, 1, {}},      {5, 7, {}},
          {33, 1000, {}},  {3, 4099, {}},
          {4, 4096, {}},   {6, 3000, Config{{"BLOCK", 512}, num_warps(2)}},
          {2, 8192, Config{{"BLOCK", 4096}, num_warps(8)}},
          // Several rows per program (the heuristic's at 1, 7 and these widths too).
          {301, 128, {}},  {77, 250, {}},
          {37, 300, Config{{"BLOCK", 128}, {"ROWS", 4}, num_warps(1)}},
          {29, 64, Config{{"BLOCK", 64}, {"ROWS", 16}, num_warps(2)}}};
}

}  // namespace

TEST_CASE_TEMPLATE("gpu: swiglu forward, separate and packed inputs", T, float, half, bfloat16) {
  for (const Case& c : cases()) {
    CAPTURE(c.N);
    size_t n = c.M * c.N;
    auto a = ref::random_vec<T>(n, 1 + c.N, -8, 8), b = ref::random_vec<T>(n, 2 + c.N);
    auto ab = ref::random_vec<T>(2 * n, 3 + c.N, -8, 8);
    std::vector<T> y(n), yp(n);
    tk::swiglu(y, a, b, c.M, c.N, c.cfg);
    tk::swiglu_packed(yp, ab, c.M, c.N, c.cfg);
    if (!difftest::have_gpu()) return;
    auto da = to_device(a), db = to_device(b), dab = to_device(ab);
    DeviceBuffer<T> dy(n), dyp(n);
    tk::swiglu(dy, da, db, c.M, c.N, c.cfg);
    tk::swiglu_packed(dyp, dab, c.M, c.N, c.cfg);
    difftest::compare(dy.to_host(), y, tol<T>(), 0);
    difftest::compare(dyp.to_host(), yp, tol<T>(), 0);
  }
}

TEST_CASE_TEMPLATE("gpu: swiglu backward, separate and packed inputs", T, float, half, bfloat16) {
  for (const Case& c : cases()) {
    CAPTURE(c.N);
    size_t n = c.M * c.N;
    auto a = ref::random_vec<T>(n, 4 + c.N, -8, 8), b = ref::random_vec<T>(n, 5 + c.N);
    auto g = ref::random_vec<T>(n, 6 + c.N), ab = ref::random_vec<T>(2 * n, 7 + c.N, -8, 8);
    std::vector<T> ga(n), gb(n), gab(2 * n);
    tk::swiglu_backward(ga, gb, g, a, b, c.M, c.N, c.cfg);
    tk::swiglu_backward_packed(gab, g, ab, c.M, c.N, c.cfg);
    if (!difftest::have_gpu()) return;
    auto d_a = to_device(a), d_b = to_device(b), d_g = to_device(g), d_ab = to_device(ab);
    DeviceBuffer<T> d_ga(n), d_gb(n), d_gab(2 * n);
    tk::swiglu_backward(d_ga, d_gb, d_g, d_a, d_b, c.M, c.N, c.cfg);
    tk::swiglu_backward_packed(d_gab, d_g, d_ab, c.M, c.N, c.cfg);
    difftest::compare(d_ga.to_host(), ga, tol<T>(), 0);
    difftest::compare(d_gb.to_host(), gb, tol<T>(), 1);
    difftest::compare(d_gab.to_host(), gab, tol<T>(), 2);
  }
}
