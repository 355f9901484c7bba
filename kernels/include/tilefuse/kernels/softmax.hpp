#pragma once
// Fused row softmax: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)), f32 math.
// Tile programs: one row per cluster of programs (a single program with cluster(1)),
// the row held in registers; several short rows per program; and a looped
// online-softmax variant (running max and sum) for long rows where clusters are absent.
#include <string>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/row_batches.hpp"
#include "tilefuse/kernels/row_chunks.hpp"
#include "tilefuse/kernels/split_softmax.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// One row per cluster: its C programs (C = 1 by default) each hold CHUNKS tiles of
// BLOCK columns (BLOCK * CHUNKS * C >= n_cols), so the row is read from memory once; the
// row's max and sum are combined across the chunks elementwise, then across the cluster
// in one exchange. The first HELD chunks stay in shared memory (Cache::KeepInShared), the
// others in registers: a program then holds more of the row than its registers would
// (up to ~200 KB), so a cluster of 16 holds rows of up to 64K-100K columns per program.
template <class T>
const auto& softmax_row_kernel() {
  static auto k = kernel(std::string("softmax_") + name(dtype_v<T>), {"out", "in", "n_rows", "n_cols", "out_stride", "in_stride"},
      [](Ptr<T> out, Ptr<const T> in, I32 n_rows, I32 n_cols, I64 out_stride, I64 in_stride, Meta<"BLOCK"> BLOCK,
         Meta<"CHUNKS", int64_t, 1> CHUNKS, Meta<"PERSISTENT", bool, false> PERSISTENT,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS, Meta<"HELD", int64_t, 0> HELD, Meta<"TAIL", int64_t, 0> TAIL) {
        auto one_row = [&](I32 row) {
          auto r = row.template cast<i64>();
          auto in_row = in + r * in_stride;
          auto out_row = out + r * out_stride;
          RowChunks c(cluster_rank(), BLOCK, CHUNKS, n_cols, align_rows(ALIGN_ROWS, in_row, out_row), TAIL);
          const int64_t tiles = static_cast<int64_t>(c.size());
          auto readable = c.template readable<T>(r * in_stride, (n_rows - 1 - row).template cast<i64>() * in_stride);
          int64_t held = std::min<int64_t>(HELD, CHUNKS);
          std::vector<Tile<T, 1>> kept;  // the held chunks as loaded, read again after the exchange
          std::vector<Tile<float, 1>> x;
          for (int64_t i = 0; i < tiles; ++i) {
            if (i < held) kept.push_back(c.load(in_row, i, -inf, Cache::KeepInShared, readable));
            x.push_back(i < held ? kept.back().template cast<f32>()
                                 : c.load(in_row, i, -inf, c.read_once(), readable).template cast<f32>());
          }
          // ex2.approx (2 instructions) instead of the libdevice expf (~8): the row is
          // issue-bound on bf16 otherwise. Relative error ~2^-22, far below bf16/f16 rounding.
          // Each program's own max m and sum s of exp(x - m); one cluster exchange gives
          // the row's (a max exchange, then a sum exchange measured 0.6-2.9 points of
          // copy bandwidth slower on H200 at 16K-151K columns; bench/NOTES.md).
          auto m = own_row_max(columns_max(c, x));
          std::vector<Tile<float, 1>> e;
          for (auto& xi : x) e.push_back(fast_exp(xi - m));
          auto s = columns_sum(c, e);
          auto [row_max, row_sum] = cluster_max_sumexp(std::array{m, s});
          auto scale = fast_exp(m - row_max) / row_sum;  // once per row
          auto inv_sum = 1.0f / row_sum;
          for (int64_t i = 0; i < tiles; ++i) {
            auto y = i < held ? fast_exp(kept[i].template cast<f32>() - row_max) * inv_sum : e[i] * scale;
            store(out_row + c.pos[i], y.template cast<T>(), c.mask[i]);
          }
        };
        // PERSISTENT: clusters loop over the rows (num_stages > 1 stages the next row).
        // Opt-in: measured slower than one row per cluster except at odd widths (H200
        // bf16: 8192x16384 91.5% -> 87.6% of copy, 2048x65536 79.4% -> 71.8%, 4096x16383
        // 47.1% -> 54.5%); the norm backward gains from it through dW kept in registers.
        if (PERSISTENT) for_range(cluster_id(), n_rows, num_programs(0) / cluster_size(), one_row);
        else one_row(cluster_id());
      });
  return k;
}

// Several rows per program: a [ROWS, BLOCK] tile reduced along axis 1, so the loads of
// one row overlap the reductions of the others (short rows, many of them).
template <class T>
const auto& softmax_rows_kernel() {
  static auto k = kernel(std::string("softmax_rows_") + name(dtype_v<T>),
      {"out", "in", "n_rows", "n_cols", "out_stride", "in_stride"},
      [](Ptr<T> out, Ptr<const T> in, I32 n_rows, I32 n_cols, I64 out_stride, I64 in_stride, Meta<"BLOCK"> BLOCK,
         Meta<"ROWS"> ROWS) {
        auto rows = program_id(0) * ROWS + arange(0, ROWS);
        auto cols = arange(0, BLOCK);
        auto mask = (rows < n_rows).col() && (cols < n_cols).row();
        auto r64 = rows.template cast<i64>().col();
        auto x = load(in + r64 * in_stride + cols.row(), mask, -inf, Cache::EvictFirst).template cast<f32>();
        auto e = fast_exp(x - max(x, 1).col());
        auto y = e * (1.0f / sum(e, 1)).col();
        store(out + r64 * out_stride + cols.row(), y.template cast<T>(), mask);
      });
  return k;
}

// Rows longer than one tile: pass 1 keeps a running max and rescaled sum per lane,
// pass 2 re-reads the row and writes the normalized values.
template <class T>
const auto& softmax_looped_kernel() {
  static auto k = kernel(std::string("softmax_looped_") + name(dtype_v<T>),
      {"out", "in", "n_rows", "n_cols", "out_stride", "in_stride"},
      [](Ptr<T> out, Ptr<const T> in, I32 n_rows, I32 n_cols, I64 out_stride, I64 in_stride, Meta<"BLOCK"> BLOCK) {
        auto row = program_id(0);
        auto cols = arange(0, BLOCK);
        auto in_row = in + row * in_stride;
        // Lanes start from a finite floor, so the exponent never sees -inf - -inf:
        // -inf inputs just add exp(-inf) = 0.
        auto m = full<f32>({BLOCK}, -3.0e38f);
        auto l = zeros<f32>({BLOCK});
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          // Keep the row in L2: pass 2 reads it again.
          auto x = load(in_row + c, c < n_cols, -inf, Cache::EvictLast).template cast<f32>();
          // One exp per element: e = exp(min(m, x) - max(m, x)) rescales l when x is the
          // new maximum, and is x's own term otherwise.
          auto m_new = maximum(m, x);
          auto e = fast_exp(minimum(m, x) - m_new);
          l = where(x > m, l * e + 1.0f, l + e);
          m = m_new;
        });
        auto row_max = max(m, 0);
        auto row_sum = sum(l * fast_exp(m - row_max), 0);
        auto inv_sum = 1.0f / row_sum;
        auto out_row = out + row * out_stride;
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          auto mask = c < n_cols;
          auto x = load(in_row + c, mask, -inf, Cache::EvictFirst).template cast<f32>();
          store(out_row + c, (fast_exp(x - row_max) * inv_sum).template cast<T>(), mask);
        });
      });
  return k;
}

// 16-bit programs holding 2 chunks of 8192 on clusters of 8 or 16 (rows of 114696-131072 and
// 229384-262144 columns) hold 4 on half the cluster (held_64k_programs). Only rows known to
// start on 16 bytes (`aligned_rows`: the launch's rows_need_alignment false) whose width is a
// multiple of 8, not spans of odd rows from their aligned start: runs off 16 bytes or partly
// masked are not held, and 128 values per thread in registers spill at 3 programs per SM.
// H200 % of copy, previous heuristic -> this, two rounds (bench/NOTES.md "Programs of 64 KB
// held"): bf16
// 512x262144 82.8 -> 92.0, 256x262144 78.8 -> 87.0, 128x262144 71.8 -> 77.7, 4096x128256
// 91.0 -> 97.1, 2048x131072 91.1 -> 95.7, 1024x131072 88.6 -> 92.6, 256x131072 76.1 ->
// 78.8; f16 512x262144 88.0 -> 92.8, 4096x128256 95.5 -> 97.1. Not the programs of one held
// 8192 chunk on 8 (2048x65536 as 2 x 4 x 8192: bf16 90.0 -> 88.6, f16 93.6 -> 89.3).
inline void hold_64k_per_program(Config& c, int64_t n_cols, DType dtype) {
  bool two_held = c.has("CHUNKS") && c.get("CHUNKS") == 2 && c.has("HELD") && c.get("HELD") == 2;
  if (byte_size(dtype) == 2 && n_cols % 8 == 0 && c.cluster >= 8 && c.cluster <= 16 && c.get("BLOCK") == 8192 &&
      two_held && !c.has("TAIL"))
    c = held_64k_programs(c);
}

// The row heuristic with rows held as CHUNKS x BLOCK per program (row_chunks.hpp).
// Rows split over a cluster may also ask for more programs per SM (row_programs_per_sm);
// rows in one program do not (H200 bf16 % of copy, with approximate math flushing
// subnormals: 16384x4099 86.6 uncapped against 83.3 at 8 programs, 8191x4097 81.1 against
// 79.1, 1025 and 3001 columns equal; cross-entropy keeps its cap there). 16-bit rows of
// 2048-4096 columns in one tile take 16 values per thread. `width`: the rows' own width
// where n_cols is the span of rows indexed from their aligned start (0: n_cols), whose
// alignment row_programs_per_sm asks about.
inline Config softmax_heuristic(int64_t n_cols, DType dtype, bool clusters = false, int64_t width = 0,
                                bool aligned_rows = true) {
  Config c = chunked_row_heuristic(n_cols, dtype, clusters);
  if (auto eight = eight_program_cluster(c, n_cols, dtype, false)) c = *eight;  // 2 x 8192 on 8 programs
  c = last_chunk_as_tail(c, n_cols, dtype);
  if (!row_uses_loop(c, n_cols) && c.cluster > 1) {
    c.min_programs_per_sm = row_programs_per_sm(c, dtype, width ? width : n_cols);
    hold_chunks(c, dtype);
    if (aligned_rows && (!width || width == n_cols)) hold_64k_per_program(c, n_cols, dtype);
  }
  spread_one_tile_rows(c, dtype, n_cols);
  return c;
}
inline bool softmax_uses_loop(const Config& c, int64_t n_cols) { return row_uses_loop(c, n_cols); }
// The heuristic config of softmax's rows of `cols` (`align`: they may be indexed from their
// aligned start, rows_need_alignment), before with_split_rows: what softmax() starts from,
// and the tuner's fallback and the benchmark with it.
inline Config softmax_rows_config(int64_t cols, DType dtype, bool clusters, bool align) {
  auto heuristic = [&](int64_t n) { return softmax_heuristic(n, dtype, clusters, cols, !align); };
  Config c = aligned_rows_heuristic(align, cols, dtype, heuristic, true);
  batch_short_rows(c, dtype);  // rows of 1 KB or less: several per program (row_batches.hpp)
  return c;
}

// softmax(out, in, rows, cols): row-wise softmax of a [rows, cols] matrix with
// row strides (elements) out_stride/in_stride (default: cols).
template <class Out, class In>
void softmax(Out&& out, const In& in, int64_t rows, int64_t cols, int64_t out_stride = -1, int64_t in_stride = -1,
             ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Out>;
  static_assert(std::is_same_v<T, buffer_elem_t<In>>, "softmax: in and out must have the same dtype");
  if (out_stride < 0) out_stride = cols;
  if (in_stride < 0) in_stride = cols;
  bool align = rows_need_alignment(dtype_v<T>, {row_buffer(in, in_stride), row_buffer(out, out_stride)});
  int64_t span = align ? aligned_row_span(cols, dtype_v<T>) : cols;
  Config c = cfg ? *cfg
                 : with_split_rows<Out>(softmax_rows_config(cols, dtype_v<T>, clusters_usable<Out>(), align), rows, cols,
                                        dtype_v<T>);
  if (row_uses_split(c)) return softmax_split(out, in, c, rows, cols, out_stride, in_stride, align);  // split_softmax.hpp
  set_align_rows(c, align, span, aligned_rows_pay(c, cols, dtype_v<T>, true));
  c.meta.erase("SPLIT");
  if (uses_row_batches(c, cols, "softmax")) {
    softmax_rows_kernel<T>().launch(row_batch_grid(c, rows), c, out, in, rows, cols, out_stride, in_stride);
    return;
  }
  c.meta.erase("ROWS");
  check_row_cover(c, cols, "softmax");
  if (c.has("PERSISTENT") && c.get("PERSISTENT") && !softmax_uses_loop(c, cols)) {
    int64_t clusters = persistent_clusters<Out>(c, rows);
    c.meta.erase("PROGRAMS_PER_SM");
    const auto& k = softmax_row_kernel<T>();
    clusters = within_resident(clusters, k.resident_clusters(c, out, in, rows, cols, out_stride, in_stride));
    k.launch(Grid(clusters * c.cluster), c, out, in, rows, cols, out_stride, in_stride);
    return;
  }
  c.meta.erase("PERSISTENT");
  c.meta.erase("PROGRAMS_PER_SM");
  launch_rows(softmax_row_kernel<T>(), softmax_looped_kernel<T>(), c, rows, cols, out, in, rows, cols, out_stride,
              in_stride);
}

}  // namespace tilefuse::kernels
