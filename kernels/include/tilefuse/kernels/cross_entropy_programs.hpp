#pragma once
// Tile programs of the fused cross-entropy (host function: cross_entropy.hpp).
// The row programs write each row's loss to loss[row]; with sum or mean that is a
// scratch buffer the sum kernel then reduces (deterministic; same-address atomics from
// every row cost ~30% of the kernel on H200). REDUCTION (meta): 0 none, 1 sum, 2 mean
// (the gradient is scaled by 1/count, which the count kernel writes to inv_count).
#include <limits>
#include <string>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

namespace detail {

template <class T, class TI>
std::string ce_kernel_name(const char* base) {
  std::string n = std::string(base) + name(dtype_v<T>);
  if constexpr (!std::is_same_v<TI, int64_t>) n += std::string("_") + name(dtype_v<TI>);
  return n;
}

// The row's target as seen by the programs: `valid` (not ignore_index), `in_range`
// (a class index in [0, V)), and `col`, the target column or -1 (matches no column).
struct CeTarget {
  I1 valid, in_range;
  I32 col;
};
inline CeTarget ce_target(const I64& t, const I32& n_cols, const I64& ignore_index) {
  auto valid = t != ignore_index;
  auto in_range = t >= 0 && t < n_cols.cast<i64>();
  auto col = where(valid && in_range, t, scalar<i64>(-1)).cast<i32>();
  return {valid, in_range, col};
}

// Per-row scalars from the row's lse, target logit and logit sum:
// dx = e * coef_p - coef_u - [col == t] coef_t with e = exp(x - row_max).
struct CeRow {
  F32 loss, coef_p, coef_u, coef_t;
};
inline CeRow ce_row(const CeTarget& t, const F32& row_max, const F32& sum_e, const F32& x_t, const F32& sum_x,
                    const I32& n_cols, const F32& smoothing, const F32& z_loss, const F32& factor) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto lse = row_max + log(sum_e);
  auto v = n_cols.cast<f32>();
  auto loss = (1.0f - smoothing) * (lse - x_t) + smoothing * (lse - sum_x / v) + z_loss * lse * lse;
  // Ignored rows: 0. A target outside [0, V) (only on the GPU; host targets are
  // checked first): NaN, so the mistake shows in the loss and the gradient.
  auto scale = where(t.valid, where(t.in_range, factor, scalar<f32>(nan)), scalar<f32>(0.0));
  return {where(t.valid, where(t.in_range, loss, scalar<f32>(nan)), scalar<f32>(0.0)),
          scale * (1.0f + 2.0f * z_loss * lse) / sum_e, scale * smoothing / v, scale * (1.0f - smoothing)};
}

// The gradient factor of every row: grad_scale, divided by the count for mean.
inline F32 ce_grad_factor(int64_t reduction, const F32& grad_scale, const Ptr<const float>& inv_count) {
  return reduction == 2 ? grad_scale * load(inv_count) : grad_scale;
}

}  // namespace detail

// One row per cluster of C programs (C = 1 by default), BLOCK columns each, the row in
// registers: read once, the gradient written over it (or elsewhere) once.
template <class T, class TI = int64_t>
const auto& cross_entropy_row_kernel() {
  static auto k = kernel(detail::ce_kernel_name<T, TI>("cross_entropy_"),
      {"loss", "dlogits", "logits", "targets", "inv_count", "n_cols", "logits_stride", "dlogits_stride",
       "ignore_index", "smoothing", "z_loss", "grad_scale"},
      [](Ptr<float> loss, Ptr<T> dlogits, Ptr<const T> logits, Ptr<const TI> targets, Ptr<const float> inv_count,
         I32 n_cols, I64 logits_stride, I64 dlogits_stride, I64 ignore_index, F32 smoothing, F32 z_loss,
         F32 grad_scale, Meta<"BLOCK"> BLOCK, Meta<"REDUCTION"> REDUCTION) {
        auto row = cluster_id();
        auto cols = cluster_rank() * BLOCK + arange(0, BLOCK);
        auto mask = cols < n_cols;
        auto x = load(logits + row * logits_stride + cols, mask, -inf, Cache::EvictFirst).template cast<f32>();
        auto t = detail::ce_target(load(targets + row).template cast<i64>(), n_cols, ignore_index);
        auto hit = cols == t.col;
        auto row_max = cluster_max(max(x, 0));
        auto e = fast_exp(x - row_max);  // ex2.approx, as in softmax
        auto sum_e = cluster_sum(sum(e, 0));
        auto sum_x = cluster_sum(sum(where(mask, x, 0.0f), 0));
        auto x_t = cluster_sum(sum(where(hit, x, 0.0f), 0));
        auto r = detail::ce_row(t, row_max, sum_e, x_t, sum_x, n_cols, smoothing, z_loss,
                                detail::ce_grad_factor(REDUCTION, grad_scale, inv_count));
        auto dx = e * r.coef_p - r.coef_u - where(hit, r.coef_t, 0.0f);
        store(dlogits + row * dlogits_stride + cols, dx.template cast<T>(), mask);
        store(loss + row, r.loss, cluster_rank() == 0);
      });
  return k;
}

// Rows longer than one cluster covers: pass 1 keeps a running max and rescaled sum per
// lane (as the looped softmax) plus the logit sum and the target logit; pass 2 re-reads
// the row (from L2 where it fits) and writes the gradient.
template <class T, class TI = int64_t>
const auto& cross_entropy_looped_kernel() {
  static auto k = kernel(detail::ce_kernel_name<T, TI>("cross_entropy_looped_"),
      {"loss", "dlogits", "logits", "targets", "inv_count", "n_cols", "logits_stride", "dlogits_stride",
       "ignore_index", "smoothing", "z_loss", "grad_scale"},
      [](Ptr<float> loss, Ptr<T> dlogits, Ptr<const T> logits, Ptr<const TI> targets, Ptr<const float> inv_count,
         I32 n_cols, I64 logits_stride, I64 dlogits_stride, I64 ignore_index, F32 smoothing, F32 z_loss,
         F32 grad_scale, Meta<"BLOCK"> BLOCK, Meta<"REDUCTION"> REDUCTION) {
        auto row = program_id(0);
        auto cols = arange(0, BLOCK);
        auto in_row = logits + row * logits_stride;
        auto t = detail::ce_target(load(targets + row).template cast<i64>(), n_cols, ignore_index);
        // Lanes start from a finite floor, so the exponent never sees -inf - -inf.
        auto m = full<f32>({BLOCK}, -3.0e38f);
        auto l = zeros<f32>({BLOCK});
        auto sx = zeros<f32>({BLOCK});
        auto xt = zeros<f32>({BLOCK});
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          auto mask = c < n_cols;
          auto x = load(in_row + c, mask, -inf, Cache::EvictLast).template cast<f32>();
          auto m_new = maximum(m, x);
          auto e = fast_exp(minimum(m, x) - m_new);  // rescales l, or is x's own term
          l = where(x > m, l * e + 1.0f, l + e);
          m = m_new;
          sx = sx + where(mask, x, 0.0f);
          xt = xt + where(c == t.col, x, 0.0f);
        });
        auto row_max = max(m, 0);
        auto sum_e = sum(l * fast_exp(m - row_max), 0);
        auto r = detail::ce_row(t, row_max, sum_e, sum(xt, 0), sum(sx, 0), n_cols, smoothing, z_loss,
                                detail::ce_grad_factor(REDUCTION, grad_scale, inv_count));
        auto out_row = dlogits + row * dlogits_stride;
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          auto mask = c < n_cols;
          auto x = load(in_row + c, mask, -inf, Cache::EvictFirst).template cast<f32>();
          auto dx = fast_exp(x - row_max) * r.coef_p - r.coef_u - where(c == t.col, r.coef_t, 0.0f);
          store(out_row + c, dx.template cast<T>(), mask);
        });
        store(loss + row, r.loss);
      });
  return k;
}

// One program, before the rows of a mean: inv_count = 1/count of the rows whose
// target is not ignore_index (inf for none: every row's gradient factor is then unused).
template <class TI = int64_t>
const auto& cross_entropy_count_kernel() {
  static auto k = kernel(std::string("cross_entropy_count_") + name(dtype_v<TI>),
      {"inv_count", "targets", "n_rows", "ignore_index"},
      [](Ptr<float> inv_count, Ptr<const TI> targets, I32 n_rows, I64 ignore_index, Meta<"BLOCK"> BLOCK) {
        auto offs = arange(0, BLOCK);
        auto acc = zeros<i32>({BLOCK});
        for_range(0, n_rows, BLOCK, [&](I32 start) {
          auto r = start + offs;
          auto in = r < n_rows;
          auto t = load(targets + r, in, 0, Cache::EvictLast).template cast<i64>();  // read again by the rows
          acc = acc + (in && t != ignore_index).template cast<i32>();
        });
        store(inv_count, 1.0f / sum(acc, 0).template cast<f32>());
      });
  return k;
}

// One program, after the rows: loss = the sum of the row losses, times inv_count with
// MEAN (NaN for a mean over no rows, as PyTorch: 0 x inf).
inline const auto& cross_entropy_sum_kernel() {
  static auto k = kernel("cross_entropy_sum", {"loss", "row_losses", "inv_count", "n_rows"},
      [](Ptr<float> loss, Ptr<const float> row_losses, Ptr<const float> inv_count, I32 n_rows, Meta<"BLOCK"> BLOCK,
         Meta<"MEAN", bool> MEAN) {
        auto offs = arange(0, BLOCK);
        auto acc = zeros<f32>({BLOCK});
        for_range(0, n_rows, BLOCK, [&](I32 start) {
          auto r = start + offs;
          acc = acc + load(row_losses + r, r < n_rows, 0.0f);
        });
        auto total = sum(acc, 0);
        store(loss, MEAN ? total * load(inv_count) : total);
      });
  return k;
}

// The configs of the two one-program kernels.
inline Config cross_entropy_scan_config() { return Config{{"BLOCK", 1024}, num_warps(4)}; }

}  // namespace tilefuse::kernels
