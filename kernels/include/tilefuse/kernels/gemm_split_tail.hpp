#pragma once
// GEMMs whose output tiles leave a partial last wave: the tiles of the full waves are
// computed whole (the GEMM's own kernel), and each tile of the last wave by S programs
// that sum slices of K, so that the last wave keeps every SM busy for 1/S of a tile's
// time instead of a few SMs for all of it (stream-K's data-parallel + split hybrid). A
// slice's program stores its partial tile to a workspace and counts itself in on the
// tile's counter (an acquire-release atomic); the last to arrive adds the tile's
// partials in slice order (the same bits whichever arrives last), applies the
// epilogue, stores the tile and zeroes the counter for the next launch. No reduction
// kernel.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/gemm_operands.hpp"
#include "tilefuse/kernels/gemm_tile.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// Grid (tiles x SPLITS): programs s = 0 .. SPLITS-1 of tile `first_tile` + t (of the
// grouped order) sum its K blocks [s k_chunk, (s + 1) k_chunk). partials: [tiles,
// SPLITS, BLOCK_M, BLOCK_N] f32; counters: one per tile, zero at launch (and left zero).
// The last to count itself in adds the tile's partials in slice order.
// Scales (SCALED) of type TS: f32 for 8-bit operands; without SCALED they are unread.
template <class TA, class TB, class TBias, class Out, class TS>
const auto& matmul_split_tail_kernel() {
  static auto k = kernel(std::string("matmul_split_tail_") + name(dtype_v<TA>) + "_" + name(dtype_v<TB>) + "_" +
                             name(dtype_v<TBias>) + "_" + name(dtype_v<Out>) + "_" + name(dtype_v<TS>),
      {"c", "a", "b", "scale_a", "scale_b", "bias", "residual", "partials", "counters", "M", "N", "K", "lda", "ldb",
       "ldc", "k_chunk", "first_tile", "alpha"},
      [](Ptr<Out> c, Ptr<const TA> a, Ptr<const TB> b, Ptr<const TS> scale_a, Ptr<const TS> scale_b,
         Ptr<const TBias> bias, Ptr<const Out> residual, Ptr<float> partials, Ptr<int32_t> counters, I32 M, I32 N,
         I32 K, I64 lda, I64 ldb, I64 ldc, I32 k_chunk, I32 first_tile, F32 alpha, Meta<"BLOCK_M"> BLOCK_M,
         Meta<"BLOCK_N"> BLOCK_N, Meta<"BLOCK_K"> BLOCK_K, Meta<"SPLITS"> SPLITS, Meta<"GROUP_M", int, 8> GROUP_M,
         Meta<"B_TRANS", bool, false> B_TRANS, Meta<"SCALED", bool, false> SCALED,
         Meta<"PRECISE_ACC", int, 0> PRECISE_ACC, Meta<"ACT", int, 0> ACT, Meta<"BIAS", bool, false> BIAS,
         Meta<"RESIDUAL", bool, false> RESIDUAL, Meta<"SCALE", bool, false> SCALE,
         Meta<"EDGE_SHIFT", bool, true> EDGE_SHIFT, Meta<"FIXUP_LOOP", bool, true> FIXUP_LOOP) {
        const int bm = static_cast<int>(BLOCK_M), bn = static_cast<int>(BLOCK_N);
        const int splits = static_cast<int>(SPLITS);
        auto pid = program_id(0);
        auto slot = pid / splits;  // the program's tile among the split ones
        auto s = pid % splits;     // its slice
        auto k_lo = s * k_chunk;
        // EDGE_SHIFT: the host splits whole columns of the last group of tile rows, so the
        // shifted last row and the row above it are computed alike.
        auto t = detail::gemm_tile(a, b, M, N, K, lda, ldb, bm, bn, static_cast<int>(BLOCK_K),
                                   static_cast<int>(GROUP_M), static_cast<bool>(B_TRANS),
                                   static_cast<int>(PRECISE_ACC), std::pair{k_lo, minimum(k_lo + k_chunk, K)},
                                   first_tile + slot, static_cast<bool>(EDGE_SHIFT) && !RESIDUAL);
        auto acc = t.acc;
        const int64_t tile_elems = int64_t{bm} * bn;
        auto offs = arange(0, bm).col().template cast<i64>() * bn + arange(0, bn).row();
        auto first = slot.template cast<i64>() * (splits * tile_elems);  // the tile's slice 0
        store(partials + (first + s.template cast<i64>() * tile_elems) + offs, acc);
        auto finish = atomic_add(counters + slot, 1, MemOrder::AcqRel) == splits - 1;
        if_(finish, [&] {
          // In slice order (its own slice read back too: keeping it in registers beside the
          // others' spilled). FIXUP_LOOP: one slice at a time, else all loads at once.
          acc = load(partials + first + offs);
          if (FIXUP_LOOP)
            for_range(1, splits, 1, [&](I32 j) {
              acc = acc + load(partials + (first + j.template cast<i64>() * tile_elems) + offs);
            });
          else
            for (int j = 1; j < splits; ++j) acc = acc + load(partials + (first + j * tile_elems) + offs);
          store(counters + slot, scalar<int32_t>(0));
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

// A GEMM's plan for its last wave (plan_tail_split): how many tiles split, into how many
// slices, and what that costs.
struct TailSplit {
  int64_t tail_tiles = 0, slices = 1;
  double cost = 0;  // in K blocks of the tile
};

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
}  // namespace detail

// How a GEMM of `tiles_m` rows of `tiles_n` output tiles (groups of `group_m` rows), K
// blocks `k_blocks` deep, runs in waves of `wave` programs: whole (tail_tiles 0), or with
// the tiles past its last full wave split into `slices` (as many as keep them within
// one wave, at most 8, slices of 4+ K blocks), whichever costs less. Cost: the busiest
// program's K blocks plus, for a split, `fixup(slices)` blocks: a slice's fixed cost (its
// pipeline's start, its partial stored and counted, the last one's reads of the others),
// measured on an H200 at 7-11 us for 128x128 tiles (bench/NOTES.md), 17-28 of their K
// blocks. No split without a full wave before it.
template <class Fixup>
TailSplit plan_tail_split(int64_t tiles_m, int64_t tiles_n, int64_t group_m, int64_t k_blocks, int64_t wave,
                          const Fixup& fixup) {
  int64_t tiles = tiles_m * tiles_n, full = tiles / wave;
  int64_t tail = detail::split_tail_tiles(tiles, tiles_m, group_m, wave);
  TailSplit whole{0, 1, static_cast<double>((full + (tiles % wave > 0 ? 1 : 0)) * k_blocks)};
  if (tail == 0 || full == 0) return whole;
  int64_t s = std::min<int64_t>({wave / tail, k_blocks / 4, 8});
  if (s < 2) return whole;
  int64_t chunk = (k_blocks + s - 1) / s;
  s = (k_blocks + chunk - 1) / chunk;
  TailSplit split{tail, s, static_cast<double>(full * k_blocks + chunk) + fixup(s)};
  return split.cost < whole.cost ? split : whole;
}

namespace detail {

// The split-tail GEMM in waves of `wave` programs (SPLIT_TAIL x the SMs) on aligned
// operands; arguments as gemm_split_k's. Scales: device pointers to one f32 each, or
// nullptr. `whole_tiles(n)` launches the GEMM's own kernel over tiles 0 .. n-1; the split
// tiles follow in a second launch (a kernel of its own: the whole tiles keep their
// kernel's registers and epilogue; the slices queue behind them either way).
template <class TA, class TB, class TBias, class C, class GA, class GB, class Scale, class Bias, class Res>
void gemm_split_tail(C& c, const GA& ga, const GB& gb, const Scale& scale_a, const Scale& scale_b, const Bias& bias,
                     const Res& residual, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, float alpha,
                     Config tile, const Config& epi, int64_t slices, int64_t wave,
                     const std::function<void(int64_t)>& whole_tiles) {
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
  if (device && tail > static_cast<int64_t>(cuda::kStreamCounters))  // (checked before anything is launched)
    user_error("GEMM with SPLIT_TAIL: its " + std::to_string(tail) + " split tiles (waves of " + std::to_string(wave) +
                   " programs) need more than the " + std::to_string(cuda::kStreamCounters) + " counters there are",
               SourceLoc{}, "Use a smaller SPLIT_TAIL (programs per SM), or larger tiles");
  if (tail < tiles) {
    if (!whole_tiles) throw std::logic_error("gemm_split_tail: no kernel for the whole tiles");
    whole_tiles(tiles - tail);
  }
  if (tail == 0) return;
  tile.set("SPLITS", slices);
  tile.set("SCALED", scaled);
  for (const char* key : {"ACT", "BIAS", "RESIDUAL", "SCALE"}) tile.set(key, epi.has(key) ? epi.get(key) : 0);
  tile.warp_specialize = 0;  // every warp takes part in the count and the fix-up
  tile.persistent = 0;
  size_t n = static_cast<size_t>(tail * slices * bm * bn);
  auto run = [&](const auto& ws, const auto& counters) {
    auto launch = [&](const auto& sa, const auto& sb) {
      matmul_split_tail_kernel<TA, TB, TBias, Out, buffer_elem_t<std::decay_t<decltype(sa)>>>().launch(
          grid(tail * slices), tile, c, ga, gb, sa, sb, bias, residual, ws, counters, M, N, K, lda, ldb, N, k_chunk,
          tiles - tail, alpha);
    };
    if constexpr (scaled) launch(scale_a, scale_b);
    else launch(ga, ga);  // unread without SCALED
  };
  if constexpr (device) {
    auto stream = static_cast<CUstream>(current_launch_stream());
    StreamScratch<float> ws(n);
    DevicePtr<int32_t> counters(reinterpret_cast<int32_t*>(cuda::stream_counters(stream)), cuda::kStreamCounters);
    run(ws.get(), counters);
  } else {
    std::vector<float> ws(n);
    std::vector<int32_t> counters(static_cast<size_t>(tail), 0);
    run(ws, counters);
  }
}

}  // namespace detail
}  // namespace tilefuse::kernels
