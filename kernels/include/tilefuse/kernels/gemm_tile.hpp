#pragma once
// One program's output tile of a GEMM (A . B over K through tensor views, TMA and wgmma
// on sm_90a) and the epilogue the GEMM kernels apply to it; shared by the GEMM, the
// 8-bit GEMM and the split-K GEMM.
#include <algorithm>
#include <optional>
#include <utility>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

enum class Activation : int { none = 0, relu = 1, gelu_tanh = 2, silu = 3 };

namespace detail {

// One program's output tile of a GEMM: its place in the grouped order (GROUP_M rows of
// tiles walked column by column, so neighbouring programs share A and B tiles in L2) and
// A . B over K in f32 through blocks of tensor views (zero outside the matrices; TMA on
// sm_90a). b is [K, N], or [N, K] with b_trans. `promote_blocks`: each K block's
// product starts from zero and is added to the f32 sum with FADDs (Hopper's 8-bit MMAs
// keep fewer accumulator bits than f32; this bounds that to one block's MMAs).
struct GemmTile {
  I32 m0, n0;                // the tile's first row and column
  Tile<int32_t, 1> rm, rn;  // the tile's rows and columns
  Tile<bool, 1> m_ok, n_ok;  // which of them exist
  Tile<float, 2> acc;
};

// `k_range`: only K blocks from .first up to .second (split-K; multiples of block_k).
// `tile_index`: the tile's place in the grouped order (default program_id(0)).
// `shift_last_m` / `shift_last_n`: the edge tiles moved inside the matrix (below); only
// where every tile is computed alike (whole, not some split) and C is not also read.
template <class TA, class TB>
GemmTile gemm_tile(const Ptr<const TA>& a, const Ptr<const TB>& b, const I32& M, const I32& N, const I32& K,
                   const I64& lda, const I64& ldb, int block_m, int block_n, int block_k, int group_m, bool b_trans,
                   int promote_blocks = 0, std::optional<std::pair<I32, I32>> k_range = std::nullopt,
                   std::optional<I32> tile_index = std::nullopt, bool shift_last_m = false,
                   int shift_last_n = 0) {
  auto pid = tile_index ? *tile_index : program_id(0);
  auto tiles_m = cdiv(M, block_m);
  auto tiles_n = cdiv(N, block_n);
  auto per_group = tiles_n * group_m;
  auto first_m = (pid / per_group) * group_m;
  auto group_rows = minimum(tiles_m - first_m, group_m);
  auto tile_m = first_m + (pid % per_group) % group_rows;
  auto tile_n = (pid % per_group) / group_rows;
  auto m0 = tile_m * block_m, n0 = tile_n * block_n;
  // `shift_last_m`: the last row of tiles moved up to end at row M (when M >= block_m),
  // so that its A blocks lie inside A; the rows it shares with the tile above get the
  // same values again (the same products in the same order). TMA copies of blocks partly
  // past the tensor's end measured slow at long K (H200, bench/NOTES.md: 200x8192x8192
  // 67 -> 55 us, the time of 256 rows).
  if (shift_last_m) m0 = minimum(m0, maximum(M - block_m, 0));
  // `shift_last_n` (a power of two, 0: off): likewise the last column of tiles moved left
  // to end at N rounded up to that many columns (16 bytes of B's and C's rows: TMA's
  // innermost coordinates stay aligned), so that no B box of a [K, N] view lies wholly
  // past N; the columns it shares with the tile to its left are written twice with the
  // same values. Unlike the row shift it measured no faster (H200, 4096x3000x8192 338.4
  // against 338.7 us): kept for the copies it no longer makes of nothing.
  if (shift_last_n) n0 = minimum(n0, maximum(cdiv(N, shift_last_n) * shift_last_n - block_n, 0));
  auto rm = m0 + arange(0, block_m);
  auto rn = n0 + arange(0, block_n);
  auto m_ok = rm < M;
  auto n_ok = rn < N;
  auto av = tensor_view(a, {M, K}, {lda, 1});
  auto bv = b_trans ? tensor_view(b, {N, K}, {ldb, 1}) : tensor_view(b, {K, N}, {ldb, 1});
  auto acc = zeros<f32>({block_m, block_n});
  auto prev = zeros<f32>({block_m, block_n});  // promote_blocks == 2: the last block's product
  auto block = [&](I32 k0) {
    auto a_tile = load(av, {m0, k0}, {block_m, block_k});
    auto b_tile = b_trans ? trans(load(bv, {n0, k0}, {block_n, block_k})) : load(bv, {k0, n0}, {block_k, block_n});
    if (promote_blocks == 1) {
      acc = acc + dot(a_tile, b_tile);  // b_tile: [BK, BN] either way
    } else if (promote_blocks == 2) {  // the add overlaps this block's MMAs
      auto t = dot(a_tile, b_tile);
      acc = acc + prev;
      prev = t;
    } else {
      acc = dot(a_tile, b_tile, acc);
    }
  };
  if (k_range) for_range(k_range->first, k_range->second, block_k, block);
  else for_range(0, K, block_k, block);
  if (promote_blocks == 2) acc = acc + prev;
  return GemmTile{m0, n0, rm, rn, m_ok, n_ok, acc};
}

// The alignment, in columns, to which a GEMM's last column of tiles is moved (gemm_tile's
// `shift_last_n`): 16 bytes of both B's and C's elements.
template <class TB, class Out>
constexpr int edge_columns() {
  return static_cast<int>(16 / std::min(sizeof(TB), sizeof(Out)));
}

// The activations of the epilogue, on the f32 accumulator; `Out` picks tanh's precision.
template <class Out>
Tile<float, 2> activate(Tile<float, 2> acc, int act) {
  if (act == static_cast<int>(Activation::relu)) acc = maximum(acc, 0.0f);
  if (act == static_cast<int>(Activation::gelu_tanh)) {
    // A 16-bit result cannot see tanh.approx's error (< 2^-10.9 relative).
    auto u = 0.7978845608028654f * (acc + 0.044715f * acc * acc * acc);
    acc = 0.5f * acc * (1.0f + (sizeof(Out) == 2 ? fast_tanh(u) : tanh(u)));
  }
  if (act == static_cast<int>(Activation::silu)) acc = acc * sigmoid(acc);
  return acc;
}

// The epilogue on an f32 tile of C at rows rm and columns rn: alpha (SCALE), bias (one
// value per column), activation, residual ([M, N] with C's row stride ldc).
struct GemmEpilogue {
  bool scale, bias, residual;
  int act;
};
template <class T, class Out>
Tile<float, 2> gemm_epilogue(Tile<float, 2> acc, const GemmEpilogue& e, const Tile<int32_t, 1>& rm,
                             const Tile<int32_t, 1>& rn, const Tile<bool, 1>& m_ok, const Tile<bool, 1>& n_ok,
                             const Ptr<const T>& bias, const Ptr<const Out>& residual, const I64& ldc, const F32& alpha) {
  if (e.scale) acc = acc * alpha;
  if (e.bias) acc = acc + load(bias + rn, n_ok, 0.0f).template cast<f32>().row();
  acc = activate<Out>(acc, e.act);
  if (e.residual) {
    auto c_offs = rm.col().template cast<i64>() * ldc + rn.row();
    acc = acc + load(residual + c_offs, m_ok.col() && n_ok.row(), 0.0f).template cast<f32>();
  }
  return acc;
}

}  // namespace detail

}  // namespace tilefuse::kernels
