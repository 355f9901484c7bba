#pragma once
// The textbook example of fusion: y = log(relu(x + b)) for x [rows, cols] and a
// per-column bias b. Fused, it reads x once and writes y once; unfused (three
// kernels) it moves the tensor through memory six times.
#include <string>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

template <class T>
const auto& bias_relu_log_kernel() {
  static auto k = kernel(std::string("bias_relu_log_") + name(dtype_v<T>), {"y", "x", "b", "n", "n_cols"},
      [](Ptr<T> y, Ptr<const T> x, Ptr<const T> b, I64 n, I32 n_cols, Meta<"BLOCK"> BLOCK) {
        // Grid: (column blocks, rows); the bias index is the column, no division needed.
        auto cols = program_id(0) * BLOCK + arange(0, BLOCK);
        auto mask = cols < n_cols;
        auto offs = program_id(1).template cast<i64>() * n_cols + cols;
        auto xv = load(x + offs, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
        auto bv = load(b + cols, mask, 0.0f).template cast<f32>();
        store(y + offs, log(maximum(xv + bv, 0.0f)).template cast<T>(), mask);
      });
  return k;
}

// The same computation as three kernels: t = x + b; u = relu(t); y = log(u).
template <class T>
const auto& add_bias_kernel() {
  static auto k = kernel(std::string("add_bias_") + name(dtype_v<T>), {"t", "x", "b", "n", "n_cols"},
      [](Ptr<T> t, Ptr<const T> x, Ptr<const T> b, I64 n, I32 n_cols, Meta<"BLOCK"> BLOCK) {
        auto cols = program_id(0) * BLOCK + arange(0, BLOCK);
        auto mask = cols < n_cols;
        auto offs = program_id(1).template cast<i64>() * n_cols + cols;
        auto v = load(x + offs, mask, 0.0f).template cast<f32>() + load(b + cols, mask, 0.0f).template cast<f32>();
        store(t + offs, v.template cast<T>(), mask);
      });
  return k;
}
template <class T>
const auto& relu_kernel() {
  static auto k = kernel(std::string("relu_") + name(dtype_v<T>), {"u", "t", "n"},
      [](Ptr<T> u, Ptr<const T> t, I64 n, Meta<"BLOCK"> BLOCK) {
        auto offs = program_id(0).template cast<i64>() * BLOCK + arange(0, BLOCK);
        auto mask = offs < n;
        auto v = load(t + offs, mask, 0.0f).template cast<f32>();
        store(u + offs, maximum(v, 0.0f).template cast<T>(), mask);
      });
  return k;
}
template <class T>
const auto& log_kernel() {
  static auto k = kernel(std::string("log_") + name(dtype_v<T>), {"y", "u", "n"},
      [](Ptr<T> y, Ptr<const T> u, I64 n, Meta<"BLOCK"> BLOCK) {
        auto offs = program_id(0).template cast<i64>() * BLOCK + arange(0, BLOCK);
        auto mask = offs < n;
        store(y + offs, log(load(u + offs, mask, 1.0f).template cast<f32>()).template cast<T>(), mask);
      });
  return k;
}

inline Config elementwise_heuristic() { return Config{{"BLOCK", 2048}, num_warps(8)}; }
// The 2-D grid of the bias kernels: column blocks x rows.
inline Grid bias_grid(const Config& c, int64_t rows, int64_t cols) {
  return Grid((cols + c.get("BLOCK") - 1) / c.get("BLOCK"), rows);
}

template <class Y, class X, class B>
void bias_relu_log(Y&& y, const X& x, const B& b, int64_t rows, int64_t cols, ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Y>;
  Config c = cfg ? *cfg : elementwise_heuristic();
  bias_relu_log_kernel<T>().launch(bias_grid(c, rows, cols), c, y, x, b, rows * cols, cols);
}

// Unfused reference pipeline: t and u are caller-provided temporaries of x's size.
template <class Y, class X, class B, class Tmp>
void bias_relu_log_unfused(Y&& y, const X& x, const B& b, Tmp&& t, Tmp&& u, int64_t rows, int64_t cols,
                           ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Y>;
  Config c = cfg ? *cfg : elementwise_heuristic();
  int64_t n = rows * cols;
  Grid g((n + c.get("BLOCK") - 1) / c.get("BLOCK"));
  add_bias_kernel<T>().launch(bias_grid(c, rows, cols), c, t, x, b, n, cols);
  relu_kernel<T>().launch(g, c, u, t, n);
  log_kernel<T>().launch(g, c, y, u, n);
}

}  // namespace tilefuse::kernels
