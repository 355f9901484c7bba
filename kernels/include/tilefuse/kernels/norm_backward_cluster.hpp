#pragma once
// Cluster programs of the RMSNorm and LayerNorm backward for long rows (sm_90 and the
// interpreter): a row is split over the C programs of a thread-block cluster, BLOCK
// columns each, so it is read from memory once (the looped programs read it twice) and
// its sums meet through cluster_sum. Cluster reductions must run at the kernel's top
// level, so a cluster cannot loop over rows at run time; instead it takes ROWS rows
// unrolled at trace time (the next row's loads issued before this row's reductions) and
// keeps its column slice of dW (and dB) in registers across them. Partials: one row
// per cluster, [ceil(rows / ROWS), n_cols] (dB after dW), reduced as for the other
// programs. Opt-in through a config with cluster(C): on H200 they measured slower than
// the looped programs (bf16 8192x16384 RMSNorm: 32% of copy at ROWS=8, 21% at 16, vs
// 56% looped), the unrolled rows serializing on the cluster barriers.
#include <string>

#include "tilefuse/kernels/norm_backward_common.hpp"

namespace tilefuse::kernels {

template <class T>
const auto& rmsnorm_bwd_cluster_kernel() {
  static auto k = kernel(std::string("rmsnorm_bwd_cluster_") + name(dtype_v<T>),
      {"dx", "dw_partial", "dy", "x", "weight", "dres", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> dw_partial, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight, Ptr<const T> dres,
         I32 n_rows, I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"RESIDUAL", bool> RESIDUAL,
         Meta<"ROWS", int, 1> ROWS) {
        auto cols = cluster_rank() * BLOCK + arange(0, BLOCK);
        auto cmask = cols < n_cols;
        auto first = cluster_id() * ROWS;
        auto offsets = [&](int i) { return (first + i).template cast<i64>() * stride + cols; };
        auto in_row = [&](int i) { return cmask && (first + i < n_rows); };
        auto read = [&](Ptr<const T> p, int i) { return load(p + offsets(i), in_row(i), 0.0f, Cache::EvictFirst); };
        auto next_x = read(x, 0), next_dy = read(dy, 0);
        auto next_res = RESIDUAL ? read(dres, 0) : next_x;
        auto w = load(weight + cols, cmask, 0.0f).template cast<f32>();
        auto dw = zeros<f32>({BLOCK});
        for (int i = 0; i < ROWS; ++i) {
          auto xv = next_x.template cast<f32>(), dyv = next_dy.template cast<f32>();
          auto res = next_res;
          if (i + 1 < ROWS) {
            next_x = read(x, i + 1);
            next_dy = read(dy, i + 1);
            if (RESIDUAL) next_res = read(dres, i + 1);
          }
          auto g = dyv * w;
          auto rstd = rsqrt(cluster_sum(sum(xv * xv, 0)) / n_cols + eps);
          auto mean_gx = cluster_sum(sum(g * xv, 0)) / n_cols;
          auto grad = rstd * g - xv * (rstd * rstd * rstd * mean_gx);
          if (RESIDUAL) grad = grad + res.template cast<f32>();
          store(dx + offsets(i), grad.template cast<T>(), in_row(i));
          dw = dw + dyv * xv * rstd;
        }
        store(dw_partial + cluster_id().template cast<i64>() * n_cols + cols, dw, cmask);
      });
  return k;
}

template <class T>
const auto& layernorm_bwd_cluster_kernel() {
  static auto k = kernel(std::string("layernorm_bwd_cluster_") + name(dtype_v<T>),
      {"dx", "partials", "dy", "x", "weight", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> partials, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight, I32 n_rows,
         I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"ROWS", int, 1> ROWS) {
        auto cols = cluster_rank() * BLOCK + arange(0, BLOCK);
        auto cmask = cols < n_cols;
        auto first = cluster_id() * ROWS;
        auto start = [&](int i) { return (first + i).template cast<i64>() * stride; };
        auto in_row = [&](int i) { return cmask && (first + i < n_rows); };
        auto read = [&](Ptr<const T> p, int i) { return load(p + (start(i) + cols), in_row(i), 0.0f, Cache::EvictFirst); };
        auto read_shift = [&](int i) { return load(x + start(i), first + i < n_rows, 0.0f); };
        auto next_x = read(x, 0), next_dy = read(dy, 0);
        auto next_shift = read_shift(0);
        auto w = load(weight + cols, cmask, 0.0f).template cast<f32>();
        auto dw = zeros<f32>({BLOCK});
        auto db = zeros<f32>({BLOCK});
        for (int i = 0; i < ROWS; ++i) {
          auto xv = next_x.template cast<f32>(), dyv = next_dy.template cast<f32>();
          auto shift = next_shift.template cast<f32>();
          if (i + 1 < ROWS) {
            next_x = read(x, i + 1);
            next_dy = read(dy, i + 1);
            next_shift = read_shift(i + 1);
          }
          auto d = where(in_row(i), xv - shift, 0.0f);
          auto g = dyv * w;
          auto mean_d = cluster_sum(sum(d, 0)) / n_cols;
          auto mean_dd = cluster_sum(sum(d * d, 0)) / n_cols;
          auto mean_g = cluster_sum(sum(g, 0)) / n_cols;
          auto mean_gd = cluster_sum(sum(g * d, 0)) / n_cols;
          auto rstd = rsqrt(maximum(mean_dd - mean_d * mean_d, 0.0f) + eps);
          auto mean_gxhat = rstd * (mean_gd - mean_d * mean_g);
          auto xhat = (d - mean_d) * rstd;
          store(dx + (start(i) + cols), (rstd * (g - mean_g - xhat * mean_gxhat)).template cast<T>(), in_row(i));
          dw = dw + dyv * xhat;
          db = db + dyv;
        }
        auto part = partials + cluster_id().template cast<i64>() * n_cols + cols;
        store(part, dw, cmask);
        store(part + ((n_rows + ROWS - 1) / ROWS).template cast<i64>() * n_cols, db, cmask);
      });
  return k;
}

}  // namespace tilefuse::kernels
