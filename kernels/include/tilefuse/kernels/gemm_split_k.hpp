#pragma once
// Split-K GEMM: where a GEMM has too few output tiles to fill the GPU but a long K (small
// M against large N and K: inference's projections), S programs per tile each sum one
// slice of K. They write f32 partials [S, M, N] and a second kernel adds the S partials
// of each element; or (SPLIT_CLUSTER=1, GPUs with thread-block clusters, S = 2, 4, 8)
// the S programs form a cluster and add their partial tiles through distributed shared
// memory. Both add in slice order (deterministic) and apply the epilogue.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "tilefuse/ir/knobs.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/gemm_operands.hpp"
#include "tilefuse/kernels/gemm_split_tail.hpp"
#include "tilefuse/kernels/gemm_tile.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// Grid (output tiles, S): program (t, s) writes tile t's sum over K blocks
// [s k_chunk, (s + 1) k_chunk) to slice s of partials ([S, M, N], rows of ld_partials
// floats, slices split_stride floats apart): a 3-D view, so a tile's rows past M are
// clipped rather than written (M = 16 in 64-row tiles: a quarter of the bytes). 8-bit
// operands (scaled_matmul): SCALED multiplies the sums by *scale_a * *scale_b, and
// PRECISE_ACC is gemm_tile's.
template <class TA, class TB = TA>
const auto& matmul_split_k_kernel() {
  static auto k = kernel(std::string("matmul_split_k_") + name(dtype_v<TA>) +
                             (std::is_same_v<TA, TB> ? std::string() : std::string("_") + name(dtype_v<TB>)),
      {"partials", "a", "b", "scale_a", "scale_b", "M", "N", "K", "lda", "ldb", "k_chunk", "split_stride",
       "ld_partials"},
      [](Ptr<float> partials, Ptr<const TA> a, Ptr<const TB> b, Ptr<const f32> scale_a, Ptr<const f32> scale_b, I32 M,
         I32 N, I32 K, I64 lda, I64 ldb, I32 k_chunk, I64 split_stride, I64 ld_partials, Meta<"BLOCK_M"> BLOCK_M,
         Meta<"BLOCK_N"> BLOCK_N, Meta<"BLOCK_K"> BLOCK_K, Meta<"GROUP_M", int, 8> GROUP_M,
         Meta<"B_TRANS", bool, false> B_TRANS, Meta<"SCALED", bool, false> SCALED,
         Meta<"PRECISE_ACC", int, 0> PRECISE_ACC) {
        auto s = program_id(1);
        auto k_lo = s * k_chunk;
        auto t = detail::gemm_tile(a, b, M, N, K, lda, ldb, static_cast<int>(BLOCK_M), static_cast<int>(BLOCK_N),
                                   static_cast<int>(BLOCK_K), static_cast<int>(GROUP_M), static_cast<bool>(B_TRANS),
                                   static_cast<int>(PRECISE_ACC), std::pair{k_lo, minimum(k_lo + k_chunk, K)},
                                   std::nullopt, true);
        auto acc = SCALED ? t.acc * (load(scale_a) * load(scale_b)) : t.acc;
        auto slices = tensor_view(partials, {num_programs(1), M, N}, {split_stride, ld_partials, 1});
        store(slices, {s, t.m0, t.n0}, acc);
      });
  return k;
}

// The split in one kernel, on GPUs with thread-block clusters: grid (output tiles x S)
// in clusters of S (2, 4 or 8), program s of cluster t summing tile t over K blocks
// [s k_chunk, (s + 1) k_chunk) (an empty range adds zeros). The cluster adds its S
// partial tiles through distributed shared memory (cluster_sum: no partials in global
// memory, no second launch), and each program applies the epilogue to 1/S of the
// tile's rows and stores them. Scales (SCALED) of type TS: f32 for 8-bit operands;
// without SCALED they are unread (any pointer).
template <class TA, class TB, class TBias, class Out, class TS>
const auto& matmul_cluster_split_k_kernel() {
  static auto k = kernel(std::string("matmul_cluster_split_k_") + name(dtype_v<TA>) + "_" + name(dtype_v<TB>) + "_" +
                             name(dtype_v<TBias>) + "_" + name(dtype_v<Out>) + "_" + name(dtype_v<TS>),
      {"c", "a", "b", "scale_a", "scale_b", "bias", "residual", "M", "N", "K", "lda", "ldb", "ldc", "k_chunk", "alpha"},
      [](Ptr<Out> c, Ptr<const TA> a, Ptr<const TB> b, Ptr<const TS> scale_a, Ptr<const TS> scale_b,
         Ptr<const TBias> bias, Ptr<const Out> residual, I32 M, I32 N, I32 K, I64 lda, I64 ldb, I64 ldc, I32 k_chunk,
         F32 alpha, Meta<"BLOCK_M"> BLOCK_M, Meta<"BLOCK_N"> BLOCK_N, Meta<"BLOCK_K"> BLOCK_K,
         Meta<"GROUP_M", int, 8> GROUP_M, Meta<"B_TRANS", bool, false> B_TRANS, Meta<"SCALED", bool, false> SCALED,
         Meta<"PRECISE_ACC", int, 0> PRECISE_ACC, Meta<"ACT", int, 0> ACT, Meta<"BIAS", bool, false> BIAS,
         Meta<"RESIDUAL", bool, false> RESIDUAL, Meta<"SCALE", bool, false> SCALE) {
        auto s = cluster_rank();
        auto k_lo = s * k_chunk;
        const int bm = static_cast<int>(BLOCK_M);
        auto t = detail::gemm_tile(a, b, M, N, K, lda, ldb, bm, static_cast<int>(BLOCK_N), static_cast<int>(BLOCK_K),
                                   static_cast<int>(GROUP_M), static_cast<bool>(B_TRANS),
                                   static_cast<int>(PRECISE_ACC), std::pair{k_lo, minimum(k_lo + k_chunk, K)},
                                   cluster_id(), !RESIDUAL);
        auto acc = cluster_sum(t.acc);
        if (SCALED) acc = acc * (load(scale_a).template cast<f32>() * load(scale_b).template cast<f32>());
        auto m_ok = t.m_ok && (arange(0, bm) / std::max(bm / cluster_size(), 1) == s);  // this program's rows
        detail::GemmEpilogue e{static_cast<bool>(SCALE), static_cast<bool>(BIAS), static_cast<bool>(RESIDUAL),
                               static_cast<int>(ACT)};
        acc = detail::gemm_epilogue<TBias, Out>(acc, e, t.rm, t.rn, m_ok, t.n_ok, bias, residual, ldc, alpha);
        store(c + t.rm.col().template cast<i64>() * ldc + t.rn.row(), acc.template cast<Out>(),
              m_ok.col() && t.n_ok.row());
      });
  return k;
}

// c = epilogue(sum over s of the partials), [BLOCK_M, BLOCK_N] tiles of c per program.
// SPLITS is a meta-parameter so that the loads of all slices are issued together: a
// loop with one load per trip waits one L2 round trip per slice (6-8 us at 8 slices,
// H200, against ~3 for cuBLAS's reduction).
template <class T, class Out>
const auto& matmul_split_k_reduce_kernel() {
  static auto k = kernel(std::string("matmul_split_k_reduce_") + name(dtype_v<T>) + "_" + name(dtype_v<Out>),
      {"c", "partials", "bias", "residual", "M", "N", "ldc", "split_stride", "ld_partials", "alpha"},
      [](Ptr<Out> c, Ptr<const float> partials, Ptr<const T> bias, Ptr<const Out> residual, I32 M, I32 N, I64 ldc,
         I64 split_stride, I64 ld_partials, F32 alpha, Meta<"BLOCK_M"> BLOCK_M, Meta<"BLOCK_N"> BLOCK_N,
         Meta<"SPLITS"> SPLITS, Meta<"ACT", int, 0> ACT, Meta<"BIAS", bool, false> BIAS,
         Meta<"RESIDUAL", bool, false> RESIDUAL, Meta<"SCALE", bool, false> SCALE) {
        auto [rm, rn] = detail::matrix_tile(N, BLOCK_M, BLOCK_N);
        auto m_ok = rm < M;
        auto n_ok = rn < N;
        auto ok = m_ok.col() && n_ok.row();
        auto offs = rm.col().template cast<i64>() * ld_partials + rn.row();
        std::vector<Tile<float, 2>> part;
        for (int64_t s = 0; s < SPLITS; ++s)
          part.push_back(load(partials + s * split_stride + offs, ok, 0.0f, Cache::EvictFirst));
        auto acc = part[0];
        for (size_t s = 1; s < part.size(); ++s) acc = acc + part[s];  // slice order: deterministic
        detail::GemmEpilogue e{static_cast<bool>(SCALE), static_cast<bool>(BIAS), static_cast<bool>(RESIDUAL),
                               static_cast<int>(ACT)};
        acc = detail::gemm_epilogue<T, Out>(acc, e, rm, rn, m_ok, n_ok, bias, residual, ldc, alpha);
        store(c + rm.col().template cast<i64>() * ldc + rn.row(), acc.template cast<Out>(), ok);
      });
  return k;
}

// The reduction's tiles: rows of up to 128 columns, as many rows as leave about two
// programs per SM (each program's loads, one per slice, are all in flight at once), at
// most 16.
inline Config split_k_reduce_config(int64_t M, int64_t N, int64_t splits, int64_t sms) {
  int64_t bn = std::clamp<int64_t>(next_pow2(N), 16, 128);
  int64_t per_program = std::max<int64_t>(M * N / std::max<int64_t>(2 * sms, 1), 1);
  int64_t bm = std::clamp<int64_t>(std::bit_floor(static_cast<uint64_t>(std::max<int64_t>(per_program / bn, 1))), 1,
                                   std::min<int64_t>(16, next_pow2(M)));
  int warps = static_cast<int>(std::clamp<int64_t>(bm * bn / 256, 1, 4));
  return Config{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"SPLITS", splits}, num_warps(warps)};
}

// How many slices of K a GEMM of `tile` (BLOCK_M, BLOCK_N, BLOCK_K) takes where `slots`
// of its programs run at once (SMs x programs per SM): 1 (no split) unless its tiles
// fill under half the slots; then as many as fill them, each at least 8 K blocks deep
// (the pipeline's length), at most 8, and only where the f32 partials' traffic
// ([S, M, N], written and read once: 8 bytes per element and slice) stays under half
// the operands' bytes. TILEFUSE_SPLIT_K=n forces n (0 or 1: never). The GEMM heuristic
// puts the answer in its config as SPLIT_K.
inline int64_t split_k_slices(int64_t M, int64_t N, int64_t K, const Config& tile, int64_t slots, int elem_bytes) {
  std::string forced = knob("TILEFUSE_SPLIT_K");
  if (!forced.empty()) return std::max<int64_t>(1, std::atoll(forced.c_str()));
  int64_t bm = tile.get("BLOCK_M"), bn = tile.get("BLOCK_N"), bk = tile.get("BLOCK_K");
  int64_t tiles = ((M + bm - 1) / bm) * ((N + bn - 1) / bn);
  if (2 * tiles >= slots) return 1;
  int64_t s = std::min<int64_t>({slots / tiles, K / (8 * bk), 8});
  if (s < 2) return 1;
  if (s * M * N * 8 * 2 > (M * K + K * N) * elem_bytes) return 1;
  return s;
}

// How a GEMM splits K: into `slices`, added up through partials in global memory and a
// second kernel, or (`cluster`) within thread-block clusters in one kernel
// (matmul_cluster_split_k_kernel). The second kernel is the default: on an H200 the
// cluster exchange measured no faster with 16-row tiles and slower with wgmma tiles,
// whose clusters of 4 do not all fit on the GPU at once (bench/NOTES.md). `tail` = P > 0:
// only the tiles past the last full wave of P programs per SM are split, after the whole
// ones, and added by the last slice of each to finish (gemm_split_tail.hpp).
struct SplitK {
  int64_t slices = 1;
  int cluster = 0;
  int64_t tail = 0;
};

// Takes SPLIT_K, SPLIT_CLUSTER and SPLIT_TAIL out of a GEMM launch config (the GEMM
// kernels have no such parameters): SPLIT_K is the number of slices, 1 when unset;
// SPLIT_CLUSTER=1 adds them in clusters, 0 (or unset) through a second kernel;
// SPLIT_TAIL=P (1-8) splits only the tiles of the last partial wave of P programs per
// SM. Bad values are user errors naming `op`.
inline SplitK take_split_k(Config& c, const char* op) {
  SplitK s{c.has("SPLIT_K") ? c.get("SPLIT_K") : 1, c.has("SPLIT_CLUSTER") ? static_cast<int>(c.get("SPLIT_CLUSTER")) : 0,
           c.has("SPLIT_TAIL") ? c.get("SPLIT_TAIL") : 0};
  c.meta.erase("SPLIT_K");
  c.meta.erase("SPLIT_CLUSTER");
  c.meta.erase("SPLIT_TAIL");
  if (s.tail < 0 || s.tail > 8)
    user_error(std::string(op) + ": SPLIT_TAIL must be 0 (off) or the programs per SM of a wave, 1 to 8; got " +
                   std::to_string(s.tail),
               SourceLoc{}, "Use SPLIT_TAIL=1 for tiles that take one SM each, or leave it out");
  if (s.tail > 0 && s.slices < 2)
    user_error(std::string(op) + ": SPLIT_TAIL=" + std::to_string(s.tail) +
                   " splits the last wave's tiles into SPLIT_K slices, but SPLIT_K is " + std::to_string(s.slices),
               SourceLoc{}, "Set SPLIT_K to 2-8 as well, or leave SPLIT_TAIL out");
  if (s.tail > 0 && s.cluster != 0)
    user_error(std::string(op) + ": SPLIT_TAIL and SPLIT_CLUSTER=1 do not combine (the tail's slices are added by "
                   "the last of them to finish, not in a cluster)",
               SourceLoc{}, "Leave one of them out");
  if (s.slices < 1)
    user_error(std::string(op) + ": SPLIT_K must be at least 1 (the number of slices K is split into), got " +
                   std::to_string(s.slices),
               SourceLoc{}, "Use SPLIT_K=1 for no split, or leave it out of the config");
  bool pow2 = s.slices == 2 || s.slices == 4 || s.slices == 8;
  if (s.cluster == 1 && !pow2)
    user_error(std::string(op) + ": SPLIT_CLUSTER=1 adds the slices of K within a thread-block cluster, which takes "
                   "SPLIT_K = 2, 4 or 8; got SPLIT_K=" + std::to_string(s.slices),
               SourceLoc{}, "Use SPLIT_K=2, 4 or 8, or SPLIT_CLUSTER=0 (partials added by a second kernel)");
  if (s.cluster != 0 && s.cluster != 1)
    user_error(std::string(op) + ": SPLIT_CLUSTER must be 0 or 1, got " + std::to_string(s.cluster), SourceLoc{},
               "Use SPLIT_CLUSTER=1 (slices added in a cluster), 0 (by a second kernel), or leave it out");
  return s;
}

namespace detail {

// The split-K GEMM on (already aligned) operands ga [M, K] and gb, with `tile`'s tiling
// and `epi`'s epilogue meta-parameters (ACT, BIAS, RESIDUAL, SCALE; unset: off) for the
// reduction; bias holds TBias values. 8-bit operands pass their per-tensor scales
// (device pointers to one f32 each; nullptr: none) and PRECISE_ACC in `tile`. With
// split.tail, `whole_tiles(n)` launches the GEMM's own kernel over its first n tiles.
template <class TA, class TB, class TBias, class C, class GA, class GB, class Scale, class Bias, class Res>
void gemm_split_k(C& c, const GA& ga, const GB& gb, const Scale& scale_a, const Scale& scale_b, const Bias& bias,
                  const Res& residual, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, float alpha,
                  bool b_trans, Config tile, const Config& epi, SplitK split,
                  const std::function<void(int64_t)>& whole_tiles = {}) {
  using Out = buffer_elem_t<C>;
  constexpr bool scaled = !std::is_same_v<Scale, std::nullptr_t>;
  int64_t splits = split.slices;
  int64_t bm = tile.get("BLOCK_M"), bn = tile.get("BLOCK_N"), bk = tile.get("BLOCK_K");
  int64_t k_chunk = ((K + bk - 1) / bk + splits - 1) / splits * bk;
  int64_t tiles = ((M + bm - 1) / bm) * ((N + bn - 1) / bn);
  tile.set("B_TRANS", b_trans);
  tile.set("SCALED", scaled);
  // Split tiles keep their last column in place: a split tile and a whole one sum in
  // different orders, so they must not share columns (the whole tiles' kernel moves it).
  tile.meta.erase("EDGE_SHIFT_N");
  if (split.tail > 0)
    return gemm_split_tail<TA, TB, TBias>(c, ga, gb, scale_a, scale_b, bias, residual, M, N, K, lda, ldb, alpha, tile,
                                          epi, splits, split.tail * (is_device_buffer_v<C> ? gpu_sm_count() : 132),
                                          whole_tiles);
  if (split.cluster == 1 && is_device_buffer_v<C> && !gpu_has_clusters())
    user_error("GEMM with SPLIT_CLUSTER=1: this GPU has no thread-block clusters (sm_90 or newer)", SourceLoc{},
               "Use SPLIT_CLUSTER=0, or leave it out");
  if (split.cluster == 1) {
    for (const char* key : {"ACT", "BIAS", "RESIDUAL", "SCALE"}) tile.set(key, epi.has(key) ? epi.get(key) : 0);
    tile.cluster = static_cast<int>(splits);
    tile.warp_specialize = 0;  // every warp takes part in the exchange
    tile.persistent = 0;
    auto launch = [&](const auto& sa, const auto& sb) {
      using TS = buffer_elem_t<std::decay_t<decltype(sa)>>;
      matmul_cluster_split_k_kernel<TA, TB, TBias, Out, TS>().launch(
          grid(tiles * splits), tile, c, ga, gb, sa, sb, bias, residual, M, N, K, lda, ldb, N, k_chunk, alpha);
    };
    if constexpr (scaled) launch(scale_a, scale_b);
    else launch(ga, ga);  // unread without SCALED
    return;
  }
  splits = (K + k_chunk - 1) / k_chunk;  // no empty slice
  int64_t ld = (N + 3) / 4 * 4;  // rows of 16-byte multiples
  size_t n = static_cast<size_t>(splits * M * ld);
  Config red = split_k_reduce_config(M, N, splits, is_device_buffer_v<C> ? gpu_sm_count() : 132);
  for (const char* key : {"ACT", "BIAS", "RESIDUAL", "SCALE"}) {
    red.set(key, epi.has(key) ? epi.get(key) : 0);
    tile.meta.erase(key);  // the slices' kernel has no epilogue
  }
  int64_t rbm = red.get("BLOCK_M"), rbn = red.get("BLOCK_N");
  int64_t red_tiles = ((M + rbm - 1) / rbm) * ((N + rbn - 1) / rbn);
  auto run = [&](const auto& ws) {
    auto slices = [&](const auto& sa, const auto& sb) {
      matmul_split_k_kernel<TA, TB>().launch(grid(tiles, splits), tile, ws, ga, gb, sa, sb, M, N, K, lda, ldb, k_chunk,
                                             M * ld, ld);
    };
    if constexpr (scaled) slices(scale_a, scale_b);
    else slices(ws, ws);  // unread without SCALED
    matmul_split_k_reduce_kernel<TBias, Out>().launch(grid(red_tiles), red, c, ws, bias, residual, M, N, N, M * ld, ld,
                                                      alpha);
  };
  if constexpr (is_device_buffer_v<C>) {
    StreamScratch<float> ws(n);
    run(ws.get());
  } else {
    std::vector<float> ws(n);
    run(ws);
  }
}

// The 16-bit GEMM's split-K (matmul): bias of the operands' type, no scales.
template <class T, class C, class GA, class GB, class Bias, class Res>
void matmul_split_k(C& c, const GA& ga, const GB& gb, const Bias& bias, const Res& residual, int64_t M, int64_t N,
                    int64_t K, int64_t lda, int64_t ldb, float alpha, bool b_trans, const Config& tile,
                    const Config& epi, SplitK splits, const std::function<void(int64_t)>& whole_tiles = {}) {
  gemm_split_k<T, T, T>(c, ga, gb, nullptr, nullptr, bias, residual, M, N, K, lda, ldb, alpha, b_trans, tile, epi,
                        splits, whole_tiles);
}

}  // namespace detail
}  // namespace tilefuse::kernels
