#pragma once
// Cross-entropy's rows program: ROWS short rows per program as one [ROWS, BLOCK] tile
// (row_batches.hpp says when), with the row programs' options (cross_entropy_programs.hpp):
// counting programs first for a mean, label smoothing, z-loss, the gradient in place or
// elsewhere. Rows past n_rows are masked off.
#include <string>

#include "tilefuse/kernels/cross_entropy_programs.hpp"

namespace tilefuse::kernels {

template <class T, class TI = int64_t>
const auto& cross_entropy_rows_kernel() {
  static auto k = kernel(detail::ce_kernel_name<T, TI>("cross_entropy_rows_"),
      {"loss", "dlogits", "logits", "targets", "count_word", "n_count", "counting", "inv_count", "n_rows", "n_cols",
       "logits_stride", "dlogits_stride", "ignore_index", "smoothing", "z_loss", "grad_scale"},
      [](Ptr<float> loss, Ptr<T> dlogits, Ptr<const T> logits, Ptr<const TI> targets, Ptr<i64> count_word, I32 n_count,
         I32 counting, Ptr<const float> inv_count, I32 n_rows, I32 n_cols, I64 logits_stride, I64 dlogits_stride,
         I64 ignore_index, F32 smoothing, F32 z_loss, F32 grad_scale, Meta<"BLOCK"> BLOCK, Meta<"ROWS"> ROWS,
         Meta<"REDUCTION"> REDUCTION, Meta<"SMOOTHING", bool, true> SMOOTHING, Meta<"COUNT", int64_t, 1024> COUNT,
         Meta<"PICK_TARGET", bool, false> PICK_TARGET) {
        detail::ce_count_then_rows(COUNT, program_id(0), n_count, count_word, targets, n_rows, ignore_index,
                                   [&](I32 batch) {
          auto rows = batch * ROWS + arange(0, ROWS);
          auto in_rows = rows < n_rows;
          auto cols = arange(0, BLOCK);
          auto mask = in_rows.col() && (cols < n_cols).row();
          auto r64 = rows.template cast<i64>();
          auto x_rows = logits + r64 * logits_stride;  // the rows' first logits
          auto d_rows = dlogits + r64 * dlogits_stride;
          auto target = load(targets + rows, in_rows, 0);
          auto seen = detail::ce_count_seen(REDUCTION, COUNT, count_word);
          auto x = load(x_rows.col() + cols.row(), mask, -inf).template cast<f32>();
          auto inv = detail::ce_inv_count(REDUCTION, COUNT, inv_count);
          auto t = detail::ce_target(target.template cast<i64>(), n_cols, ignore_index);
          // The target logits: a gather of one element per row issued once the targets
          // arrive (a second memory latency), or with PICK_TARGET a masked row sum over the
          // registers (t.col is -1, matching no column, for a row without target). Measured
          // on H200 (bf16 % of copy, gather / pick with the one-hot term in the tile below):
          // 262144x128 64.1 / 55.8, 131072x256 66.3 / 55.1, 262144x512 86.9 / 76.6; f32
          // 262144x128 81.7 / 76.2. The pick's compare and select per element and its
          // extra reduction cost more than the latency they hide.
          auto owns = in_rows && t.col >= 0;
          auto target_col = where(owns, t.col, 0);
          auto hit = [&] { return cols.row() == t.col.col(); };  // (traced only with PICK_TARGET)
          auto x_t = PICK_TARGET ? sum(where(hit(), x, 0.0f), 1)
                                 : load(x_rows + target_col, owns, 0.0f).template cast<f32>();
          auto row_max = max(x, 1);
          auto e = fast_exp(x - row_max.col());
          auto lin = (1.0f - smoothing) * x_t;
          if (SMOOTHING) lin = lin + smoothing / n_cols.template cast<f32>() * sum(where(mask, x, 0.0f), 1);
          auto factor = detail::ce_grad_factor(REDUCTION, COUNT, grad_scale, count_word, counting, seen, inv);
          auto r = detail::ce_row(t, row_max, sum(e, 1), lin, n_cols, smoothing, z_loss, factor);
          // With PICK_TARGET the one-hot term in the tile (few values per thread); else dx
          // without it, then each target column's full gradient over it (the tile store's
          // element is another thread's: hence the barrier).
          auto dx = e * r.coef_p.col();
          if (SMOOTHING) dx = dx - r.coef_u.col();
          if (PICK_TARGET) dx = dx - where(hit(), r.coef_t.col(), 0.0f);
          store(d_rows.col() + cols.row(), dx.template cast<T>(), mask);
          store(loss + rows, r.loss, in_rows);
          if (PICK_TARGET) return;
          barrier();
          auto dt = fast_exp(x_t - row_max) * r.coef_p;
          if (SMOOTHING) dt = dt - r.coef_u;
          store(d_rows + target_col, (dt - r.coef_t).template cast<T>(), owns);
        });
      });
  return k;
}

}  // namespace tilefuse::kernels
