#pragma once
// The split-row schedule of the row kernels (softmax, RMSNorm, LayerNorm): a row is cut
// into BLOCK-column chunks spread over any number of programs (grid: chunks x rows), so
// a few very long rows still fill the GPU. Two kernels per batch of rows:
//   reduce:    each program reduces its chunk and writes a few f32 partials to scratch
//              [rows, chunks] (one plane per partial);
//   normalize: each program combines its row's partials in a fixed order (deterministic)
//              and writes its chunk, re-reading x.
// The re-read costs a third pass over x unless x is still in L2: rows are launched in
// batches whose x fits in half the L2 (meta BATCH_ROWS overrides; 0 = all rows at once).
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
  c.cluster = 1;
  return c;
}
inline Config split_normalize_config(const Config& c, int64_t cols) {
  int64_t chunks = (cols + c.get("BLOCK") - 1) / c.get("BLOCK");
  Config n = split_reduce_config(c);
  n.meta.erase("RESIDUAL");
  return n.set("PARTS", split_parts(chunks));
}

// Rows per launch pair. The GPU default keeps the batch's re-read bytes within half the
// L2 (they are read again by the normalize kernel); the interpreter takes all rows. The
// grid's y dimension caps a batch at 65535 rows.
template <class Buffer>
int64_t split_batch_rows(const Config& c, int64_t rows, int64_t reread_row_bytes) {
  int64_t batch = rows;
  if (c.has("BATCH_ROWS") && c.get("BATCH_ROWS") > 0) {
    batch = c.get("BATCH_ROWS");
  } else if (!c.has("BATCH_ROWS")) {
    if constexpr (is_device_buffer_v<Buffer>)
      batch = std::max<int64_t>(1, cuda::device_info().l2_bytes / 2 / std::max<int64_t>(1, reread_row_bytes));
  }
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
void launch_split_rows(const Config& c, int64_t rows, int64_t cols, int64_t planes, int64_t reread_row_bytes,
                       const Reduce& reduce, const Normalize& normalize) {
  int64_t block = c.get("BLOCK");
  int64_t chunks = (cols + block - 1) / block;
  int64_t batch = split_batch_rows<Buffer>(c, rows, reread_row_bytes);
  auto partials = split_rows_scratch<Buffer>(planes * batch * chunks);
  Config rc = split_reduce_config(c), nc = split_normalize_config(c, cols);
  for (int64_t row0 = 0; row0 < rows; row0 += batch) {
    Grid g(chunks, std::min(batch, rows - row0));
    reduce(g, rc, partials, static_cast<int32_t>(row0));
    normalize(g, nc, partials, static_cast<int32_t>(row0));
  }
}

// Split configs must have BLOCK and no cluster.
inline void check_split_config(const Config& c, const char* kernel_name) {
  if (c.cluster > 1 || c.has("ROWS") || c.has("CHUNKS"))
    user_error(std::string(kernel_name) + ": the config {" + c.str() +
                   "} combines SPLIT with cluster, ROWS or CHUNKS",
               SourceLoc{}, "Use SPLIT=1 with BLOCK (columns per program) and num_warps only");
}

// Heuristic: split rows over the GPU when the row heuristic would loop (the row outgrows
// one cluster) or when rows are few and long (fewer rows than SMs, >= 64K columns), so
// clusters alone leave SMs idle. Chunks of 8K columns (4K for f64), 32 elements per thread.
template <class Buffer>
Config with_split_rows(Config heuristic, int64_t rows, int64_t cols, DType dtype) {
  int64_t sms = 1;
  if constexpr (is_device_buffer_v<Buffer>) sms = cuda::device_info().sm_count;
  bool few_long = is_device_buffer_v<Buffer> && rows < sms && cols >= 65536;
  if (!row_uses_loop(heuristic, cols) && !few_long) return heuristic;
  int64_t block = dtype == DType::f64 ? 4096 : 8192;
  if (cols < 2 * block) return heuristic;
  return Config{{"BLOCK", block}, {"SPLIT", 1}, num_warps(warps_for_block(block))};
}

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
