#pragma once
// Softmax backward over rows: given y = softmax(x) and the upstream gradient dy,
// dx = y * (dy - sum(dy * y)) per row, f32 math. Like the forward: one row per cluster of
// programs (a single program with cluster(1)), the row's y and dy in registers and
// read once; and a looped two-pass program for rows longer than one cluster holds.
//
// dx may alias dy (in place): every program writes only columns it has read itself
// (the row program after its reduction, the looped one tile by tile in pass 2).
#include <string>

#include "tilefuse/kernels/buffer_checks.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/row_batches.hpp"
#include "tilefuse/kernels/row_chunks.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

template <class T>
const auto& softmax_backward_row_kernel() {
  static auto k = kernel(std::string("softmax_bwd_") + name(dtype_v<T>), {"dx", "dy", "y", "n_cols", "stride"},
      [](Ptr<T> dx, Ptr<const T> dy, Ptr<const T> y, I32 n_cols, I64 stride, Meta<"BLOCK"> BLOCK,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        auto row = cluster_id();
        auto base = row * stride;
        auto dy_row = dy + base, y_row = y + base;
        auto dx_row = dx + base;
        // ALIGN_ROWS: the three rows indexed from their 16-byte-aligned starts (row_chunks.hpp).
        RowChunks c(cluster_rank(), BLOCK, 1, n_cols, align_rows(ALIGN_ROWS, dy_row, y_row, dx_row));
        auto rows = num_programs(0) / cluster_size();
        auto readable = c.template readable<T>(base, (rows - 1 - row).template cast<i64>() * stride);
        auto g = c.load(dy_row, 0, 0.0f, c.read_once(), readable).template cast<f32>();
        auto yv = c.load(y_row, 0, 0.0f, c.read_once(), readable).template cast<f32>();
        auto dot = cluster_sum(sum(g * yv, 0));
        store(dx_row + c.pos[0], (yv * (g - dot)).template cast<T>(), c.mask[0]);
      });
  return k;
}

// Short rows: ROWS rows per program as one [ROWS, BLOCK] tile (row_batches.hpp).
template <class T>
const auto& softmax_backward_rows_kernel() {
  static auto k = kernel(std::string("softmax_bwd_rows_") + name(dtype_v<T>),
      {"dx", "dy", "y", "n_rows", "n_cols", "stride"},
      [](Ptr<T> dx, Ptr<const T> dy, Ptr<const T> y, I32 n_rows, I32 n_cols, I64 stride, Meta<"BLOCK"> BLOCK,
         Meta<"ROWS"> ROWS) {
        auto b = detail::row_batch(n_rows, n_cols, stride, ROWS, BLOCK);
        auto g = load(b.at(dy), b.mask, 0.0f).template cast<f32>();
        auto yv = load(b.at(y), b.mask, 0.0f).template cast<f32>();
        auto dot = sum(g * yv, 1);
        store(b.at(dx), (yv * (g - dot.col())).template cast<T>(), b.mask);
      });
  return k;
}

// Pass 1 accumulates dy * y per lane over the row; pass 2 re-reads both (from L2 where
// the row fits) and writes dx.
template <class T>
const auto& softmax_backward_looped_kernel() {
  static auto k = kernel(std::string("softmax_bwd_looped_") + name(dtype_v<T>), {"dx", "dy", "y", "n_cols", "stride"},
      [](Ptr<T> dx, Ptr<const T> dy, Ptr<const T> y, I32 n_cols, I64 stride, Meta<"BLOCK"> BLOCK) {
        auto base = program_id(0) * stride;
        auto cols = arange(0, BLOCK);
        auto acc = zeros<f32>({BLOCK});
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          auto mask = c < n_cols;
          auto g = load(dy + base + c, mask, 0.0f, Cache::EvictLast).template cast<f32>();
          auto yv = load(y + base + c, mask, 0.0f, Cache::EvictLast).template cast<f32>();
          acc = acc + g * yv;
        });
        auto dot = sum(acc, 0);
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          auto mask = c < n_cols;
          auto g = load(dy + base + c, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
          auto yv = load(y + base + c, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
          store(dx + base + c, (yv * (g - dot)).template cast<T>(), mask);
        });
      });
  return k;
}

// The forward's row heuristic: the row holds two tensors here, but up to 8K columns per
// program that is 32 f32 registers per thread at most.
inline Config softmax_backward_heuristic(int64_t n_cols, DType dtype, bool clusters = false) {
  return row_heuristic(n_cols, dtype, clusters);
}
// The config softmax_backward() starts from (`align`: rows_need_alignment), and the tuner's
// fallback: short rows in batches of about 2 KB of dy and y per program.
inline Config softmax_backward_config(int64_t cols, DType dtype, bool clusters, bool align) {
  auto heuristic = [&](int64_t n) { return softmax_backward_heuristic(n, dtype, clusters); };
  Config c = aligned_rows_heuristic(align, cols, dtype, heuristic);
  batch_short_rows(c, dtype, 2);
  return c;
}

// dx [rows, cols] = y * (dy - rowsum(dy * y)); dx may be dy (in place).
template <class DX, class DY, class Y>
void softmax_backward(DX&& dx, const DY& dy, const Y& y, int64_t rows, int64_t cols, ConfigOverride cfg = {}) {
  using T = buffer_elem_t<DX>;
  const char* fn = "softmax_backward";
  check_matrix_dims(fn, rows, cols);
  check_buffer_dtype<T>(fn, "dy", dy, "dx");
  check_buffer_dtype<T>(fn, "y", y, "dx");
  check_buffer_size(fn, "dx", dx, rows, cols, "rows x cols");
  check_buffer_size(fn, "dy", dy, rows, cols, "rows x cols");
  check_buffer_size(fn, "y", y, rows, cols, "rows x cols");
  bool align = rows_need_alignment(dtype_v<T>, {row_buffer(dy, cols), row_buffer(y, cols), row_buffer(dx, cols)});
  Config c = cfg ? *cfg : softmax_backward_config(cols, dtype_v<T>, clusters_usable<DX>(), align);
  if (uses_row_batches(c, cols, fn))
    return softmax_backward_rows_kernel<T>().launch(row_batch_grid(c, rows), c, dx, dy, y, rows, cols, cols);
  check_row_cover(c, cols, fn);
  set_align_rows(c, align, aligned_row_span(cols, dtype_v<T>), aligned_rows_pay(c, cols, dtype_v<T>));
  launch_rows(softmax_backward_row_kernel<T>(), softmax_backward_looped_kernel<T>(), c, rows, cols, dx, dy, y, cols,
              cols);
}

}  // namespace tilefuse::kernels
