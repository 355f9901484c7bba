#pragma once
// GEMM with a fused epilogue: C[M, N] = epilogue(A[M, K] . B[K, N]) with A row-major, B
// row-major or transposed (B_TRANS: B given as [N, K] row-major, i.e. a column-major
// B), f16/bf16 inputs, f32 accumulation, f16/bf16/f32 output. The epilogue, in order:
// scale (C = alpha * AB), + bias (one value per column), activation (ReLU, tanh-GELU,
// SiLU), + residual ([M, N] like C). Programs walk output tiles in groups of GROUP_M
// rows of tiles so that neighbouring programs share A and B tiles in L2. Any M, N, K:
// edge tiles are masked (loads read 0, stores skip).
#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/gemm_operands.hpp"
#include "tilefuse/kernels/gemm_split_k.hpp"
#include "tilefuse/kernels/gemm_tile.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

struct MatmulOptions {
  bool b_trans = false;     // B is [N, K] row-major (a transposed view)
  float alpha = 1.0f;       // C = alpha * A.B (+ ...)
  Activation activation = Activation::none;
};

template <class T, class Out>
const auto& matmul_kernel() {
  static auto k = kernel(std::string("matmul_") + name(dtype_v<T>) + "_" + name(dtype_v<Out>),
      {"c", "a", "b", "bias", "residual", "M", "N", "K", "lda", "ldb", "ldc", "alpha"},
      [](Ptr<Out> c, Ptr<const T> a, Ptr<const T> b, Ptr<const T> bias, Ptr<const Out> residual, I32 M, I32 N,
         I32 K, I64 lda, I64 ldb, I64 ldc, F32 alpha, Meta<"BLOCK_M"> BLOCK_M, Meta<"BLOCK_N"> BLOCK_N,
         Meta<"BLOCK_K"> BLOCK_K, Meta<"GROUP_M", int, 8> GROUP_M, Meta<"B_TRANS", bool, false> B_TRANS,
         Meta<"ACT", int, 0> ACT, Meta<"BIAS", bool, false> BIAS, Meta<"RESIDUAL", bool, false> RESIDUAL,
         Meta<"SCALE", bool, false> SCALE, Meta<"EDGE_SHIFT", bool, true> EDGE_SHIFT,
         Meta<"EDGE_SHIFT_N", bool, true> EDGE_SHIFT_N) {
        // EDGE_SHIFT (EDGE_SHIFT_N): the last row (column) of tiles ends at row M (column
        // N) (gemm_tile), unless c is also read (RESIDUAL: c may be the residual, and
        // elements written twice would add it twice).
        const bool shift = static_cast<bool>(EDGE_SHIFT) && !RESIDUAL;
        const bool shift_n = static_cast<bool>(EDGE_SHIFT_N) && !RESIDUAL;
        auto t = detail::gemm_tile(a, b, M, N, K, lda, ldb, static_cast<int>(BLOCK_M), static_cast<int>(BLOCK_N),
                                   static_cast<int>(BLOCK_K), static_cast<int>(GROUP_M), static_cast<bool>(B_TRANS),
                                   0, std::nullopt, std::nullopt, shift,
                                   shift_n ? detail::edge_columns<T, Out>() : 0);
        detail::GemmEpilogue e{static_cast<bool>(SCALE), static_cast<bool>(BIAS), static_cast<bool>(RESIDUAL),
                               static_cast<int>(ACT)};
        auto acc = detail::gemm_epilogue<T, Out>(t.acc, e, t.rm, t.rn, t.m_ok, t.n_ok, bias, residual, ldc, alpha);
        // A block of the [M, N] view of c: TMA writes it on sm_90 (when ldc allows).
        store(tensor_view(c, {M, N}, {ldc, 1}), {t.m0, t.n0}, acc.template cast<Out>());
      });
  return k;
}

// On wgmma, the output tile of an M x N GEMM on `sms` SMs: 128x256 (two warpgroups),
// smaller for small M or N, and 64x128 over one warpgroup where the large tiles would
// leave more than half the SMs idle (4x the tiles). H200, bench/NOTES.md, bf16 µs:
// 1024^3 15.4 -> 11.4, 128x8192x8192 83.7 -> 67.8, 512x4096x4096 43.5 -> 37.1,
// 256x4096x14336 133.7 -> 99.3; at 128+ tiles (2048^3, 4096x1024x1024) 128x256 stays
// ahead (27.8 against 35.9 us).
inline std::pair<int64_t, int64_t> wgmma_output_tile(int64_t M, int64_t N, int64_t sms) {
  auto side = [](int64_t v, int64_t lo, int64_t hi) { return std::clamp(next_pow2(v), lo, hi); };
  int64_t bm = side(M, 64, 128), bn = side(N, 16, 256);
  int64_t tiles = ((M + bm - 1) / bm) * ((N + bn - 1) / bn);
  if (2 * tiles < sms) bm = 64, bn = std::min<int64_t>(bn, 128);
  return {bm, bn};
}

// The wgmma tiling of an M x N x K GEMM with K blocks of `bk` elements of `elem_bytes`
// (the 16-bit GEMM and the 8-bit one share it) on `sms` SMs (0: never split K).
// 128x256x64 tiles, two warpgroups, 4 stages (one holds the MMAs still in flight): 740
// TFLOP/s at 4096^3 (H100, bench/NOTES.md). 256x128x64 measured the same there and at
// 8192x8192x1024 but 620 against 661 at 4000^3. Tiles of 64 rows at least (the
// instruction's M). Groups of 16 tile rows: +0.4-1.6% over 8 on every standard shape
// (H200, bf16 and f16; K = 1024 most), the B tiles a group shares staying in L2.
// Where the large tiles leave more than half the SMs idle (H200, bench/NOTES.md, "GEMMs
// with few output tiles"): 128x128 tiles where they fill over half the SMs in one wave
// (below), else 64x128 tiles, 6 stages where they fit the SMs in one wave (one program
// per SM: 1024^3 11.9 -> 9.2 us, 128x8192x8192 53 -> 50) and 4 where they need two per
// SM (512x4096x4096: 36.5 against 41.8, before the 128x128 tiles). Fewer (skinny GEMMs:
// inference's projections): 64x64 tiles, two per SM, K split into SPLIT_K slices
// (gemm_split_k.hpp) to fill them (64x4096x4096: 19.4 us against 22.5 in 64x256 tiles);
// where the partials would cost too much, the large tiles split.
// Decode-sized M (≤ 16): 16-row tiles on mma.sync, where wgmma's 64-row minimum would
// stage and multiply 4-64x the rows of A, with K split to fill two programs per SM (H200,
// bench/NOTES.md, µs: 1 / 8 / 16 x 4096 x 4096 bf16 17.6 / 17.6 / 18.0 against 20.9 / 20.7
// / 20.5 in 64x64 wgmma tiles; 8-bit 1 x 8192 x 8192 29.5 against 36.2). Where they need
// no split (N ≥ ~8K) the wgmma tiles stay ahead (16x14336x4096: 40.4 against 44.0).
inline Config wgmma_gemm_config(int64_t M, int64_t N, int64_t K, int64_t bk, int64_t sms, int elem_bytes) {
  auto tiled = [&](int64_t bm, int64_t bn, int stages = 4, int warps = 0) {
    if (warps == 0) warps = bm * bn >= 128 * 256 ? 8 : 4;
    return Config{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"GROUP_M", 16}, num_warps(warps),
                  num_stages(stages)};
  };
  if (M <= 16 && sms > 0) {
    Config narrow = tiled(16, 64);
    if (int64_t splits = split_k_slices(M, N, K, narrow, 2 * sms, elem_bytes); splits > 1)
      return narrow.set("SPLIT_K", splits);
  }
  auto tiles_of = [&](int64_t bm, int64_t bn) { return ((M + bm - 1) / bm) * ((N + bn - 1) / bn); };
  auto [bm, bn] = wgmma_output_tile(M, N, 0);
  Config big = tiled(bm, bn);
  int64_t slots = std::max<int64_t>(sms, 1);
  if (2 * tiles_of(bm, bn) >= slots) {
    // (8-bit: the large tiles whole. Their split tails measured slower: 640x4096x4096 33.6
    // us split against 26.1 whole; the other tiling is not measured there.)
    if (bm != 128 || bn != 256 || sms <= 0 || elem_bytes == 1) return big;
    // Tiles whose last wave is partial (one program per SM): the wide tiles or 128x128
    // ones on 6 stages, whole or with that wave's tiles split (plan_tail_split),
    // whichever costs less. Measured on an H200 (bench/NOTES.md, "The last wave's tiles
    // split"): a wide tile's K block costs 1.72 of a 128x128 one's (132 tiles of each, K
    // 4096: 46.6 against 27.1 us, 0.42 us per 128x128 block); a round of slices costs
    // 7-20 us beyond its MMAs, growing with S: 16 + 2.5 S 128x128 blocks, 8 + 2.7 S wide.
    int64_t k_blocks = (K + bk - 1) / bk, tiles_m = (M + 127) / 128;
    TailSplit wide = plan_tail_split(tiles_m, (N + 255) / 256, 16, k_blocks, slots,
                                     [](int64_t s) { return 8.0 + 2.7 * static_cast<double>(s); });
    TailSplit narrow = plan_tail_split(tiles_m, (N + 127) / 128, 16, k_blocks, slots,
                                       [](int64_t s) { return 16.0 + 2.5 * static_cast<double>(s); });
    auto split = [](Config c, const TailSplit& t) {
      return t.tail_tiles > 0 ? c.set("SPLIT_K", t.slices).set("SPLIT_TAIL", 1) : c;
    };
    if (narrow.cost < 1.72 * wide.cost) return split(tiled(128, 128, 6, 8), narrow);
    return split(big, wide);
  }
  // 128x128 tiles on two warpgroups, 6 stages, where they fill more than half the SMs in
  // one wave (one program per SM): the same MMAs per SM as two 64x128 tiles with half the
  // operand traffic and a deeper pipeline (384 / 512 x 4096 x 4096: 27.6 / 28.9 us
  // against 36.6 / 37.7; 4 stages: 38.3 at 512).
  if (bm == 128 && bn == 256 && sms > 0)
    if (int64_t t = tiles_of(128, 128); 2 * t > slots && t <= slots) return tiled(128, 128, 6, 8);
  int64_t sn = std::min<int64_t>(bn, 128);
  if (int64_t t = tiles_of(64, sn); 2 * t >= slots) {
    // Unless each SM's share of the MMAs is large (past ~200 MFLOP): then the large
    // tiles' faster main loop (two warpgroups, half the operand traffic per MMA) repays
    // a split's fixed cost (partials and the reduction, ~7 us): 256x4096x14336, 228
    // MFLOP per SM: 56 us split against 66; 128x8192x8192, 130 MFLOP: 53 against 49.5.
    if (sms > 0 && 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) / sms > 2e8)
      if (int64_t splits = split_k_slices(M, N, K, big, sms, elem_bytes); splits > 1)
        return big.set("SPLIT_K", splits);
    return tiled(64, sn, t <= slots ? 6 : 4);
  }
  if (sms > 0) {
    Config skinny = tiled(64, std::min<int64_t>(bn, 64), 6);
    if (int64_t splits = split_k_slices(M, N, K, skinny, 2 * sms, elem_bytes); splits > 1)
      return skinny.set("SPLIT_K", splits);
    if (int64_t splits = split_k_slices(M, N, K, big, sms, elem_bytes); splits > 1) return big.set("SPLIT_K", splits);
  }
  return tiled(64, sn, 6);
}

// wgmma: wgmma_gemm_config. mma.sync: 128x128 output tiles (smaller for small M or N), K
// in steps of 32, 4 warps (a 64x64 accumulator per warp), 3 pipeline stages: the fastest
// spill-free tiling measured on an H100 (bench/NOTES.md: 421 TFLOP/s at 4096^3 bf16).
inline Config matmul_heuristic(int64_t M, int64_t N, int64_t K, bool warpgroup_mma = false, int64_t sms = 132) {
  auto side = [](int64_t v, int64_t lo, int64_t hi) { return std::clamp(next_pow2(v), lo, hi); };
  if (warpgroup_mma) return wgmma_gemm_config(M, N, K, side(K, 16, 64), sms, 2);
  int64_t bm = side(M, 16, 128), bn = side(N, 16, 128), bk = side(K, 16, 32);
  int warps = static_cast<int>(std::clamp<int64_t>(bm * bn / (64 * 64), 1, 4));
  return Config{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, num_warps(warps), num_stages(3)};
}

// The launch config: `c`'s tiling with the epilogue's meta-parameters.
inline Config matmul_config(const Config& c, const MatmulOptions& o, bool bias, bool residual) {
  Config k = c;
  k.set("B_TRANS", o.b_trans);
  k.set("ACT", static_cast<int64_t>(o.activation));
  k.set("BIAS", bias);
  k.set("RESIDUAL", residual);
  k.set("SCALE", o.alpha != 1.0f);
  return k;
}

// matmul(c, a, b, M, N, K[, options, bias, residual, config]): c = epilogue(a . b).
// a: [M, K] row-major; b: [K, N] row-major, or [N, K] row-major with options.b_trans;
// c and residual: [M, N] row-major; bias: [N]. Pass nullptr to leave bias or residual out.
template <class C, class A, class B, class Bias = std::nullptr_t, class Res = std::nullptr_t>
void matmul(C&& c, const A& a, const B& b, int64_t M, int64_t N, int64_t K, MatmulOptions o = {},
            const Bias& bias = nullptr, const Res& residual = nullptr, ConfigOverride cfg = {}) {
  using T = buffer_elem_t<A>;
  using Out = buffer_elem_t<C>;
  static_assert(!std::is_same_v<T, float>, "matmul takes f16 or bf16 inputs (a and b)");
  if (M <= 0 || N <= 0 || K <= 0)
    user_error("matmul: M, N and K must be positive, got " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                   std::to_string(K),
               SourceLoc{}, "Pass the sizes of a [M, K] and b [K, N]");
  constexpr bool has_bias = !std::is_same_v<Bias, std::nullptr_t>;
  constexpr bool has_res = !std::is_same_v<Res, std::nullptr_t>;
  bool wgmma = warpgroup_mma_usable<A>();
  Config k = matmul_config(cfg ? *cfg : matmul_heuristic(M, N, K, wgmma, wgmma ? gpu_sm_count() : 132), o, has_bias,
                           has_res);
  // SPLIT_K = S: S programs per output tile sum slices of K (gemm_split_k.hpp).
  SplitK splits = take_split_k(k, "matmul");
  int64_t tiles = ((M + k.get("BLOCK_M") - 1) / k.get("BLOCK_M")) * ((N + k.get("BLOCK_N") - 1) / k.get("BLOCK_N"));
  detail::with_aligned_operands<T, T>(a, b, M, N, K, o.b_trans, tiles, [&](const auto& ga, const auto& gb, int64_t lda,
                                                                    int64_t ldb, bool) {
    auto launch = [&](const auto& bias_arg, const auto& res_arg) {
      auto whole_tiles = [&](int64_t n) {  // tiles 0 .. n-1 of the grouped order
        matmul_kernel<T, Out>().launch(grid(n), k, c, ga, gb, bias_arg, res_arg, M, N, K, lda, ldb, N, o.alpha);
      };
      if (splits.slices > 1)
        return detail::matmul_split_k<T>(c, ga, gb, bias_arg, res_arg, M, N, K, lda, ldb, o.alpha, o.b_trans, k, k,
                                         splits, whole_tiles);
      whole_tiles(tiles);
    };
    if constexpr (has_bias && has_res) launch(bias, residual);
    else if constexpr (has_bias) launch(bias, c);
    else if constexpr (has_res) launch(ga, residual);
    else launch(ga, c);
  });
}

}  // namespace tilefuse::kernels
