#pragma once
// Split-row softmax (see split_rows.hpp): the reduce kernel writes each chunk's max and
// sum of exp relative to it; the normalize kernel rescales the row's (max, sum) pairs to
// the row max and writes its chunk.
#include <string>

#include "tilefuse/kernels/row_chunks.hpp"
#include "tilefuse/kernels/split_rows.hpp"

namespace tilefuse::kernels {

// Chunk maxima start from a finite floor, so a chunk of -inf entries gives (floor, 0)
// and no exponent ever sees -inf - -inf.
inline constexpr float kSplitMaxFloor = -3.0e38f;

// partials: plane 0 = chunk max, plane 1 = sum(exp(x - chunk max)); [rows, chunks] each.
template <class T>
const auto& softmax_split_reduce_kernel() {
  static auto k = kernel(std::string("softmax_split_reduce_") + name(dtype_v<T>),
      {"partials", "in", "n_cols", "in_stride", "row0", "n_rows"},
      [](Ptr<float> partials, Ptr<const T> in, I32 n_cols, I64 in_stride, I32 row0, I32 n_rows, Meta<"BLOCK"> BLOCK,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        auto chunk = program_id(0);
        auto r = program_id(1);
        auto row = row0 + r;
        auto in_row = in + row * in_stride;
        SplitChunk c(chunk, BLOCK, n_cols, row, n_rows, in_stride, ALIGN_ROWS, in_row);
        // Keep x in L2: the normalize kernel reads it again.
        auto x = c.template load<T>(in_row, -inf, Cache::EvictLast).template cast<f32>();
        auto m = maximum(max(x, 0), kSplitMaxFloor);
        auto slot = r * num_programs(0) + chunk;
        store(partials + slot, m);
        store(partials + num_programs(0) * num_programs(1) + slot, sum(fast_exp(x - m), 0));
      });
  return k;
}

template <class T>
const auto& softmax_split_normalize_kernel() {
  static auto k = kernel(std::string("softmax_split_normalize_") + name(dtype_v<T>),
      {"out", "in", "partials", "n_cols", "out_stride", "in_stride", "row0", "n_rows"},
      [](Ptr<T> out, Ptr<const T> in, Ptr<const float> partials, I32 n_cols, I64 out_stride, I64 in_stride, I32 row0,
         I32 n_rows, Meta<"BLOCK"> BLOCK, Meta<"PARTS"> PARTS, Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        auto chunk = program_id(0);
        auto r = split_normalize_row();
        auto n_chunks = num_programs(0);
        auto maxes = partials + r * n_chunks;
        auto sums = maxes + n_chunks * num_programs(1);
        // Per lane: the running max of its chunks and their sums rescaled to it.
        auto p = arange(0, PARTS);
        auto m = full<f32>({PARTS}, kSplitMaxFloor);
        auto l = zeros<f32>({PARTS});
        for_range(0, n_chunks, PARTS, [&](I32 start) {
          auto i = start + p;
          auto live = i < n_chunks;
          auto cm = load(maxes + i, live, kSplitMaxFloor);
          auto m_new = maximum(m, cm);
          l = l * fast_exp(m - m_new) + load(sums + i, live, 0.0f) * fast_exp(cm - m_new);
          m = m_new;
        });
        auto row_max = max(m, 0);
        auto inv_sum = 1.0f / sum(l * fast_exp(m - row_max), 0);
        auto row = row0 + r;
        auto in_row = in + row * in_stride;
        auto out_row = out + row * out_stride;
        SplitChunk c(chunk, BLOCK, n_cols, row, n_rows, in_stride, ALIGN_ROWS, in_row, out_row);
        auto x = c.template load<T>(in_row, -inf, Cache::EvictFirst).template cast<f32>();
        store(out_row + c.chunk.pos[0], (fast_exp(x - row_max) * inv_sum).template cast<T>(), c.chunk.mask[0]);
      });
  return k;
}

// `align`: the rows may be indexed from their 16-byte-aligned starts (rows_need_alignment);
// ALIGN_ROWS=0 in the config turns that off.
template <class Out, class In>
void softmax_split(Out& out, const In& in, Config c, int64_t rows, int64_t cols, int64_t out_stride,
                   int64_t in_stride, bool align = false) {
  using T = buffer_elem_t<Out>;
  check_split_config(c, "softmax");
  int64_t span = split_aligned_span(c, align, split_softmax_alignment_pays(cols, dtype_v<T>), cols, dtype_v<T>);
  launch_split_rows<Out>(
      c, rows, span, 2,
      [&](const Grid& g, const Config& rc, auto& partials, int32_t row0) {
        softmax_split_reduce_kernel<T>().launch(g, rc, partials, in, cols, in_stride, row0, rows);
      },
      [&](const Grid& g, const Config& nc, auto& partials, int32_t row0) {
        softmax_split_normalize_kernel<T>().launch(g, nc, out, in, partials, cols, out_stride, in_stride, row0, rows);
      });
}

}  // namespace tilefuse::kernels
