#pragma once
// Tensor-core layouts of mma.sync.aligned.m16n8k16 (f16/bf16 inputs, f32 accumulate) as
// linear layouts. One instruction computes a 16x8 accumulator tile from a 16x16 A tile
// and a 16x8 B tile per warp; a dot's tiles are covered by a grid of warps (warps_m x
// warps_n) repeated in registers. Within one instruction (PTX ISA, "Matrix fragments
// for mma.m16n8k16"), with g = lane / 4 and t = lane % 4:
//   accumulator c0..c3: row g (+8 for c2, c3), column 2t (+1 for odd ci)
//   A a0..a7 (2 per 32-bit register): row g (+8 for a2, a3, a6, a7), column 2t (+1 for
//     odd ai, +8 for a4..a7)
//   B b0..b3: row (k) 2t (+1 for odd bi, +8 for b2, b3), column g
// tf32 (m16n8k8, 32-bit elements, one per register): A a0..a3: row g (+8 for a1, a3),
// column t (+4 for a2, a3); B b0, b1: row t (+4 for b1), column g; accumulator as above.
// Register order: the instruction's bits first, then repetitions (A: k then m; B: k then
// n; accumulator: n then m), so lowering finds instruction operands by index arithmetic.
// An accumulator of [M, N] is register-for-register the A operand of [M, N] with K = N
// (same lanes, same warps when warps_n == 1): FlashAttention-2's P stays in registers.
#include <cstdint>

#include "tilefuse/ir/type.hpp"
#include "tilefuse/nvptx/linear_layout.hpp"

namespace tilefuse::nvptx {

struct MmaTiling {
  int warps_m = 1, warps_n = 1;  // warps along M and N; the rest of the warps replicate
  bool operator==(const MmaTiling&) const = default;
};

// The instruction: m16n8k16 for f16/bf16 inputs, m16n8k8 for tf32, m16n8k32 for 8-bit
// floats (sm_89+). The 8-bit fragments are the 16-bit ones in bytes: each 32-bit register
// holds 4 consecutive-k elements where it held 2 (A: row g (+8), column 4t + i (+16);
// B: row 4t + i (+16), column g).
enum class MmaKind : uint8_t { F16, Tf32, F8 };
inline constexpr int kMmaM = 16, kMmaN = 8;
constexpr int mma_k(MmaKind k) { return k == MmaKind::Tf32 ? 8 : k == MmaKind::F8 ? 32 : 16; }

// Whether mma.sync covers dot([m, k] x [k, n]) of `in` inputs: f16/bf16 (m >= 16, n >= 8,
// k >= 16), f32 with tf32 precision (k >= 8), or 8-bit floats where `float8_mma` (the
// target has them; k >= 32); sets `kind`. Tile sides are powers of two.
bool mma_applies(DType in, bool tf32, int64_t m, int64_t n, int64_t k, MmaKind* kind = nullptr,
                 bool float8_mma = false);
// Warps over the [m, n] accumulator. `along_m`: all warps along M while rows remain
// (row reductions stay inside a warp; chained dots keep their operands in registers);
// otherwise a balanced split (fewer shared-memory operand reads per MMA).
MmaTiling choose_mma_tiling(int64_t m, int64_t n, int num_warps, bool along_m);

LinearLayout mma_accumulator(const Shape& mn, const MmaTiling& t, int num_warps);
LinearLayout mma_operand_a(const Shape& mk, const MmaTiling& t, int num_warps, MmaKind kind = MmaKind::F16);
LinearLayout mma_operand_b(const Shape& kn, const MmaTiling& t, int num_warps, MmaKind kind = MmaKind::F16);

// Hopper warpgroup MMA (wgmma.mma_async m64nNk16, sm_90a): a warpgroup of 4 consecutive
// warps computes a 64xN accumulator; warp w of the group owns rows 16w..16w+15 with
// mma.sync's per-warp pattern, the N/8 column blocks repeated in registers. A comes
// from shared memory (descriptor) or registers (mma.sync's A fragment per warp), B
// from shared memory. Warpgroups split the tile along M (wg_m) and N (wg_n); each
// instruction covers 64 x instr_n; the rest repeats in registers (N, then M).
inline constexpr int kWgmmaM = 64, kWgmmaK = 16, kWgmmaMaxN = 256;
// K of one instruction: 32 bytes of each operand row (k16 for 16-bit, k32 for 8-bit inputs).
constexpr int wgmma_k(DType in) { return is_float8(in) ? 32 : kWgmmaK; }
struct WgmmaTiling {
  int wg_m = 1, wg_n = 1;
  int instr_n = 8;
  bool operator==(const WgmmaTiling&) const = default;
};
// Whether wgmma covers dot([m, k] x [k, n]) of f16/bf16/8-bit floats with num_warps
// warps: m a multiple of 64, num_warps a multiple of 4, k >= wgmma_k, and the warpgroups
// fit the tile.
bool wgmma_applies(DType in, bool tf32, int64_t m, int64_t n, int64_t k, int num_warps);
// Warpgroups along M while 64-row blocks remain (always for `along_m`), else along N.
WgmmaTiling choose_wgmma_tiling(int64_t m, int64_t n, int num_warps, bool along_m);
LinearLayout wgmma_accumulator(const Shape& mn, const WgmmaTiling& t, int num_warps);
// The register A operand: mma.sync's A fragment, warps along M within each warpgroup.
LinearLayout wgmma_operand_a(const Shape& mk, const WgmmaTiling& t, int num_warps, MmaKind kind = MmaKind::F16);

}  // namespace tilefuse::nvptx
