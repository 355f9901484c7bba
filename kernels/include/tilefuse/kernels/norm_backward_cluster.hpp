#pragma once
// Cluster programs of the RMSNorm and LayerNorm backward for long rows (sm_90 and the
// interpreter): a row is split over the C programs of a thread-block cluster, BLOCK
// columns each, so it is read from memory once (the looped programs read it twice) and
// its sums meet through cluster_sum. The clusters are persistent: cluster c takes rows c,
// c + clusters, ... (bounds every program of the cluster shares, so its reductions may
// sit in the loop), keeps its column slice of dW (and dB) in registers across them and
// writes it once: partials [clusters, n_cols] (dB after dW), reduced as for the other
// programs. num_stages > 1 stages the next rows' loads through shared memory. CHUNKS: a
// program holds CHUNKS tiles of BLOCK columns, then TAIL columns (a small tile: widths a
// little past a power of two; NormRowColumns::in_cluster_chunks).
// ALIGN_ROWS: rows indexed from their 16-byte-aligned start (NormRowColumns::in_cluster),
// so x, dy, dx (and dres) move whole 16-byte runs at any width (the loads' partly valid
// runs read whole within the buffers, so they are staged too); dW (and dB) accumulate by
// position, which is one column for all of a cluster's rows (aligned_cluster_count).
#include <string>

#include "tilefuse/kernels/norm_backward_common.hpp"

namespace tilefuse::kernels {

// Elementwise sum of per-chunk tiles (one reduction per row, not one per chunk).
template <class F>
Tile<float, 1> chunk_sum(size_t chunks, F&& term) {
  Tile<float, 1> acc = term(0);
  for (size_t i = 1; i < chunks; ++i) acc = acc + term(i);
  return acc;
}

// A program's sum of term(i) over its columns: its `chunks` tiles added elementwise and
// reduced once, plus its tail's (tile `chunks`, when there are n > chunks tiles).
template <class F>
F32 columns_sum(size_t chunks, size_t n, F&& term) {
  F32 s = sum(chunk_sum(chunks, term), 0);
  for (size_t i = chunks; i < n; ++i) s = s + sum(term(i), 0);
  return s;
}

template <class T>
const auto& rmsnorm_bwd_cluster_kernel() {
  static auto k = kernel(std::string("rmsnorm_bwd_cluster_") + name(dtype_v<T>),
      {"dx", "dw_partial", "dy", "x", "weight", "dres", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> dw_partial, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight, Ptr<const T> dres,
         I32 n_rows, I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"RESIDUAL", bool> RESIDUAL,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS, Meta<"CHUNKS", int64_t, 1> CHUNKS, Meta<"TAIL", int64_t, 0> TAIL) {
        auto rcs = NormRowColumns::in_cluster_chunks(BLOCK, CHUNKS, TAIL, n_cols, ALIGN_ROWS, x, cluster_id(), stride);
        const size_t chunks = static_cast<size_t>(static_cast<int64_t>(CHUNKS));
        const size_t n = rcs.size();
        std::vector<Tile<float, 1>> w, dw;
        w.reserve(n);
        dw.reserve(n);
        for (auto& rc : rcs) {
          w.push_back(load(weight + rc.col, rc.mask, 0.0f).template cast<f32>());
          dw.push_back(zeros<f32>({rc.pos.shape()[0]}));
        }
        for_range(cluster_id(), n_rows, num_programs(0) / cluster_size(), [&](I32 row) {
          std::vector<Tile<float, 1>> xv, dyv;
          xv.reserve(n);
          dyv.reserve(n);
          auto at = [&](auto p, size_t i) { return rcs[i].row_start(p, row, stride) + rcs[i].pos; };
          std::vector<std::optional<Tile<bool, 1>>> readable;
          for (size_t i = 0; i < n; ++i) {
            readable.push_back(rcs[i].template readable<T>(row, n_rows, stride));
            xv.push_back(rcs[i].load_row(at(x, i), readable[i]).template cast<f32>());
            dyv.push_back(rcs[i].load_row(at(dy, i), readable[i]).template cast<f32>());
          }
          // Sibling reductions: one exchange between the warps, one between the programs.
          auto rstd = rsqrt(cluster_sum(columns_sum(chunks, n, [&](size_t i) { return xv[i] * xv[i]; })) / n_cols + eps);
          auto mean_gx = cluster_sum(columns_sum(chunks, n, [&](size_t i) { return dyv[i] * w[i] * xv[i]; })) / n_cols;
          for (size_t i = 0; i < n; ++i) {
            auto grad = rstd * (dyv[i] * w[i]) - xv[i] * (rstd * rstd * rstd * mean_gx);
            if (RESIDUAL) grad = grad + rcs[i].load_row(at(dres, i), readable[i]).template cast<f32>();
            store(at(dx, i), grad.template cast<T>(), rcs[i].mask);
            dw[i] = dw[i] + dyv[i] * xv[i] * rstd;
          }
        });
        for (size_t i = 0; i < n; ++i)
          store(dw_partial + cluster_id().template cast<i64>() * n_cols + rcs[i].col, dw[i], rcs[i].mask);
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
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS, Meta<"CHUNKS", int64_t, 1> CHUNKS, Meta<"TAIL", int64_t, 0> TAIL) {
        auto rcs = NormRowColumns::in_cluster_chunks(BLOCK, CHUNKS, TAIL, n_cols, ALIGN_ROWS, x, cluster_id(), stride);
        const size_t chunks = static_cast<size_t>(static_cast<int64_t>(CHUNKS));
        const size_t n = rcs.size();
        auto clusters = num_programs(0) / cluster_size();
        std::vector<Tile<float, 1>> w, dw, db;
        w.reserve(n);
        dw.reserve(n);
        db.reserve(n);
        for (auto& rc : rcs) {
          w.push_back(load(weight + rc.col, rc.mask, 0.0f).template cast<f32>());
          dw.push_back(zeros<f32>({rc.pos.shape()[0]}));
          db.push_back(zeros<f32>({rc.pos.shape()[0]}));
        }
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
          auto at = [&](auto p, size_t i) { return rcs[i].row_start(p, row, stride) + rcs[i].pos; };
          std::vector<Tile<float, 1>> xv, dyv, g, xhat;
          xv.reserve(n);
          dyv.reserve(n);
          g.reserve(n);
          xhat.reserve(n);
          for (size_t i = 0; i < n; ++i) {
            auto readable = rcs[i].template readable<T>(row, n_rows, stride);
            xv.push_back(rcs[i].load_row(at(x, i), readable).template cast<f32>());
            dyv.push_back(rcs[i].load_row(at(dy, i), readable).template cast<f32>());
            g.push_back(dyv[i] * w[i]);
          }
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
            for (size_t i = 0; i < n; ++i) xhat.push_back(xv[i] * rstd - mean * rstd);
            mean_g = cluster_sum(columns_sum(chunks, n, [&](size_t i) { return g[i]; })) / n_cols;
            // g is 0 where masked
            mean_gxhat = cluster_sum(columns_sum(chunks, n, [&](size_t i) { return g[i] * xhat[i]; })) / n_cols;
          } else {
            // Sums of x - x[row, 0] (shifted: no cancellation for rows far from 0).
            auto x0 = load(x + start).template cast<f32>();
            std::vector<Tile<float, 1>> d;
            d.reserve(n);
            for (size_t i = 0; i < n; ++i) d.push_back(where(rcs[i].mask, xv[i] - x0, 0.0f));
            auto mean_d = cluster_sum(columns_sum(chunks, n, [&](size_t i) { return d[i]; })) / n_cols;
            auto mean_dd = cluster_sum(columns_sum(chunks, n, [&](size_t i) { return d[i] * d[i]; })) / n_cols;
            mean_g = cluster_sum(columns_sum(chunks, n, [&](size_t i) { return g[i]; })) / n_cols;
            auto mean_gd = cluster_sum(columns_sum(chunks, n, [&](size_t i) { return g[i] * d[i]; })) / n_cols;
            rstd = rsqrt(maximum(mean_dd - mean_d * mean_d, 0.0f) + eps);
            mean_gxhat = rstd * (mean_gd - mean_d * mean_g);
            for (size_t i = 0; i < n; ++i) xhat.push_back((d[i] - mean_d) * rstd);
          }
          for (size_t i = 0; i < n; ++i) {
            store(at(dx, i), (rstd * (g[i] - mean_g - xhat[i] * mean_gxhat)).template cast<T>(), rcs[i].mask);
            dw[i] = dw[i] + dyv[i] * xhat[i];
            db[i] = db[i] + dyv[i];
          }
        });
        for (size_t i = 0; i < n; ++i) {
          auto part = partials + cluster_id().template cast<i64>() * n_cols + rcs[i].col;
          store(part, dw[i], rcs[i].mask);
          store(part + clusters.template cast<i64>() * n_cols, db[i], rcs[i].mask);
        }
      });
  return k;
}

}  // namespace tilefuse::kernels
