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
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// The largest head the kernel holds: the accumulator is BLOCK_M x HEAD_DIM f32 in
// registers (256 columns over two warpgroups: 128 registers a thread).
inline constexpr int64_t kMaxHeadDim = 256;

// A head of any width as at most two column blocks of power-of-two widths (tile shapes
// are powers of two). Every dot then does about the head's MMAs instead of the next
// power of two's (96 on 128 would be a third more). HEAD_SPLIT picks how:
//  1: blocks from column 0, rounded up to 16 columns: 96 = 64 + 32, 80 = 64 + 16, 40 ->
//     32 + 16, 176 -> 128 + 64 (columns past the head read 0 and are not stored); where
//     the rest past the largest block would need two more, one block of the next power
//     of two: 112 -> 128, 200 -> 256 (three blocks: P.V's narrow MMAs cost more).
//  2: the second block ends at the head's last column and overlaps the first: 40 ->
//     [0, 32) + [24, 40), 112 -> [0, 64) + [48, 112); its Q columns inside the first
//     block read 0 (no product is counted twice) and its output there is not stored.
//     No copy reads past the head.
//  0: one block of the next power of two.
// A part owns columns [first, min(offset + width, head_dim)).
struct HeadPart {
  int64_t offset, width, first;
  bool operator==(const HeadPart&) const = default;
};
inline std::vector<HeadPart> head_parts(int64_t head_dim, int64_t split = 1) {
  const auto pow2_at_least = [](int64_t v) { return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(v))); };
  const auto pow2_at_most = [](int64_t v) { return static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(v))); };
  if (split == 0 || std::has_single_bit(static_cast<uint64_t>(head_dim)) || (split == 2 && head_dim < 16))
    return {{0, pow2_at_least(head_dim), 0}};
  if (split == 2) {
    const int64_t first = pow2_at_most(head_dim);
    const int64_t second = std::max<int64_t>(16, pow2_at_least(head_dim - first));
    return {{0, first, 0}, {head_dim - second, second, first}};
  }
  const int64_t padded = (head_dim + 15) / 16 * 16;
  const int64_t first = pow2_at_most(padded);
  const int64_t rest = padded - first;
  if (rest == 0) return {{0, first, 0}};
  if (pow2_at_least(rest) == first) return {{0, 2 * first, 0}};
  return {{0, first, 0}, {first, pow2_at_least(rest), first}};
}

// The columns the parts' MMAs cover (the head rounded up, overlaps counted twice).
inline int64_t head_parts_width(const std::vector<HeadPart>& parts) {
  int64_t w = 0;
  for (const HeadPart& p : parts) w += p.width;
  return w;
}

// Q, K, V, O: [batch*heads, seq, HEAD_DIM] with row stride `stride_n` and head
// stride `stride_h` (elements); lse: [batch*heads, seq] f32 (natural log). HEAD_DIM is
// any width up to kMaxHeadDim (head_parts).
template <class T>
const auto& attention_fwd_kernel() {
  static auto k = kernel(std::string("attention_fwd_") + name(dtype_v<T>),
      {"out", "lse", "q", "k", "v", "seq_len", "stride_h", "stride_n", "sm_scale"},
      [](Ptr<T> out, Ptr<f32> lse, Ptr<const T> q, Ptr<const T> k, Ptr<const T> v, I32 seq_len, I64 stride_h,
         I64 stride_n, F32 sm_scale, Meta<"BLOCK_M"> BLOCK_M, Meta<"BLOCK_N"> BLOCK_N, Meta<"HEAD_DIM"> HEAD_DIM,
         Meta<"CAUSAL", bool> CAUSAL, Meta<"QK_AHEAD", bool, false> QK_AHEAD, Meta<"PV_LAG", bool, false> PV_LAG,
         Meta<"SCALE_NEG", bool, false> SCALE_NEG, Meta<"TMA_STORE", bool, true> TMA_STORE,
         Meta<"HEAD_SPLIT", int, 1> HEAD_SPLIT) {
        // Causal: the longest rows of blocks (the last query blocks) start first, so the
        // short ones fill the last wave instead of a long one running alone.
        auto start_m = CAUSAL ? num_programs(0) - 1 - program_id(0) : program_id(0);
        auto head = program_id(1);
        auto offs_m = start_m * BLOCK_M + arange(0, BLOCK_M);
        auto offs_n = arange(0, BLOCK_N);
        auto head_off = head * stride_h;
        auto row_ok = offs_m < seq_len;
        const std::vector<HeadPart> parts = head_parts(HEAD_DIM, HEAD_SPLIT);
        // Whether a part holds columns it does not own, and which of its columns it owns.
        auto partial = [&](const HeadPart& part) { return part.first > part.offset || part.offset + part.width > HEAD_DIM; };
        auto owned = [&](const HeadPart& part, const auto& offs_d) {
          return ((offs_d >= int32_t(part.first)) && (offs_d < int32_t(HEAD_DIM))).row();
        };
        // Per part of the head: Q's columns (rows past seq_len and columns the part does
        // not own read 0) and the output's accumulator.
        std::vector<Tile<T, 2>> q_tiles;
        std::vector<Tile<f32, 2>> acc;
        for (const HeadPart& part : parts) {
          auto offs_d = int32_t(part.offset) + arange(0, part.width);
          auto q_ptrs = q + head_off + offs_m.col() * stride_n + offs_d.row();
          if (partial(part))
            q_tiles.push_back(load(q_ptrs, row_ok.col() && owned(part, offs_d), 0.0f));
          else
            q_tiles.push_back(load(q_ptrs, row_ok.col(), 0.0f));
          acc.push_back(zeros<f32>({BLOCK_M, part.width}));
        }
        auto m_i = full<f32>({BLOCK_M}, -inf);
        auto l_i = zeros<f32>({BLOCK_M});
        auto qk_scale = sm_scale * 1.4426950408889634f;  // exp(x) = exp2(x * log2(e))
        // Keys and values of the block at start_n: K transposed [D, BN], V [BN, D], as
        // blocks of [heads, seq_len, HEAD_DIM] views (keys past seq_len and columns past
        // the head read 0; on sm_90a the copies are TMA's).
        auto k_view = tensor_view(k, {num_programs(1), seq_len, HEAD_DIM}, {stride_h, stride_n, 1});
        auto v_view = tensor_view(v, {num_programs(1), seq_len, HEAD_DIM}, {stride_h, stride_n, 1});
        auto load_v = [&](auto start_n, const HeadPart& part) {
          return load(v_view, {head, start_n, part.offset}, {BLOCK_N, part.width});
        };
        // Q.K^T of the block at start_n: the parts' products chained into one score tile.
        auto scores = [&](auto start_n) {
          auto kt = [&](size_t i) {
            return trans(load(k_view, {head, start_n, parts[i].offset}, {BLOCK_N, parts[i].width}));
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
        if (PV_LAG) {
          // P.V one block behind: block j's Q.K^T and block j-1's P.V are issued
          // together, and block j's softmax runs while the P.V MMAs are in flight
          // (FlashAttention-3's order; one P tile is carried from block to block). The
          // first iteration adds 0 . V[-BLOCK_N] (a zero block) to a zero accumulator.
          auto p_prev = zeros<T>({BLOCK_M, BLOCK_N});
          auto alpha_prev = zeros<f32>({BLOCK_M});
          for_range(0, full_hi, BLOCK_N, [&](I32 start_n) {
            std::vector<Tile<f32, 2>> rescaled;  // before the MMAs are in flight
            for (auto& a : acc) rescaled.push_back(a * alpha_prev.col());
            auto qk = scores(start_n);
            for (size_t i = 0; i < parts.size(); ++i)
              acc[i] = dot(p_prev, load_v(start_n - BLOCK_N, parts[i]), rescaled[i]);
            std::tie(p_prev, alpha_prev) = softmax(qk, start_n, false);
          });
          add_pv(p_prev, full_hi - BLOCK_N, alpha_prev);
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
        for_range(full_hi, hi, BLOCK_N, [&](I32 start_n) { update(scores(start_n), start_n, true); });
        auto inv_l = (1.0f / l_i).col();  // one division per row, not per element
        // The output block: through a view (a TMA store on sm_90), or plain stores that let
        // each warp finish on its own (TMA_STORE = 0: d128's one program per SM, -1%).
        auto out_view = tensor_view(out, {num_programs(1), seq_len, HEAD_DIM}, {stride_h, stride_n, 1});
        for (size_t i = 0; i < parts.size(); ++i) {
          auto o = (acc[i] * inv_l).template cast<T>();
          if (TMA_STORE && parts[i].first == parts[i].offset) {  // (the view clips columns past the head)
            store(out_view, {head, start_m * BLOCK_M, parts[i].offset}, o);
          } else {
            auto offs_d = int32_t(parts[i].offset) + arange(0, parts[i].width);
            auto o_ptrs = out + head_off + offs_m.col() * stride_n + offs_d.row();
            if (partial(parts[i]))
              store(o_ptrs, o, row_ok.col() && owned(parts[i], offs_d));
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
  (void)seq_len;
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
    // Other heads by the width their parts cover (w: 96 -> 96, 112 -> 128) and the
    // shared memory a tiling takes (Q's rows, two stages of K and V blocks): up to 96
    // columns one warpgroup on 64 rows, two programs per SM (+6-8% over d128's tiling at
    // d80 and d96, H200); otherwise d128's tiling, with 64-key blocks where 128-key
    // blocks would not fit (w > 176: 128 at d160 measured +28%).
    const int64_t w = head_parts_width(head_parts(head_dim));
    const auto smem = [&](int64_t bm, int64_t bn) { return (bm + 4 * bn) * w * 2; };
    constexpr int64_t kSharedBytes = 232448;  // sm_90's most per block
    if (w <= 64)
      return Config{{"BLOCK_M", 64}, {"BLOCK_N", 128}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, {"PV_LAG", 1},
                    num_warps(4), num_stages(2), min_programs_per_sm(3)};
    if (w < 128 && 2 * smem(64, 128) <= kSharedBytes)
      return Config{{"BLOCK_M", 64}, {"BLOCK_N", 128}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, {"PV_LAG", 1},
                    {"TMA_STORE", 0}, num_warps(4), num_stages(2), min_programs_per_sm(2)};
    return Config{{"BLOCK_M", 128}, {"BLOCK_N", smem(128, 128) <= kSharedBytes ? 128 : 64}, {"HEAD_DIM", head_dim},
                  {"CAUSAL", c}, {"PV_LAG", 1}, {"TMA_STORE", 0}, num_warps(8), num_stages(2)};
  }
  if (head_dim <= 64)
    return Config{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, num_warps(4), num_stages(3)};
  if (causal || head_dim > 128)  // wider heads: 128 rows on 8 warps spill least (136 bytes at 256)
    return Config{{"BLOCK_M", 128}, {"BLOCK_N", 32}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, num_warps(8), num_stages(2)};
  return Config{{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"HEAD_DIM", head_dim}, {"CAUSAL", c}, num_warps(4), num_stages(3)};
}

// The meta-parameters a launch takes from its arguments rather than from the config.
inline Config attention_launch_config(Config c, int64_t head_dim, bool causal, float sm_scale) {
  return c.set("HEAD_DIM", head_dim).set("CAUSAL", causal).set("SCALE_NEG", sm_scale < 0.0f);
}

// The sizes of one attention call, and its buffers' dtypes and sizes.
template <class T, class Out, class Lse, class Q, class K, class V>
void check_attention_args(const Out& out, const Lse& lse, const Q& q, const K& k, const V& v, int64_t batch_heads,
                          int64_t seq_len, int64_t head_dim) {
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
  check_norm_arg("attention_fwd", "k", k, elements, qkv_shape.c_str());
  check_norm_arg("attention_fwd", "v", v, elements, qkv_shape.c_str());
  check_norm_arg("attention_fwd", "lse", lse, batch_heads * seq_len, ("batch_heads x seq_len = " + sizes).c_str());
}

// attention_fwd(out, lse, q, k, v, batch_heads, seq_len, head_dim, causal[, sm_scale]):
// softmax(q k^T * sm_scale [+ causal mask]) v for contiguous [batch_heads, seq_len, head_dim] tensors.
template <class Out, class Lse, class Q, class K, class V>
void attention_fwd(Out&& out, Lse&& lse, const Q& q, const K& k, const V& v, int64_t batch_heads, int64_t seq_len,
                   int64_t head_dim, bool causal, float sm_scale = 0.0f, ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Out>;
  check_attention_args<T>(out, lse, q, k, v, batch_heads, seq_len, head_dim);
  if (sm_scale == 0.0f) sm_scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  Config c = attention_launch_config(cfg ? *cfg : attention_heuristic(seq_len, head_dim, causal, warpgroup_mma_usable<Q>()),
                                     head_dim, causal, sm_scale);
  int64_t bm = c.get("BLOCK_M");
  attention_fwd_kernel<T>().launch(grid((seq_len + bm - 1) / bm, batch_heads), c, out, lse, q, k, v, seq_len,
                                   seq_len * head_dim, head_dim, sm_scale);
}

}  // namespace tilefuse::kernels
