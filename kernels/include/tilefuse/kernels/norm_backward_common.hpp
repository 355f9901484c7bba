#pragma once
// Shared pieces of the RMSNorm and LayerNorm backward kernels: the persistent-program
// heuristic, the per-program partial sums of dW/dB and the kernel that reduces them,
// and the host-side argument checks.
//
// dW = sum over rows of a per-row term. Each persistent program walks steps of ROWS rows
// pid, pid + P, ... and keeps its share in f32 (registers for one-tile rows, its own row of the
// partials buffer for looped rows); a second kernel adds the P partial rows per column
// in a fixed order, so dW is deterministic and needs no atomics.
#include <bit>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/launch_stream.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// f32 scratch of the device kind: one grow-only buffer per (device, stream) on each host
// thread, reused by every call (a cuMemAlloc/cuMemFree per call would cost more than a
// small backward, and cuMemFree synchronizes the device). Launches on one stream run in
// order, so the next call's partials never overwrite ones still being reduced. Kept for
// the process (launches may be in flight at exit).
struct NormScratchSlot {
  float* ptr = nullptr;
  size_t size = 0;
};
inline NormScratchSlot& norm_scratch_slot() {
  thread_local std::map<std::pair<int, void*>, NormScratchSlot> slots;
  return slots[std::make_pair(cuda::current_device(), current_launch_stream())];
}
// Floats the calling thread's scratch holds on the current device and stream (tests).
inline size_t norm_scratch_capacity() { return norm_scratch_slot().size; }

// At least `n` floats of scratch: the cached device buffer for device buffers, a host
// vector for the interpreter.
template <class Buffer>
auto norm_backward_scratch(size_t n) {
  if constexpr (is_device_buffer_v<Buffer>) {
    NormScratchSlot& s = norm_scratch_slot();
    if (s.size < n) {
      size_t grown = std::max(n, s.size + s.size / 2);
      cuda::mem_free(s.ptr);  // waits for the launches still reading it
      s = NormScratchSlot{};
      s.ptr = static_cast<float*>(cuda::mem_alloc(grown * sizeof(float)));
      s.size = grown;
    }
    return DevicePtr<float>(s.ptr, n);
  } else {
    return std::vector<float>(n);
  }
}

// The columns of a one-tile backward row program. Position p of the tile is column p,
// or with `head` (ALIGN_ROWS) column p - head of rows indexed from their start rounded
// down to 16 bytes: every access then moves whole 16-byte runs at any width, and dW/dB
// accumulate by position, one column for all of a program's rows because the host
// starts a multiple of the rows' alignment period of programs (norm_backward_programs).
struct NormRowColumns {
  Tile<int32_t, 1> pos, col;
  Tile<bool, 1> mask;  // 0 <= col < n_cols
  bool aligned;
  std::optional<I32> head;
  I32 n_cols;
  NormRowColumns(const Tile<int32_t, 1>& positions, const I32& n_cols, std::optional<I32> head)
      : pos(positions), col(head ? pos - *head : pos), mask(head ? (col >= 0 && col < n_cols) : col < n_cols),
        aligned(head.has_value()), head(head), n_cols(n_cols) {}
  NormRowColumns(int64_t block, const I32& n_cols, std::optional<I32> head, TF_HERE)
      : NormRowColumns(arange(0, block, loc), n_cols, head) {}
  // With `align`, the head of `x`'s row `first_row` (every row of the program shares it).
  template <class E>
  NormRowColumns(int64_t block, const I32& n_cols, bool align, const Tile<PtrTo<E>, 0>& x, const I32& first_row,
                 const I64& stride, TF_HERE)
      : NormRowColumns(block, n_cols,
                       align ? std::optional<I32>(align_down(x + first_row.template cast<i64>() * stride).head)
                             : std::nullopt,
                       loc) {}
  // Aligned: the lanes a load of row `row` (of `n_rows`, `stride` elements apart) may read
  // where the mask drops them (load's `readable`): the 16-byte runs holding the row's first
  // and last elements, unless they begin before the buffer (its first row) or end past it
  // (its last). The rows' staged copies and loads then move those runs whole.
  template <class E>
  std::optional<Tile<bool, 1>> readable(const I32& row, const I32& n_rows, const I64& stride, TF_HERE) const {
    if (!head) return std::nullopt;
    const int64_t run = 16 / static_cast<int64_t>(sizeof(E));
    const int shift = std::countr_zero(static_cast<uint64_t>(run));
    auto before = row.template cast<i64>() * stride;
    auto after = (n_rows - 1 - row).template cast<i64>() * stride;
    auto h = head->template cast<i64>();
    auto row_end = h + n_cols.template cast<i64>();
    auto round_up = [&](const I64& v) { return ((v + (run - 1)) >> shift) << shift; };
    auto round_down = [&](const I64& v) { return (v >> shift) << shift; };
    auto lo = maximum(round_up(h - before), scalar<i64>(0)).template cast<i32>();
    auto hi = minimum(round_up(row_end), round_down(row_end + after)).template cast<i32>();
    return Tile<bool, 1>(pos >= lo && pos < hi);
  }
  // A row of `p` at `at` (from row_start) with masked lanes 0, reading whole the runs
  // `readable` allows.
  template <class T>
  Tile<std::remove_const_t<T>, 1> load_row(const Tile<PtrTo<T>, 1>& at, const std::optional<Tile<bool, 1>>& readable,
                                          TF_HERE) const {
    if (!readable) return tilefuse::load(at, mask, 0.0f, Cache::EvictFirst, loc);
    return tilefuse::load(at, mask, 0.0f, Cache::EvictFirst, *readable, loc);
  }
  // A cluster program's CHUNKS tiles of BLOCK positions (row_chunks.hpp's layout), then a
  // TAIL tile of `tail` positions (none when 0), after those of the lower-ranked programs:
  // a width past a power of two is covered with few idle positions (set_cluster_chunks,
  // set_cluster_tail). With `align`, indexed from the aligned start of x's row `row`,
  // whose offset every row of the cluster shares (the host starts a multiple of the
  // rows' alignment period of clusters: aligned_cluster_count).
  template <class E>
  static std::vector<NormRowColumns> in_cluster_chunks(int64_t block, int64_t chunks, int64_t tail, const I32& n_cols,
                                                       bool align, const Tile<PtrTo<E>, 0>& x, const I32& row,
                                                       const I64& stride, TF_HERE) {
    (void)row_cover(Config{{"BLOCK", block}, {"CHUNKS", chunks}, {"TAIL", tail}});  // the user errors
    std::optional<I32> head;
    if (align) head = align_down(x + row.template cast<i64>() * stride).head;
    auto first = cluster_rank() * (block * chunks + tail);
    std::vector<NormRowColumns> out;
    out.reserve(static_cast<size_t>(chunks + 1));
    for (int64_t i = 0; i < chunks; ++i) out.emplace_back(first + i * block + arange(0, block, loc), n_cols, head);
    if (tail > 0) out.emplace_back(first + chunks * block + arange(0, tail, loc), n_cols, head);
    return out;
  }
  // A one-tile program's step of `rows` rows from `first` ([rows, BLOCK] pointers `at`,
  // mask `in_rows`), masked lanes 0; aligned (one row per step), reading whole the runs
  // readable() allows.
  template <class T>
  Tile<std::remove_const_t<T>, 2> load_rows(const Tile<PtrTo<T>, 2>& at, const Tile<bool, 2>& in_rows, int rows,
                                            const I32& first, const I32& n_rows, const I64& stride, TF_HERE) const {
    if (!aligned || rows != 1) return tilefuse::load(at, in_rows, 0.0f, Cache::EvictFirst, loc);
    auto rd = readable<std::remove_const_t<T>>(first, n_rows, stride, loc);
    return tilefuse::load(at, in_rows, 0.0f, Cache::EvictFirst, rd->row(), loc);
  }
  // `p`'s row `row`: its first element, or (aligned) the 16-byte boundary at or before it.
  template <class E>
  Tile<PtrTo<E>, 0> row_start(const Tile<PtrTo<E>, 0>& p, const I32& row, const I64& stride) const {
    Tile<PtrTo<E>, 0> r = p + row.template cast<i64>() * stride;
    return aligned ? align_down(r).base : r;
  }
};

// Rows each program handles per step (meta-parameter ROWS, default 1).
inline int64_t norm_rows_per_step(const Config& c) { return c.has("ROWS") ? c.get("ROWS") : 1; }

// ALIGN_PERIOD: the period of the rows' offsets within 16 bytes (set_norm_backward_align).
inline int64_t alignment_period(const Config& c) { return c.has("ALIGN_PERIOD") ? c.get("ALIGN_PERIOD") : 1; }

// Persistent programs for `rows` rows in steps of ROWS: PROGRAMS_PER_SM per SM on the GPU,
// PROGRAMS_PER_SM in all on the interpreter, never more than the steps.
template <class Buffer>
int64_t norm_backward_programs(const Config& c, int64_t rows) {
  int64_t per_sm = c.has("PROGRAMS_PER_SM") ? c.get("PROGRAMS_PER_SM") : 1;
  int64_t sms = 1;
  if constexpr (is_device_buffer_v<Buffer>) sms = cuda::device_info().sm_count;
  int64_t steps = (rows + norm_rows_per_step(c) - 1) / norm_rows_per_step(c);
  int64_t programs = std::max<int64_t>(1, std::min(steps, per_sm * sms));
  // ALIGN_ROWS: a multiple of the period of the rows' offsets within 16 bytes, so each
  // program's rows (pid, pid + P, ...) share one (needless when each has one row).
  int64_t period = alignment_period(c);
  if (period > 1 && programs < steps) programs = std::max(period, programs / period * period);
  return programs;
}
// Which backward a heuristic config is for: the residual read and LayerNorm's extra sums
// change what measured best. LayerNorm from the saved mean and rstd (two sums per row)
// takes RMSNorm's one-tile and looped configs and LayerNorm's cluster spread.
enum class NormBackwardKind { rms, rms_residual, layer, layer_saved };

// Where the backward programs index rows from their aligned start by default: cluster
// programs on odd 16-bit widths, of up to 4 programs (any for the residual RMSNorm). H200
// bf16 % of copy, own starts -> aligned starts (staged checked loads, chunked programs):
// 4096x16387 RMSNorm 30.3 -> 38.2, residual 25.4 -> 42.9, LayerNorm 30.2 -> 35.8;
// 8192x20001 35.9 -> 46.5, 30.5 -> 52.2, 35.5 -> 43.9; on clusters of 8 and 16
// (2048x32771, 1024x65537) RMSNorm 29.0 -> 24.6, 26.5 -> 24.6 and LayerNorm alike lose,
// the residual gains (24.8 -> 28.2, 22.8 -> 28.3). Rows of 2 mod 4 (4-byte accesses) and
// f32 lose or tie, and so did the one-tile programs (16384x4099 RMSNorm 35.8 -> 22.0;
// bench/NOTES.md).
// One-row programs with a tail (one_program_tail_config) pay for them on odd 16-bit widths.
inline bool norm_backward_aligned_rows_pay(const Config& c, int64_t cols, DType dtype, NormBackwardKind kind) {
  if (c.cluster == 1 && c.has("TAIL")) return byte_size(dtype) == 2 && cols % 2 == 1;
  return c.cluster > 1 && byte_size(dtype) == 2 && cols % 2 == 1 &&
         (c.cluster <= 4 || kind == NormBackwardKind::rms_residual);
}
// The period of the offsets within 16 bytes of rows `stride` elements of `dtype` apart
// (8 for odd widths of 16-bit data, 4 for widths of 2 mod 4 or odd f32 widths).
inline int64_t row_alignment_period(int64_t stride, DType dtype) {
  return 16 / std::gcd<int64_t>(stride * byte_size(dtype) % 16 == 0 ? 16 : stride * byte_size(dtype) % 16, 16);
}
// ALIGN_ROWS for a one-tile backward program (one row per step, no cluster) whose rows
// need it, where every buffer's rows share their offsets within 16 bytes
// (`share_offsets`: rows_need_alignment); then ALIGN_PERIOD for norm_backward_programs
// (the host's to erase before the launch).
inline void set_norm_backward_align(Config& c, bool share_offsets, int64_t cols, DType dtype, NormBackwardKind kind) {
  bool align = (c.cluster > 1 || norm_rows_per_step(c) == 1) && share_offsets;
  set_align_rows(c, align, aligned_row_span(cols, dtype), norm_backward_aligned_rows_pay(c, cols, dtype, kind));
  if (c.has("ALIGN_ROWS")) c.set("ALIGN_PERIOD", row_alignment_period(cols, dtype));
}

// Persistent clusters for ALIGN_ROWS: cluster k takes rows k, k + clusters, ..., which
// share their offset within 16 bytes when the clusters are a multiple of the rows'
// alignment period (ALIGN_PERIOD): rounded down to one, or up to the period where fewer
// fit at once (the later clusters then start as earlier ones finish), never more than
// the rows (one row each needs no common offset).
inline int64_t aligned_cluster_count(int64_t clusters, int64_t rows, int64_t period) {
  if (period <= 1 || clusters >= rows) return clusters;
  return std::min(rows, clusters >= period ? clusters / period * period : period);
}

// A cluster program's columns as CHUNKS tiles of BLOCK (at most the config's BLOCK, at
// least one 16-byte run per thread) covering its share of the row with the fewest
// positions: widths past a power of two (16387 bf16 columns on 4 programs of 8192: half
// their positions idle) hold 3 x 2048 per program instead. At most 8 chunks.
inline void set_cluster_chunks(Config& c, int64_t n_cols, DType dtype) {
  if (knob("TILEFUSE_NORM_BWD_CHUNKS") == "0") return;
  int64_t share = (n_cols + c.cluster - 1) / c.cluster;
  int64_t max_block = c.get("BLOCK");
  int64_t min_block = 32LL * c.num_warps * (16 / byte_size(dtype));
  int64_t best_block = max_block, best_chunks = (share + max_block - 1) / max_block;
  for (int64_t b = max_block / 2; b >= min_block; b /= 2) {
    int64_t chunks = (share + b - 1) / b;
    if (chunks > 8) break;
    if (chunks * b < best_chunks * best_block) best_block = b, best_chunks = chunks;
  }
  c.set("BLOCK", best_block);
  if (best_chunks > 1) c.set("CHUNKS", best_chunks);
}

inline Config norm_backward_heuristic(int64_t n_cols, DType dtype, NormBackwardKind kind, bool clusters,
                                      bool aligned_span);

// Rows a little past a power of two on clusters (`positions`: the width, or the aligned
// span), e.g. 16387 bf16 columns from their aligned starts (16394 positions): the power
// of two's own cluster programs plus a TAIL tile of a few positions each (2 x (8192 + 8))
// instead of a cluster of twice the programs or chunks (4 x 3 x 2048). A tail holds one
// element per thread in the lanes it needs, so it stays small: at most one 16-byte run
// per warp of the program. Programs of 16 warps (the power of two's 124 registers at
// bf16 16384) would spill at their 128-register cap with a tail: they take 8 warps, one
// program per SM. H200 bf16 % of copy, chunks -> tails on 16 warps / on 8 warps
// (bench/NOTES.md, "Tail tiles"): 4096x16387 RMSNorm 38.1 -> 51.6 / 58.3, residual
// 42.7 -> 58.7 / 65.1, LayerNorm (saved statistics) 35.6 -> 44.7 / 52.0; clusters of 4
// and 8 (2048x32771, 1024x65537): RMSNorm 29.2 -> 43.8, 26.8 -> 39.1, LayerNorm
// recomputing 26.4 -> 34.2, 24.2 -> 35.5; f32 RMSNorm 62.1 -> 73.2, 56.6 -> 70.4.
inline std::optional<Config> cluster_tail_config(int64_t positions, DType dtype, NormBackwardKind kind) {
  if (knob("TILEFUSE_NORM_BWD_TAIL") == "0") return std::nullopt;
  int64_t base = std::bit_floor(static_cast<uint64_t>(positions));
  if (base == positions) return std::nullopt;
  Config c = norm_backward_heuristic(base, dtype, kind, true, false);
  if (c.cluster <= 1 || c.has("CHUNKS")) return std::nullopt;
  const int64_t run = 16 / byte_size(dtype);
  int64_t per = (positions - base + c.cluster - 1) / c.cluster;
  int64_t tail = std::max(run, static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(per))));
  if (c.num_warps == 16) {
    c.num_warps = 8;
    c.set("PROGRAMS_PER_SM", 1);
  }
  if (tail > run * c.num_warps) return std::nullopt;
  return c.set("TAIL", tail);
}

// Rows of one program a little past a power of two of 2048-8192 positions (4099 bf16
// columns: one 8192 tile, half of it past the row): the power of two and a TAIL tile, on
// the cluster programs with clusters of one (norm_backward_cluster_programs), about 16
// values per thread, 16 warps per SM. Where it measured faster (H200 % of copy, one-tile
// programs -> tails; bench/NOTES.md "Tail tiles"): f32 (16384x4099 RMSNorm 68.7 -> 81.2,
// LayerNorm 60.3 -> 78.4; 8192x8195 59.4 -> 77.6, 50.8 -> 75.6), and 16-bit rows of odd
// width from their aligned starts (`aligned_span`: bf16 16384x4099 RMSNorm 52.0 -> 71.9,
// residual 45.7 -> 49.7, LayerNorm 44.9 -> 48.4, recomputing 30.7 -> 39.9; 8192x8195
// 42.4 -> 75.4, 45.3 -> 60.6, 31.6 -> 52.9, 20.3 -> 43.6; 32768x2051 54.6 -> 76.0, 47.5 ->
// 77.0, but LayerNorm 50.5 -> 46.0); from their own starts only the plain RMSNorm gained
// (4099 68.3, 4098 64.9 -> 76.9, 4100 73.3 -> 74.9: the others lost up to 15 points there;
// the residual variant's 140 registers allow one program per SM).
inline std::optional<Config> one_program_tail_config(int64_t positions, DType dtype, NormBackwardKind kind,
                                                     bool aligned_span) {
  if (knob("TILEFUSE_NORM_BWD_TAIL") == "0") return std::nullopt;
  if (byte_size(dtype) == 2 && !aligned_span && kind != NormBackwardKind::rms) return std::nullopt;
  int64_t base = std::bit_floor(static_cast<uint64_t>(positions));
  int64_t max_tile = dtype == DType::f64 ? 4096 : 8192;
  if (base == positions || base < 2048 || base > max_tile) return std::nullopt;
  const int64_t run = 16 / byte_size(dtype);
  int warps = static_cast<int>(std::clamp<int64_t>(base / 512, 4, 16));
  int64_t tail = std::max(run, static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(positions - base))));
  if (tail > run * warps) return std::nullopt;
  return Config{{"BLOCK", base}, {"TAIL", tail}, {"PROGRAMS_PER_SM", 16 / warps}, num_warps(warps), num_stages(2)};
}

// Whether a backward config runs the cluster programs (norm_backward_cluster.hpp):
// clusters, or programs of one row each with a tail tile (TAIL) after their BLOCK.
inline bool norm_backward_cluster_programs(const Config& c) {
  return c.cluster > 1 || (c.has("TAIL") && c.get("TAIL") > 0);
}

// Measured on H200, bf16 (tilefuse-tune, % of copy): rows up to 8K columns (4K for f64)
// are one tile, about 32 elements per thread, ROWS x BLOCK = 2048 for short rows, and
// only about 8 warps per SM, each program prefetching its next step: staged by
// num_stages(2) (65536x1024 RMSNorm 82% -> 87%, residual 88% -> 92%, f32 16384x5000
// LayerNorm 43% -> 91%), or for 16-bit LayerNorm held in registers (PREFETCH; 16384x5000
// 43% -> 58%, staged 53%). Longer rows loop over chunks of 2 rows (4 past 16K columns: fewer dW partial
// updates): RMSNorm 8K chunks up to 16K columns, 4K past; LayerNorm (four accumulators)
// 4K and 2K (2048x65536: 24% -> 27%). The cluster programs (ROWS rows per cluster) measured
// slower than the looped ones (8192x16384 RMSNorm 32% vs 56%), so they are opt-in.
//
// With clusters (sm_90, the interpreter) long rows of up to 16 tiles go to persistent
// clusters instead, each row read once (H200, bf16, num_stages 2 staging the next row):
// RMSNorm 8192x16384 56% -> 91% (2 programs of 8192 columns, 16 warps, one cluster per
// 2 SMs), 2048x65536 40% -> 70% (8 of 8192, 8 warps, two programs per SM); LayerNorm
// (four sums per row) spreads the row wider: 8192x16384 38% -> 56% (8 of 2048, 4
// warps), 2048x65536 31% -> 56% (8 of 8192, 8 warps), two programs per SM.
// `aligned_span`: n_cols is the span of rows indexed from their aligned starts.
inline Config norm_backward_heuristic(int64_t n_cols, DType dtype, NormBackwardKind kind = NormBackwardKind::rms,
                                      bool clusters = false, bool aligned_span = false) {
  int64_t block = next_pow2(n_cols);
  int64_t max_tile = dtype == DType::f64 ? 4096 : 8192;
  if (clusters)
    if (auto tail = one_program_tail_config(n_cols, dtype, kind, aligned_span)) return *tail;
  if (block > max_tile && clusters && block <= 16 * max_tile) {
    if (auto tail = cluster_tail_config(n_cols, dtype, kind)) return *tail;
    // LayerNorm from saved statistics takes RMSNorm's spread, except for rows of 2 tiles
    // in f32/f64: with dW and dB both in registers, 16-warp programs hit their 128
    // registers and spill when the statistics are read a row ahead; 16-bit rows read them
    // where used and fit. H200, % of copy, bf16 / f32: 8192x16384 on 8 x 2048, 4 warps
    // 68 / 93, on 2 x 8192, 16 warps 65 / 71 (read ahead), 75 (bf16, where used);
    // 4096x30011 on 4 x 8192 32 / 59, on 8 x 4096 25 / 53; 2048x65536 on 8 x 8192 65 /
    // 84, on 16 x 4096 48 / 73.
    bool two_tiles = block <= 2 * max_tile;
    bool layer = kind == NormBackwardKind::layer ||
                 (kind == NormBackwardKind::layer_saved && two_tiles && byte_size(dtype) >= 4);
    // 16-bit LayerNorm rows of 4+ tiles take RMSNorm's tiles too, now that the persistent
    // clusters are no more than fit at once (within_resident): 4096x32768 on 4 x 8192
    // 78.5% of copy against 54.0% on 8 x 4096 (H200 bf16, bench/NOTES.md).
    bool rms_tiles = layer && byte_size(dtype) == 2 && block >= 4 * max_tile;
    int64_t per = layer && !rms_tiles ? std::clamp<int64_t>(block / 8, max_tile / 4, max_tile) : max_tile;
    int cl = static_cast<int>(block / per);
    int warps = layer ? static_cast<int>(std::clamp<int64_t>(per / 512, 4, 8)) : (cl <= 2 ? 16 : 8);
    int64_t per_sm = !layer && cl <= 2 ? 1 : 2;
    Config c{{"BLOCK", per}, {"PROGRAMS_PER_SM", per_sm}, num_warps(warps), num_stages(2), cluster(cl)};
    set_cluster_chunks(c, n_cols, dtype);
    if (kind == NormBackwardKind::layer_saved && two_tiles && !layer) c.set("STATS_AHEAD", 0);
    return c;
  }
  if (block > max_tile) {
    bool wide = n_cols > 2 * max_tile;
    bool layer = kind == NormBackwardKind::layer;
    int64_t chunk = layer ? (wide ? max_tile / 4 : max_tile / 2) : (wide ? max_tile / 2 : max_tile);
    int64_t rows = wide ? 4 : 2;
    int warps = static_cast<int>(std::clamp<int64_t>(rows * chunk / (32 * 32), 1, 16));
    return Config{{"BLOCK", chunk}, {"ROWS", rows}, {"PROGRAMS_PER_SM", 1}, num_warps(warps)};
  }
  int64_t rows = std::clamp<int64_t>(2048 / block, 1, 8);
  int warps = static_cast<int>(std::clamp<int64_t>(rows * block / (32 * 32), 1, 16));
  int64_t per_sm = std::max(1, 8 / warps);
  // The next step's rows staged through shared memory (num_stages 2) instead of held in
  // registers: faster for RMSNorm (bf16 +2 to +8 points of copy, f32 +9) and f32
  // LayerNorm (+33 to +48), slower for 16-bit LayerNorm (-4 to -9), which keeps PREFETCH
  // -- unless it reads saved statistics (bf16 65536x1024 85% staged, 80% PREFETCH).
  // 16-bit rows that fill a tile only partly (widths that are not powers of two) move
  // fewer bytes per stage: a third stage pays for RMSNorm and LayerNorm from saved
  // statistics (bf16 16384x5000 74 -> 84% and 69 -> 73%, 16384x3000 75 -> 78% and 71 ->
  // 76%), not for full tiles (-1 to -2 points at 2048-8192), the residual RMSNorm (-1 to
  // -6) or f32 (-1 to -5).
  bool partial = n_cols < block && rows == 1 && byte_size(dtype) == 2 &&
                 (kind == NormBackwardKind::rms || kind == NormBackwardKind::layer_saved);
  // 16-bit rows that do not start on 16 bytes (widths not a multiple of 8) move 2 or 4
  // bytes per access; there the next rows held in registers (PREFETCH) beat the staging
  // copies (H200 bf16, % of copy, staged -> PREFETCH): RMSNorm at odd widths 16384x4097
  // 35.8 -> 52.8, 32768x2049 45.5 -> 54.8, 8192x6007 43.8 -> 59.8 (4 mod 8: 71.7 -> 66.6,
  // kept); LayerNorm from saved statistics 33.3 -> 36.2 (odd), 44.7 -> 62.2 (2 mod 4),
  // 51.3 -> 63.9 (4 mod 8); the residual RMSNorm at 2 mod 4 58.3 -> 73.5 (odd: 48.6 ->
  // 41.2, kept). f32 mixed: kept.
  bool narrow = rows == 1 && byte_size(dtype) == 2 && n_cols % 8 != 0 &&
                ((kind == NormBackwardKind::rms && n_cols % 2 == 1) || kind == NormBackwardKind::layer_saved ||
                 (kind == NormBackwardKind::rms_residual && n_cols % 4 == 2));
  if ((kind != NormBackwardKind::layer || byte_size(dtype) >= 4) && !narrow)
    return Config{{"BLOCK", block}, {"ROWS", rows}, {"PROGRAMS_PER_SM", per_sm}, {"PREFETCH", 0}, num_warps(warps),
                  num_stages(partial ? 3 : 2)};
  return Config{{"BLOCK", block}, {"ROWS", rows}, {"PROGRAMS_PER_SM", per_sm}, {"PREFETCH", 1}, num_warps(warps)};
}

// The backward heuristic for rows that may be indexed from their aligned start
// (`share_offsets`: rows_need_alignment): the config for the aligned span where that pays
// (the span may need one more program: 16383 bf16 columns span 16390 positions), else for
// the width itself, as aligned_rows_heuristic for the forward kernels.
inline Config norm_backward_config(int64_t cols, DType dtype, NormBackwardKind kind, bool clusters,
                                   bool share_offsets) {
  if (share_offsets) {
    Config c = norm_backward_heuristic(aligned_row_span(cols, dtype), dtype, kind, clusters, true);
    if (norm_backward_aligned_rows_pay(c, cols, dtype, kind)) return c;
  }
  return norm_backward_heuristic(cols, dtype, kind, clusters);
}

// Config of the reduction of `n_parts` partial rows: BLOCK columns (32 f32 = one 128-byte
// line per partial row, so even short rows give many programs) x PARTS partial rows per
// step (up to 256: one or a few steps for the usual one or two programs per SM).
inline Config norm_partials_config(int64_t n_parts) {
  int64_t parts = std::clamp<int64_t>(next_pow2(n_parts), 8, 256);
  return Config{{"BLOCK", 32}, {"PARTS", parts}, num_warps(static_cast<int>(std::clamp<int64_t>(parts / 32, 1, 8)))};
}

// dw[c] = sum_p partials[p, c]; with BIAS also db[c] = sum_p partials[n_parts + p, c].
// The parts are added in a fixed order, so dW is deterministic.
template <class T>
const auto& norm_partials_reduce_kernel() {
  static auto k = kernel(std::string("norm_bwd_reduce_") + name(dtype_v<T>),
      {"dw", "db", "partials", "n_parts", "n_cols"},
      [](Ptr<T> dw, Ptr<T> db, Ptr<const float> partials, I32 n_parts, I32 n_cols, Meta<"BLOCK"> BLOCK,
         Meta<"PARTS"> PARTS, Meta<"BIAS", bool> BIAS) {
        auto cols = program_id(0) * BLOCK + arange(0, BLOCK);
        auto cmask = cols < n_cols;
        auto parts = arange(0, PARTS);
        auto column_sum = [&](I64 first_row) {
          auto acc = zeros<f32>({PARTS, BLOCK});
          for_range(0, n_parts, PARTS, [&](I32 p0) {
            auto p = p0 + parts;
            auto offs = (first_row + p.template cast<i64>()).col() * n_cols + cols.row();
            acc = acc + load(partials + offs, (p < n_parts).col() && cmask.row(), 0.0f, Cache::EvictFirst);
          });
          return sum(acc, 0);
        };
        store(dw + cols, column_sum(scalar<i64>(0)).template cast<T>(), cmask);
        if (BIAS) store(db + cols, column_sum(n_parts.template cast<i64>()).template cast<T>(), cmask);
      });
  return k;
}

inline Grid norm_partials_grid(const Config& c, int64_t cols) { return Grid((cols + c.get("BLOCK") - 1) / c.get("BLOCK")); }

template <class DW, class DB, class P>
void reduce_norm_partials(DW& dw, DB& db, const P& partials, int64_t n_parts, int64_t cols, bool bias) {
  Config c = norm_partials_config(n_parts).set("BIAS", bias);
  norm_partials_reduce_kernel<buffer_elem_t<DW>>().launch(norm_partials_grid(c, cols), c, dw, db, partials, n_parts,
                                                          cols);
}

}  // namespace tilefuse::kernels
