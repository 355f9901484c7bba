#pragma once
// GEMMs whose output tiles leave a partial last wave: the tiles of the full waves are
// computed whole, and each tile of the last wave by S programs that sum slices of K, so
// that the last wave keeps every SM busy for 1/S of a tile's time instead of a few SMs
// for all of it (stream-K's data-parallel + split hybrid). A slice's program stores its
// partial tile to a workspace and counts itself in on the tile's counter (an
// acquire-release atomic); the last to arrive adds the S partials in slice order (the
// same bits whichever arrives last), applies the epilogue, stores the tile and zeroes the
// counter for the next launch. One launch, no second kernel.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/gemm_operands.hpp"
#include "tilefuse/kernels/gemm_tile.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// Grid (whole + tail x SPLITS): programs below `whole` compute tiles 0 .. whole-1 of the
// grouped order over all of K; the others, SPLITS per tile, the remaining tiles' slices
// of K blocks [s k_chunk, (s + 1) k_chunk). partials: [tail tiles, SPLITS, BLOCK_M,
// BLOCK_N] f32; counters: one per tail tile, zero at launch (and left zero). Scales
// (SCALED) of type TS: f32 for 8-bit operands; without SCALED they are unread.
template <class TA, class TB, class TBias, class Out, class TS>
const auto& matmul_split_tail_kernel() {
  static auto k = kernel(std::string("matmul_split_tail_") + name(dtype_v<TA>) + "_" + name(dtype_v<TB>) + "_" +
                             name(dtype_v<TBias>) + "_" + name(dtype_v<Out>) + "_" + name(dtype_v<TS>),
      {"c", "a", "b", "scale_a", "scale_b", "bias", "residual", "partials", "counters", "M", "N", "K", "lda", "ldb",
       "ldc", "k_chunk", "whole", "alpha"},
      [](Ptr<Out> c, Ptr<const TA> a, Ptr<const TB> b, Ptr<const TS> scale_a, Ptr<const TS> scale_b,
         Ptr<const TBias> bias, Ptr<const Out> residual, Ptr<float> partials, Ptr<int32_t> counters, I32 M, I32 N,
         I32 K, I64 lda, I64 ldb, I64 ldc, I32 k_chunk, I32 whole, F32 alpha, Meta<"BLOCK_M"> BLOCK_M,
         Meta<"BLOCK_N"> BLOCK_N, Meta<"BLOCK_K"> BLOCK_K, Meta<"SPLITS"> SPLITS, Meta<"GROUP_M", int, 8> GROUP_M,
         Meta<"B_TRANS", bool, false> B_TRANS, Meta<"SCALED", bool, false> SCALED,
         Meta<"PRECISE_ACC", int, 0> PRECISE_ACC, Meta<"ACT", int, 0> ACT, Meta<"BIAS", bool, false> BIAS,
         Meta<"RESIDUAL", bool, false> RESIDUAL, Meta<"SCALE", bool, false> SCALE,
         Meta<"EDGE_SHIFT", bool, true> EDGE_SHIFT) {
        const int bm = static_cast<int>(BLOCK_M), bn = static_cast<int>(BLOCK_N);
        const int splits = static_cast<int>(SPLITS);
        auto pid = program_id(0);
        auto in_tail = pid >= whole;
        auto q = maximum(pid - whole, 0);  // the program's place in the tail
        auto slot = q / splits;            // its tile among the tail's
        auto s = q % splits;               // its slice
        auto k_lo = where(in_tail, s * k_chunk, 0);
        auto k_hi = where(in_tail, minimum(k_lo + k_chunk, K), K);
        // EDGE_SHIFT: the host makes the tail whole columns of the last group of tile rows,
        // so the shifted last row and the row above it are computed alike.
        auto t = detail::gemm_tile(a, b, M, N, K, lda, ldb, bm, bn, static_cast<int>(BLOCK_K),
                                   static_cast<int>(GROUP_M), static_cast<bool>(B_TRANS),
                                   static_cast<int>(PRECISE_ACC), std::pair{k_lo, k_hi},
                                   where(in_tail, whole + slot, pid), static_cast<bool>(EDGE_SHIFT) && !RESIDUAL);
        auto acc = t.acc;
        auto finish = !in_tail;  // whether this program stores the tile
        const int64_t tile_elems = int64_t{bm} * bn;
        auto offs = arange(0, bm).col().template cast<i64>() * bn + arange(0, bn).row();
        if_(in_tail, [&] {
          auto first = slot.template cast<i64>() * (splits * tile_elems);  // the tile's slice 0
          store(partials + (first + s.template cast<i64>() * tile_elems) + offs, acc);
          auto before = atomic_add(counters + slot, 1, MemOrder::AcqRel);
          finish = before == splits - 1;
          if_(finish, [&] {
            acc = load(partials + first + offs);
            for (int j = 1; j < splits; ++j) acc = acc + load(partials + (first + j * tile_elems) + offs);
            store(counters + slot, scalar<int32_t>(0));
          });
        });
        if (SCALED) acc = acc * (load(scale_a).template cast<f32>() * load(scale_b).template cast<f32>());
        detail::GemmEpilogue e{static_cast<bool>(SCALE), static_cast<bool>(BIAS), static_cast<bool>(RESIDUAL),
                               static_cast<int>(ACT)};
        acc = detail::gemm_epilogue<TBias, Out>(acc, e, t.rm, t.rn, t.m_ok, t.n_ok, bias, residual, ldc, alpha);
        store(c + t.rm.col().template cast<i64>() * ldc + t.rn.row(), acc.template cast<Out>(),
              t.m_ok.col() && t.n_ok.row() && finish);
      });
  return k;
}

// The K blocks a tail tile's fix-up costs in the tiling rule's units (its slices'
// partials written and read back through L2, the counter's round trip): ~2.5 us against
// ~0.44 us per 128x128x64 block on an H200 (bench/NOTES.md).
inline constexpr int64_t kTailFixupBlocks = 6;

// How a GEMM of `tiles` output tiles of `k_blocks` K blocks runs on `wave` programs at
// once: whole (tail_tiles 0), or with the tiles of its partial last wave split into
// `slices` (as many as fill the wave, at most 8, slices of 4+ K blocks), whichever
// costs fewer K-block times per program; no split without a full wave before it.
struct TailSplit {
  int64_t tail_tiles = 0, slices = 1;
  double cost = 0;  // in K blocks of one tile, the critical path of the busiest program
};
inline TailSplit plan_tail_split(int64_t tiles, int64_t k_blocks, int64_t wave) {
  int64_t full = tiles / wave, rem = tiles % wave;
  TailSplit whole{0, 1, static_cast<double>((full + (rem > 0 ? 1 : 0)) * k_blocks)};
  if (rem == 0 || full == 0) return whole;
  int64_t s = std::min<int64_t>({wave / rem, k_blocks / 4, 8});
  if (s < 2) return whole;
  int64_t chunk = (k_blocks + s - 1) / s;
  s = (k_blocks + chunk - 1) / chunk;
  TailSplit split{rem, s, static_cast<double>(full * k_blocks + chunk + kTailFixupBlocks)};
  return split.cost < whole.cost ? split : whole;
}

namespace detail {

// The tiles a launch of `tiles` output tiles ([tiles_m rows of them] in groups of
// `group_m` rows) splits when waves are `wave` programs: those past the last full wave
// (all when there is none), rounded up to whole columns of the last group so that the
// last row of tiles and the one above it (which it overlaps with EDGE_SHIFT) are
// computed alike and write the same values.
inline int64_t split_tail_tiles(int64_t tiles, int64_t tiles_m, int64_t group_m, int64_t wave) {
  int64_t rem = tiles % wave;
  if (rem == 0) return 0;
  int64_t last_rows = tiles_m - (tiles_m - 1) / group_m * group_m;
  return std::min(tiles, (rem + last_rows - 1) / last_rows * last_rows);
}

// The split-tail GEMM in waves of `wave` programs (SPLIT_TAIL x the SMs) on aligned
// operands; arguments as gemm_split_k's. Scales: device pointers to one f32 each, or
// nullptr.
template <class TA, class TB, class TBias, class C, class GA, class GB, class Scale, class Bias, class Res>
void gemm_split_tail(C& c, const GA& ga, const GB& gb, const Scale& scale_a, const Scale& scale_b, const Bias& bias,
                     const Res& residual, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, float alpha,
                     Config tile, const Config& epi, int64_t slices, int64_t wave) {
  using Out = buffer_elem_t<C>;
  constexpr bool scaled = !std::is_same_v<Scale, std::nullptr_t>;
  constexpr bool device = is_device_buffer_v<C>;
  int64_t bm = tile.get("BLOCK_M"), bn = tile.get("BLOCK_N"), bk = tile.get("BLOCK_K");
  int64_t group_m = tile.has("GROUP_M") ? tile.get("GROUP_M") : 8;
  int64_t tiles_m = (M + bm - 1) / bm, tiles = tiles_m * ((N + bn - 1) / bn);
  int64_t k_blocks = (K + bk - 1) / bk;
  int64_t k_chunk = (k_blocks + slices - 1) / slices * bk;
  slices = (K + k_chunk - 1) / k_chunk;  // no empty slice
  int64_t tail = slices > 1 ? split_tail_tiles(tiles, tiles_m, group_m, wave) : 0;
  tile.set("SPLITS", std::max<int64_t>(slices, 1));
  tile.set("SCALED", scaled);
  for (const char* key : {"ACT", "BIAS", "RESIDUAL", "SCALE"}) tile.set(key, epi.has(key) ? epi.get(key) : 0);
  tile.warp_specialize = 0;  // every warp takes part in the count and the fix-up
  tile.persistent = 0;
  int64_t whole = tiles - tail;
  size_t n = static_cast<size_t>(std::max<int64_t>(tail * slices * bm * bn, 1));
  auto run = [&](const auto& ws, const auto& counters) {
    auto launch = [&](const auto& sa, const auto& sb) {
      matmul_split_tail_kernel<TA, TB, TBias, Out, buffer_elem_t<std::decay_t<decltype(sa)>>>().launch(
          grid(whole + tail * slices), tile, c, ga, gb, sa, sb, bias, residual, ws, counters, M, N, K, lda, ldb, N,
          k_chunk, whole, alpha);
    };
    if constexpr (scaled) launch(scale_a, scale_b);
    else launch(ga, ga);  // unread without SCALED
  };
  if constexpr (device) {
    if (tail > static_cast<int64_t>(cuda::kStreamCounters))
      user_error("GEMM with SPLIT_TAIL: its " + std::to_string(tail) + " split tiles (waves of " +
                     std::to_string(wave) + " programs) need more than the " + std::to_string(cuda::kStreamCounters) +
                     " counters there are",
                 SourceLoc{}, "Use a smaller SPLIT_TAIL (programs per SM), or larger tiles");
    auto stream = static_cast<CUstream>(current_launch_stream());
    StreamScratch<float> ws(n);
    DevicePtr<int32_t> counters(reinterpret_cast<int32_t*>(cuda::stream_counters(stream)), cuda::kStreamCounters);
    run(ws.get(), counters);
  } else {
    std::vector<float> ws(n);
    std::vector<int32_t> counters(static_cast<size_t>(std::max<int64_t>(tail, 1)), 0);
    run(ws, counters);
  }
}

}  // namespace detail
}  // namespace tilefuse::kernels
