// RMSNorm / LayerNorm backward on the GPU against the interpreter: each program (row,
// looped, partials reduction) through gpu_matches_interp, then the host functions on
// device buffers against the same calls on host vectors. Label: gpu (skips without a driver).
#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using difftest::gpu_matches_interp;

namespace {

template <class T>
difftest::Tolerance tol() {
  if constexpr (std::is_same_v<T, float>) return {1e-5, 1e-5};
  else if constexpr (std::is_same_v<T, half>) return {1e-3, 2e-3};
  else return {1e-2, 1.6e-2};
}

struct Case {
  int rows, cols, block, warps, programs;
};
// One tile (odd widths, programs not dividing the rows) and looped rows.
constexpr Case kCases[] = {{7, 1, 16, 1, 3}, {37, 7, 16, 1, 5}, {29, 300, 512, 2, 4}, {9, 4099, 8192, 16, 4},
                           {11, 4099, 1024, 4, 3}, {5, 20000, 4096, 8, 2}};

}  // namespace

TEST_CASE_TEMPLATE("gpu: rmsnorm backward programs (with and without residual)", T, float, half, bfloat16) {
  for (const Case& c : kCases) {
    for (int residual : {0, 1}) {
      CAPTURE(c.cols);
      CAPTURE(residual);
      auto x = ref::random_vec<T>(c.rows * c.cols, 1), dy = ref::random_vec<T>(c.rows * c.cols, 2);
      auto dres = ref::random_vec<T>(c.rows * c.cols, 3);
      auto w = ref::random_vec<T>(c.cols, 4, 0.5, 1.5);
      std::vector<T> dx(x.size());
      std::vector<float> partials(c.programs * c.cols);
      Config cfg{{"BLOCK", c.block}, {"RESIDUAL", residual}, num_warps(c.warps)};
      auto run = [&](const auto& k) {
        gpu_matches_interp(k, Grid(c.programs), cfg, tol<T>(), dx, partials, dy, x, w, dres, c.rows, c.cols,
                           int64_t(c.cols), 1e-6f);
      };
      if (c.block < c.cols) run(tk::rmsnorm_bwd_looped_kernel<T>());
      else run(tk::rmsnorm_bwd_row_kernel<T>());
    }
  }
}

TEST_CASE_TEMPLATE("gpu: layernorm backward programs", T, float, half, bfloat16) {
  for (const Case& c : kCases) {
    CAPTURE(c.cols);
    auto x = ref::random_vec<T>(c.rows * c.cols, 5, 1, 5), dy = ref::random_vec<T>(c.rows * c.cols, 6);
    auto w = ref::random_vec<T>(c.cols, 7, 0.5, 1.5);
    std::vector<T> dx(x.size());
    std::vector<float> partials(2 * c.programs * c.cols);
    Config cfg{{"BLOCK", c.block}, num_warps(c.warps)};
    // One column: dx = rstd * (g - g/1) is 0 up to an ulp of g times rstd = 1/sqrt(eps),
    // and the GPU's division rounds differently from the interpreter's.
    auto t = tol<T>();
    if (c.cols == 1) t.atol = 1e-4;
    auto run = [&](const auto& k) {
      gpu_matches_interp(k, Grid(c.programs), cfg, t, dx, partials, dy, x, w, c.rows, c.cols, int64_t(c.cols), 1e-5f);
    };
    if (c.block < c.cols) run(tk::layernorm_bwd_looped_kernel<T>());
    else run(tk::layernorm_bwd_row_kernel<T>());
  }
}

TEST_CASE_TEMPLATE("gpu: norm backward partials reduction", T, float, bfloat16) {
  for (auto [parts, cols, bias] : {std::tuple{1, 1, 1}, std::tuple{37, 300, 0}, std::tuple{264, 4099, 1}}) {
    CAPTURE(parts);
    CAPTURE(cols);
    auto partials = ref::random_vec<float>(2 * parts * cols, 8);
    std::vector<T> dw(cols), db(cols);
    Config cfg = tk::norm_partials_config().set("BIAS", bias);
    gpu_matches_interp(tk::norm_partials_reduce_kernel<T>(), Grid((cols + 63) / 64), cfg, tol<T>(), dw, db, partials,
                       parts, cols);
  }
}

TEST_CASE_TEMPLATE("gpu: norm backward host functions on device buffers match the interpreter", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  for (auto [rows, cols] : {std::pair{1000, 300}, std::pair{77, 4099}, std::pair{40, 20000}}) {
    CAPTURE(cols);
    auto x = ref::random_vec<T>(rows * cols, 9, 1, 4), dy = ref::random_vec<T>(rows * cols, 10);
    auto dres = ref::random_vec<T>(rows * cols, 11);
    auto w = ref::random_vec<T>(cols, 12, 0.5, 1.5);
    std::vector<T> dx(x.size()), dw(cols), db(cols);
    auto gx = to_device(x), gdy = to_device(dy), gres = to_device(dres), gw = to_device(w);
    DeviceBuffer<T> gdx(x.size()), gdw(cols), gdb(cols);
    // The programs differ (SM count), so dW is summed in another order: compare with a tolerance.
    auto t = tol<T>();
    t.atol *= 10;
    auto same = [&] {
      difftest::compare(gdx.to_host(), dx, t, 0);
      difftest::compare(gdw.to_host(), dw, t, 1);
    };
    tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols);
    tk::rmsnorm_backward(gdx, gdw, gdy, gx, gw, rows, cols);
    same();
    tk::add_rmsnorm_backward(dx, dw, dy, dres, x, w, rows, cols);
    tk::add_rmsnorm_backward(gdx, gdw, gdy, gres, gx, gw, rows, cols);
    same();
    tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols);
    tk::layernorm_backward(gdx, gdw, gdb, gdy, gx, gw, rows, cols);
    same();
    difftest::compare(gdb.to_host(), db, t, 2);
  }
}
