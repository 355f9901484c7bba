#pragma once
// Cluster programs of the RMSNorm and LayerNorm backward for long rows (sm_90 and the
// interpreter): a row is split over the C programs of a thread-block cluster, BLOCK
// columns each, so it is read from memory once (the looped programs read it twice) and
// its sums meet through cluster_sum. The clusters are persistent: cluster c takes rows c,
// c + clusters, ... (bounds every program of the cluster shares, so its reductions may
// sit in the loop), keeps its column slice of dW (and dB) in registers across them and
// writes it once: partials [clusters, n_cols] (dB after dW), reduced as for the other
// programs. num_stages > 1 stages the next rows' loads through shared memory.
// ALIGN_ROWS: rows indexed from their 16-byte-aligned start (NormRowColumns::in_cluster),
// so x, dy, dx (and dres) move whole 16-byte runs at any width (the loads' partly valid
// runs read whole within the buffers, so they are staged too); dW (and dB) accumulate by
// position, which is one column for all of a cluster's rows (aligned_cluster_count).
#include <string>

#include "tilefuse/kernels/norm_backward_common.hpp"

namespace tilefuse::kernels {

template <class T>
const auto& rmsnorm_bwd_cluster_kernel() {
  static auto k = kernel(std::string("rmsnorm_bwd_cluster_") + name(dtype_v<T>),
      {"dx", "dw_partial", "dy", "x", "weight", "dres", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> dw_partial, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight, Ptr<const T> dres,
         I32 n_rows, I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"RESIDUAL", bool> RESIDUAL,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        auto rc = NormRowColumns::in_cluster(BLOCK, n_cols, ALIGN_ROWS, x, cluster_id(), stride);
        const auto& cols = rc.col;
        const auto& cmask = rc.mask;
        auto w = load(weight + cols, cmask, 0.0f).template cast<f32>();
        auto dw = zeros<f32>({BLOCK});
        for_range(cluster_id(), n_rows, num_programs(0) / cluster_size(), [&](I32 row) {
          auto at = [&](auto p) { return rc.row_start(p, row, stride) + rc.pos; };
          auto readable = rc.template readable<T>(row, n_rows, stride);
          auto xv = rc.load_row(at(x), readable).template cast<f32>();
          auto dyv = rc.load_row(at(dy), readable).template cast<f32>();
          auto g = dyv * w;
          // Sibling reductions: one exchange between the warps, one between the programs.
          auto rstd = rsqrt(cluster_sum(sum(xv * xv, 0)) / n_cols + eps);
          auto mean_gx = cluster_sum(sum(g * xv, 0)) / n_cols;
          auto grad = rstd * g - xv * (rstd * rstd * rstd * mean_gx);
          if (RESIDUAL) grad = grad + rc.load_row(at(dres), readable).template cast<f32>();
          store(at(dx), grad.template cast<T>(), cmask);
          dw = dw + dyv * xv * rstd;
        });
        store(dw_partial + cluster_id().template cast<i64>() * n_cols + cols, dw, cmask);
      });
  return k;
}

// SAVED: mean and rstd from the forward (as layernorm_bwd_row_kernel): two cluster sums
// per row instead of four; STATS_AHEAD: read a row ahead (carried in the loop, two more
// registers) or where used.
template <class T>
const auto& layernorm_bwd_cluster_kernel() {
  static auto k = kernel(std::string("layernorm_bwd_cluster_") + name(dtype_v<T>),
      {"dx", "partials", "dy", "x", "weight", "mean_in", "rstd_in", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> partials, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight,
         Ptr<const float> mean_in, Ptr<const float> rstd_in, I32 n_rows, I32 n_cols, I64 stride, F32 eps,
         Meta<"BLOCK"> BLOCK, Meta<"SAVED", bool, false> SAVED, Meta<"STATS_AHEAD", bool, true> STATS_AHEAD,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        auto rc = NormRowColumns::in_cluster(BLOCK, n_cols, ALIGN_ROWS, x, cluster_id(), stride);
        const auto& cols = rc.col;
        const auto& cmask = rc.mask;
        auto clusters = num_programs(0) / cluster_size();
        auto w = load(weight + cols, cmask, 0.0f).template cast<f32>();
        auto dw = zeros<f32>({BLOCK});
        auto db = zeros<f32>({BLOCK});
        // Saved statistics read a row ahead: their latency would otherwise come before
        // each row's sums (the rows themselves are staged by num_stages).
        auto stat = [&](Ptr<const float> p, I32 row) { return load(p + row, row < n_rows, 0.0f); };
        F32 next_mean, next_rstd;
        if (SAVED && STATS_AHEAD) {
          next_mean = stat(mean_in, cluster_id());
          next_rstd = stat(rstd_in, cluster_id());
        }
        for_range(cluster_id(), n_rows, clusters, [&](I32 row) {
          auto start = row.template cast<i64>() * stride;
          auto at = [&](auto p) { return rc.row_start(p, row, stride) + rc.pos; };
          auto readable = rc.template readable<T>(row, n_rows, stride);
          auto xv = rc.load_row(at(x), readable).template cast<f32>();
          auto dyv = rc.load_row(at(dy), readable).template cast<f32>();
          auto g = dyv * w;
          Tile<float, 1> xhat;
          F32 rstd, mean_g, mean_gxhat;
          if (SAVED) {
            F32 mean;
            if (STATS_AHEAD) {
              mean = next_mean;
              rstd = next_rstd;
              next_mean = stat(mean_in, row + clusters);
              next_rstd = stat(rstd_in, row + clusters);
            } else {
              mean = stat(mean_in, row);
              rstd = stat(rstd_in, row);
            }
            xhat = xv * rstd - mean * rstd;
            mean_g = cluster_sum(sum(g, 0)) / n_cols;
            mean_gxhat = cluster_sum(sum(g * xhat, 0)) / n_cols;  // g is 0 where masked
          } else {
            // Sums of x - x[row, 0] (shifted: no cancellation for rows far from 0).
            auto d = where(cmask, xv - load(x + start).template cast<f32>(), 0.0f);
            auto mean_d = cluster_sum(sum(d, 0)) / n_cols;
            auto mean_dd = cluster_sum(sum(d * d, 0)) / n_cols;
            mean_g = cluster_sum(sum(g, 0)) / n_cols;
            auto mean_gd = cluster_sum(sum(g * d, 0)) / n_cols;
            rstd = rsqrt(maximum(mean_dd - mean_d * mean_d, 0.0f) + eps);
            mean_gxhat = rstd * (mean_gd - mean_d * mean_g);
            xhat = (d - mean_d) * rstd;
          }
          store(at(dx), (rstd * (g - mean_g - xhat * mean_gxhat)).template cast<T>(), cmask);
          dw = dw + dyv * xhat;
          db = db + dyv;
        });
        auto part = partials + cluster_id().template cast<i64>() * n_cols + cols;
        store(part, dw, cmask);
        store(part + clusters.template cast<i64>() * n_cols, db, cmask);
      });
  return k;
}

}  // namespace tilefuse::kernels
