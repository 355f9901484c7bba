#pragma once
// The norms' rows programs: ROWS short rows per program as one [ROWS, BLOCK] tile
// (row_batches.hpp says when), f32 math as in the row programs (norms.hpp). Rows past
// n_rows are masked off; the weight (and bias) tile is loaded once for all the rows.
#include <string>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/row_batches.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

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
        store(b.at(out), (x * rstd.col() * b.load_param(weight)).template cast<T>(), b.mask);
      });
  return k;
}

// y = (x - mean) * rsqrt(var + eps) * w + b, the variance from x - mean (two passes over
// the registers: a short row's second reduction costs less than the shifted sums' shift,
// a [ROWS] load whose broadcast across the tile took shared memory and four barriers);
// with STATS each row's mean and rstd also go to mean_out / rstd_out.
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
        auto mean = sum(x, 1) / n_cols;
        auto d = where(b.mask, x - mean.col(), 0.0f);
        auto rstd = rsqrt(sum(d * d, 1) / n_cols + eps);
        if (STATS) {
          store(mean_out + b.rows, mean, in_rows);
          store(rstd_out + b.rows, rstd, in_rows);
        }
        auto w = b.load_param(weight);
        auto bias_t = b.load_param(bias);
        store(b.at(out), (d * rstd.col() * w + bias_t).template cast<T>(), b.mask);
      });
  return k;
}

}  // namespace tilefuse::kernels
