#pragma once
// The norms' rows programs: ROWS short rows per program as one [ROWS, BLOCK] tile
// (row_batches.hpp says when), f32 math as in the row programs (norms.hpp). Rows past
// n_rows are masked off; the weight (and bias) tile is loaded once for all the rows.
#include <string>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

namespace detail {
// The rows of program_id(0)'s batch: their indices, which of them exist, their first
// elements' offsets (i64), the columns, and the [ROWS, BLOCK] mask; at(p): the
// [ROWS, BLOCK] pointers into p (a column of row pointers plus the columns, as the
// softmax rows program).
struct RowBatch {
  Tile<int32_t, 1> rows;
  Tile<bool, 1> in_rows;
  Tile<int64_t, 1> first;
  Tile<int32_t, 1> cols;
  Tile<bool, 2> mask;
  template <class P>
  auto at(const P& p) const {
    return p + first.col() + cols.row();
  }
};
inline RowBatch row_batch(const I32& n_rows, const I32& n_cols, const I64& stride, int64_t rows, int64_t block) {
  auto r = program_id(0) * rows + arange(0, rows);
  auto cols = arange(0, block);
  auto first = r.cast<i64>() * stride;
  return {r, r < n_rows, first, cols, (r < n_rows).col() && (cols < n_cols).row()};
}
}  // namespace detail

// y = x * rsqrt(mean(x^2) + eps) * w; with RESIDUAL: x = x + res (rounded to T), written
// to res_out first.
template <class T>
const auto& rmsnorm_rows_kernel() {
  static auto k = kernel(std::string("rmsnorm_rows_") + name(dtype_v<T>),
      {"out", "res_out", "in", "res", "weight", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> out, Ptr<T> res_out, Ptr<const T> in, Ptr<const T> res, Ptr<const T> weight, I32 n_rows, I32 n_cols,
         I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"ROWS"> ROWS, Meta<"RESIDUAL", bool> RESIDUAL) {
        auto b = detail::row_batch(n_rows, n_cols, stride, ROWS, BLOCK);
        auto x = load(b.at(in), b.mask, 0.0f).template cast<f32>();
        if (RESIDUAL) {
          auto s = (x + load(b.at(res), b.mask, 0.0f).template cast<f32>()).template cast<T>();
          store(b.at(res_out), s, b.mask);
          x = s.template cast<f32>();
        }
        auto rstd = rsqrt(sum(x * x, 1) / n_cols + eps);
        auto w = load(weight + b.cols, b.cols < n_cols, 0.0f).template cast<f32>();
        store(b.at(out), (x * rstd.col() * w.row()).template cast<T>(), b.mask);
      });
  return k;
}

// y = (x - mean) * rsqrt(var + eps) * w + b from shifted sums (d = x - x[row, 0]: two
// independent reductions, stable when |mean| >> std, as the row programs' SHIFTED); with
// STATS each row's mean and rstd also go to mean_out / rstd_out.
template <class T>
const auto& layernorm_rows_kernel() {
  static auto k = kernel(std::string("layernorm_rows_") + name(dtype_v<T>),
      {"out", "mean_out", "rstd_out", "in", "weight", "bias", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> out, Ptr<float> mean_out, Ptr<float> rstd_out, Ptr<const T> in, Ptr<const T> weight, Ptr<const T> bias,
         I32 n_rows, I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"ROWS"> ROWS,
         Meta<"STATS", bool, false> STATS) {
        auto b = detail::row_batch(n_rows, n_cols, stride, ROWS, BLOCK);
        auto in_rows = b.in_rows;
        auto x = load(b.at(in), b.mask, 0.0f).template cast<f32>();
        auto shift = load(in + b.first, in_rows, 0.0f).template cast<f32>();
        auto d = where(b.mask, x - shift.col(), 0.0f);
        auto mean_d = sum(d, 1) / n_cols;
        auto rstd = rsqrt(maximum(sum(d * d, 1) / n_cols - mean_d * mean_d, 0.0f) + eps);
        if (STATS) {
          store(mean_out + b.rows, shift + mean_d, in_rows);
          store(rstd_out + b.rows, rstd, in_rows);
        }
        auto w = load(weight + b.cols, b.cols < n_cols, 0.0f).template cast<f32>();
        auto bias_t = load(bias + b.cols, b.cols < n_cols, 0.0f).template cast<f32>();
        auto normalized = d * rstd.col() - (mean_d * rstd).col();
        store(b.at(out), (normalized * w.row() + bias_t.row()).template cast<T>(), b.mask);
      });
  return k;
}

}  // namespace tilefuse::kernels
