#pragma once
// The columns a row program holds: CHUNKS tiles of BLOCK columns (meta-parameters),
// after those of the lower-ranked programs of its cluster. Several equal chunks cover
// a width that is not a power of two with few masked lanes (5000 columns as 5 x 1024,
// not one 8192 tile); their values are combined elementwise before each reduction, so
// a reduction still exchanges one value per thread between warps.
#include <array>
#include <bit>
#include <optional>
#include <string>
#include <vector>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/row_param_copies.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

//
// With `head` (rows indexed from their start rounded down to 16 bytes, align_down),
// position p of the program's tiles is column p - head: pos[i] indexes the rounded-down
// row, cols[i] the row itself, and the mask drops the head and the tail, so every run
// of 16 bytes is aligned whatever the row's width (the compiler tests the mask per run).
//
// A TAIL tile of `tail` positions (a power of two; 0: none) may follow the chunks: rows a
// little past a power of two then take the power of two's programs, each a few positions
// more (row_tail_config), instead of twice the programs or many small chunks. Tile i is
// chunk i for i < chunks and the tail after them; reductions combine the chunks
// elementwise first and the tail on its own (columns_sum, columns_max).
struct RowChunks {
  std::vector<Tile<int32_t, 1>> pos;   // offsets of tile i from the row pointer
  std::vector<Tile<int32_t, 1>> cols;  // column indices of tile i
  std::vector<Tile<bool, 1>> mask;     // 0 <= cols[i] < n_cols

  std::optional<I32> head;              // elements before the row's first in its aligned run
  I32 n_cols;
  size_t chunks;                        // tiles of BLOCK positions (the tail, if any, after them)

  RowChunks(const I32& rank, int64_t block, int64_t chunks_, const I32& n_cols_, std::optional<I32> head_ = {},
            int64_t tail = 0, TF_HERE)
      : head(head_), n_cols(n_cols_), chunks(static_cast<size_t>(std::max<int64_t>(chunks_, 0))) {
    (void)row_cover(Config{{"BLOCK", block}, {"CHUNKS", chunks_}, {"TAIL", tail}});  // the user errors
    auto first = rank * (block * chunks_ + tail);
    auto add = [&](const Tile<int32_t, 1>& p) {
      pos.push_back(p);
      if (head) {
        cols.push_back(pos.back() - *head);
        mask.push_back(cols.back() >= 0 && cols.back() < n_cols);
      } else {
        cols.push_back(pos.back());
        mask.push_back(cols.back() < n_cols);
      }
    };
    for (int64_t i = 0; i < chunks_; ++i) add(first + i * block + arange(0, block, loc));
    if (tail > 0) add(first + chunks_ * block + arange(0, tail, loc));
  }
  // The program's tiles: its chunks, then its tail.
  size_t size() const { return pos.size(); }

  // The cache hint for the row's reads (each element read once): no hint, except on rows
  // indexed from their aligned start, which keep L1::evict_first. Measured on H200
  // (bench/NOTES.md, "Loads without evict_first"): the hint cost rows of whole 16-byte
  // runs 1-8 points of copy bandwidth (bf16 16384x4096, with -> without: softmax 89.1 ->
  // 92.0%, softmax backward 89.6 -> 96.2%, RMSNorm 86.8 -> 91.1%) and gained 0.3-2.5 on
  // rows from their aligned start (softmax 8191x4097 78.3 with, 75.8% without).
  Cache read_once() const { return head ? Cache::EvictFirst : Cache::Normal; }

  // The lanes a load of such a row may read where its mask drops them (load's
  // `readable`): the runs of 16 bytes holding the row's first and last elements, within
  // the buffer — `before` elements precede the row's first in it, `after` follow its
  // last (e.g. row * stride and (rows - 1 - row) * stride). The partly masked runs then
  // move whole with the rest instead of element by element; the row's first run is not
  // read whole when it begins before the buffer, nor its last when it ends after it.
  // Empty without `head` (the mask holds on whole runs there already).
  template <class E>
  std::vector<Tile<bool, 1>> readable(const I64& before, const I64& after, TF_HERE) const {
    if (!head) return {};
    const int64_t run = 16 / static_cast<int64_t>(sizeof(E));
    const int shift = std::countr_zero(static_cast<uint64_t>(run));
    auto h = head->template cast<i64>();
    auto row_end = h + n_cols.template cast<i64>();  // past the row's last position
    auto round_up = [&](const I64& v) { return ((v + (run - 1)) >> shift) << shift; };
    auto round_down = [&](const I64& v) { return (v >> shift) << shift; };
    auto lo = maximum(round_up(h - before), scalar<i64>(0)).template cast<i32>();
    auto hi = minimum(round_up(row_end), round_down(row_end + after)).template cast<i32>();
    std::vector<Tile<bool, 1>> out;
    for (auto& p : pos) out.push_back(p >= lo && p < hi);
    return out;
  }

  // Chunk i of a row read through `row` (indexed like `pos`): masked lanes read `other`;
  // `readable` (from readable(), or empty) lets the partly masked runs move whole.
  template <class T, class O>
  Tile<std::remove_const_t<T>, 1> load(const Tile<PtrTo<T>, 0>& row, size_t i, const O& other, Cache cache,
                                       const std::vector<Tile<bool, 1>>& readable, TF_HERE) const {
    if (readable.empty()) return tilefuse::load(row + pos[i], mask[i], other, cache, loc);
    return tilefuse::load(row + pos[i], mask[i], other, cache, readable[i], loc);
  }

  // Chunk i of a row parameter (a weight or bias) at the row's columns. With `copies`
  // (rows indexed from their aligned start, WEIGHT_COPIES), `param` holds the parameter's
  // shifted copies (row_param_copies.hpp) and copy `head` is read at the chunk's own
  // positions, in whole 16-byte runs; its padding reads 0.
  template <class T, class O>
  Tile<std::remove_const_t<T>, 1> load_param(const Tile<PtrTo<T>, 0>& param, size_t i, const O& other, bool copies,
                                             TF_HERE) const {
    if (!copies || !head) return tilefuse::load(param + cols[i], mask[i], other, Cache::Normal, loc);
    auto stride = shifted_copy_stride<std::remove_const_t<T>>(n_cols);
    auto copy = align_down(param + (*head * stride).template cast<i64>(), 16, loc).base;  // aligned already: says so
    return tilefuse::load(copy + pos[i], pos[i] < stride, other, Cache::Normal, loc);
  }
};

// The row pointers of a row program: `in` and the rows it writes, each rounded down to
// 16 bytes when `align` (ALIGN_ROWS), with the elements dropped (the same for all of
// them: the host launches ALIGN_ROWS only when every row of its buffers starts at the
// same offset within a 16-byte chunk; rows_share_offsets).
template <class E, class... Others>
std::optional<I32> align_rows(bool align, Tile<PtrTo<E>, 0>& in, Others&... others) {
  if (!align) return std::nullopt;
  auto a = align_down(in);
  in = a.base;
  ((others = align_down(others).base), ...);
  return a.head;
}

// a[0] op a[1] op ... (elementwise), e.g. the sum of the chunks before a row reduction.
template <class V, class Op>
auto combine(const std::vector<V>& a, Op op) {
  V acc = a.front();
  for (size_t i = 1; i < a.size(); ++i) acc = op(acc, a[i]);
  return acc;
}

// One value from a program's tiles `v` (as RowChunks orders them): the chunks combined by
// `op` elementwise and reduced once, the tail reduced on its own and combined in.
template <class Op, class Reduce>
F32 reduce_columns(const RowChunks& c, const std::vector<Tile<float, 1>>& v, Op op, Reduce reduce) {
  std::vector<Tile<float, 1>> whole(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(c.chunks));
  F32 r = reduce(combine(whole, op));
  for (size_t i = c.chunks; i < v.size(); ++i) r = op(r, reduce(v[i]));
  return r;
}
inline F32 columns_sum(const RowChunks& c, const std::vector<Tile<float, 1>>& v) {
  return reduce_columns(c, v, [](auto a, auto b) { return a + b; }, [](const auto& t) { return sum(t, 0); });
}
inline F32 columns_max(const RowChunks& c, const std::vector<Tile<float, 1>>& v) {
  return reduce_columns(c, v, [](auto a, auto b) { return maximum(a, b); }, [](const auto& t) { return max(t, 0); });
}

// A row's max and sum of exponentials over the programs of a cluster in one exchange
// (online softmax) instead of a max exchange and then a sum exchange. v = {the program's
// own max m, its sum of exp(x - m), further values simply added up}; returns {the row's
// max M, its sum of exp(x - M), the further sums}. A program's own exponentials become
// the row's by the factor exp(m - M).
template <size_t N>
std::array<F32, N> cluster_max_sumexp(const std::array<F32, N>& v) {
  static_assert(N >= 2, "cluster_max_sumexp: {max, sum of exponentials, ...}");
  return cluster_reduce(v, [](const std::array<F32, N>& a, const std::array<F32, N>& b) {
    std::array<F32, N> r = a;
    r[0] = maximum(a[0], b[0]);
    r[1] = a[1] * fast_exp(a[0] - r[0]) + b[1] * fast_exp(b[0] - r[0]);
    for (size_t i = 2; i < N; ++i) r[i] = a[i] + b[i];
    return r;
  });
}

// A program's own max of a row's values for cluster_max_sumexp: floored at the lowest
// finite float, so a program whose columns are all masked (-inf) contributes a sum of 0
// rather than NaN (exp(-inf - -inf)).
inline F32 own_row_max(const F32& m) { return maximum(m, -3.4028234663852886e38f); }

// Chunk `chunk` (BLOCK columns) of row `row` in a split-row kernel (split_rows.hpp),
// indexed from the row's 16-byte-aligned start when `align` (ALIGN_ROWS: the row pointers
// passed are rounded down in place, and chunk k covers positions [k BLOCK, (k+1) BLOCK)
// of the rounded-down row), so every run moves whole 16-byte vectors.
struct SplitChunk {
  RowChunks chunk;
  std::vector<Tile<bool, 1>> readable;

  template <class E, class... Others>
  SplitChunk(const I32& index, int64_t block, const I32& n_cols, const I32& row, const I32& n_rows,
             const I64& stride, bool align, Tile<PtrTo<E>, 0>& in_row, Others&... others)
      : chunk(index, block, 1, n_cols, align_rows(align, in_row, others...)),
        readable(chunk.template readable<std::remove_const_t<E>>(
            row.template cast<i64>() * stride, (n_rows - 1 - row).template cast<i64>() * stride)) {}

  template <class T, class O>
  Tile<std::remove_const_t<T>, 1> load(const Tile<PtrTo<const T>, 0>& row, const O& other, Cache cache) const {
    return chunk.load(row, 0, other, cache, readable);
  }
};

}  // namespace tilefuse::kernels
