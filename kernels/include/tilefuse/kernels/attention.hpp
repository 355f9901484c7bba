#pragma once
// FlashAttention forward: each program owns BLOCK_M query rows and loops over
// BLOCK_N-row tiles of K and V, keeping a running row max m, a running sum l and an
// accumulator rescaled by exp(m_old - m_new). The N x N score matrix never leaves the
// chip. Returns O and the log-sum-exp of each query row. The compiler keeps P in
// registers between the two dots (tensor cores, warps along M) and pipelines the K and
// V copies (num_stages).
#include <bit>
#include <cmath>
#include <string>
#include <type_traits>
#include <tuple>
#include <utility>
#include <vector>

#include "tilefuse/kernels/buffer_checks.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/gemm_operands.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// The largest head the kernel holds: the accumulator is BLOCK_M x HEAD_DIM f32 in
// registers (256 columns over two warpgroups: 128 registers a thread).
inline constexpr int64_t kMaxHeadDim = 256;

// A head of any width as at most two column blocks of power-of-two widths (tile shapes
// are powers of two), rounded up to 16 columns: 96 = 64 + 32, 80 = 64 + 16, 40 -> 32 +
// 16, 176 -> 128 + 64 (columns past the head read 0 and are not stored). Every dot then
// does about the head's MMAs instead of the next power of two's (96 on 128 would be a
// third more). Where the rest past the largest block would need two more, one block of
// the next power of two does the lot: 112 -> 128, 200 -> 256 (three blocks of 64 + 32 +
// 16 measured 337 TFLOP/s at 112 against 464 for one of 128, H200: P.V's narrow MMAs).
// HEAD_SPLIT=0 always takes one block of the next power of two. (A second block ending
// at the head's last column, overlapping the first so that no copy reads past the head,
// measured the same on 128-row tiles: not kept.)
struct HeadPart {
  int64_t offset, width;
  bool operator==(const HeadPart&) const = default;
};
inline std::vector<HeadPart> head_parts(int64_t head_dim, bool split = true) {
  const auto pow2_at_least = [](int64_t v) { return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(v))); };
  if (!split || std::has_single_bit(static_cast<uint64_t>(head_dim))) return {{0, pow2_at_least(head_dim)}};
  const int64_t padded = (head_dim + 15) / 16 * 16;
  const int64_t first = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(padded)));
  const int64_t rest = padded - first;
  if (rest == 0) return {{0, first}};
  if (pow2_at_least(rest) == first) return {{0, 2 * first}};
  return {{0, first}, {first, pow2_at_least(rest)}};
}

// The columns the parts cover (the head rounded up).
inline int64_t head_parts_width(const std::vector<HeadPart>& parts) {
  return parts.back().offset + parts.back().width;
}

// Q, O: [batch*heads, seq, HEAD_DIM] with row stride `stride_n` and head stride
// `stride_h` (elements); K, V the same with batch*heads / KV_GROUP heads, query head h
// reading key/value head h / KV_GROUP (grouped-query attention; 1: one each); lse:
// [batch*heads, seq] f32 (natural log). HEAD_DIM is any width up to kMaxHeadDim
// (head_parts).
template <class T>
const auto& attention_fwd_kernel() {
  static auto k = kernel(std::string("attention_fwd_") + name(dtype_v<T>),
      {"out", "lse", "q", "k", "v", "seq_len", "stride_h", "stride_n", "sm_scale"},
      [](Ptr<T> out, Ptr<f32> lse, Ptr<const T> q, Ptr<const T> k, Ptr<const T> v, I32 seq_len, I64 stride_h,
         I64 stride_n, F32 sm_scale, Meta<"BLOCK_M"> BLOCK_M, Meta<"BLOCK_N"> BLOCK_N, Meta<"HEAD_DIM"> HEAD_DIM,
         Meta<"CAUSAL", bool> CAUSAL, Meta<"QK_AHEAD", bool, false> QK_AHEAD, Meta<"PV_LAG", bool, false> PV_LAG,
         Meta<"SCALE_NEG", bool, false> SCALE_NEG, Meta<"TMA_STORE", bool, true> TMA_STORE,
         Meta<"HEAD_SPLIT", bool, true> HEAD_SPLIT, Meta<"KV_GROUP", int, 1> KV_GROUP,
         Meta<"RESCALE_LATE", bool, false> RESCALE_LATE, Meta<"Q_VIEW", bool, false> Q_VIEW,
         Meta<"DIAGONAL_FIRST", bool, false> DIAGONAL_FIRST) {
        // Causal: the longest rows of blocks (the last query blocks) start first, so the
        // short ones fill the last wave instead of a long one running alone.
        auto start_m = CAUSAL ? num_programs(0) - 1 - program_id(0) : program_id(0);
        auto head = program_id(1);
        auto kv_head = head;
        if (KV_GROUP > 1) kv_head = head / int32_t(KV_GROUP);
        auto offs_m = start_m * BLOCK_M + arange(0, BLOCK_M);
        auto offs_n = arange(0, BLOCK_N);
        auto head_off = head * stride_h;
        auto row_ok = offs_m < seq_len;
        const std::vector<HeadPart> parts = head_parts(HEAD_DIM, HEAD_SPLIT);
        // Whether a part runs past the head, and which of its columns are the head's.
        auto past_head = [&](const HeadPart& part) { return part.offset + part.width > HEAD_DIM; };
        auto in_head = [&](const auto& offs_d) { return (offs_d < int32_t(HEAD_DIM)).row(); };
        // Per part of the head: Q's columns (rows past seq_len and columns past the head
        // read 0) and the output's accumulator.
        // Q_VIEW: Q's blocks through a view, like K's and V's (warp-specialized: the
        // producer copies them by TMA, the consumers wait on a barrier instead of copying).
        std::vector<Tile<T, 2>> q_tiles;
        std::vector<Tile<f32, 2>> acc;
        for (const HeadPart& part : parts) {
          auto offs_d = int32_t(part.offset) + arange(0, part.width);
          auto q_ptrs = q + head_off + offs_m.col() * stride_n + offs_d.row();
          if (Q_VIEW)
            q_tiles.push_back(load(tensor_view(q, {num_programs(1), seq_len, HEAD_DIM}, {stride_h, stride_n, 1}),
                                   {head, start_m * BLOCK_M, part.offset}, {BLOCK_M, part.width}));
          else if (past_head(part))
            q_tiles.push_back(load(q_ptrs, row_ok.col() && in_head(offs_d), 0.0f));
          else
            q_tiles.push_back(load(q_ptrs, row_ok.col(), 0.0f));
          acc.push_back(zeros<f32>({BLOCK_M, part.width}));
        }
        auto m_i = full<f32>({BLOCK_M}, -inf);
        auto l_i = zeros<f32>({BLOCK_M});
        auto qk_scale = sm_scale * 1.4426950408889634f;  // exp(x) = exp2(x * log2(e))
        // Keys and values of the block at start_n: K transposed [D, BN], V [BN, D], as
        // blocks of [heads, seq_len, HEAD_DIM] views (keys past seq_len and columns past
        // the head read 0; on sm_90a the copies are TMA's). With groups the views claim as
        // many heads as Q has (the copy descriptor takes its extents from the launch); the
        // programs only read the first batch*heads / KV_GROUP.
        auto k_view = tensor_view(k, {num_programs(1), seq_len, HEAD_DIM}, {stride_h, stride_n, 1});
        auto v_view = tensor_view(v, {num_programs(1), seq_len, HEAD_DIM}, {stride_h, stride_n, 1});
        auto load_v = [&](auto start_n, const HeadPart& part) {
          return load(v_view, {kv_head, start_n, part.offset}, {BLOCK_N, part.width});
        };
        // Q.K^T of the block at start_n: the parts' products chained into one score tile.
        auto scores = [&](auto start_n) {
          auto kt = [&](size_t i) {
            return trans(load(k_view, {kv_head, start_n, parts[i].offset}, {BLOCK_N, parts[i].width}));
          };
          auto qk = dot(q_tiles[0], kt(0));
          for (size_t i = 1; i < parts.size(); ++i) qk = dot(q_tiles[i], kt(i), qk);
          return qk;
        };
        // O = O * alpha + P.V, part by part (P.V at start_n, the accumulator rescaled).
        auto add_pv = [&](const auto& p, auto start_n, const auto& alpha) {
          for (size_t i = 0; i < parts.size(); ++i) acc[i] = dot(p, load_v(start_n, parts[i]), acc[i] * alpha.col());
        };
        // The online softmax of one block's scores: updates m and l, returns P and the
        // factor alpha that rescales the accumulator before P.V is added.
        // With a positive scale the row max is taken over the raw scores and scaled once
        // per row, so each score costs one fma (s * scale - m) before its exp2;
        // SCALE_NEG (a negative sm_scale, set by the host) scales every score first.
        auto softmax = [&](auto qk, auto start_n, bool masked) {
          auto s = SCALE_NEG ? qk * qk_scale : qk;
          if (masked) {
            auto kn = start_n + offs_n;
            auto col_ok = kn < seq_len;
            auto keep = CAUSAL ? (col_ok.row() && (offs_m.col() >= kn.row())) : col_ok.row();
            s = where(keep, s, -inf);
          }
          auto m_new = SCALE_NEG ? maximum(m_i, max(s, 1)) : maximum(m_i, max(s, 1) * qk_scale);
          auto p = SCALE_NEG ? exp2(s - m_new.col()) : exp2(s * qk_scale - m_new.col());
          auto alpha = exp2(m_i - m_new);
          l_i = l_i * alpha + sum(p, 1);
          m_i = m_new;
          return std::pair{p.template cast<T>(), alpha};
        };
        auto update = [&](auto qk, auto start_n, bool masked) {
          auto [p, alpha] = softmax(qk, start_n, masked);
          add_pv(p, start_n, alpha);
        };
        // Blocks that need no mask first (every key valid and, causal, left of the
        // diagonal block), then the rest with masks: the common case stays lean. With
        // QK_AHEAD the unmasked loop runs one block ahead: the next block's Q.K^T is
        // issued before this block's softmax, so on Hopper its MMAs overlap that
        // softmax (at the price of a second score tile in registers).
        auto full_hi = CAUSAL ? (start_m * BLOCK_M / BLOCK_N) * BLOCK_N : (seq_len / BLOCK_N) * BLOCK_N;
        auto hi = CAUSAL ? minimum((start_m + 1) * BLOCK_M, seq_len) : seq_len;
        // DIAGONAL_FIRST (causal, P.V one block behind, BLOCK_N a multiple of BLOCK_M, so
        // exactly one masked block, at full_hi): the blocks in descending order, the
        // diagonal first (FlashAttention-3's order). Its Q.K^T and masked softmax start
        // the pipeline, and its P.V overlaps the next block's softmax, where after the
        // loop it ran Q.K^T, softmax and P.V back to back; no P.V of a zero block either.
        const bool diagonal_first = DIAGONAL_FIRST && CAUSAL && PV_LAG && BLOCK_N % BLOCK_M == 0;
        if (diagonal_first) {
          auto [p_first, alpha_first] = softmax(scores(full_hi), full_hi, true);
          auto p_prev = p_first;
          auto alpha_prev = alpha_first;  // (the accumulator is still 0: nothing to rescale)
          // Block start_n's Q.K^T with the P.V of the block above it (start_n + BLOCK_N).
          for_range(0, full_hi, BLOCK_N, [&](I32 j) {
            auto start_n = full_hi - BLOCK_N - j;
            std::vector<Tile<f32, 2>> rescaled;
            for (auto& a : acc) rescaled.push_back(RESCALE_LATE ? a : a * alpha_prev.col());
            auto qk = scores(start_n);
            for (size_t i = 0; i < parts.size(); ++i)
              acc[i] = dot(p_prev, load_v(start_n + BLOCK_N, parts[i]), rescaled[i]);
            std::tie(p_prev, alpha_prev) = softmax(qk, start_n, false);
            if (RESCALE_LATE)
              for (auto& a : acc) a = a * alpha_prev.col();
          });
          if (RESCALE_LATE) {
            for (size_t i = 0; i < parts.size(); ++i) acc[i] = dot(p_prev, load_v(int32_t(0), parts[i]), acc[i]);
          } else {
            add_pv(p_prev, int32_t(0), alpha_prev);
          }
        } else if (PV_LAG) {
          // P.V one block behind: block j's Q.K^T and block j-1's P.V are issued
          // together, and block j's softmax runs while the P.V MMAs are in flight
          // (FlashAttention-3's order; one P tile is carried from block to block). The
          // first iteration adds 0 . V[-BLOCK_N] (a zero block) to a zero accumulator.
          auto p_prev = zeros<T>({BLOCK_M, BLOCK_N});
          auto alpha_prev = zeros<f32>({BLOCK_M});
          if (RESCALE_LATE) {
            // The accumulator is rescaled after the softmax, when P.V has completed, so
            // the MMAs issue first thing in the iteration (FlashAttention-3's order for
            // heads up to 128). O stays in terms of the current row max, and the last
            // block's P.V adds to it unscaled.
            for_range(0, full_hi, BLOCK_N, [&](I32 start_n) {
              auto qk = scores(start_n);
              for (size_t i = 0; i < parts.size(); ++i)
                acc[i] = dot(p_prev, load_v(start_n - BLOCK_N, parts[i]), acc[i]);
              auto [p, alpha] = softmax(qk, start_n, false);
              for (auto& a : acc) a = a * alpha.col();
              p_prev = p;
            });
            for (size_t i = 0; i < parts.size(); ++i)
              acc[i] = dot(p_prev, load_v(full_hi - BLOCK_N, parts[i]), acc[i]);
          } else {
            for_range(0, full_hi, BLOCK_N, [&](I32 start_n) {
              std::vector<Tile<f32, 2>> rescaled;  // before the MMAs are in flight
              for (auto& a : acc) rescaled.push_back(a * alpha_prev.col());
              auto qk = scores(start_n);
              for (size_t i = 0; i < parts.size(); ++i)
                acc[i] = dot(p_prev, load_v(start_n - BLOCK_N, parts[i]), rescaled[i]);
              std::tie(p_prev, alpha_prev) = softmax(qk, start_n, false);
            });
            add_pv(p_prev, full_hi - BLOCK_N, alpha_prev);
          }
        } else if (QK_AHEAD) {
          if_(full_hi > 0, [&] {
            auto qk = scores(0);
            for_range(0, full_hi - BLOCK_N, BLOCK_N, [&](I32 start_n) {
              auto qk_next = scores(start_n + BLOCK_N);
              update(qk, start_n, false);
              qk = qk_next;
            });
            update(qk, full_hi - BLOCK_N, false);
          });
        } else {
          for_range(0, full_hi, BLOCK_N, [&](I32 start_n) { update(scores(start_n), start_n, false); });
        }
        if (!diagonal_first)
          for_range(full_hi, hi, BLOCK_N, [&](I32 start_n) { update(scores(start_n), start_n, true); });
        auto inv_l = (1.0f / l_i).col();  // one division per row, not per element
        // The output block: through a view (a TMA store on sm_90), or plain stores that let
        // each warp finish on its own (TMA_STORE = 0: d128's one program per SM, -1%).
        auto out_view = tensor_view(out, {num_programs(1), seq_len, HEAD_DIM}, {stride_h, stride_n, 1});
        for (size_t i = 0; i < parts.size(); ++i) {
          auto o = (acc[i] * inv_l).template cast<T>();
          if (TMA_STORE) {  // (the view clips columns past the head)
            store(out_view, {head, start_m * BLOCK_M, parts[i].offset}, o);
          } else {
            auto offs_d = int32_t(parts[i].offset) + arange(0, parts[i].width);
            auto o_ptrs = out + head_off + offs_m.col() * stride_n + offs_d.row();
            if (past_head(parts[i]))
              store(o_ptrs, o, row_ok.col() && in_head(offs_d));
            else
              store(o_ptrs, o, row_ok.col());
          }
        }
        // log(sum exp(x * sm_scale)) = (m + log2(l)) * ln(2) in the exp2 domain.
        store(lse + head * seq_len + offs_m, (m_i + log2(l_i)) * 0.6931471805599453f, row_ok);
      });
  return k;
}

// The fastest spill-free configs measured on an H100 (bench/NOTES.md), all pipelined
// (K and V copied by cp.async 1-2 iterations ahead): head dim <= 64: 64x64 tiles on 4
// warps, 3 stages; head dim 128: 64x32 tiles on 4 warps, 3 stages, or with the causal
// mask 128x32 on 8 warps, 2 stages (the 4-warp tiling spills there). With warpgroup
// MMAs (sm_90a, H100 N=4096, one command): 64x64 tiles on one warpgroup, 3 stages, for
// head dim <= 64 (349 TFLOP/s; 64x128 340), 128x128 on two warpgroups, 2 stages, for
// head dim 128 (443; 128x64 397). QK_AHEAD lost on every tiling (a second score tile
// in registers), so it stays off and out of the tuning space.
inline Config attention_heuristic(int64_t seq_len, int64_t head_dim, bool causal, bool warpgroup_mma = false) {
  int c = causal ? 1 : 0;
  if (warpgroup_mma) {
    // K and V by TMA. Head dim 64 (H200, peers' shapes, bench/NOTES.md "Softmax with
    // fewer instructions"): 64x128 on one warpgroup, 2 stages, P.V one block behind
    // (PV_LAG) with registers capped for 3 programs per SM (spill-free since loops
    // carry P in packed pairs): 467-492 TFLOP/s non-causal N >= 4096, 411-465 causal,
    // against 438 / 375-402 without the lag. Head dim 128: PV_LAG on 128x128 over two
    // warpgroups, one program per SM (+2-9% on every shape measured). The output leaves
    // by TMA store at d64 (+0.7-3% where it differs) but not at d128 (-1%: with one
    // program per SM its barriers and staging are exposed).
    // Other heads by the width their parts cover (w: 96 -> 96, 112 -> 128), the shared
    // memory a tiling takes (Q's rows, two stages of K and V blocks) and the rows'
    // alignment (H200, N 4096, bench/NOTES.md "Heads of any width"):
    // - rows on 32 bytes (head dim a multiple of 16) and up to 96 columns: one warpgroup
    //   on 64 rows, two or three programs per SM (d48 307, d80 346, d96 394 TFLOP/s;
    //   d80/d96 on 128 rows: 317 / 366);
    // - rows on 16 bytes only (40, 56, 72, 88): the copies of K and V run slower, and 64
    //   rows copy twice as much of them per MMA as 128 do: 128 rows (d40 218 against
    //   183, d56 333 / 272, d72 283 / 267, d88 334 / 276), 64-key blocks up to 64 columns;
    // - otherwise d128's tiling, with 64-key blocks where 128-key blocks would not fit
    //   (w > 176; 128 at d160 measured +28%).
    const int64_t w = head_parts_width(head_parts(head_dim));
    const auto smem = [&](int64_t bm, int64_t bn) { return (bm + 4 * bn) * w * 2; };
    constexpr int64_t kSharedBytes = 232448;  // sm_90's most per block
    const bool rows_32b = head_dim % 16 == 0;
    // Causal rows of few key blocks (N <= 1024): 64-key blocks, so the half-masked block
    // on the diagonal wastes half as much (bf16 d64 N1024 305 -> 328 TFLOP/s; N2048 even,
    // N4096 -4%: run 4 of bench/results/h200_2026-11-29j).
    // Causal rows start with their diagonal block (DIAGONAL_FIRST; bf16 d64 N1024 329 ->
    // 341 TFLOP/s, N2048 385 -> 392-400, N4096 439 -> 445-448, N16384 even: run 4 of
    // bench/results/h200_2026-11-30c).
    if (w <= 64 && rows_32b)
      return Config{{"BLOCK_M", 64}, {"BLOCK_N", causal && seq_len <= 1024 ? 64 : 128}, {"HEAD_DIM", head_dim},
                    {"CAUSAL", c}, {"PV_LAG", 1}, {"DIAGONAL_FIRST", c}, num_warps(4), num_stages(2),
                    min_programs_per_sm(3)};
    if (w < 128 && rows_32b && 2 * smem(64, 128) <= kSharedBytes)
      return Config{{"BLOCK_M", 64}, {"BLOCK_N", 128}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, {"PV_LAG", 1},
                    {"TMA_STORE", 0}, num_warps(4), num_stages(2), min_programs_per_sm(2)};
    const int64_t bn = w > 64 && smem(128, 128) <= kSharedBytes ? 128 : 64;
    // Head dim 128 (parts of 128 columns): a producer warpgroup copies K and V while the
    // two consumer warpgroups take turns on the tensor cores, each rescaling O after its
    // softmax (FlashAttention-3's schedule; H200, peers' shapes, bench/NOTES.md "Warp
    // specialization without spills"): 541-705 TFLOP/s against 447-548 in one role.
    // Causal rows of up to 16 key blocks start with their diagonal block (DIAGONAL_FIRST)
    // and leave by TMA store: bf16 N1024 400 -> 413 TFLOP/s with the diagonal first, 420
    // with the store too (f16 398 -> 418), N2048 527 -> 544 (the diagonal first alone:
    // even); longer rows lost 2-4% with the diagonal first (runs 4, 8, 9 of
    // bench/results/h200_2026-11-30c).
    const bool short_causal = causal && seq_len <= 2048;
    if (w == 128 && bn == 128)
      return Config{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, {"PV_LAG", 1},
                    {"RESCALE_LATE", 1}, {"TMA_STORE", short_causal}, {"DIAGONAL_FIRST", short_causal},
                    num_warps(8), num_stages(2), warp_specialize()};
    return Config{{"BLOCK_M", 128}, {"BLOCK_N", bn}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, {"PV_LAG", 1},
                  {"TMA_STORE", 0}, num_warps(8), num_stages(2)};
  }
  if (head_dim <= 64)
    return Config{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, num_warps(4), num_stages(3)};
  if (causal || head_dim > 128)  // wider heads: 128 rows on 8 warps spill least (136 bytes at 256)
    return Config{{"BLOCK_M", 128}, {"BLOCK_N", 32}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, num_warps(8), num_stages(2)};
  return Config{{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, num_warps(4), num_stages(3)};
}

// The meta-parameters a launch takes from its arguments rather than from the config.
inline Config attention_launch_config(Config c, int64_t head_dim, bool causal, float sm_scale, int64_t kv_group = 1) {
  c.set("HEAD_DIM", head_dim).set("CAUSAL", causal).set("SCALE_NEG", sm_scale < 0.0f);
  if (kv_group > 1) c.set("KV_GROUP", kv_group);
  return c;
}

// The sizes of one attention call, and its buffers' dtypes and sizes.
template <class T, class Out, class Lse, class Q, class K, class V>
void check_attention_args(const Out& out, const Lse& lse, const Q& q, const K& k, const V& v, int64_t batch_heads,
                          int64_t kv_group, int64_t seq_len, int64_t head_dim) {
  if (kv_group < 1 || batch_heads % kv_group != 0)
    user_error("attention_fwd: " + std::to_string(batch_heads) + " query heads do not split into groups of kv_group = " +
                   std::to_string(kv_group),
               SourceLoc{}, "Pass a kv_group that divides batch_heads (query heads per key/value head; 1 for none)");
  if (batch_heads < 1 || seq_len < 1 || head_dim < 1 || head_dim > kMaxHeadDim)
    user_error("attention_fwd: batch_heads x seq_len x head_dim = " + std::to_string(batch_heads) + " x " +
                   std::to_string(seq_len) + " x " + std::to_string(head_dim) + " is out of range",
               SourceLoc{},
               "Pass positive sizes and a head dim of at most " + std::to_string(kMaxHeadDim) +
                   " (a wider head does not fit the accumulator in registers)");
  check_buffer_dtype<T>("attention_fwd", "q", q, "out");
  check_buffer_dtype<T>("attention_fwd", "k", k, "out");
  check_buffer_dtype<T>("attention_fwd", "v", v, "out");
  if constexpr (!std::is_same_v<buffer_elem_t<Lse>, float>)
    user_error(std::string("attention_fwd: lse has dtype ") + name(dtype_v<buffer_elem_t<Lse>>) + ", expected f32",
               SourceLoc{}, "Pass lse as an f32 buffer of batch_heads x seq_len elements");
  const std::string sizes = std::to_string(batch_heads) + " x " + std::to_string(seq_len);
  const std::string qkv_shape = "batch_heads x seq_len x head_dim = " + sizes + " x " + std::to_string(head_dim);
  const int64_t elements = batch_heads * seq_len * head_dim;
  check_norm_arg("attention_fwd", "out", out, elements, qkv_shape.c_str());
  check_norm_arg("attention_fwd", "q", q, elements, qkv_shape.c_str());
  const std::string kv_shape = kv_group == 1 ? qkv_shape
                                              : "batch_heads / kv_group x seq_len x head_dim = " +
                                                    std::to_string(batch_heads / kv_group) + " x " +
                                                    std::to_string(seq_len) + " x " + std::to_string(head_dim);
  check_norm_arg("attention_fwd", "k", k, elements / kv_group, kv_shape.c_str());
  check_norm_arg("attention_fwd", "v", v, elements / kv_group, kv_shape.c_str());
  check_norm_arg("attention_fwd", "lse", lse, batch_heads * seq_len, ("batch_heads x seq_len = " + sizes).c_str());
}

// attention_fwd_grouped(out, lse, q, k, v, batch_heads, kv_group, seq_len, head_dim, causal[, sm_scale]):
// softmax(q k^T * sm_scale [+ causal mask]) v for contiguous [batch_heads, seq_len, head_dim]
// q and out, and k, v of batch_heads / kv_group heads, query head h attending to key/value
// head h / kv_group (grouped-query attention: for q of [batch, heads, ...] and k of [batch,
// heads / kv_group, ...] that is each batch's own heads).
// Rows off 16 bytes (a head dim that is not a multiple of 8, or a base off 16 bytes) have
// no tensor map, so K and V would move 2-4 bytes at a time (88-107 TFLOP/s at d36 / d44
// against 183-310 at d40 / d48, H200): on a wgmma GPU the host copies Q, K and V into rows
// of a multiple of 8 elements in stream scratch first (one pass each, the copy rule of the
// GEMM's operands), runs there, and copies the output back.
template <class Out, class Lse, class Q, class K, class V>
void attention_fwd_grouped(Out&& out, Lse&& lse, const Q& q, const K& k, const V& v, int64_t batch_heads,
                           int64_t kv_group, int64_t seq_len, int64_t head_dim, bool causal, float sm_scale = 0.0f,
                           ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Out>;
  check_attention_args<T>(out, lse, q, k, v, batch_heads, kv_group, seq_len, head_dim);
  if (sm_scale == 0.0f) sm_scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  Config c = attention_launch_config(cfg ? *cfg : attention_heuristic(seq_len, head_dim, causal, warpgroup_mma_usable<Q>()),
                                     head_dim, causal, sm_scale, kv_group);
  const auto g = grid((seq_len + c.get("BLOCK_M") - 1) / c.get("BLOCK_M"), batch_heads);
  const int64_t rows = batch_heads * seq_len;
  if constexpr (is_device_buffer_v<Out> && is_device_buffer_v<Q> && is_device_buffer_v<K> && is_device_buffer_v<V>) {
    const uint64_t addresses = q.address() | k.address() | v.address() | out.address();
    if (warpgroup_mma_usable<Q>() && detail::copy_pays(addresses, head_dim, sizeof(T), rows * seq_len * head_dim)) {
      using Operand = detail::GemmOperand<T>;
      Operand qa{DevicePtr<const T>(q.data(), q.size()), head_dim, std::nullopt};
      Operand ka{DevicePtr<const T>(k.data(), k.size()), head_dim, std::nullopt};
      Operand va{DevicePtr<const T>(v.data(), v.size()), head_dim, std::nullopt};
      detail::into_aligned_rows(qa, copy_rows_kernel<T>(), copy_rows_config(), rows, head_dim, false);
      for (Operand* op : {&ka, &va})
        detail::into_aligned_rows(*op, copy_rows_kernel<T>(), copy_rows_config(), rows / kv_group, head_dim, false);
      const int64_t ld = qa.ld;
      detail::StreamScratch<T> aligned_out(static_cast<size_t>(rows * ld));
      attention_fwd_kernel<T>().launch(g, c, aligned_out.get(), lse, qa.ptr, ka.ptr, va.ptr, seq_len, seq_len * ld, ld,
                                       sm_scale);
      detail::launch_over_tiles(copy_rows_kernel<T>(), copy_rows_config(), out,
                                DevicePtr<const T>(aligned_out.get().data(), rows * ld), rows, head_dim, head_dim, ld);
      return;
    }
  }
  attention_fwd_kernel<T>().launch(g, c, out, lse, q, k, v, seq_len, seq_len * head_dim, head_dim, sm_scale);
}

// attention_fwd(out, lse, q, k, v, batch_heads, seq_len, head_dim, causal[, sm_scale]):
// attention_fwd_grouped with one key/value head per query head.
template <class Out, class Lse, class Q, class K, class V>
void attention_fwd(Out&& out, Lse&& lse, const Q& q, const K& k, const V& v, int64_t batch_heads, int64_t seq_len,
                   int64_t head_dim, bool causal, float sm_scale = 0.0f, ConfigOverride cfg = {}) {
  attention_fwd_grouped(std::forward<Out>(out), std::forward<Lse>(lse), q, k, v, batch_heads, 1, seq_len, head_dim,
                        causal, sm_scale, std::move(cfg));
}

}  // namespace tilefuse::kernels
