#pragma once
// The split-row schedule of the row kernels (softmax, RMSNorm, LayerNorm): a row is cut
// into BLOCK-column chunks spread over any number of programs (grid: chunks x rows), so
// a few very long rows still fill the GPU. Two kernels per batch of rows:
//   reduce:    each program reduces its chunk and writes a few f32 partials to scratch
//              [rows, chunks] (one plane per partial);
//   normalize: each program combines its row's partials in a fixed order (deterministic)
//              and writes its chunk, re-reading x.
// The re-read costs a third pass over x except where x is still in L2: the normalize
// kernel walks the rows in reverse, so it starts on the rows the reduce kernel read last.
// Meta BATCH_ROWS launches the pair per batch of rows instead (0 or absent: all rows;
// measured on H200 bf16 64x1048577, batches of 12 rows (half the L2) lost to one batch:
// 36.6% vs 44.2% of copy, from kernel boundaries and partial last waves).
//
// Config: {"SPLIT", 1} selects this schedule; BLOCK is the chunk (one tile per program).
#include <algorithm>
#include <cstdint>
#include <string>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/norm_backward_common.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

inline bool row_uses_split(const Config& c) { return c.has("SPLIT") && c.get("SPLIT") != 0; }

// Partial slots per normalize-step: the row's chunk partials are combined PARTS at a time.
inline int64_t split_parts(int64_t chunks) { return std::clamp<int64_t>(next_pow2(chunks), 32, 1024); }

// The kernels' configs: BLOCK and warps from the split config, without the host-only keys.
inline Config split_reduce_config(Config c) {
  c.meta.erase("SPLIT");
  c.meta.erase("BATCH_ROWS");
  c.meta.erase("RELOAD");
  c.meta.erase("SHIFTED");
  c.meta.erase("ROWS");
  c.meta.erase("CHUNKS");
  c.meta.erase("TAIL");
  c.meta.erase("HELD");
  c.meta.erase("STATS");  // LayerNorm's normalize kernel takes it back (split_norms.hpp)
  c.meta.erase("ONE_PASS");
  c.meta.erase("LAG");
  c.meta.erase("WEIGHT_COPIES");  // the norms' normalize kernels take it back
  c.cluster = 1;
  return c;
}
inline Config split_normalize_config(const Config& c, int64_t cols) {
  int64_t chunks = (cols + c.get("BLOCK") - 1) / c.get("BLOCK");
  Config n = split_reduce_config(c);
  n.meta.erase("RESIDUAL");
  if (c.has("WEIGHT_COPIES")) n.set("WEIGHT_COPIES", c.get("WEIGHT_COPIES"));
  return n.set("PARTS", split_parts(chunks));
}

// Rows per launch pair: BATCH_ROWS when set above 0, else all rows. The grid's y
// dimension caps a batch at 65535 rows.
inline int64_t split_batch_rows(const Config& c, int64_t rows) {
  int64_t batch = c.has("BATCH_ROWS") && c.get("BATCH_ROWS") > 0 ? c.get("BATCH_ROWS") : rows;
  return std::clamp<int64_t>(batch, 1, std::min<int64_t>(rows, 65535));
}

// f32 scratch for the partials: the grow-only per-(device, stream) buffer the norm
// backward uses (calls on one stream run in order, so sharing it is safe); a host
// vector on the interpreter.
template <class Buffer>
auto split_rows_scratch(int64_t n) {
  return norm_backward_scratch<Buffer>(static_cast<size_t>(n));
}

// Runs reduce then normalize over batches of rows. `reduce(grid, cfg, partials, row0)`
// and `normalize(grid, cfg, partials, row0)` launch one kernel each.
template <class Buffer, class Reduce, class Normalize>
void launch_split_rows(const Config& c, int64_t rows, int64_t cols, int64_t planes, const Reduce& reduce,
                       const Normalize& normalize) {
  if (rows <= 0 || cols <= 0) return;
  int64_t block = c.get("BLOCK");
  int64_t chunks = (cols + block - 1) / block;
  int64_t batch = split_batch_rows(c, rows);
  auto partials = split_rows_scratch<Buffer>(planes * batch * chunks);
  Config rc = split_reduce_config(c), nc = split_normalize_config(c, cols);
  for (int64_t row0 = 0; row0 < rows; row0 += batch) {
    Grid g(chunks, std::min(batch, rows - row0));
    reduce(g, rc, partials, static_cast<int32_t>(row0));
    normalize(g, nc, partials, static_cast<int32_t>(row0));
  }
}

// The positions a split row's chunks cover: the row, or with ALIGN_ROWS (set here in `c`
// where `align` and `pays`, unless the config says ALIGN_ROWS=0; ALIGN_ROWS=1 in the config
// asks for it wherever `align`) the row and the up to 15 bytes before it in its first
// aligned run.
inline int64_t split_aligned_span(Config& c, bool align, bool pays, int64_t cols, DType dtype) {
  bool on = align && (c.has("ALIGN_ROWS") ? c.get("ALIGN_ROWS") != 0 : pays);
  c.meta.erase("ALIGN_ROWS");
  if (!on) return cols;
  c.set("ALIGN_ROWS", 1);
  return aligned_row_span(cols, dtype);
}

// Where split softmax rows pay for their aligned start (H200, % of copy, element by element
// -> aligned start; bench/NOTES.md "Rows of 256K columns on clusters ...", split rows from
// their aligned start): bf16 32x1048577 42.3 -> 51.8, 128x262145 43.4 -> 53.4, 8x4194305
// 40.1 -> 47.3, 32x1048578 49.7 -> 51.3; f32 32x1048577 53.4 -> 58.2, 32x1048578 56.0 ->
// 58.2; not for 16-bit rows that start on 8 bytes (bf16 32x1048580 53.4 -> 51.9).
inline bool split_softmax_alignment_pays(int64_t cols, DType dtype) {
  return !(byte_size(dtype) == 2 && (cols * 2) % 8 == 0);
}

// Where the split RMSNorms (with or without the residual) pay for it: 16-bit rows off 4
// bytes only, whose element accesses are 2 bytes each; the weight, read at the row's
// columns, then moves element by element (H200 bf16, % of copy, element by element ->
// aligned start; bench/NOTES.md "Split norms from the rows' aligned starts"): RMSNorm
// 32x1048577 41.4 -> 48.5, 8x4194305 42.5 -> 48.5, residual 58.5 -> 65.2; but 32x1048578
// 52.4 -> 48.7 (residual 67.0 -> 64.9), f32 within -2..+1.4. The split LayerNorm (weight
// and bias at the row's columns) lost everywhere (bf16 32x1048578 47.4 -> 30.2, f32
// 32x1048577 47.4 -> 37.9): only where ALIGN_ROWS=1 asks.
inline bool split_rmsnorm_alignment_pays(int64_t cols, DType dtype) { return byte_size(dtype) == 2 && cols % 2 == 1; }

// Split configs must have BLOCK and no cluster.
inline void check_split_config(const Config& c, const char* kernel_name) {
  if (c.cluster > 1 || c.has("ROWS") || c.has("CHUNKS"))
    user_error(std::string(kernel_name) + ": the config {" + c.str() +
                   "} combines SPLIT with cluster, ROWS or CHUNKS",
               SourceLoc{}, "Use SPLIT=1 with BLOCK (columns per program) and num_warps only");
  if (!c.has("BLOCK") || c.get("BLOCK") < 1)
    user_error(std::string(kernel_name) + ": the split config {" + c.str() + "} needs BLOCK >= 1", SourceLoc{},
               "Set BLOCK to the columns each program of a row handles (a power of two, e.g. 4096)");
}

// Heuristic (measured on H200 bf16): split rows
// over the GPU when the row heuristic would loop (the row outgrows one cluster: 64x1048577
// softmax 23% -> 46% of copy), when its cluster wastes a third or more of its lanes
// (1024x65537 on 16 x 8K: softmax 22% -> 46%), or when rows are few and long (>= 64K
// columns), so clusters alone leave SMs idle: fewer rows than SMs, and on clusters of 16
// programs fewer than 4 programs per SM (rows x 16 < 4 x SMs). Clusters of 16 measured
// faster from 64 rows of 262144 on (bf16 % of copy, split -> cluster, 128 / 64 rows:
// softmax 56.7 -> 66.4 / 52.5 -> 57.5, RMSNorm 56.8 -> 71.2 / 53.0 -> 62.7, residual
// 72.0 -> 79.0 / 71.2 -> 72.5, LayerNorm 53.8 -> 62.1 / 50.6 -> 55.4; f32 softmax at 128
// rows 60 -> 77.5; f32 LayerNorm on held chunks 58 -> 76, 64 rows 55 -> 69); equal at 32
// rows for bf16, and f32 LayerNorm in registers lost (58 -> 52), so `clusters_for_few_rows`
// false keeps the earlier rule (bench/NOTES.md, "Rows of 256K columns on clusters when they
// fill the GPU", "f32 norms on chunks held in shared memory"). 16-bit programs holding 64 KB
// (held_64k_programs) keep the cluster from 2 programs per SM (rows x cluster >= 2 x SMs;
// bf16 softmax, split -> 8 programs of 32768: 16x262144 34.5 -> 30.7, 33 rows 47.3 -> 46.8,
// 48 rows 49.7 -> 56.9, 64 rows 52.7 -> 63.1, 100 rows 56.5 -> 73.0; on 4 programs of 131072
// columns: 33 rows 37.3 -> 31.3, 64 rows 45.5 -> 47.5, 100 rows 50.5 -> 60.1).
// Chunks of 4K columns (2K for f64) on 4 warps: they beat 8K/8 warps and 16K/16 warps at
// 64x1048577.
template <class Buffer>
Config with_split_rows(Config heuristic, int64_t rows, int64_t cols, DType dtype, bool clusters_for_few_rows = true) {
  int64_t sms = 1;
  if constexpr (is_device_buffer_v<Buffer>) sms = cuda::device_info().sm_count;
  int64_t few_rows = sms;
  if (clusters_for_few_rows && heuristic.cluster >= 16) few_rows = 4 * sms / heuristic.cluster;
  else if (clusters_for_few_rows && holds_64k(heuristic, dtype)) few_rows = 2 * sms / heuristic.cluster;
  bool few_long = is_device_buffer_v<Buffer> && rows < few_rows && cols >= 65536;
  bool padded_cluster = heuristic.cluster > 1 && cols >= 65536 && 2 * row_cover(heuristic) >= 3 * cols;
  if (!row_uses_loop(heuristic, cols) && !few_long && !padded_cluster) return heuristic;
  int64_t block = dtype == DType::f64 ? 2048 : 4096;
  if (cols < 2 * block) return heuristic;
  return Config{{"BLOCK", block}, {"SPLIT", 1}, num_warps(warps_for_block(block))};
}

// with_split_rows for callers without a buffer type (the tuners' fallbacks): the GPU's
// choice when one is present.
inline Config with_split_rows_any(Config heuristic, int64_t rows, int64_t cols, DType dtype,
                                 bool clusters_for_few_rows = true) {
  return gpu_available() ? with_split_rows<DevicePtr<float>>(heuristic, rows, cols, dtype, clusters_for_few_rows)
                         : with_split_rows<std::vector<float>>(heuristic, rows, cols, dtype, clusters_for_few_rows);
}

// The batch row a normalize program takes: the batch in reverse, so the rows the reduce
// kernel read last (still in L2) are re-read first.
inline I32 split_normalize_row() { return num_programs(1) - 1 - program_id(1); }

// Sum over a row's chunk partials at `first` (n_chunks of them), PARTS lanes at a time,
// in a fixed order.
template <class P, class N, class Parts>
auto sum_row_partials(const P& first, const N& n_chunks, const Parts& PARTS) {
  auto p = arange(0, PARTS);
  auto acc = zeros<f32>({PARTS});
  for_range(0, n_chunks, PARTS, [&](I32 start) {
    auto i = start + p;
    acc = acc + load(first + i, i < n_chunks, 0.0f);
  });
  return sum(acc, 0);
}

}  // namespace tilefuse::kernels
