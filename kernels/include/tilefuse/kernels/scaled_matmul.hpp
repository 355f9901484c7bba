#pragma once
// 8-bit float GEMM, the operation of torch._scaled_mm: C[M, N] = epilogue(scale_a *
// scale_b * (A . B)) with A [M, K] and B [N, K] row-major (K contiguous in both: the
// layout Hopper's tensor cores read 8-bit operands in; B [K, N] works too, B_TRANS = 0:
// the host function transposes it once into scratch, the kernel alone would copy each
// tile K-major in its main loop), each f8e4m3 or f8e5m2, f32 accumulation,
// per-tensor f32 scales read from device memory (computed there, no host sync), then an
// optional bias (one Out value per column) and activation; Out f16, bf16 or f32.
// Hopper's 8-bit MMAs accumulate with fewer bits than f32 (results ~1e-4 relative from an
// exact f32 sum at K ~ 100): PRECISE_ACC adds each K block's product in f32 instead
// (1: after the block's MMAs; 2: the previous block's, while this block's run).
#include "tilefuse/kernels/matmul.hpp"

namespace tilefuse::kernels {

template <class TA, class TB, class Out>
const auto& scaled_matmul_kernel() {
  static auto k = kernel(std::string("scaled_matmul_") + name(dtype_v<TA>) + "_" + name(dtype_v<TB>) + "_" +
                             name(dtype_v<Out>),
      {"c", "a", "b", "scale_a", "scale_b", "bias", "M", "N", "K", "lda", "ldb", "ldc"},
      [](Ptr<Out> c, Ptr<const TA> a, Ptr<const TB> b, Ptr<const f32> scale_a, Ptr<const f32> scale_b,
         Ptr<const Out> bias, I32 M, I32 N, I32 K, I64 lda, I64 ldb, I64 ldc, Meta<"BLOCK_M"> BLOCK_M,
         Meta<"BLOCK_N"> BLOCK_N, Meta<"BLOCK_K"> BLOCK_K, Meta<"GROUP_M", int, 8> GROUP_M,
         Meta<"B_TRANS", bool, true> B_TRANS, Meta<"ACT", int, 0> ACT, Meta<"BIAS", bool, false> BIAS,
         Meta<"PRECISE_ACC", int, 0> PRECISE_ACC, Meta<"EDGE_SHIFT_N", bool, true> EDGE_SHIFT_N) {
        // The edge tiles end at row M and column N (gemm_tile): c is never read here.
        auto t = detail::gemm_tile(a, b, M, N, K, lda, ldb, static_cast<int>(BLOCK_M), static_cast<int>(BLOCK_N),
                                   static_cast<int>(BLOCK_K), static_cast<int>(GROUP_M), static_cast<bool>(B_TRANS),
                                   static_cast<int>(PRECISE_ACC), std::nullopt, std::nullopt, true,
                                   EDGE_SHIFT_N ? detail::edge_columns<TB, Out>() : 0);
        auto acc = t.acc * (load(scale_a) * load(scale_b));
        if (BIAS) acc = acc + load(bias + t.rn, t.n_ok, 0.0f).template cast<f32>().row();
        acc = detail::activate<Out>(acc, static_cast<int>(ACT));
        store(tensor_view(c, {M, N}, {ldc, 1}), {t.m0, t.n0}, acc.template cast<Out>());
      });
  return k;
}

struct ScaledMatmulOptions {
  bool b_trans = true;  // B is [N, K] row-major (torch._scaled_mm's column-major B)
  Activation activation = Activation::none;
  // false: the tensor cores accumulate over all of K (torch's use_fast_accum=True);
  // true: over one K block, then an f32 add (its default), ~1e-3 closer on long K.
  bool precise_accumulation = false;
};

// On wgmma, the 16-bit GEMM's tiles with K blocks of 128 bytes, i.e. twice the elements:
// the same shared memory per stage and the same 128-byte swizzle.
inline Config scaled_matmul_heuristic(int64_t M, int64_t N, int64_t K, bool warpgroup_mma = false,
                                      bool precise_accumulation = false, int64_t sms = 132) {
  auto side = [](int64_t v, int64_t lo, int64_t hi) { return std::clamp(next_pow2(v), lo, hi); };
  if (warpgroup_mma) {
    if (precise_accumulation) {
      // A second accumulator (the block's product): 128 columns over 8 warps (256 spill);
      // K blocks of 256 halve the adds (H200, bench/NOTES.md: 1064 TFLOP/s at 4096^3).
      int64_t bm = side(M, 64, 128), bn = side(N, 16, 128), bk = side(K, 32, 256);
      return Config{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"GROUP_M", 16}, num_warps(8), num_stages(3)};
    }
    // The 16-bit GEMM's tiling, split-K included (8-bit, H200: 1024^3 10.9 -> 8.5 us,
    // 256x4096x14336 73.0 -> 60.5 with 64x128 where 128x256 leaves SMs idle).
    return wgmma_gemm_config(M, N, K, side(K, 32, 128), sms, 1);
  }
  // mma.sync (sm_89+): K blocks of 32, one instruction deep; 64 spills at 128x128 (ptxas).
  int64_t bm = side(M, 16, 128), bn = side(N, 16, 128), bk = 32;
  int warps = static_cast<int>(std::clamp<int64_t>(bm * bn / (64 * 64), 1, 4));
  return Config{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, num_warps(warps), num_stages(3)};
}

// The launch config: `c`'s tiling with the options' meta-parameters (a config that names
// PRECISE_ACC keeps its mode).
inline Config scaled_matmul_config(const Config& c, const ScaledMatmulOptions& o, bool bias) {
  Config k = c;
  k.set("B_TRANS", o.b_trans);
  k.set("ACT", static_cast<int64_t>(o.activation));
  k.set("BIAS", bias);
  if (!k.has("PRECISE_ACC")) k.set("PRECISE_ACC", o.precise_accumulation ? 1 : 0);
  return k;
}

// scaled_matmul(c, a, b, scale_a, scale_b, M, N, K[, options, bias, config]):
// c = epilogue(*scale_a * *scale_b * (a . b)). a: [M, K]; b: [N, K] (or [K, N] with
// options.b_trans = false); scale_a, scale_b: one f32 each; c: [M, N]; bias: [N] of c's
// type or nullptr. All row-major.
template <class C, class A, class B, class S, class Bias = std::nullptr_t>
void scaled_matmul(C&& c, const A& a, const B& b, const S& scale_a, const S& scale_b, int64_t M, int64_t N, int64_t K,
                   ScaledMatmulOptions o = {}, const Bias& bias = nullptr, ConfigOverride cfg = {}) {
  using TA = buffer_elem_t<A>;
  using TB = buffer_elem_t<B>;
  using Out = buffer_elem_t<C>;
  static_assert(is_float8(dtype_v<TA>) && is_float8(dtype_v<TB>),
                "scaled_matmul takes 8-bit float inputs (f8e4m3 or f8e5m2); use matmul for f16/bf16");
  static_assert(std::is_same_v<buffer_elem_t<S>, float>, "scaled_matmul's scales are f32");
  if (M <= 0 || N <= 0 || K <= 0)
    user_error("scaled_matmul: M, N and K must be positive, got " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                   std::to_string(K),
               SourceLoc{}, "Pass the sizes of a [M, K] and b [N, K]");
  Config k = scaled_matmul_config(cfg ? *cfg
                                      : scaled_matmul_heuristic(M, N, K, warpgroup_mma_usable<A>(),
                                                                o.precise_accumulation, gpu_sm_count()),
                                  o, !std::is_same_v<Bias, std::nullptr_t>);
  // SPLIT_K = S: S programs per output tile sum slices of K (gemm_split_k.hpp).
  SplitK splits = take_split_k(k, "scaled_matmul");
  int64_t tiles = ((M + k.get("BLOCK_M") - 1) / k.get("BLOCK_M")) * ((N + k.get("BLOCK_N") - 1) / k.get("BLOCK_N"));
  detail::with_aligned_operands<TA, TB>(a, b, M, N, K, o.b_trans, tiles, [&](const auto& ga, const auto& gb, int64_t lda,
                                                                       int64_t ldb, bool b_trans) {
    k.set("B_TRANS", b_trans);  // an 8-bit B [K, N] may have been transposed
    auto launch = [&](const auto& bias_arg) {
      auto whole_tiles = [&](int64_t n) {  // tiles 0 .. n-1 of the grouped order
        scaled_matmul_kernel<TA, TB, Out>().launch(grid(n), k, c, ga, gb, scale_a, scale_b, bias_arg, M, N, K, lda,
                                                   ldb, N);
      };
      if (splits.slices > 1)
        return detail::gemm_split_k<TA, TB, Out>(c, ga, gb, scale_a, scale_b, bias_arg, c, M, N, K, lda, ldb, 1.0f,
                                                 b_trans, k, k, splits, whole_tiles);
      whole_tiles(tiles);
    };
    if constexpr (std::is_same_v<Bias, std::nullptr_t>) launch(c);
    else launch(bias);
  });
}

}  // namespace tilefuse::kernels
