#pragma once
// Shared helpers of the gallery's host-side functions: element types of buffers,
// the launch-config heuristics, and the `with` option of every gallery call.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/dsl/config.hpp"
#include "tilefuse/dsl/element.hpp"
#include "tilefuse/dsl/kernel.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/ir/errors.hpp"
#include "tilefuse/ir/kernel_args.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::kernels {

// Element type of a buffer argument (std::vector, std::span, DeviceBuffer, DevicePtr).
namespace detail {
template <class B>
auto buffer_elem() {
  using U = std::remove_cvref_t<B>;
  if constexpr (requires { typename U::value_type; }) return std::type_identity<std::remove_cv_t<typename U::value_type>>{};
  else return std::type_identity<std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<const U&>().data())>>>{};
}
}  // namespace detail
template <class B>
using buffer_elem_t = typename decltype(detail::buffer_elem<B>())::type;

template <class Buffer>
constexpr bool is_device_buffer_v = requires(const std::remove_cvref_t<Buffer>& b) { b.arg(); };

// An f32 buffer of the kind of `Like` (device pointer or host vector) for a kernel
// parameter that the launch's config never touches: no memory behind it.
template <class Like>
auto unused_f32_buffer() {
  if constexpr (is_device_buffer_v<Like>) return DevicePtr<float>();
  else return std::vector<float>();
}

// A buffer argument must hold at least `need` elements.
template <class B>
void check_norm_arg(const char* fn, const char* arg, const B& b, int64_t need, const char* shape) {
  if (static_cast<int64_t>(b.size()) < need)
    user_error(std::string(fn) + ": " + arg + " has " + std::to_string(b.size()) + " elements, but " + shape +
                   " needs " + std::to_string(need),
               SourceLoc{}, std::string("Pass ") + arg + " with at least " + shape + " elements");
}

inline void check_norm_shape(const char* fn, int64_t rows, int64_t cols) {
  if (rows < 1 || cols < 1)
    user_error(std::string(fn) + ": rows and cols must be positive, got " + std::to_string(rows) + " x " +
                   std::to_string(cols),
               SourceLoc{}, "Pass the shape [rows, cols] of x");
}

constexpr int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Warps for a row tile of `block` elements: about 32 elements per thread, 1 to 16
// warps. Fewer, fuller threads keep more rows in flight per SM and skip cross-warp
// reduction steps (measured: bench/NOTES.md).
inline int warps_for_block(int64_t block) {
  int64_t w = block / (32 * 32);
  return static_cast<int>(w < 1 ? 1 : w > 16 ? 16 : w);
}

// Whether the row kernels may split a row over a thread-block cluster: the interpreter
// always can (host buffers), the GPU from sm_90 on.
template <class Buffer>
bool clusters_usable() {
  if constexpr (requires(const std::remove_cvref_t<Buffer>& b) { b.arg(); }) return gpu_has_clusters();  // device memory
  else return true;
}

// Whether a gallery dot on these buffers runs on warpgroup MMAs: device memory on a
// sm_90a GPU (the interpreter's configs follow the mma.sync heuristics).
template <class Buffer>
bool warpgroup_mma_usable() {
  if constexpr (requires(const std::remove_cvref_t<Buffer>& b) { b.arg(); }) return gpu_has_warpgroup_mma();
  else return false;
}

// For programs that take CHUNKS (row_chunks.hpp): a row of n_cols in one program as
// CHUNKS tiles of BLOCK columns, the fewest columns that cover the row with at most 8
// chunks, so a row of 5000 is 5 x 1024 rather than one 8192 tile with 39% of its lanes
// masked; each chunk keeps whole 16-byte vectors per thread. Chunks of at most
// `max_block` columns.
inline Config chunked_row_config(int64_t n_cols, DType dtype, int64_t max_block = int64_t(1) << 40) {
  constexpr int64_t kMaxChunks = 8;
  int64_t vec = 16 / byte_size(dtype);
  int64_t best_block = std::min(next_pow2(n_cols), max_block);
  int64_t best_chunks = (n_cols + best_block - 1) / best_block;
  for (int64_t b = best_block / 2; b >= 32 * vec; b /= 2) {
    int64_t chunks = (n_cols + b - 1) / b;
    if (chunks > kMaxChunks) break;
    if (chunks * b < best_chunks * best_block) best_block = b, best_chunks = chunks;
  }
  int warps = static_cast<int>(std::min<int64_t>(warps_for_block(best_chunks * best_block),
                                                 std::max<int64_t>(1, best_block / (32 * vec))));
  while (warps & (warps - 1)) warps &= warps - 1;  // a power of two
  Config c{{"BLOCK", best_block}, num_warps(warps)};
  if (best_chunks > 1) c.set("CHUNKS", best_chunks);
  return c;
}

// The row heuristic for programs that take CHUNKS: rows held by one program, or by a
// cluster of C programs, cover ceil(n_cols / C) columns per program in chunks
// (chunked_row_config) instead of the next power of two (a row of 65537 on 16
// programs: 5 x 1024 each, not 8192); looped rows are left as they are.
// Which rows a little past a power of two take row_tail_config's programs: none; those
// whose power of two runs on a cluster, or would need one without a tail; or also rows of
// one program of 2048+ columns.
enum class RowTails { none, clusters, any };
inline Config chunked_row_heuristic(int64_t n_cols, DType dtype, bool clusters = false,
                                    RowTails tails = RowTails::none);
// chunked_row_heuristic without tails (row_tail_config).
inline Config chunked_row_programs(int64_t n_cols, DType dtype, bool clusters);

// Whether row heuristics pick clusters of more than 16 programs (exchanging through
// memory) for rows longer than a thread-block cluster holds: only with
// TILEFUSE_MEMORY_CLUSTERS=1. Measured slower than the split schedule (split_rows.hpp) on
// most shapes (H200 bf16 % of copy, bench/NOTES.md "Clusters of any size"): softmax
// 32x1048576 56 -> 50, 16x1048576 52 -> 43; won only with many rows (residual RMSNorm
// 64x1048576 74 -> 76); the tune space has them.
inline bool memory_clusters_enabled() { return knob("TILEFUSE_MEMORY_CLUSTERS") == "1"; }

// Heuristic of the row kernels (measured on H200, bench/NOTES.md): the whole row in one
// program up to 8K columns (4K for f64), about 32 elements per thread. Longer rows are
// split over a thread-block cluster of up to 16 programs, all in registers, so the row
// is read once: 8K columns per program (4 programs per SM overlap their waits better
// than 2 of 16K: 2048x65536 bf16 softmax 74% -> 81% of copy, 8192x16384 bf16 LayerNorm
// 64% -> 85%), 16K where 8K would need more than 16 programs (32K per program spills at
// 1024 threads). Without clusters rows up to 16K columns are one tile; longer ones loop
// over the largest tile and re-read it (from L2 where it fits). `clusters`: whether the
// launch can use them (see clusters_usable; cluster(16) needs a whole GPC, which a MIG
// slice may not have).
inline Config row_heuristic(int64_t n_cols, DType dtype, bool clusters = false) {
  int64_t max_block = dtype == DType::f64 ? 8192 : 16384;
  int64_t per_program = max_block / 2;
  int64_t block = next_pow2(n_cols);
  if (block <= per_program) return Config{{"BLOCK", block}, num_warps(warps_for_block(block))};
  constexpr int64_t kMaxCluster = 16;
  if (clusters && block <= kMaxCluster * max_block) {
    int64_t per = std::max(per_program, block / kMaxCluster);
    return Config{{"BLOCK", per}, num_warps(warps_for_block(per)), cluster(static_cast<int>(block / per))};
  }
  // Longer rows, where asked: clusters of more than 16 programs of max_block columns,
  // which exchange through memory (one read of the row, but slower so far).
  if (clusters && memory_clusters_enabled() && block <= kMaxClusterPrograms * max_block)
    return Config{{"BLOCK", max_block}, num_warps(warps_for_block(max_block)),
                  cluster(static_cast<int>(block / max_block))};
  if (block <= max_block) return Config{{"BLOCK", block}, num_warps(warps_for_block(block))};
  return Config{{"BLOCK", max_block}, num_warps(16)};
}

// 16-bit rows of 2048 to 4096 columns (multiples of 8) held in one tile by one program:
// 16 values per thread, twice the warps of row_heuristic's 32, for the kernels that
// measured faster so. H200 bf16 % of copy, two rounds (bench/NOTES.md, "warps of
// one-program 16-bit rows"): softmax 16384x4096 87.6 -> 89.5-89.6, 32768x2048 91.0 ->
// 91.7-91.9; RMSNorm 86.9 -> 87.6-87.9, 90.3-90.4 -> 90.7-90.9. LayerNorm lost 1.4-2 points
// and the residual RMSNorm moved by 0.4 or less (both keep 32); at 8192 columns 16 values
// (16 warps) lost 12-21 points.
inline void spread_one_tile_rows(Config& c, DType dtype, int64_t n_cols) {
  if (byte_size(dtype) != 2 || c.cluster != 1 || n_cols % 8 != 0) return;
  if (c.has("CHUNKS") && c.get("CHUNKS") > 1) return;
  int64_t block = c.get("BLOCK");
  if (block >= 2048 && block <= 4096) c.num_warps = static_cast<int>(block / (16 * 32));
}

// Columns one row-program covers: BLOCK per program of its cluster.
inline int64_t row_cover(const Config& c) {
  int64_t chunks = c.has("CHUNKS") ? c.get("CHUNKS") : 1;
  if (chunks < 1)
    user_error("CHUNKS = " + std::to_string(chunks) + " in a row program: it must be at least 1", SourceLoc{},
               "Set CHUNKS to the number of BLOCK-column tiles each program holds (1 for one tile)");
  int64_t tail = c.has("TAIL") ? c.get("TAIL") : 0;
  if (tail < 0 || (tail & (tail - 1)) != 0)
    user_error("TAIL = " + std::to_string(tail) + " in a row program: it must be 0 or a power of two", SourceLoc{},
               "Set TAIL to the columns of the small tile each program holds after its BLOCK-column tiles "
               "(0 for none)");
  return (c.get("BLOCK") * chunks + tail) * c.cluster;
}
// The row's values each thread of a row program holds (as f32: its register footprint).
inline int64_t row_values_per_thread(const Config& c) { return row_cover(c) / c.cluster / (32LL * c.num_warps); }
// Whether rows of `cols` need the looped program (they do not fit one cluster's tiles).
inline bool row_uses_loop(const Config& c, int64_t cols) { return row_cover(c) < cols; }

// A config with clusters, or with a tail tile (TAIL), must cover the row: (BLOCK x CHUNKS
// + TAIL) columns per program of the cluster (only plain one-program configs loop).
inline void check_row_cover(const Config& c, int64_t cols, const char* kernel_name) {
  bool tail = c.has("TAIL") && c.get("TAIL") > 0;
  if ((c.cluster > 1 || tail) && row_uses_loop(c, cols))
    user_error(std::string(kernel_name) + ": the config {" + c.str() + "} covers " +
                   std::to_string(row_cover(c)) + " columns per row ((BLOCK x CHUNKS + TAIL) x cluster), but rows have " +
                   std::to_string(cols),
               SourceLoc{}, "Raise BLOCK, CHUNKS, TAIL or cluster until (BLOCK x CHUNKS + TAIL) x cluster >= the row "
                            "length, or use cluster(1) without TAIL to loop over long rows");
}

// Launches the one-row-per-cluster program when BLOCK x cluster covers the row, the
// looped one otherwise.
template <class Row, class Looped, class... Args>
void launch_rows(const Row& row, const Looped& looped, const Config& c, int64_t rows, int64_t cols,
                 const Args&... args) {
  if (row_uses_loop(c, cols)) {
    Config lc = c;
    lc.meta.erase("RELOAD");  // the looped programs stream the row anyway
    lc.meta.erase("CHUNKS");
    lc.meta.erase("HELD");
    lc.meta.erase("TAIL");  // (TAIL=0: check_row_cover refuses any other that loops)
    looped.launch(Grid(rows), lc, args...);
  } else {
    row.launch(Grid(rows * c.cluster), c, args...);
  }
}

// The current GPU's SM count, for tiling heuristics; 132 (an H100 or H200 SXM) without
// a GPU, as when compiling ahead for sm_90a.
inline int64_t gpu_sm_count() { return gpu_available() ? cuda::device_info().sm_count : 132; }

// Persistent clusters of a config with cluster(C) whose clusters loop over the rows:
// PROGRAMS_PER_SM programs per SM on the GPU (in all on the interpreter), never more
// clusters than rows.
template <class Buffer>
int64_t persistent_clusters(const Config& c, int64_t rows) {
  int64_t per_sm = c.has("PROGRAMS_PER_SM") ? c.get("PROGRAMS_PER_SM") : 1;
  int64_t sms = 1;
  if constexpr (requires(const std::remove_cvref_t<Buffer>& b) { b.arg(); }) sms = cuda::device_info().sm_count;
  return std::clamp<int64_t>(per_sm * sms / c.cluster, 1, rows);
}

// Persistent clusters no more than the GPU holds at once (`resident`: the kernel's
// resident_clusters, 0 where unknown): the rows of a cluster that starts only when
// another finishes would end a whole cluster's share of the rows late (H200: 16 clusters
// of 16 programs asked, 14 resident at 2 programs per SM).
inline int64_t within_resident(int64_t clusters, int64_t resident) {
  return resident > 0 ? std::min(clusters, resident) : clusters;
}

// A buffer's address (host or device) and the row stride of a row kernel's matrix in it.
struct RowBuffer {
  uint64_t address;
  int64_t stride;  // elements
};
template <class B>
RowBuffer row_buffer(const B& buf, int64_t stride) {
  return {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(tilefuse::detail::to_arg(buf).ptr)), stride};
}

// Whether a row program should index its rows from their starts rounded down to 16
// bytes (ALIGN_ROWS, row_chunks.hpp) so that every access moves whole 16-byte vectors:
// some row of the first buffer does not start on 16 bytes (a width that is not a
// multiple of 16 bytes, or a misaligned base), and row r of every buffer starts at the
// same offset within its 16-byte chunk as row r of the first.
inline bool rows_need_alignment(DType dtype, std::initializer_list<RowBuffer> bufs) {
  int64_t es = byte_size(dtype);
  const RowBuffer& f = *bufs.begin();
  for (const RowBuffer& b : bufs)
    if ((b.address - f.address) % 16 != 0 || ((b.stride - f.stride) * es) % 16 != 0) return false;
  return f.address % 16 != 0 || (f.stride * es) % 16 != 0;
}
// Positions an aligned row program needs: the row and up to 15 bytes before it.
inline int64_t aligned_row_span(int64_t cols, DType dtype) { return cols + 16 / byte_size(dtype) - 1; }
// Whether contiguous rows of `cols` (from a 16-byte-aligned base) start misaligned.
inline bool contiguous_rows_misaligned(int64_t cols, DType dtype) { return (cols * byte_size(dtype)) % 16 != 0; }

// Where indexing rows from their aligned start measured faster (H200, bf16,
// bench/NOTES.md): rows of 2-byte alignment only (odd widths of 16-bit data) split over a
// cluster, in softmax, softmax backward, the residual RMSNorm and cross-entropy (4096x16383
// softmax 56.8% -> 61.6% of copy, residual 48.7% -> 58.8%; 4096x30011 64.1% -> 69.5%,
// 56.9% -> 71.4%; with the partly masked runs read whole, softmax 73.5% and 85.9% at
// 4096x16383 and 8192x20001). Rows in one program too where `one_program` (softmax, since
// those runs are read whole: 16384x4099 77.1% -> 83.3%; the other kernels' one-program
// rows measured equal or slower). Rows of 4-byte alignment (their accesses were 4 bytes
// wide already: softmax 16384x4098 88.4% against 83.5%) and RMSNorm/LayerNorm (the weight
// read at the row's offset is realigned per run) lost.
inline bool aligned_rows_pay(const Config& c, int64_t cols, DType dtype, bool one_program = false) {
  return (c.cluster > 1 || one_program) && (cols * byte_size(dtype)) % 4 != 0;
}

// ALIGN_ROWS is the host's to set (it depends on the buffers' addresses): on when the
// rows need it, the config's programs cover the aligned span and it pays (or the config
// asks for it with ALIGN_ROWS=1; ALIGN_ROWS=0 turns it off).
inline void set_align_rows(Config& c, bool align, int64_t span, bool pays) {
  bool want = c.has("ALIGN_ROWS") ? c.get("ALIGN_ROWS") != 0 : pays;
  c.meta.erase("ALIGN_ROWS");
  if (align && want && !row_uses_loop(c, span)) c.set("ALIGN_ROWS", 1);
}

// A row kernel's heuristic config for rows that may be indexed from their aligned start
// (`align`: rows_need_alignment): `heuristic(positions)` for the aligned span where that
// pays (aligned_rows_pay), else for the width itself.
template <class Heuristic>
Config aligned_rows_heuristic(bool align, int64_t cols, DType dtype, const Heuristic& heuristic,
                              bool one_program = false) {
  if (align) {
    Config c = heuristic(aligned_row_span(cols, dtype));
    if (aligned_rows_pay(c, cols, dtype, one_program)) return c;
  }
  return heuristic(cols);
}

// Optional launch config; when empty the kernel's heuristic picks one.
using ConfigOverride = std::optional<Config>;

// Programs per SM (Config::min_programs_per_sm, 0 for none) that cap a row program
// holding E f32 values per thread at about E + `spare` registers, at most `most`.
inline int register_capped_programs(const Config& c, int spare = 16, int most = 6) {
  int64_t threads = 32LL * c.num_warps;
  int64_t values = row_values_per_thread(c);
  int64_t n = std::clamp<int64_t>(65536 / ((values + spare) * threads), 1, most);
  return n >= 2 ? static_cast<int>(n) : 0;
}
// Where the softmax and cross-entropy rows ask for them (H200, bench/NOTES.md): 16-bit
// rows on clusters of 4+ programs, whose residency is what limits them (the driver's
// ptxas gave the cluster softmax 57 registers for 32 values, 4 programs of 8 warps per SM;
// capped for 5: 48, no spills; bf16 softmax 4096x128256 74.7% -> 82.0% of copy,
// 2048x151936 64.3% -> 77.5%, cross-entropy 4096x128256 62.1% -> 73.3%), and 16-bit rows
// of widths that are not a multiple of 8, whose narrow accesses need more programs in
// flight (4096x16383 on clusters of 2 47.4% -> 68.1%; cross-entropy 16384x4099 in one
// program 64.2% -> 68.0%, 2047x16385 on 4 48.4% -> 57.7%; softmax's one-program rows lost
// once its approximate math flushed subnormals: softmax_heuristic). Not f32 rows (-5
// points: twice the loads in flight per value), nor aligned 16-bit rows on fewer than 4
// programs (8192x16384 92.7% -> 87.3%; one program: -1 to +0.5).
//
// How many: the larger of two caps — E + 20 registers, up to 8 programs (1024 threads at
// 4 warps), and E + 16, up to 6 (7 on clusters of 8 or more, whose longer exchange leaves
// more waiting to hide). Measured on both kernels (H200 bf16, bench/NOTES.md
// "Cross-entropy's programs per SM"; 4 warps unless said): 32 and 40 values 8 programs
// (cross-entropy 8192x32000 77.8% -> 83.3% of copy, 8192x40000 78.4% -> 89.2%; softmax
// 8192x20001 71.3% -> 78.8%, aligned softmax rows within 0.5 points), 48 values 7 (8
// spills: cross-entropy 8192x24000 85.6% at 7, 75.8% at 8), 56 values 7 on clusters of 8+
// and 6 on 4 (softmax 16384x50304 85.1% -> 91.4%, cross-entropy 81.2% against 78.5%;
// 8192x28000 on 4: softmax 92.7% at 6, 89.5% at 7), 64 values 6 (7 spills); 8 warps: 32
// values 5 (softmax's aligned rows 3.5-7.3 points faster than at 4), 40 values 4, 64
// values 3.
//
// `extra`: registers a kernel's row program holds beyond softmax's, added to both caps
// (cross-entropy: 4, cross_entropy_heuristic).
//
// Programs of 16 or more warps on clusters, any dtype, at two per SM where E + 16 +
// `extra` registers fit in 64: at one per SM the SM idles through each program's
// exchange and tail, and clusters of 16 such programs fit 7 at a time on the H200
// instead of 14 (ncu, f32 cross-entropy 1024x256000 on 16 x 16 warps: 64 registers 87%
// of copy, 69 registers 59%).
inline int row_programs_per_sm(const Config& c, DType dtype, int64_t n_cols, int extra = 0) {
  bool residency = c.cluster >= 4 || n_cols % 8 != 0;
  int two_wide = c.cluster > 1 && c.num_warps >= 16 && register_capped_programs(c, 16 + extra, 2) == 2 ? 2 : 0;
  if (byte_size(dtype) != 2 || !residency) return two_wide;
  return std::max({two_wide, register_capped_programs(c, 20 + extra, 8),
                   register_capped_programs(c, 16 + extra, c.cluster >= 8 ? 7 : 6)});
}

// Chunks of a row program kept in shared memory (HELD, Cache::KeepInShared) instead of
// registers: all of them for 16-bit rows on clusters whose chunks are 8192 columns or
// more, where the registers (at the programs per SM the heuristic caps) bound them. The
// cap stays: uncapped they lost 13-17 points. Measured (H200 % of copy, bench/NOTES.md
// "Row chunks kept in shared memory"): softmax bf16 2048x65536 86.5 -> 89.9, 1024x131072
// 85.9 -> 88.7, 512x262144 82.3 -> 83.3, 64-256 x 262144 within a point; cross-entropy
// bf16 4096x128256 85.3 -> 89.7, 1024x256000 76.5 -> 79.6. Not chunks of 2048-4096
// (cross-entropy 1024x200000 74 -> 71, 2048x151936 83 -> 80), not f32 (softmax 512x262144
// 89 -> 85, cross-entropy 1024x256000 86 -> 74), nor programs sharing a row on 8 or 16
// programs of 4096-column chunks (128x262144 at 50-68 against 72).
inline int64_t held_chunks(const Config& c, DType dtype) {
  if (byte_size(dtype) != 2 || c.cluster < 2 || c.get("BLOCK") < 8192) return 0;
  return c.has("CHUNKS") ? c.get("CHUNKS") : 1;
}
inline void hold_chunks(Config& c, DType dtype) {
  if (int64_t h = held_chunks(c, dtype)) c.set("HELD", h);
}

// 16-bit cluster programs of 16384 columns (held or not) as programs of 32768 held in
// shared memory on half the cluster: 4 chunks of 8192 on 8 warps, 64 KB each, 3 per SM
// (ptxas: 80 registers, no spills), and half the programs to exchange with and wait for.
// Softmax (hold_64k_per_program) and LayerNorm (layernorm_heuristic) take them; RMSNorm
// lost (H200 bf16 512x262144 86.4 -> 79.1% of copy, 2048x131072 92.7 -> 87.3), and the
// residual RMSNorm holds nothing.
inline Config held_64k_programs(Config c) {
  c.cluster /= 2;
  c.set("BLOCK", 8192).set("CHUNKS", 4).set("HELD", 4);
  c.num_warps = 8;
  c.min_programs_per_sm = 3;
  return c;
}
inline bool holds_64k(const Config& c, DType dtype) {
  return byte_size(dtype) == 2 && c.cluster > 1 && c.has("HELD") && c.get("HELD") * c.get("BLOCK") * 2 >= 65536;
}

// 16-bit programs of a cluster that cover more than 8192 columns hold them as chunks of
// 8192 on 8 warps (64 values per thread) rather than one 16384 tile on 16 (H200 bf16
// 512x262144, with 3 programs per SM: softmax 62.0% -> 76.4% of copy, RMSNorm 70.8% ->
// 84.9%; bench/NOTES.md).
inline Config chunked_row_programs(int64_t n_cols, DType dtype, bool clusters) {
  Config c = row_heuristic(n_cols, dtype, clusters);
  if (row_uses_loop(c, n_cols)) return c;
  int64_t per = (n_cols + c.cluster - 1) / c.cluster;
  bool wide = c.cluster > 1 && byte_size(dtype) == 2 && per > 8192;
  Config k = wide ? chunked_row_config(per, dtype, 8192) : chunked_row_config(per, dtype);
  if (wide) k.num_warps = std::min(k.num_warps, 8);
  k.cluster = c.cluster;
  return k;
}

// Rows a little past a power of two on clusters (n_cols: the width, or the aligned span):
// the power of two's programs, each with a TAIL tile of a few positions (row_chunks.hpp),
// instead of the next power of two's cluster (twice the programs, each with many small
// chunks or lanes past the row: 16392 positions as 2 x (8192 + 8) rather than 4 x 5 x
// 1024). A tail holds one element per thread in the lanes it needs: at most one 16-byte
// run per warp. nullopt where it does not apply, or with TILEFUSE_ROW_TAIL=0.
// Where it pays (H200 % of copy, chunks -> tails, two rounds; bench/NOTES.md "Tail
// tiles"): the 16-bit norms, bf16 2048x16385 RMSNorm 66.7 -> 72.8, residual 61.9 -> 74.4,
// LayerNorm 56.9 -> 63.6; 2048x16388 69.9 -> 76.6, 65.5 -> 84.3, 61.6 -> 64.4; 1024x32771
// 65.7 -> 71.5, 58.2 -> 75.1, 53.2 -> 61.6; 512x65540 62.6 -> 71.8, 62.1 -> 83.7, 56.8 ->
// 56.0. Not softmax (its 4-warp chunk programs at 8 per SM: 79.5 -> 73.4 at 16385), nor
// f32 (softmax 84.5 -> 81.1, RMSNorm 75.4 -> 68.7 at 1024x32771, the others within 2-5).
// Programs of one row each (`tails` any) take a tail too, for rows of 2048+ columns (4099
// bf16: 4096 + 8 rather than 5 x 1024); and so does any row whose power of two fits one
// program but the row itself would need a cluster (8195: 8192 + 16 rather than 2 programs
// of 5 x 1024). H200 bf16 % of copy, chunks -> one program with a tail, two rounds: the
// residual RMSNorm 16384x4099 74.3 -> 79.1, 16384x4098 84.5 -> 90.5, 32768x2051 77.2 ->
// 82.3; the plain RMSNorm within a point but 4097 85.3 -> 81.9, LayerNorm -2.6 to -3 (so
// only the residual RMSNorm asks); 8192x8195 RMSNorm 76.8 -> 79.6, residual 67.9 -> 72.5,
// LayerNorm 66.5 -> 71.7.
inline std::optional<Config> row_tail_config(int64_t n_cols, DType dtype, bool clusters, RowTails tails) {
  if (!clusters || n_cols < 1 || tails == RowTails::none || knob("TILEFUSE_ROW_TAIL") == "0") return std::nullopt;
  int64_t base = std::bit_floor(static_cast<uint64_t>(n_cols));
  if (base == n_cols) return std::nullopt;
  Config c = chunked_row_programs(base, dtype, clusters);
  Config without = chunked_row_programs(n_cols, dtype, clusters);
  // Not rows that leave the clusters without a tail (262146 columns: the split schedule):
  // the width sweep had the residual RMSNorm at 128x262146 on 16 x (2 x 8192 + 8) at 47%
  // of copy against the split schedule's 68% (bench/NOTES.md, "Tail tiles"); except the
  // plain norms' 16-bit rows of 8-byte runs (H200 bf16 % of copy, split -> tails, two
  // rounds, bench/NOTES.md "Programs of 64 KB held": RMSNorm 512x262148 59.6 -> 73.2,
  // 128x262148 54.9 -> 64.1, 256x262660 57.6 -> 71.0; LayerNorm 55.8 -> 66.8, 50.8 -> 58.1,
  // 53.2 -> 60.2; f16 alike).
  bool eight_byte_rows = tails == RowTails::clusters && byte_size(dtype) == 2 && n_cols % 4 == 0;
  if (row_uses_loop(c, base) || (row_uses_loop(without, n_cols) && !eight_byte_rows)) return std::nullopt;
  bool avoids_cluster = without.cluster > 1;
  if (c.cluster <= 1 && !(avoids_cluster || (tails == RowTails::any && base >= 2048))) return std::nullopt;
  const int64_t run = 16 / byte_size(dtype);
  int64_t per = (n_cols - base + c.cluster - 1) / c.cluster;
  int64_t tail = std::max(run, static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(per))));
  if (tail > run * c.num_warps) return std::nullopt;
  return c.set("TAIL", tail);
}

// A chunked program whose last chunk holds only the row's overhang past cluster x
// (CHUNKS - 1) x BLOCK columns holds that overhang as a TAIL tile (at least 8 positions, at
// most one 16-byte run per warp) instead, on the same programs: 16385 columns as 4 x (4 x
// 1024 + 8), not 4 x 5 x 1024; a fifth less to hold and reduce per program (a tail of at
// least a 16-byte run, so later programs start on 16 bytes where the row does). Unchanged
// otherwise, and with TILEFUSE_ROW_TAIL=0. Measured for softmax (H200 % of copy, 5 chunks
// -> 4 and a tail, two rounds; bench/NOTES.md, "softmax's last chunk as a tail"): bf16 2048x16385
// 79.3 -> 82.3, 1024x32769 76.6 -> 79.3, 512x65537 70.3 -> 72.2, 4096x8193 82.8 -> 84.5;
// f16 alike; f32 2048x16385 84.4 -> 88.9, 512x65537 73.7 -> 81.9; one program (8192x4097)
// within a point. Programs of 4 warps only: 8-warp ones lost (bf16 256x131073, 16 x (4 x
// 2048 + 8): 66.2 -> 62.4), and short rows' one- and two-warp programs were not measured.
inline Config last_chunk_as_tail(Config c, int64_t n_cols, DType dtype) {
  if (!c.has("CHUNKS") || c.get("CHUNKS") < 2 || (c.has("TAIL") && c.get("TAIL") > 0) || c.num_warps != 4 ||
      row_uses_loop(c, n_cols) || knob("TILEFUSE_ROW_TAIL") == "0")
    return c;
  const int64_t chunks = c.get("CHUNKS") - 1, run = 16 / byte_size(dtype);
  const int64_t body = chunks * c.get("BLOCK") * c.cluster;
  if (body >= n_cols) return c;
  const int64_t per = (n_cols - body + c.cluster - 1) / c.cluster;
  const int64_t tail = std::max({int64_t(8), run, static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(per)))});
  if (tail > run * c.num_warps) return c;
  if (chunks == 1) c.meta.erase("CHUNKS");
  else c.set("CHUNKS", chunks);
  return c.set("TAIL", tail);
}

inline Config chunked_row_heuristic(int64_t n_cols, DType dtype, bool clusters, RowTails tails) {
  if (auto t = row_tail_config(n_cols, dtype, clusters, tails)) return *t;
  return chunked_row_programs(n_cols, dtype, clusters);
}

// 16-bit rows of a multiple of 8 columns that would take a cluster of 16 programs, held
// by 8 programs of at most 20480 columns instead (chunked_row_config: chunks of at most
// 8192, on at most 8 warps) -- with `any_chunks`, however those columns are chunked;
// without, only where they are exactly 2 chunks of 8192. nullopt where it does not apply. Why: at most 85-88% of the SMs' program slots are
// resident as clusters of 16, 91-94% as clusters of 8 (H200, cudaOccupancyMaxActiveClusters
// for 1-8 programs of 8 warps per SM; a cluster needs all its SMs in one GPC). Measured
// (H200 bf16 % of copy, bench/NOTES.md "Wide rows on clusters of 8"): RMSNorm with RELOAD
// at 3 programs per SM 1024x100000 68.5 -> 83.4, 1024x131072 81.4 -> 88.1, 2048x151936
// 70.1 -> 86.8; LayerNorm 62.4 -> 74.9, 71.8 -> 79.9, 64.8 -> 79.3; softmax at 2 x 8192
// 1024x131072 79.3 -> 82.5, 4096x128256 81.7 -> 84.4, but 2048x151936 (5 x 4096) 77.5 ->
// 61.9 and 1024x100000 (7 x 2048) 78.8 -> 73.6; cross-entropy lost at every width; rows of
// 262144 on 8 programs of 32768 lost (RMSNorm 84.8 -> 77.3).
inline std::optional<Config> eight_program_cluster(const Config& c, int64_t n_cols, DType dtype,
                                                   bool any_chunks) {
  constexpr int64_t kMostPerProgram = 20480;
  if (c.cluster != 16 || byte_size(dtype) != 2 || row_uses_loop(c, n_cols)) return std::nullopt;
  if (n_cols % 8 != 0) return std::nullopt;  // narrow accesses: RMSNorm 2048x65537 51.4 -> 45.5, LayerNorm 37.3 -> 24.5
  int64_t per = (n_cols + 7) / 8;
  if (per > kMostPerProgram) return std::nullopt;
  Config k = chunked_row_config(per, dtype, 8192);
  bool two_whole = k.get("BLOCK") == 8192 && k.has("CHUNKS") && k.get("CHUNKS") == 2;
  if (!any_chunks && !two_whole) return std::nullopt;
  k.num_warps = std::min(k.num_warps, 8);
  k.cluster = 8;
  return k;
}

// 16-bit rows whose cluster programs would hold chunks of 1024 (under ~8K columns each:
// widths a little past a power of two, 16385-16388 on 4 programs, 65538 on 16) held by
// half the programs instead, each twice the columns as chunks of 2048 on 8 warps at 3 per
// SM -- the columns per program the aligned widths' programs hold. For the kernels where
// it measured faster: LayerNorm, and the residual RMSNorm where the width is not a multiple
// of 8. H200 bf16 % of copy, previous heuristic -> this, two rounds (bench/NOTES.md "Cluster
// programs of 1024-column chunks"): LayerNorm 2048x16385 52.6 -> 56.9, 2048x16388 55.4 ->
// 60.5, 512x65538 46.0 -> 52.4, 512x65540 48.7 -> 56.4, 1024x100002 50.0 -> 60.4, 4096x20000
// 76.2 -> 77.7, 1024x50304 65.8 -> 68.8; residual RMSNorm 2048x16386 58.3 -> 62.2, 512x65538
// 52.7 -> 59.9, 1024x100002 53.3 -> 61.5 (aligned widths lost 1.3-1.7); f16 alike. The plain
// RMSNorm moved within a point or lost (2048x16385 66.7 -> 61.8), softmax lost 4-11, f32
// was mixed (the residual RMSNorm 2048x16386 79.6 -> 73.9, 512x65540 71.8 -> 82.1).
// nullopt where it does not apply.
inline std::optional<Config> half_cluster_programs(const Config& c, int64_t n_cols, DType dtype) {
  if (byte_size(dtype) != 2 || c.cluster < 4 || row_uses_loop(c, n_cols) || c.get("BLOCK") != 1024) return std::nullopt;
  int cluster = c.cluster / 2;
  Config k = chunked_row_config((n_cols + cluster - 1) / cluster, dtype, 8192);
  k.num_warps = std::min(k.num_warps, 8);
  k.cluster = cluster;
  k.min_programs_per_sm = 3;
  if (row_uses_loop(k, n_cols)) return std::nullopt;
  return k;
}

}  // namespace tilefuse::kernels
