#pragma once
// Split-row RMSNorm (optionally with the residual add) and LayerNorm (see split_rows.hpp).
// RMSNorm's partial is the chunk's sum of squares; with RESIDUAL the reduce kernel also
// writes res_out = in + res, and the normalize kernel reads the row from there.
// LayerNorm's partials are shifted sums of d = x - x[row, 0] and d^2 (one shift per row,
// so chunk sums simply add; stable when |mean| >> std, as in the one-tile kernel).
#include <string>

#include "tilefuse/kernels/row_chunks.hpp"
#include "tilefuse/kernels/split_rows.hpp"

namespace tilefuse::kernels {

// partials: [rows, chunks] sums of squares. With ALIGN_ROWS the chunks cover the rows
// from their 16-byte-aligned starts (SplitChunk, row_chunks.hpp), as softmax's do.
template <class T>
const auto& rmsnorm_split_reduce_kernel() {
  static auto k = kernel(std::string("rmsnorm_split_reduce_") + name(dtype_v<T>),
      {"partials", "res_out", "in", "res", "n_cols", "stride", "row0", "n_rows"},
      [](Ptr<float> partials, Ptr<T> res_out, Ptr<const T> in, Ptr<const T> res, I32 n_cols, I64 stride, I32 row0,
         I32 n_rows, Meta<"BLOCK"> BLOCK, Meta<"RESIDUAL", bool> RESIDUAL, Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        auto chunk = program_id(0);
        auto r = program_id(1);
        auto row = row0 + r;
        auto in_row = in + row * stride;
        auto res_row = res + row * stride;
        auto res_out_row = res_out + row * stride;
        SplitChunk c(chunk, BLOCK, n_cols, row, n_rows, stride, ALIGN_ROWS, in_row, res_row, res_out_row);
        // What the normalize kernel re-reads stays in L2: x, or the sum written to res_out.
        auto x = c.template load<T>(in_row, 0.0f, RESIDUAL ? Cache::EvictFirst : Cache::EvictLast).template cast<f32>();
        if (RESIDUAL) {
          auto s = (x + c.template load<T>(res_row, 0.0f, Cache::EvictFirst).template cast<f32>()).template cast<T>();
          store(res_out_row + c.chunk.pos[0], s, c.chunk.mask[0], Cache::EvictLast);
          x = s.template cast<f32>();
        }
        store(partials + r * num_programs(0) + chunk, sum(x * x, 0));
      });
  return k;
}

// `in` is res_out for the residual variant (the rounded sum, as stored). The weight is
// read at the row's columns; with ALIGN_ROWS, off its 16 bytes (realigned per run), or
// from its shifted copies with WEIGHT_COPIES (row_param_copies.hpp).
template <class T>
const auto& rmsnorm_split_normalize_kernel() {
  static auto k = kernel(std::string("rmsnorm_split_normalize_") + name(dtype_v<T>),
      {"out", "in", "weight", "partials", "n_cols", "stride", "eps", "row0", "n_rows"},
      [](Ptr<T> out, Ptr<const T> in, Ptr<const T> weight, Ptr<const float> partials, I32 n_cols, I64 stride,
         F32 eps, I32 row0, I32 n_rows, Meta<"BLOCK"> BLOCK, Meta<"PARTS"> PARTS,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS, Meta<"WEIGHT_COPIES", bool, false> WEIGHT_COPIES) {
        auto chunk = program_id(0);
        auto r = split_normalize_row();
        auto n_chunks = num_programs(0);
        auto rstd = rsqrt(sum_row_partials(partials + r * n_chunks, n_chunks, PARTS) / n_cols + eps);
        auto row = row0 + r;
        auto in_row = in + row * stride;
        auto out_row = out + row * stride;
        SplitChunk c(chunk, BLOCK, n_cols, row, n_rows, stride, ALIGN_ROWS, in_row, out_row);
        auto x = c.template load<T>(in_row, 0.0f, Cache::EvictFirst).template cast<f32>();
        auto w = c.chunk.load_param(weight, 0, 0.0f, WEIGHT_COPIES).template cast<f32>();
        store(out_row + c.chunk.pos[0], (x * rstd * w).template cast<T>(), c.chunk.mask[0]);
      });
  return k;
}

// partials: plane 0 = sum(d), plane 1 = sum(d^2) per chunk, d = x - x[row, 0]; plane 2
// the shift x[row, 0] itself.
template <class T>
const auto& layernorm_split_reduce_kernel() {
  static auto k = kernel(std::string("layernorm_split_reduce_") + name(dtype_v<T>),
      {"partials", "in", "n_cols", "stride", "row0", "n_rows"},
      [](Ptr<float> partials, Ptr<const T> in, I32 n_cols, I64 stride, I32 row0, I32 n_rows, Meta<"BLOCK"> BLOCK,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        auto chunk = program_id(0);
        auto r = program_id(1);
        auto row = row0 + r;
        auto row_in = in + row * stride;
        auto shift = load(row_in).template cast<f32>();
        SplitChunk c(chunk, BLOCK, n_cols, row, n_rows, stride, ALIGN_ROWS, row_in);
        auto d = where(c.chunk.mask[0], c.template load<T>(row_in, 0.0f, Cache::EvictLast).template cast<f32>() - shift,
                       0.0f);
        auto slot = r * num_programs(0) + chunk;
        auto plane = num_programs(0) * num_programs(1);
        store(partials + slot, sum(d, 0));
        store(partials + plane + slot, sum(d * d, 0));
        // Plane 2: the shift, for the normalize kernel: with out == in another chunk's
        // program may already have overwritten x[row, 0] there.
        store(partials + 2 * plane + slot, shift);
      });
  return k;
}

template <class T>
const auto& layernorm_split_normalize_kernel() {
  static auto k = kernel(std::string("layernorm_split_normalize_") + name(dtype_v<T>),
      {"out", "mean_out", "rstd_out", "in", "weight", "bias", "partials", "n_cols", "stride", "eps", "row0", "n_rows"},
      [](Ptr<T> out, Ptr<float> mean_out, Ptr<float> rstd_out, Ptr<const T> in, Ptr<const T> weight,
         Ptr<const T> bias, Ptr<const float> partials, I32 n_cols, I64 stride, F32 eps, I32 row0, I32 n_rows,
         Meta<"BLOCK"> BLOCK, Meta<"PARTS"> PARTS, Meta<"STATS", bool, false> STATS,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS, Meta<"WEIGHT_COPIES", bool, false> WEIGHT_COPIES) {
        auto chunk = program_id(0);
        auto r = split_normalize_row();
        auto n_chunks = num_programs(0);
        auto sums = partials + r * n_chunks;
        auto mean_d = sum_row_partials(sums, n_chunks, PARTS) / n_cols;
        auto var = sum_row_partials(sums + n_chunks * num_programs(1), n_chunks, PARTS) / n_cols - mean_d * mean_d;
        auto rstd = rsqrt(maximum(var, 0.0f) + eps);
        auto row = row0 + r;
        auto row_in = in + row * stride;
        auto row_out = out + row * stride;
        auto shift = load(sums + 2 * n_chunks * num_programs(1));  // x[row, 0] as the reduce kernel read it
        if (STATS) {  // the row's first chunk writes them (layernorm_row_kernel)
          store(mean_out + row, shift + mean_d, chunk == 0);
          store(rstd_out + row, rstd, chunk == 0);
        }
        SplitChunk c(chunk, BLOCK, n_cols, row, n_rows, stride, ALIGN_ROWS, row_in, row_out);
        auto d = c.template load<T>(row_in, 0.0f, Cache::EvictFirst).template cast<f32>() - shift;
        auto w = c.chunk.load_param(weight, 0, 0.0f, WEIGHT_COPIES).template cast<f32>();
        auto b = c.chunk.load_param(bias, 0, 0.0f, WEIGHT_COPIES).template cast<f32>();
        store(row_out + c.chunk.pos[0], ((d * rstd - mean_d * rstd) * w + b).template cast<T>(), c.chunk.mask[0]);
      });
  return k;
}

// With a residual, `res_out`/`res` are its buffers; without, any buffers of T (unused).
// `align`: the rows may be indexed from their 16-byte-aligned starts (rows_need_alignment),
// which the RMSNorms do where it pays and LayerNorm where its weight copies do
// (split_aligned_span; ALIGN_ROWS=0/1 in the config decides). `copies`: the weight (and
// bias) read from shifted copies there (weight_copies_pay; WEIGHT_COPIES=0/1 decides).
template <class Out, class ResOut, class In, class Res, class W>
void rmsnorm_split(Out& out, ResOut& res_out, const In& in, const Res& res, const W& weight, Config c,
                   int64_t rows, int64_t cols, float eps, bool residual, bool align = false, bool copies = false) {
  using T = buffer_elem_t<Out>;
  check_split_config(c, "rmsnorm");
  int64_t span = split_aligned_span(c, align, split_rmsnorm_alignment_pays(cols, dtype_v<T>), cols, dtype_v<T>);
  launch_with_row_params<T>(c, copies, cols, [&](const auto& w) {
    launch_split_rows<Out>(
        c, rows, span, 1,
        [&](const Grid& g, const Config& rc, auto& partials, int32_t row0) {
          rmsnorm_split_reduce_kernel<T>().launch(g, Config(rc).set("RESIDUAL", residual), partials, res_out, in, res,
                                                  cols, cols, row0, rows);
        },
        [&](const Grid& g, const Config& nc, auto& partials, int32_t row0) {
          if (residual)
            rmsnorm_split_normalize_kernel<T>().launch(g, nc, out, res_out, w, partials, cols, cols, eps, row0, rows);
          else
            rmsnorm_split_normalize_kernel<T>().launch(g, nc, out, in, w, partials, cols, cols, eps, row0, rows);
        });
  }, weight);
}

// mean/rstd: as layernorm_row_kernel's (written with STATS in c).
template <class Out, class Mean, class Rstd, class In, class W, class B>
void layernorm_split(Out& out, const Mean& mean, const Rstd& rstd, const In& in, const W& weight, const B& bias,
                     Config c, int64_t rows, int64_t cols, float eps, bool align = false, bool copies = false) {
  using T = buffer_elem_t<Out>;
  check_split_config(c, "layernorm");
  bool stats = c.has("STATS") && c.get("STATS");
  // Off 16 bytes with realigned weights it lost everywhere (split_rmsnorm_alignment_pays); from copies it pays
  int64_t span = split_aligned_span(c, align, copies, cols, dtype_v<T>);
  launch_with_row_params<T>(c, copies, cols, [&](const auto& w, const auto& b) {
    launch_split_rows<Out>(
        c, rows, span, 3,
        [&](const Grid& g, const Config& rc, auto& partials, int32_t row0) {
          layernorm_split_reduce_kernel<T>().launch(g, rc, partials, in, cols, cols, row0, rows);
        },
        [&](const Grid& g, const Config& nc, auto& partials, int32_t row0) {
          layernorm_split_normalize_kernel<T>().launch(g, Config(nc).set("STATS", stats), out, mean, rstd, in, w, b,
                                                       partials, cols, cols, eps, row0, rows);
        });
  }, weight, bias);
}

}  // namespace tilefuse::kernels
