#pragma once
// RMSNorm (optionally fused with a residual add that also writes the sum) and
// LayerNorm over rows, f32 math. Each has a one-row-per-cluster program (the row in
// registers of the C programs of a cluster; C = 1 by default) and a looped program for
// long rows where clusters are absent.
#include <optional>
#include <string>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/norm_row_batches.hpp"
#include "tilefuse/kernels/row_batches.hpp"
#include "tilefuse/kernels/row_chunks.hpp"
#include "tilefuse/kernels/split_norms.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// y = x * rsqrt(mean(x^2) + eps) * w; with RESIDUAL: x = x + res, and x is written to res_out.
// RELOAD: read the row again (from L1/L2) after the reduction instead of keeping it in
// registers across it: fewer registers, more programs per SM (see row_heuristic).
// A program holds CHUNKS tiles of BLOCK columns (row_chunks.hpp).
template <class T>
const auto& rmsnorm_row_kernel() {
  static auto k = kernel(std::string("rmsnorm_") + name(dtype_v<T>),
      {"out", "res_out", "in", "res", "weight", "n_cols", "stride", "eps"},
      [](Ptr<T> out, Ptr<T> res_out, Ptr<const T> in, Ptr<const T> res, Ptr<const T> weight, I32 n_cols, I64 stride,
         F32 eps, Meta<"BLOCK"> BLOCK, Meta<"RESIDUAL", bool> RESIDUAL, Meta<"RELOAD", bool, false> RELOAD,
         Meta<"CHUNKS", int64_t, 1> CHUNKS, Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS,
         Meta<"WEIGHT_COPIES", bool, false> WEIGHT_COPIES, Meta<"HELD", int64_t, 0> HELD,
         Meta<"TAIL", int64_t, 0> TAIL) {
        auto row = cluster_id();
        auto base = row * stride;
        auto in_row = in + base, res_row = res + base;
        auto out_row = out + base, res_out_row = res_out + base;
        RowChunks c(cluster_rank(), BLOCK, CHUNKS, n_cols,
                    RESIDUAL ? align_rows(ALIGN_ROWS, in_row, out_row, res_row, res_out_row)
                             : align_rows(ALIGN_ROWS, in_row, out_row),
                    TAIL);
        const int64_t tiles = static_cast<int64_t>(c.size());
        Cache first = RELOAD ? Cache::Normal : c.read_once();
        auto rows = num_programs(0) / cluster_size();
        auto readable = c.template readable<T>(base, (rows - 1 - row).template cast<i64>() * stride);
        // The first HELD chunks of x stay in shared memory (Cache::KeepInShared) and are
        // read again after the exchange instead of RELOAD's second read or registers. Not
        // with RESIDUAL: what the second pass needs there is the sum, computed, not loaded.
        int64_t held = RESIDUAL ? 0 : std::min<int64_t>(HELD, CHUNKS);
        std::vector<Tile<T, 1>> kept;
        std::vector<Tile<float, 1>> x, sq;
        for (int64_t i = 0; i < tiles; ++i) {
          if (i < held) {
            kept.push_back(c.load(in_row, i, 0.0f, Cache::KeepInShared, readable));
            auto xi = kept[i].template cast<f32>();
            x.push_back(xi);
            sq.push_back(xi * xi);
            continue;
          }
          auto xi = c.load(in_row, i, 0.0f, first, readable).template cast<f32>();
          if (RESIDUAL) {
            // The sum is rounded to T once and normalized from there, as it is stored.
            auto s = (xi + c.load(res_row, i, 0.0f, c.read_once(), readable).template cast<f32>())
                         .template cast<T>();
            store(res_out_row + c.pos[i], s, c.mask[i]);
            xi = s.template cast<f32>();
          }
          x.push_back(xi);
          sq.push_back(xi * xi);
        }
        auto rstd = rsqrt(cluster_sum(columns_sum(c, sq)) / n_cols + eps);
        for (int64_t i = 0; i < tiles; ++i) {
          if (i < held)
            x[i] = kept[i].template cast<f32>();
          else if (RELOAD)
            x[i] = (RESIDUAL ? c.load(res_out_row, i, 0.0f, Cache::Normal, readable)
                             : c.load(in_row, i, 0.0f, c.read_once(), readable)).template cast<f32>();
          auto w = c.load_param(weight, i, 0.0f, WEIGHT_COPIES).template cast<f32>();
          store(out_row + c.pos[i], (x[i] * rstd * w).template cast<T>(), c.mask[i]);
        }
      });
  return k;
}

template <class T>
const auto& rmsnorm_looped_kernel() {
  static auto k = kernel(std::string("rmsnorm_looped_") + name(dtype_v<T>),
      {"out", "res_out", "in", "res", "weight", "n_cols", "stride", "eps"},
      [](Ptr<T> out, Ptr<T> res_out, Ptr<const T> in, Ptr<const T> res, Ptr<const T> weight, I32 n_cols, I64 stride,
         F32 eps, Meta<"BLOCK"> BLOCK, Meta<"RESIDUAL", bool> RESIDUAL) {
        auto row = program_id(0);
        auto cols = arange(0, BLOCK);
        auto base = row * stride;
        auto acc = zeros<f32>({BLOCK});
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          auto mask = c < n_cols;
          auto x = load(in + base + c, mask, 0.0f, Cache::EvictLast).template cast<f32>();  // re-read in pass 2
          if (RESIDUAL) {
            auto s = (x + load(res + base + c, mask, 0.0f).template cast<f32>()).template cast<T>();
            store(res_out + base + c, s, mask);
            x = s.template cast<f32>();
          }
          acc = acc + x * x;
        });
        auto rstd = rsqrt(sum(acc, 0) / n_cols + eps);
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          auto mask = c < n_cols;
          // With RESIDUAL the sum was rounded to T when stored; re-read it from there.
          auto x = RESIDUAL ? load(res_out + base + c, mask, 0.0f).template cast<f32>()
                            : load(in + base + c, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
          auto w = load(weight + c, mask, 0.0f).template cast<f32>();
          store(out + base + c, (x * rstd * w).template cast<T>(), mask);
        });
      });
  return k;
}

// y = (x - mean) * rsqrt(var + eps) * w + b. A program holds CHUNKS tiles of BLOCK
// columns (row_chunks.hpp). With STATS the row's mean and rstd (f32) are also written to
// mean_out[row] and rstd_out[row], for the backward (layernorm_backward.hpp); without,
// those pointers are never touched.
template <class T>
const auto& layernorm_row_kernel() {
  static auto k = kernel(std::string("layernorm_") + name(dtype_v<T>),
      {"out", "mean_out", "rstd_out", "in", "weight", "bias", "n_cols", "stride", "eps"},
      [](Ptr<T> out, Ptr<float> mean_out, Ptr<float> rstd_out, Ptr<const T> in, Ptr<const T> weight,
         Ptr<const T> bias, I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"SHIFTED", bool> SHIFTED,
         Meta<"RELOAD", bool, false> RELOAD, Meta<"CHUNKS", int64_t, 1> CHUNKS,
         Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS, Meta<"STATS", bool, false> STATS,
         Meta<"WEIGHT_COPIES", bool, false> WEIGHT_COPIES, Meta<"HELD", int64_t, 0> HELD,
         Meta<"TAIL", int64_t, 0> TAIL) {
        auto row = cluster_id();
        auto save_stats = [&](auto mean, auto rstd) {
          if (!STATS) return;
          store(mean_out + row, mean, cluster_rank() == 0);
          store(rstd_out + row, rstd, cluster_rank() == 0);
        };
        auto first_col = in + row * stride;
        auto in_row = first_col, out_row = out + row * stride;
        RowChunks c(cluster_rank(), BLOCK, CHUNKS, n_cols, align_rows(ALIGN_ROWS, in_row, out_row), TAIL);
        const int64_t tiles = static_cast<int64_t>(c.size());
        auto rows = num_programs(0) / cluster_size();
        auto readable = c.template readable<T>(row * stride, (rows - 1 - row).template cast<i64>() * stride);
        // SHIFTED on rows indexed from their aligned start: masked lanes read the shift
        // x[row, 0] itself, so that d = x - shift is 0 there without a select per element
        // (their mask is known only per element). Elsewhere the masks hold per run and
        // the select is cheaper than materializing the shift in the masked lanes
        // (measured, bench/NOTES.md: bf16 65536x1024 90.4 -> 85.7% of copy that way).
        bool shift_in_masked = SHIFTED && ALIGN_ROWS;
        std::optional<Tile<T, 0>> shift_t;
        if (shift_in_masked) shift_t = load(first_col);
        // The first HELD chunks stay in shared memory (Cache::KeepInShared): the output
        // pass reads them there (as RELOAD reads the row again from memory).
        int64_t held = std::min<int64_t>(HELD, CHUNKS);
        std::vector<Tile<T, 1>> kept;
        std::vector<Tile<float, 1>> x;
        for (int64_t i = 0; i < tiles; ++i) {
          Cache cache = i < held ? Cache::KeepInShared : RELOAD ? Cache::Normal : c.read_once();
          auto xi = shift_in_masked ? c.load(in_row, i, *shift_t, cache, readable) : c.load(in_row, i, 0.0f, cache, readable);
          if (i < held) kept.push_back(xi);
          x.push_back(xi.template cast<f32>());
        }
        // RELOAD (as in RMSNorm): the output pass reads the row again instead of keeping it.
        // Held chunks: x + (-m) rather than x - m, an op of its own that CSE does not merge
        // with the reductions' x - m (whose result would then stay in registers), with the
        // same value.
        auto reload = [&](int64_t i) { return RELOAD || i < held; };
        auto again = [&](int64_t i, const F32& m) {
          if (i < held) return kept[i].template cast<f32>() + (-m);
          return c.load(in_row, i, 0.0f, c.read_once(), readable).template cast<f32>() - m;
        };
        // Weight and bias are loaded after the reductions: loaded before, they stay live
        // across them and the extra registers cost more than the hidden latency (NOTES.md).
        auto affine = [&](int64_t i, auto normalized) {
          auto w = c.load_param(weight, i, 0.0f, WEIGHT_COPIES).template cast<f32>();
          auto b = c.load_param(bias, i, 0.0f, WEIGHT_COPIES).template cast<f32>();
          store(out_row + c.pos[i], (normalized * w + b).template cast<T>(), c.mask[i]);
        };
        std::vector<Tile<float, 1>> d, d2;
        if (SHIFTED) {
          // Shifted sums: with d = x - x[0], mean = x[0] + E[d] and var = E[d^2] - E[d]^2.
          // The two reductions are independent (no mean-then-variance chain), and the
          // shift keeps them stable when |mean| >> std.
          auto shift = (shift_in_masked ? *shift_t : load(first_col)).template cast<f32>();
          for (int64_t i = 0; i < tiles; ++i) {
            d.push_back(shift_in_masked ? x[i] - shift : where(c.mask[i], x[i] - shift, 0.0f));
            d2.push_back(d[i] * d[i]);
          }
          auto mean_d = cluster_sum(columns_sum(c, d)) / n_cols;
          auto rstd = rsqrt(maximum(cluster_sum(columns_sum(c, d2)) / n_cols - mean_d * mean_d, 0.0f) + eps);
          save_stats(shift + mean_d, rstd);
          for (int64_t i = 0; i < tiles; ++i) {
            if (reload(i)) d[i] = again(i, shift);
            affine(i, d[i] * rstd - mean_d * rstd);  // one fma per element, not a sub and a mul
          }
        } else {
          auto mean = cluster_sum(columns_sum(c, x)) / n_cols;
          for (int64_t i = 0; i < tiles; ++i) {
            d.push_back(where(c.mask[i], x[i] - mean, 0.0f));
            d2.push_back(d[i] * d[i]);
          }
          auto rstd = rsqrt(cluster_sum(columns_sum(c, d2)) / n_cols + eps);
          save_stats(mean, rstd);
          for (int64_t i = 0; i < tiles; ++i) {
            if (reload(i)) d[i] = again(i, mean);
            affine(i, d[i] * rstd);
          }
        }
      });
  return k;
}

template <class T>
const auto& layernorm_looped_kernel() {
  static auto k = kernel(std::string("layernorm_looped_") + name(dtype_v<T>),
      {"out", "mean_out", "rstd_out", "in", "weight", "bias", "n_cols", "stride", "eps"},
      [](Ptr<T> out, Ptr<float> mean_out, Ptr<float> rstd_out, Ptr<const T> in, Ptr<const T> weight,
         Ptr<const T> bias, I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"STATS", bool, false> STATS) {
        auto row = program_id(0);
        auto cols = arange(0, BLOCK);
        auto base = row * stride;
        // Pass 1: shifted sums of d = x - x[0] and d^2 per lane (stable for large means).
        // Pass 2 re-reads the row (from L2 where it fits) and writes it normalized.
        auto shift = load(in + base).template cast<f32>();
        auto acc = zeros<f32>({BLOCK});
        auto acc2 = zeros<f32>({BLOCK});
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          auto mask = c < n_cols;
          auto d = where(mask, load(in + base + c, mask, 0.0f, Cache::EvictLast).template cast<f32>() - shift, 0.0f);
          acc = acc + d;
          acc2 = acc2 + d * d;
        });
        auto mean_d = sum(acc, 0) / n_cols;
        auto mean = shift + mean_d;
        auto rstd = rsqrt(maximum(sum(acc2, 0) / n_cols - mean_d * mean_d, 0.0f) + eps);
        if (STATS) {
          store(mean_out + row, mean);
          store(rstd_out + row, rstd);
        }
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          auto mask = c < n_cols;
          auto x = load(in + base + c, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
          auto w = load(weight + c, mask, 0.0f).template cast<f32>();
          auto b = load(bias + c, mask, 0.0f).template cast<f32>();
          store(out + base + c, ((x - mean) * rstd * w + b).template cast<T>(), mask);
        });
      });
  return k;
}

// f32 programs of a cluster that cover more than 8192 columns (rows past 131072 on 16
// programs of 16384, one tile on 16 warps at 1 per SM) hold them as chunks of 8192 on 8
// warps, as 16-bit ones do, where such chunks cover them; the residual RMSNorm with
// RELOAD at 2 per SM (3 lost 8 points).
// H200 f32 % of copy (bench/NOTES.md "f32 norms on chunks held in shared memory"), 16 x
// 16384 -> chunks: residual RMSNorm 512x262144 83.2 -> 88.1, 256x262144 81.4 -> 87.1; the
// plain RMSNorm 67.0 -> 83.3 in registers, 88.1 with the chunks held (rmsnorm_heuristic);
// LayerNorm takes its own chunks (layernorm_heuristic). nullopt where it does not apply.
inline std::optional<Config> wide_f32_norm_programs(const Config& c, int64_t n_cols, DType dtype, bool residual) {
  if (byte_size(dtype) != 4 || c.cluster < 2 || row_uses_loop(c, n_cols)) return std::nullopt;
  int64_t per = row_cover(c) / c.cluster;
  if (per <= 8192) return std::nullopt;
  Config k = chunked_row_config((n_cols + c.cluster - 1) / c.cluster, dtype, 8192);
  if (k.get("BLOCK") != 8192) return std::nullopt;  // (narrower chunks: not measured)
  k.num_warps = std::min(k.num_warps, 8);
  k.cluster = c.cluster;
  if (residual) {
    k.set("RELOAD", 1);
    k.min_programs_per_sm = 2;
  }
  return k;
}

// The row heuristic, plus RELOAD where it measured faster on H200 (bench/NOTES.md): with
// a residual whenever the row is split over a cluster (the sum just written is re-read
// from L2: bf16 2048x65536 85% -> 91% of copy), and for 16-bit rows of 16K columns per
// program, with 8 warps (bf16 512x262144: RMSNorm 74% -> 75%, LayerNorm 46% -> 54%; on
// f32 the same change lost: RMSNorm 68% -> 56%).
// Rows that would take 16 programs take 8 where each holds at most 20480 columns
// (eight_program_cluster), with RELOAD at 3 programs per SM as measured; not with
// `eight_programs` false (rows indexed from their aligned start: the residual RMSNorm at
// 2048x151937 lost 62.0 -> 59.4% of copy on 8 programs).
inline Config norm_heuristic(int64_t n_cols, DType dtype, bool clusters = false, bool residual = false,
                             bool eight_programs = true) {
  // Tails for 16-bit rows: on clusters, and in one program for the residual RMSNorm.
  RowTails tails = byte_size(dtype) != 2 ? RowTails::none : residual ? RowTails::any : RowTails::clusters;
  Config c = chunked_row_heuristic(n_cols, dtype, clusters, tails);
  if (c.cluster == 1) return c;
  if (auto eight = eight_program_cluster(c, n_cols, dtype, true); eight && eight_programs) {
    c = *eight;
    c.set("RELOAD", 1);
    c.min_programs_per_sm = 3;
    return c;
  }
  if (auto f32 = wide_f32_norm_programs(c, n_cols, dtype, residual)) return *f32;
  bool wide = row_cover(c) / c.cluster >= 16384 && byte_size(dtype) == 2;
  if (residual || wide) c.set("RELOAD", 1);
  // Wide 16-bit programs (chunks of 8192 on 8 warps, chunked_row_heuristic) at about E + 20
  // registers: 3 per SM at 64 values (RMSNorm bf16 512x262144 70.8% -> 84.9% of copy).
  if (wide && !row_uses_loop(c, n_cols)) c.min_programs_per_sm = register_capped_programs(c, 20);
  return c;
}

// LayerNorm's: the norm heuristic, and for 16-bit programs of a cluster that hold 8192
// columns or more as tiles of 8192+, the same columns as chunks of 4096 on one warp per
// 2048 columns (64 values per thread; 8 warps at about E + 20 registers, 3 per SM).
// Measured on H200 (bench/NOTES.md "LayerNorm's spread"), bf16 % of copy: 8192x16384
// 83.7 -> 84.5, 4096x32768 75.6 -> 80.7, 2048x65536 70.4 -> 76.3, 1024x131072 63.2 ->
// 71.8, 512x262144 51.7 -> 71.4 (f16 alike); the same spread cost RMSNorm and softmax 1.5-3
// points, whose programs keep the norm/row heuristic's.
// `copies`: rows indexed from their aligned start with the parameters' shifted copies
// (weight_copies_pay): the programs then see aligned rows of the aligned span.
// Those 16-bit programs keep their chunks in shared memory (HELD, read again by the output
// pass) where the rows' width is a multiple of 8: H200 % of copy (bench/NOTES.md, "LayerNorm's
// chunks held"), bf16 2048x65536 77.3 -> 83.4, 512x262144 71.5 -> 80.1, 128x262144 62.7 ->
// 69.3, 4096x32768 80.7 -> 86.9, 8192x16384 85.0 -> 88.5; f16 alike (+6 to +10). Rows of odd
// width lost 1-2 points (2048x16385, 512x65537). f32 programs take the same chunks (of
// 4096, held where the width is a multiple of 4), without a register cap: H200 f32 % of
// copy (bench/NOTES.md "f32 norms on chunks held in shared memory"), 8192x16384 88.5 ->
// 95.2, 2048x65536 82.2 -> 94.0, 1024x131072 73.6 -> 87.0, 512x262144 58.0 -> 83.7 (16 x
// 16384 before). Short rows go in batches (row_batches.hpp).
// Rows whose programs would hold chunks of 1024 on clusters of 4+ take half the programs
// (half_cluster_programs). Held 16-bit programs of 8192 columns cover 16384 on half the
// cluster, and those of 16384 on 8-16 programs hold 32768 as 4 chunks of 8192 (128 values
// per thread in shared memory) on half the cluster, where `aligned_rows` (see below).
inline Config layernorm_heuristic(int64_t n_cols, DType dtype, bool clusters = false, bool copies = false,
                                  bool aligned_rows = true);
// with_split_rows' clusters for few long rows: 16-bit LayerNorm rows, and f32 ones whose
// programs hold their chunks in shared memory (128x262144 58 -> 76% of copy); f32 programs
// in registers lost (58 -> 52 on 16 x 16384).
inline bool layernorm_few_rows_on_clusters(const Config& heuristic, DType dtype) {
  return byte_size(dtype) == 2 || heuristic.has("HELD");
}
inline Config layernorm_heuristic(int64_t n_cols, DType dtype, bool clusters, bool copies, bool aligned_rows) {
  int64_t width = n_cols;  // (n_cols may become the aligned span)
  if (copies) n_cols = aligned_row_span(n_cols, dtype);
  Config c = norm_heuristic(n_cols, dtype, clusters);
  batch_short_rows(c, dtype);  // rows of 1 KB or less: several per program (row_batches.hpp)
  if (auto half = half_cluster_programs(c, n_cols, dtype)) return *half;
  if (c.cluster == 1 || byte_size(dtype) > 4 || row_uses_loop(c, n_cols) || c.get("BLOCK") < 8192) return c;
  int64_t per = row_cover(c) / c.cluster;
  const bool f32 = byte_size(dtype) == 4;
  const bool held = !copies && width % (16 / byte_size(dtype)) == 0;
  // Held 16-bit programs cover 32 KB of the row, as f32 ones do: 16384 columns on half the
  // cluster (a row on one program at 16384 columns) rather than 8192. H200 bf16 % of copy,
  // one round (bench/NOTES.md "f32 norms on chunks held in shared memory"): 8192x16384
  // 87.8 -> 92.2, 4096x32768 86.3 -> 88.1, 2048x65536 83.4 -> 84.4.
  if (!f32 && held && per == 8192 && c.cluster <= 8) {
    per = 16384;
    c.cluster /= 2;
  }
  // Held 16-bit programs of 16384 columns on 8-16 programs (rows of 114696-131072 and
  // 229384-262144 columns) known to start on 16 bytes (`aligned_rows`; else the chunks stay
  // in registers and 128 per thread spill): 64 KB on half the cluster (held_64k_programs).
  // H200 bf16 % of copy, two rounds (bench/NOTES.md "Programs of 64 KB held"): 512x262144
  // 79.9 -> 82.9, 2048x131072 85.0 -> 89.2.
  if (!f32 && held && aligned_rows && per == 16384 && c.cluster >= 8 && c.cluster <= 16)
    return held_64k_programs(c);
  // A held 16-bit row on one program (14337-16384 columns): 2 chunks of 8192 on 16 warps,
  // no register cap, rather than 4 of 4096 on 8 at 3 per SM. H200 % of copy, two rounds
  // (bench/NOTES.md "Causal attention with the diagonal block first; LayerNorm's wide
  // rows"): bf16 8192x16384 92.4 -> 95.2, 16384x16384 94.7 -> 97.0, 4096x16384 87.0 -> 89.0,
  // 8192x15000 84.9 -> 88.5, 8192x16376 87.0 -> 89.7; f16 +1.4 to +2.5. On clusters of 2-4
  // the same programs lost (4096x32768 88.3 -> 82.3, 2048x65536 84.0 -> 75.7).
  if (!f32 && held && per == 16384 && c.cluster == 1) {
    c.set("BLOCK", 8192).set("CHUNKS", 2).set("HELD", 2);
    c.num_warps = 16;
    c.min_programs_per_sm = 0;
    return c;
  }
  c.set("BLOCK", 4096);
  c.set("CHUNKS", per / 4096);
  c.num_warps = static_cast<int>(per / 2048);
  c.min_programs_per_sm = c.num_warps >= 8 && !f32 ? register_capped_programs(c, 20) : 0;
  if (held) c.set("HELD", c.get("CHUNKS"));
  return c;
}
// LayerNorm's config for rows x cols on buffers of type Buffer: its heuristic, split over
// the GPU where with_split_rows says so.
template <class Buffer>
Config layernorm_rows_heuristic(int64_t rows, int64_t cols, DType dtype, bool clusters, bool copies,
                                bool aligned_rows = true) {
  Config h = layernorm_heuristic(cols, dtype, clusters, copies, aligned_rows);
  return with_split_rows<Buffer>(h, rows, cols, dtype, layernorm_few_rows_on_clusters(h, dtype));
}
// RMSNorm's: the norm heuristic, and for 16-bit rows of widths that are not a multiple of
// 8 split over a cluster, programs capped at about E + 32 registers for E values per
// thread (row_programs_per_sm; the weight tile needs the 16 more): H200 bf16 4096x16383
// 52.8% -> 60.1% of copy, 4096x16386 55.7% -> 66.7%, 4096x30011 48.2% -> 58.8%; aligned
// rows lost 0.2-0.6 points with it, LayerNorm and the residual variant gained nothing
// reliable (bench/NOTES.md). 16-bit rows of 2048-4096 columns in one tile take 16 values
// per thread (spread_one_tile_rows).
// `copies`: as layernorm_heuristic's.
inline Config rmsnorm_heuristic(int64_t n_cols, DType dtype, bool clusters = false, bool copies = false) {
  int64_t n = copies ? aligned_row_span(n_cols, dtype) : n_cols;
  Config c = norm_heuristic(n, dtype, clusters);
  if (byte_size(dtype) == 2 && c.cluster > 1 && n_cols % 8 != 0 && !row_uses_loop(c, n))
    c.min_programs_per_sm = register_capped_programs(c, 32);
  // Chunks kept in shared memory (held_chunks) where the programs hold the row rather
  // than read it again (RELOAD): H200 bf16 2048x65536 85.5 -> 91.7% of copy (local ptxas:
  // 80 registers with 36 bytes of spills -> 59, none). With RELOAD they lost 1-2 points
  // (1024x131072, 512x262144), and the residual RMSNorm lost 0.5-6 (bench/NOTES.md).
  if (!row_uses_loop(c, n) && !(c.has("RELOAD") && c.get("RELOAD"))) hold_chunks(c, dtype);
  // f32 programs of chunks of 8192 (wide_f32_norm_programs) too, on rows of whole 16-byte
  // runs: 512x262144 83.3 -> 88.1% of copy, 256x262144 80.3 -> 84.8 (H200).
  if (byte_size(dtype) == 4 && c.cluster > 1 && c.has("CHUNKS") && c.get("CHUNKS") > 1 && c.get("BLOCK") == 8192 &&
      n_cols % 4 == 0 && !copies && !row_uses_loop(c, n))
    c.set("HELD", c.get("CHUNKS"));
  spread_one_tile_rows(c, dtype, n);
  batch_short_rows(c, dtype);  // rows of 1 KB or less: several per program (row_batches.hpp)
  return c;
}

// The residual RMSNorm's: the norm heuristic with RELOAD, rows indexed from their aligned
// start where that pays (`align`: rows_need_alignment), and then programs capped at about
// E + 32 registers for E values per thread: the weight's realigned runs (read without
// touching a byte past the weight) took the driver's ptxas to 4 programs per SM (H200 bf16
// 4096x16383 50.1% of copy, capped 62.1%; 2048x65537 45.5% -> 58.4%, f16 57.6% -> 70.7%).
// 16-bit programs of chunks of 1024 on clusters of 4+ are half as many, twice as wide
// (half_cluster_programs), with RELOAD, where the width is not a multiple of 8 (aligned
// widths lost 1.3-1.7 points: bf16 4096x20000 84.1 -> 82.8, 1024x50304 69.8 -> 68.3).
inline Config add_rmsnorm_heuristic(int64_t n_cols, DType dtype, bool clusters, bool align) {
  bool aligned_width = n_cols % (16 / byte_size(dtype)) == 0;
  auto heuristic = [&](int64_t n) { return norm_heuristic(n, dtype, clusters, true, aligned_width); };
  Config c = aligned_rows_heuristic(align, n_cols, dtype, heuristic);
  bool from_aligned_start = align && aligned_rows_pay(c, n_cols, dtype);
  if (from_aligned_start && !row_uses_loop(c, aligned_row_span(n_cols, dtype)))
    c.min_programs_per_sm = register_capped_programs(c, 32);
  std::optional<Config> half;
  if (!aligned_width) half = half_cluster_programs(c, from_aligned_start ? aligned_row_span(n_cols, dtype) : n_cols, dtype);
  if (half) {
    c = *half;
    c.set("RELOAD", 1);
  }
  // f32 programs of chunks on a cluster at 4 per SM: under the whole-program JIT they took
  // 90 registers and 5 per SM, slower (the sums re-read by RELOAD likely missing L2 more).
  // H200 % of copy, 5 per SM -> 4: 2048x16385 57.4 -> 68.7, 4096x16387 59.2 -> 72.1,
  // 2048x20001 62.5 -> 74.0, 1024x24577 59.0 -> 62.2 (bench/NOTES.md). Only 4-warp
  // programs (those measured: 128 registers each at 4 per SM); 8-warp ones (f32 rows past
  // 128K columns, 2048-column chunks) would be held to 64 and spill.
  if (byte_size(dtype) == 4 && c.cluster > 1 && c.has("CHUNKS") && c.get("CHUNKS") > 1 && c.num_warps <= 4 &&
      c.min_programs_per_sm == 0)
    c.min_programs_per_sm = 4;
  batch_short_rows(c, dtype);
  return c;
}

// rmsnorm(out, in, weight, rows, cols, eps): rows of `in` normalized by their RMS, times weight.
// Without a residual the res/res_out parameters are never touched; `in`/`out` stand in.
template <class Out, class In, class W>
void rmsnorm(Out&& out, const In& in, const W& weight, int64_t rows, int64_t cols, float eps = 1e-6f,
             ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Out>;
  bool align = rows_need_alignment(dtype_v<T>, {row_buffer(in, cols), row_buffer(out, cols)});
  int64_t span = align ? aligned_row_span(cols, dtype_v<T>) : cols;
  bool copies = align && weight_copies_pay(rows, cols, dtype_v<T>, row_buffer(in, cols).address);
  Config c = cfg ? *cfg : with_split_rows<Out>(rmsnorm_heuristic(cols, dtype_v<T>, clusters_usable<Out>(), copies),
                                                rows, cols, dtype_v<T>);
  if (row_uses_split(c)) return rmsnorm_split(out, out, in, in, weight, c, rows, cols, eps, false, align, copies);
  c.meta.erase("SPLIT");
  c.set("RESIDUAL", 0);
  if (uses_row_batches(c, cols, "rmsnorm"))
    return rmsnorm_rows_kernel<T>().launch(row_batch_grid(c, rows), c, out, out, in, in, weight, rows, cols, cols, eps);
  set_align_rows(c, align, span, copies);
  check_row_cover(c, cols, "rmsnorm");
  launch_with_row_params<T>(c, copies, cols, [&](const auto& w) {
    launch_rows(rmsnorm_row_kernel<T>(), rmsnorm_looped_kernel<T>(), c, rows, cols, out, out, in, in, w, cols, cols,
                eps);
  }, weight);
}

// Fused residual add + RMSNorm: res_out = in + res; out = rmsnorm(res_out) * weight.
template <class Out, class ResOut, class In, class Res, class W>
void add_rmsnorm(Out&& out, ResOut&& res_out, const In& in, const Res& res, const W& weight, int64_t rows,
                 int64_t cols, float eps = 1e-6f, ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Out>;
  bool align = rows_need_alignment(dtype_v<T>, {row_buffer(in, cols), row_buffer(out, cols), row_buffer(res, cols),
                                                row_buffer(res_out, cols)});
  int64_t span = align ? aligned_row_span(cols, dtype_v<T>) : cols;
  Config c = cfg ? *cfg
                 : with_split_rows<Out>(add_rmsnorm_heuristic(cols, dtype_v<T>, clusters_usable<Out>(), align), rows,
                                        cols, dtype_v<T>);
  bool copies = weight_copies_pay(rows, cols, dtype_v<T>, row_buffer(in, cols).address);
  if (row_uses_split(c)) return rmsnorm_split(out, res_out, in, res, weight, c, rows, cols, eps, true, align, copies);
  c.meta.erase("SPLIT");
  c.set("RESIDUAL", 1);
  if (uses_row_batches(c, cols, "add_rmsnorm"))
    return rmsnorm_rows_kernel<T>().launch(row_batch_grid(c, rows), c, out, res_out, in, res, weight, rows, cols, cols,
                                           eps);
  set_align_rows(c, align, span, aligned_rows_pay(c, cols, dtype_v<T>));
  check_row_cover(c, cols, "rmsnorm");
  launch_with_row_params<T>(c, copies, cols, [&](const auto& w) {
    launch_rows(rmsnorm_row_kernel<T>(), rmsnorm_looped_kernel<T>(), c, rows, cols, out, res_out, in, res, w, cols,
                cols, eps);
  }, weight);
}

// The one-tile LayerNorm has two algorithms (meta-parameter SHIFTED). Shifted sums are
// the default: their two reductions are independent, so they share one exchange between
// warps (and between the programs of a cluster); measured on H200 they win on 16-bit
// rows (bf16 16384x5000: 52% -> 68% of copy) and, since that sharing, on f32 too
// (8192x16384: 78% -> 83%; 65536x1024: 95% either way). The tuner may override. The
// looped program always uses shifted sums and takes no SHIFTED.
inline Config layernorm_config(Config c, int64_t cols, DType) {
  if (row_uses_loop(c, cols)) c.meta.erase("SHIFTED");
  else if (!c.has("SHIFTED")) c.set("SHIFTED", 1);
  return c;
}

namespace detail {
// The LayerNorm launch; with `stats`, the rows' mean and rstd go to mean/rstd (f32), else
// those are unused_f32_buffer()s.
template <class Out, class Mean, class Rstd, class In, class W, class B>
void layernorm_launch(Out& out, const Mean& mean, const Rstd& rstd, bool stats, const In& in, const W& weight,
                      const B& bias, int64_t rows, int64_t cols, float eps, ConfigOverride cfg) {
  using T = buffer_elem_t<Out>;
  bool align = rows_need_alignment(dtype_v<T>, {row_buffer(in, cols), row_buffer(out, cols)});
  int64_t span = align ? aligned_row_span(cols, dtype_v<T>) : cols;
  bool copies = align && weight_copies_pay(rows, cols, dtype_v<T>, row_buffer(in, cols).address);
  Config picked =
      cfg ? *cfg : layernorm_rows_heuristic<Out>(rows, cols, dtype_v<T>, clusters_usable<Out>(), copies, !align);
  if (stats) picked.set("STATS", 1);
  else picked.meta.erase("STATS");  // a config asking for them would write through unused buffers
  if (row_uses_split(picked))
    return layernorm_split(out, mean, rstd, in, weight, bias, picked, rows, cols, eps, align, copies);
  picked.meta.erase("SPLIT");
  if (uses_row_batches(picked, cols, "layernorm"))
    return layernorm_rows_kernel<T>().launch(row_batch_grid(picked, rows), picked, out, mean, rstd, in, weight, bias,
                                             rows, cols, cols, eps);
  Config c = layernorm_config(picked, cols, dtype_v<T>);
  set_align_rows(c, align, span, copies);
  check_row_cover(c, cols, "layernorm");
  launch_with_row_params<T>(c, copies, cols, [&](const auto& w, const auto& b) {
    launch_rows(layernorm_row_kernel<T>(), layernorm_looped_kernel<T>(), c, rows, cols, out, mean, rstd, in, w, b,
                cols, cols, eps);
  }, weight, bias);
}
}  // namespace detail

template <class Out, class In, class W, class B>
void layernorm(Out&& out, const In& in, const W& weight, const B& bias, int64_t rows, int64_t cols,
               float eps = 1e-5f, ConfigOverride cfg = {}) {
  auto none = unused_f32_buffer<Out>();
  detail::layernorm_launch(out, none, none, false, in, weight, bias, rows, cols, eps, cfg);
}

// The forward of a training step: also writes each row's mean and rstd = 1/sqrt(var + eps)
// (f32, `rows` elements each) for layernorm_backward(..., mean, rstd, ...), which then
// needs two row sums instead of four. 8 bytes per row more than layernorm().
template <class Out, class Mean, class Rstd, class In, class W, class B>
  requires(!std::is_arithmetic_v<std::remove_cvref_t<W>>)
void layernorm(Out&& out, Mean&& mean, Rstd&& rstd, const In& in, const W& weight, const B& bias, int64_t rows,
               int64_t cols, float eps = 1e-5f, ConfigOverride cfg = {}) {
  static_assert(std::is_same_v<buffer_elem_t<Mean>, float> && std::is_same_v<buffer_elem_t<Rstd>, float>,
                "layernorm: mean and rstd are f32 buffers (one value per row)");
  check_norm_shape("layernorm", rows, cols);
  std::string r = "rows = " + std::to_string(rows);
  check_norm_arg("layernorm", "mean", mean, rows, r.c_str());
  check_norm_arg("layernorm", "rstd", rstd, rows, r.c_str());
  detail::layernorm_launch(out, mean, rstd, true, in, weight, bias, rows, cols, eps, cfg);
}

}  // namespace tilefuse::kernels
