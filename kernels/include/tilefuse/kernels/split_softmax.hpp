#pragma once
// Split-row softmax (see split_rows.hpp): the reduce kernel writes each chunk's max and
// sum of exp relative to it; the normalize kernel rescales the row's (max, sum) pairs to
// the row max and writes its chunk.
#include <string>
#include <utility>

#include "tilefuse/kernels/row_chunks.hpp"
#include "tilefuse/kernels/split_rows.hpp"

namespace tilefuse::kernels {

// Chunk maxima start from a finite floor, so a chunk of -inf entries gives (floor, 0)
// and no exponent ever sees -inf - -inf.
inline constexpr float kSplitMaxFloor = -3.0e38f;

// A row's max and 1 / sum of exp(x - max) from its chunks' (max, sum) partials, PARTS
// lanes at a time: per lane the running max of its chunks and their sums rescaled to it.
template <class P, class Parts>
std::pair<F32, F32> combine_row_partials(const P& maxes, const P& sums, const I32& n_chunks, const Parts& PARTS) {
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
  return {row_max, 1.0f / sum(l * fast_exp(m - row_max), 0)};
}

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
        auto [row_max, inv_sum] = combine_row_partials(maxes, maxes + n_chunks * num_programs(1), n_chunks, PARTS);
        auto row = row0 + r;
        auto in_row = in + row * in_stride;
        auto out_row = out + row * out_stride;
        SplitChunk c(chunk, BLOCK, n_cols, row, n_rows, in_stride, ALIGN_ROWS, in_row, out_row);
        auto x = c.template load<T>(in_row, -inf, Cache::EvictFirst).template cast<f32>();
        store(out_row + c.chunk.pos[0], (fast_exp(x - row_max) * inv_sum).template cast<T>(), c.chunk.mask[0]);
      });
  return k;
}

// The two phases in one launch (ONE_PASS=1): blocks of n_chunks programs in the order
// reduce rows 0 .. LAG-1, then normalize row 0, reduce row LAG, normalize row 1, ..., then
// normalize the last LAG rows. A normalize program waits (wait_at_least) until all chunks
// of its row have counted themselves in: those are programs with lower ids, started
// earlier, so the wait ends, and LAG rows later they are usually done. Its re-read of x
// then comes from L2 (LAG rows back), where the two-kernel schedule re-reads the whole
// batch. counters: two i32 per row (arrivals, departures), zero before and after: the
// last normalize program of a row zeroes them.
template <class T>
const auto& softmax_split_one_pass_kernel() {
  static auto k = kernel(std::string("softmax_split_one_pass_") + name(dtype_v<T>),
      {"out", "in", "partials", "counters", "n_cols", "out_stride", "in_stride", "row0", "n_rows", "batch", "n_chunks"},
      [](Ptr<T> out, Ptr<const T> in, Ptr<float> partials, Ptr<i32> counters, I32 n_cols, I64 out_stride,
         I64 in_stride, I32 row0, I32 n_rows, I32 batch, I32 n_chunks, Meta<"BLOCK"> BLOCK, Meta<"PARTS"> PARTS,
         Meta<"LAG"> LAG, Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        auto p = program_id(0);
        auto blk = p / n_chunks;
        auto chunk = p - blk * n_chunks;
        auto lag = minimum(scalar<i32>(static_cast<int32_t>(LAG)), batch);
        auto j = blk - lag;
        auto mid = 2 * (batch - lag);
        auto normalize = blk >= lag && (j >= mid || j % 2 == 0);
        auto r = where(blk < lag, blk, where(j >= mid, batch - lag + (j - mid), where(j % 2 == 0, j / 2, lag + j / 2)));
        auto row = row0 + r;
        auto maxes = partials + r * n_chunks;
        auto sums = maxes + n_chunks * batch;
        auto arrived = counters + 2 * r;
        auto departed = arrived + 1;
        if_(normalize, [&] {
          wait_at_least(arrived, n_chunks);
          auto [row_max, inv_sum] = combine_row_partials(maxes, sums, n_chunks, PARTS);
          auto in_row = in + row * in_stride;
          auto out_row = out + row * out_stride;
          SplitChunk c(chunk, BLOCK, n_cols, row, n_rows, in_stride, ALIGN_ROWS, in_row, out_row);
          auto x = c.template load<T>(in_row, -inf, Cache::EvictFirst).template cast<f32>();
          store(out_row + c.chunk.pos[0], (fast_exp(x - row_max) * inv_sum).template cast<T>(), c.chunk.mask[0]);
          auto before = atomic_add(departed, 1, MemOrder::AcqRel);
          auto last = before == n_chunks - 1;
          auto zero = scalar<i32>(0);
          store(arrived, zero, last);
          store(departed, zero, last);
        }, [&] {
          auto in_row = in + row * in_stride;
          SplitChunk c(chunk, BLOCK, n_cols, row, n_rows, in_stride, ALIGN_ROWS, in_row);
          auto x = c.template load<T>(in_row, -inf, Cache::EvictLast).template cast<f32>();  // re-read soon
          auto m = maximum(max(x, 0), kSplitMaxFloor);
          store(maxes + chunk, m);
          store(sums + chunk, sum(fast_exp(x - m), 0));
          atomic_add(arrived, 1, MemOrder::AcqRel);
        });
      });
  return k;
}

// Rows per launch of the one-pass kernel: two counters each in the stream's 4096.
inline constexpr int64_t kOnePassRows = 2048;

// LAG for the one-pass kernel: about the rows its resident programs cover at once (their
// reduce programs are then done when the normalize programs start), at least 2, and no
// more than a quarter of the L2 holds (the re-read must still be there).
inline int64_t one_pass_lag(int64_t chunks, int64_t row_bytes) {
  int64_t sms = gpu_sm_count();
  int64_t lag = std::max<int64_t>(2, (8 * sms + chunks - 1) / chunks + 1);
  int64_t l2 = 48ll << 20;
  return std::clamp<int64_t>(std::min(lag, l2 / 4 / std::max<int64_t>(row_bytes, 1)), 1, 64);
}

// The one-pass schedule (ONE_PASS=1 in a split config): batches of up to kOnePassRows rows.
template <class Out, class In>
void softmax_split_one_pass(Out& out, const In& in, Config c, int64_t rows, int64_t cols, int64_t span,
                            int64_t out_stride, int64_t in_stride) {
  using T = buffer_elem_t<Out>;
  int64_t block = c.get("BLOCK");
  int64_t chunks = (span + block - 1) / block;
  int64_t lag = c.has("LAG") ? c.get("LAG") : one_pass_lag(chunks, cols * byte_size(dtype_v<T>));
  Config k = split_normalize_config(c, span);
  k.meta.erase("ONE_PASS");
  k.set("LAG", lag);
  int64_t batch_rows = std::min<int64_t>(rows, kOnePassRows);
  auto partials = split_rows_scratch<Out>(2 * batch_rows * chunks);
  auto run = [&](auto& counters) {
    for (int64_t row0 = 0; row0 < rows; row0 += batch_rows) {
      int64_t batch = std::min(batch_rows, rows - row0);
      softmax_split_one_pass_kernel<T>().launch(grid(2 * batch * chunks), k, out, in, partials, counters, cols,
                                                out_stride, in_stride, row0, rows, batch, chunks);
    }
  };
  if constexpr (is_device_buffer_v<Out>) {
    auto stream = static_cast<CUstream>(current_launch_stream());
    DevicePtr<int32_t> counters(reinterpret_cast<int32_t*>(cuda::stream_counters(stream)), cuda::kStreamCounters);
    run(counters);
  } else {
    std::vector<int32_t> counters(static_cast<size_t>(2 * batch_rows), 0);
    run(counters);
  }
}

// `align`: the rows may be indexed from their 16-byte-aligned starts (rows_need_alignment);
// ALIGN_ROWS=0 in the config turns that off.
template <class Out, class In>
void softmax_split(Out& out, const In& in, Config c, int64_t rows, int64_t cols, int64_t out_stride,
                   int64_t in_stride, bool align = false) {
  using T = buffer_elem_t<Out>;
  check_split_config(c, "softmax");
  int64_t span = split_aligned_span(c, align, split_softmax_alignment_pays(cols, dtype_v<T>), cols, dtype_v<T>);
  if (c.has("ONE_PASS") && c.get("ONE_PASS"))
    return softmax_split_one_pass(out, in, c, rows, cols, span, out_stride, in_stride);
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
