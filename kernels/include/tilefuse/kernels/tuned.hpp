#pragma once
// Autotuned entry points of the gallery: tuned_softmax(out, in, rows, cols) and
// friends launch the gallery host functions with the config the autotuner picked
// for their key (see autotune/autotune.hpp). With TILEFUSE_AUTOTUNE=off, on host
// buffers (the interpreter) or without a GPU they use the gallery's heuristics.
//
// The *_tuner<T>() objects are shared with tilefuse-tune, so a sweep from the command
// line fills the cache entries these functions read.
#include <cmath>
#include <string>

#include "tilefuse/autotune/autotune.hpp"
#include "tilefuse/kernels/kernels.hpp"

namespace tilefuse::kernels {

// Row kernels (softmax, norms): BLOCK x num_warps x cluster; the host functions run
// the one-row-per-cluster program when BLOCK x cluster >= n_cols and the looped one
// otherwise.
inline tuning::Space rowwise_space() {
  auto s = tuning::Space::product(
      {tuning::pow2_range("BLOCK", 1024, 32768), tuning::values("num_warps", {1, 2, 4, 8, 16, 32})});
  // Long rows: one row per cluster of 2-16 programs (sm_90+; elsewhere they fail to
  // compile and are pruned with that reason).
  for (int64_t b : {8192, 16384})
    for (int w : {8, 16, 32})
      for (int c : {2, 4, 8, 16}) {
        Config k{{"BLOCK", b}, num_warps(w), cluster(c)};
        s.add(k);
        // The same with ptxas asked for more programs per SM (fewer registers).
        if (int n = register_capped_programs(k)) s.add(Config(k).set("min_programs_per_sm", n));
      }
  // Rows past 16 x 16384 columns: clusters of 32-256 programs, exchanging through memory.
  for (int64_t b : {8192, 16384})
    for (int w : {8, 16})
      for (int c : {32, 64, 128, 256}) s.add(Config{{"BLOCK", b}, num_warps(w), cluster(c)});
  // Few long rows: BLOCK-column chunks spread over the whole GPU (split_rows.hpp).
  for (int64_t b : {4096, 8192, 16384})
    for (int w : {4, 8, 16}) s.add(Config{{"BLOCK", b}, {"SPLIT", 1}, num_warps(w)});
  s.prune_if([](const Config& c, const tuning::KeyView& k) -> std::string {
    if (c.has("CHUNKS") || c.has("ROWS")) return "";  // judged by chunked_rowwise_space(), with_row_batches()
    int64_t b = c.get("BLOCK"), cols = k["n_cols"];
    if (row_uses_split(c) && 2 * b > cols) return "SPLIT with fewer than 2 chunks of BLOCK columns";
    if (c.cluster > 1) {
      if (b * c.cluster < cols) return "BLOCK x cluster < " + std::to_string(cols) + " columns";
      if (b * c.cluster / 2 >= cols) return "a smaller cluster covers the row";
    }
    if (b > 1024 && b > tuning::pow2(cols))
      return "BLOCK " + std::to_string(b) + " > " + std::to_string(cols) + " columns";
    // Looping reads the row twice; only worth timing when the row is long.
    if (b < cols && tuning::pow2(cols) <= 8192)
      return "BLOCK " + std::to_string(b) + " < " + std::to_string(cols) + " columns";
    // Per-thread work outside [4, 64] elements: idle lanes or register spills.
    int64_t per_thread = b / (32 * c.num_warps);
    if (per_thread < 4) return std::to_string(per_thread) + " elements per thread (< 4)";
    if (per_thread > 64) return std::to_string(per_thread) + " elements per thread (> 64)";
    return "";
  });
  return s;
}
// The forward row kernels also take CHUNKS (row_chunks.hpp): rows of a width that is
// not a power of two as 3-7 chunks of 512-2048 columns per program, the fewest that
// cover the row; and on clusters of 2-16 programs, each program's share of the row as the
// fewest chunks of 1024-4096 covering it, on 4 or 8 warps, with and without ptxas asked
// for 3 programs per SM -- the heuristics' programs at such widths (16385 columns: 4 x 5 x
// 1024 on 4 warps) and the same row on half the programs (2 x 5 x 2048 on 8 warps,
// half_cluster_programs), which measured faster for some kernels and slower for others.
inline tuning::Space chunked_rowwise_space() {
  tuning::Space s = rowwise_space();
  for (int64_t b : {512, 1024, 2048})
    for (int64_t chunks : {3, 5, 6, 7})
      for (int w : {2, 4, 8}) s.add(Config{{"BLOCK", b}, {"CHUNKS", chunks}, num_warps(w)});
  for (int cl : {2, 4, 8, 16})
    for (int64_t b : {1024, 2048, 4096})
      for (int64_t chunks : {3, 5, 6, 7})
        for (int w : {4, 8}) {
          Config k{{"BLOCK", b}, {"CHUNKS", chunks}, num_warps(w), cluster(cl)};
          s.add(k);
          s.add(Config(k).set("min_programs_per_sm", 3));
        }
  s.prune_if([](const Config& c, const tuning::KeyView& k) -> std::string {
    if (!c.has("CHUNKS")) return "";
    int64_t b = c.get("BLOCK"), chunks = c.get("CHUNKS"), cols = k["n_cols"];
    int64_t share = (cols + c.cluster - 1) / c.cluster;  // each program's columns
    if (b * chunks < share || b * (chunks - 1) >= share)
      return std::to_string(chunks) + " x " + std::to_string(b) + " is not the fewest chunks covering " +
             std::to_string(share) + " columns" + (c.cluster > 1 ? " (the row's share per program)" : "");
    if (b / (32 * c.num_warps) < 4) return "fewer than 4 elements per thread in a chunk";
    if (b * chunks / (32 * c.num_warps) > 64) return "more than 64 elements per thread";
    return "";
  });
  return s;
}
// Kernels whose row programs take HELD (softmax, cross-entropy, the norms): every cluster config of
// 8192+ columns per program also with its tile kept in shared memory (held_chunks).
inline tuning::Space with_held_chunks(tuning::Space s) {
  std::vector<Config> held;
  for (const Config& c : s.configs())
    if (c.cluster > 1 && c.cluster <= 16 && !row_uses_split(c) && c.get("BLOCK") >= 8192)
      held.push_back(Config(c).set("HELD", c.has("CHUNKS") ? c.get("CHUNKS") : 1));
  for (const Config& c : held) s.add(c);
  return s;
}
// Kernels with a rows program (softmax, the norms, cross-entropy): short rows also as ROWS
// rows of one BLOCK tile per program (row_batches.hpp), BLOCK the row's power of two,
// 4-32 elements per thread.
inline tuning::Space with_row_batches(tuning::Space s) {
  for (int64_t b = 1; b <= 1024; b *= 2)
    for (int64_t rows : {2, 4, 8, 16, 32})
      for (int w : {1, 2, 4}) s.add(Config{{"BLOCK", b}, {"ROWS", rows}, num_warps(w)});
  s.prune_if([](const Config& c, const tuning::KeyView& k) -> std::string {
    if (!c.has("ROWS")) return "";
    int64_t b = c.get("BLOCK"), cols = k["n_cols"];
    if (b != tuning::pow2(cols)) return "BLOCK " + std::to_string(b) + " is not the row's power of two";
    int64_t per_thread = c.get("ROWS") * b / (32 * c.num_warps);
    if (per_thread < 4 || per_thread > 32) return std::to_string(per_thread) + " elements per thread";
    return "";
  });
  return s;
}
inline tuning::Key rowwise_key(int64_t rows, int64_t cols) { return tuning::Key{tuning::pow2(rows), cols}; }

// Attention: tiles, warps along BLOCK_M (16 rows each), pipeline stages, P.V one block
// behind and a register cap for more programs per SM; and 128-row tiles on a producer
// warpgroup and two consumer warpgroups taking turns, O rescaled after the softmax (the
// d128 heuristic's schedule), with 64- or 128-key blocks and 2 or 3 stages, one program
// per block or persistent (the producer copying the next program's first blocks during
// this one's epilogue). Causal configs with P.V behind also run with the diagonal block
// first (DIAGONAL_FIRST), where BLOCK_N is a multiple of BLOCK_M.
inline tuning::Space attention_space() {
  auto s = tuning::Space::product({tuning::values("BLOCK_M", {64, 128}), tuning::values("BLOCK_N", {32, 64, 128}),
                                   tuning::values("num_warps", {4, 8}), tuning::values("num_stages", {1, 2, 3}),
                                   tuning::values("PV_LAG", {0, 1}), tuning::values("min_programs_per_sm", {0, 2, 3}),
                                   tuning::values("TMA_STORE", {0, 1}), tuning::values("HEAD_SPLIT", {0, 1})});
  for (int64_t bn : {64, 128})
    for (int stages : {2, 3})
      for (int split : {0, 1})
        for (bool persist : {false, true})
          s.add(Config{{"BLOCK_M", 128}, {"BLOCK_N", bn}, {"PV_LAG", 1}, {"RESCALE_LATE", 1}, {"TMA_STORE", 0},
                       {"HEAD_SPLIT", split}, num_warps(8), num_stages(stages), warp_specialize(),
                       persistent(persist)});
  std::vector<Config> diagonal_first;
  for (const Config& c : s.configs())
    if (c.get("PV_LAG") && c.get("BLOCK_N") % c.get("BLOCK_M") == 0)
      diagonal_first.push_back(Config(c).set("DIAGONAL_FIRST", 1));
  for (const Config& c : diagonal_first) s.add(c);
  s.prune_if([](const Config& c, const tuning::KeyView& k) -> std::string {
    if (c.has("DIAGONAL_FIRST") && !k["causal"]) return "DIAGONAL_FIRST orders the blocks of causal rows only";
    if (16 * c.num_warps > c.get("BLOCK_M"))
      return std::to_string(c.num_warps) + " warps x 16 rows > BLOCK_M " + std::to_string(c.get("BLOCK_M"));
    if (!c.get("HEAD_SPLIT") && head_parts(k["head_dim"], false) == head_parts(k["head_dim"]))
      return "head dim " + std::to_string(k["head_dim"]) + ": the same blocks as HEAD_SPLIT=1";
    return "";
  });
  return s;
}

// GEMM: output tiles x K step x warps x pipeline stages; the tuner also prunes configs
// that need too much shared memory (stages x tiles) or spill.
// GEMM tilings with K blocks of `block_k` elements (the second is the one the skinny
// configs use); accumulators of 32x32 to 64x64 per warp. For GEMMs with few output
// tiles (skinny: inference's projections) also what the heuristic picks from: 64x128
// tiles on 6 stages, and K split into 2, 4 or 8 slices over 64x64 tiles (two per SM) or,
// for at most 16 rows, 16-row mma.sync tiles; split configs only where the unsplit tiles
// leave SMs idle and each slice keeps 4+ K blocks. And the rule's 128x128 and 128x256
// tilings with the tiles of their last partial wave split (SPLIT_TAIL).
inline tuning::Space gemm_space(std::vector<int64_t> block_k) {
  const int64_t skinny_k = block_k.back();
  auto s = tuning::Space::product({tuning::values("BLOCK_M", {64, 128, 256}), tuning::values("BLOCK_N", {64, 128, 256}),
                                   tuning::values("BLOCK_K", std::move(block_k)), tuning::values("num_warps", {4, 8}),
                                   tuning::values("num_stages", {2, 3, 4})});
  s.add(Config{{"BLOCK_M", 64}, {"BLOCK_N", 128}, {"BLOCK_K", skinny_k}, num_warps(4), num_stages(6)});
  for (int64_t splits : {2, 4, 8}) {
    for (int stages : {4, 6})
      s.add(Config{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", skinny_k}, {"SPLIT_K", splits}, num_warps(4),
                   num_stages(stages)});
    s.add(Config{{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"BLOCK_K", skinny_k}, {"SPLIT_K", splits}, num_warps(4),
                 num_stages(4)});
    // The last partial wave's tiles split (gemm_split_tail.hpp), on the rule's tilings.
    s.add(Config{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", skinny_k}, {"SPLIT_K", splits}, {"SPLIT_TAIL", 1},
                 num_warps(8), num_stages(6)});
    s.add(Config{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", skinny_k}, {"SPLIT_K", splits}, {"SPLIT_TAIL", 1},
                 num_warps(8), num_stages(4)});
  }
  s.prune_if([](const Config& c, const tuning::KeyView& k) -> std::string {
    int64_t bm = c.get("BLOCK_M"), bn = c.get("BLOCK_N");
    if (bm == 16) return k["M"] > 16 ? "16-row tiles for more than 16 rows" : "";
    int64_t per_warp = bm * bn / c.num_warps;
    if (per_warp > 64 * 64) return "accumulator of " + std::to_string(per_warp) + " elements per warp > 64x64";
    if (per_warp < 32 * 32) return "accumulator of " + std::to_string(per_warp) + " elements per warp < 32x32";
    return "";
  });
  s.prune_if([](const Config& c, const tuning::KeyView& k) -> std::string {
    if (!c.has("SPLIT_K")) return "";
    int64_t splits = c.get("SPLIT_K"), bm = c.get("BLOCK_M"), bn = c.get("BLOCK_N");
    int64_t tiles = ((k["M"] + bm - 1) / bm) * ((k["N"] + bn - 1) / bn);
    if (tiles >= 2 * gpu_sm_count() && !c.has("SPLIT_TAIL"))  // (a tail split is for many tiles)
      return "its " + std::to_string(tiles) + " tiles fill the GPU unsplit";
    if (k["K"] < splits * 4 * c.get("BLOCK_K")) return "slices of fewer than 4 K blocks";
    return "";
  });
  return s;
}
inline tuning::Space matmul_space() { return gemm_space({32, 64}); }
// The 8-bit GEMM: K blocks of twice the elements (the same bytes).
inline tuning::Space scaled_matmul_space() { return gemm_space({64, 128}); }

// Elementwise: BLOCK x num_warps over the flattened tensor.
inline tuning::Space elementwise_space() {
  auto s = tuning::Space::product(
      {tuning::pow2_range("BLOCK", 256, 16384), tuning::values("num_warps", {2, 4, 8, 16})});
  s.prune_if([](const Config& c, const tuning::KeyView&) -> std::string {
    if (c.get("BLOCK") < 32 * c.num_warps)
      return "BLOCK " + std::to_string(c.get("BLOCK")) + " < " + std::to_string(32 * c.num_warps) + " threads";
    return "";
  });
  return s;
}

template <class T>
const auto& softmax_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& out, const auto& in, int64_t rows, int64_t cols) { softmax(out, in, rows, cols, -1, -1, c); },
      with_row_batches(with_held_chunks(chunked_rowwise_space())),
      [](const auto&, const auto&, int64_t rows, int64_t cols) { return rowwise_key(rows, cols); },
      TuneOptions{.name = "softmax", .key_names = {"n_rows", "n_cols"}, .outputs = {0},
                  .fallback =
                      [](const tuning::KeyView& k) {
                        return with_split_rows_any(
                            softmax_rows_config(k["n_cols"], dtype_v<T>, gpu_has_clusters(),
                                                contiguous_rows_misaligned(k["n_cols"], dtype_v<T>)),
                            k["n_rows"], k["n_cols"], dtype_v<T>);
                      }},
      [](const Config& c, const auto& out, const auto& in, int64_t rows, int64_t cols) {
        if (row_uses_split(c))
          return tuning::specialization(softmax_split_normalize_kernel<T>(), split_normalize_config(c, cols), out, in,
                                        split_rows_scratch<std::remove_cvref_t<decltype(out)>>(1), cols, cols, cols, 0);
        if (Config rc = c; uses_row_batches(rc, cols, "softmax"))
          return tuning::specialization(softmax_rows_kernel<T>(), rc, out, in, rows, cols, cols, cols);
        const KernelBase& k = softmax_uses_loop(c, cols) ? static_cast<const KernelBase&>(softmax_looped_kernel<T>())
                                                         : softmax_row_kernel<T>();
        return tuning::specialization(k, c, out, in, rows, cols, cols, cols);
      });
  return t;
}

template <class T>
const auto& rmsnorm_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& out, const auto& in, const auto& w, int64_t rows, int64_t cols, float eps) {
        rmsnorm(out, in, w, rows, cols, eps, c);
      },
      with_row_batches(with_held_chunks(chunked_rowwise_space())),
      [](const auto&, const auto&, const auto&, int64_t rows, int64_t cols, float) { return rowwise_key(rows, cols); },
      TuneOptions{.name = "rmsnorm", .key_names = {"n_rows", "n_cols"}, .outputs = {0},
                  .fallback =
                      [](const tuning::KeyView& k) {
                        bool copies = contiguous_rows_misaligned(k["n_cols"], dtype_v<T>) &&
                                      weight_copies_pay(k["n_rows"], k["n_cols"], dtype_v<T>, 0);
                        return with_split_rows_any(
                            rmsnorm_heuristic(k["n_cols"], dtype_v<T>, gpu_has_clusters(), copies), k["n_rows"],
                            k["n_cols"], dtype_v<T>);
                      }},
      [](const Config& c, const auto& out, const auto& in, const auto& w, int64_t rows, int64_t cols, float eps) {
        if (row_uses_split(c))
          return tuning::specialization(rmsnorm_split_normalize_kernel<T>(), split_normalize_config(c, cols), out, in,
                                        w, split_rows_scratch<std::remove_cvref_t<decltype(out)>>(1), cols, cols, eps, 0);
        Config lc = Config(c).set("RESIDUAL", 0);
        if (uses_row_batches(lc, cols, "rmsnorm"))
          return tuning::specialization(rmsnorm_rows_kernel<T>(), lc, out, out, in, in, w, rows, cols, cols, eps);
        const KernelBase& k = row_uses_loop(c, cols) ? static_cast<const KernelBase&>(rmsnorm_looped_kernel<T>())
                                                     : rmsnorm_row_kernel<T>();
        return tuning::specialization(k, lc, out, out, in, in, w, cols, cols, eps);
      });
  return t;
}

template <class T>
const auto& layernorm_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& out, const auto& in, const auto& w, const auto& b, int64_t rows, int64_t cols,
         float eps) { layernorm(out, in, w, b, rows, cols, eps, c); },
      with_row_batches(with_held_chunks(chunked_rowwise_space())),
      [](const auto&, const auto&, const auto&, const auto&, int64_t rows, int64_t cols, float) {
        return rowwise_key(rows, cols);
      },
      TuneOptions{.name = "layernorm", .key_names = {"n_rows", "n_cols"}, .outputs = {0},
                  .fallback =
                      [](const tuning::KeyView& k) {
                        bool copies = contiguous_rows_misaligned(k["n_cols"], dtype_v<T>) &&
                                      weight_copies_pay(k["n_rows"], k["n_cols"], dtype_v<T>, 0);
                        Config h = layernorm_heuristic(k["n_cols"], dtype_v<T>, gpu_has_clusters(), copies,
                                                       !contiguous_rows_misaligned(k["n_cols"], dtype_v<T>));
                        return with_split_rows_any(h, k["n_rows"], k["n_cols"], dtype_v<T>,
                                                   layernorm_few_rows_on_clusters(h, dtype_v<T>));
                      }},
      [](const Config& c, const auto& out, const auto& in, const auto& w, const auto& b, int64_t rows, int64_t cols,
         float eps) {
        auto none = unused_f32_buffer<std::remove_cvref_t<decltype(out)>>();
        if (row_uses_split(c))
          return tuning::specialization(layernorm_split_normalize_kernel<T>(), split_normalize_config(c, cols), out,
                                        none, none, in, w, b, split_rows_scratch<std::remove_cvref_t<decltype(out)>>(1),
                                        cols, cols, eps, 0);
        if (Config rc = c; uses_row_batches(rc, cols, "layernorm"))
          return tuning::specialization(layernorm_rows_kernel<T>(), rc, out, none, none, in, w, b, rows, cols, cols, eps);
        const KernelBase& k = row_uses_loop(c, cols) ? static_cast<const KernelBase&>(layernorm_looped_kernel<T>())
                                                     : layernorm_row_kernel<T>();
        return tuning::specialization(k, layernorm_config(c, cols, dtype_v<T>), out, none, none, in, w, b, cols, cols,
                                      eps);
      });
  return t;
}

// Norm backward: BLOCK x ROWS (rows per program step) x num_warps x persistent programs
// per SM x PREFETCH x num_stages (the next steps' rows staged through shared memory; the
// host functions loop over BLOCK-column chunks when BLOCK < n_cols), and persistent
// clusters for long rows.
// Persistent cluster configs of the norm backward programs, each with `meta` set: one
// tile, or 3 or 5 chunks per program (widths past a power of two; set_cluster_chunks),
// or one tile and a tail of 8 or 64 positions (a little past one: cluster_tail_config).
inline void add_norm_backward_clusters(tuning::Space& s, const std::map<std::string, int64_t>& meta) {
  for (int64_t b : {1024, 2048, 4096, 8192})
    for (int64_t chunks : {1, 3, 5})
      for (int64_t tail : {0, 8, 64})
        for (int w : {4, 8, 16})
          for (int c : {2, 4, 8, 16})
            for (int64_t per_sm : {1, 2}) {
              if (chunks == 1 && b < 2048) continue;
              if (tail > 0 && chunks > 1) continue;
              Config cfg{{"BLOCK", b}, {"PROGRAMS_PER_SM", per_sm}, num_warps(w), num_stages(2), cluster(c)};
              if (chunks > 1) cfg.set("CHUNKS", chunks);
              if (tail > 0) cfg.set("TAIL", tail);
              for (auto& [k, v] : meta) cfg.set(k, v);
              s.add(cfg);
            }
}

inline tuning::Space norm_backward_space() {
  auto s = tuning::Space::product({tuning::pow2_range("BLOCK", 512, 8192), tuning::values("ROWS", {1, 2, 4, 8}),
                                   tuning::values("num_warps", {1, 2, 4, 8, 16}),
                                   tuning::values("PROGRAMS_PER_SM", {1, 2, 4, 8}), tuning::values("PREFETCH", {0, 1}),
                                   tuning::values("num_stages", {1, 2, 3})});
  // Long rows: persistent clusters of 2-16 programs, each row read once (sm_90+;
  // elsewhere they fail to compile and are pruned with that reason).
  add_norm_backward_clusters(s, {});
  s.prune_if([](const Config& c, const tuning::KeyView& k) -> std::string {
    int64_t b = c.get("BLOCK"), cols = k["n_cols"];
    if (c.cluster > 1) {
      int64_t chunks = c.has("CHUNKS") ? c.get("CHUNKS") : 1;
      if (row_cover(c) < cols) return "BLOCK x CHUNKS x cluster < " + std::to_string(cols) + " columns";
      if (row_cover(c) / 2 >= cols) return "a smaller cluster covers the row";
      if (chunks > 1 && (chunks - 1) * b * c.cluster >= cols) return "fewer chunks cover the row";
      if (chunks > 1 && row_cover(c) >= tuning::pow2(cols)) return "chunks no fewer than one power-of-two tile";
      if (c.has("TAIL") && b * c.cluster >= cols) return "the tiles cover the row without a tail";
      int64_t per_chunk = b / (32 * c.num_warps), per_thread = per_chunk * chunks;
      if (per_chunk < 4 || per_thread > 32) return std::to_string(per_thread) + " elements per thread";
      return "";
    }
    if (b > 512 && b > tuning::pow2(cols)) return "BLOCK " + std::to_string(b) + " > " + std::to_string(cols) + " columns";
    if (b < cols && tuning::pow2(cols) <= 8192)
      return "BLOCK " + std::to_string(b) + " < " + std::to_string(cols) + " columns";
    if (c.get("ROWS") * b > 8192) return "ROWS x BLOCK > 8192";
    if (c.get("PREFETCH") && b < cols) return "PREFETCH with looped rows (one-tile programs only)";
    if (c.get("PREFETCH") && c.num_stages > 1) return "PREFETCH with staged loads (both prefetch the next step)";
    int64_t per_thread = c.get("ROWS") * b / (32 * c.num_warps);
    if (per_thread < 4) return std::to_string(per_thread) + " elements per thread (< 4)";
    if (per_thread > 32) return std::to_string(per_thread) + " elements per thread (> 32)";
    if (c.num_warps * c.get("PROGRAMS_PER_SM") > 64) return "more than 64 warps per SM";
    return "";
  });
  return s;
}

// rmsnorm_backward and add_rmsnorm_backward (same kernels, RESIDUAL set by the call):
// one tuner each, since the residual read changes the best config.
template <class T, bool Residual>
const auto& rmsnorm_backward_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& dx, auto& dw, const auto& dy, const auto& dres, const auto& x, const auto& w,
         int64_t rows, int64_t cols, float eps) {
        if (Residual) add_rmsnorm_backward(dx, dw, dy, dres, x, w, rows, cols, eps, c);
        else rmsnorm_backward(dx, dw, dy, x, w, rows, cols, eps, c);
      },
      norm_backward_space(),
      [](const auto&, const auto&, const auto&, const auto&, const auto&, const auto&, int64_t rows, int64_t cols,
         float) { return rowwise_key(rows, cols); },
      TuneOptions{.name = Residual ? "add_rmsnorm_bwd" : "rmsnorm_bwd", .key_names = {"n_rows", "n_cols"},
                  .outputs = {0, 1},
                  .fallback = [](const tuning::KeyView& k) {
                    return norm_backward_heuristic(k["n_cols"], dtype_v<T>,
                                                   Residual ? NormBackwardKind::rms_residual : NormBackwardKind::rms,
                                                   gpu_has_clusters());
                  }});
  return t;
}

template <class T>
const auto& layernorm_backward_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& dx, auto& dw, auto& db, const auto& dy, const auto& x, const auto& w, int64_t rows,
         int64_t cols, float eps) { layernorm_backward(dx, dw, db, dy, x, w, rows, cols, eps, c); },
      norm_backward_space(),
      [](const auto&, const auto&, const auto&, const auto&, const auto&, const auto&, int64_t rows, int64_t cols,
         float) { return rowwise_key(rows, cols); },
      TuneOptions{.name = "layernorm_bwd", .key_names = {"n_rows", "n_cols"}, .outputs = {0, 1, 2},
                  .fallback = [](const tuning::KeyView& k) {
                    return norm_backward_heuristic(k["n_cols"], dtype_v<T>, NormBackwardKind::layer, gpu_has_clusters());
                  }});
  return t;
}

// LayerNorm from saved statistics: the norm backward space, and the cluster programs
// reading the statistics where used instead of a row ahead (STATS_AHEAD=0).
inline tuning::Space layernorm_backward_saved_space() {
  tuning::Space s = norm_backward_space();
  add_norm_backward_clusters(s, {{"STATS_AHEAD", 0}});
  return s;
}

// LayerNorm backward from the forward's saved mean and rstd: its own tuner (two sums per
// row instead of four change the best config).
template <class T>
const auto& layernorm_backward_saved_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& dx, auto& dw, auto& db, const auto& dy, const auto& x, const auto& w,
         const auto& mean, const auto& rstd, int64_t rows, int64_t cols) {
        layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, rows, cols, c);
      },
      layernorm_backward_saved_space(),
      [](const auto&, const auto&, const auto&, const auto&, const auto&, const auto&, const auto&, const auto&,
         int64_t rows, int64_t cols) { return rowwise_key(rows, cols); },
      TuneOptions{.name = "layernorm_bwd_saved", .key_names = {"n_rows", "n_cols"}, .outputs = {0, 1, 2},
                  .fallback = [](const tuning::KeyView& k) {
                    return norm_backward_heuristic(k["n_cols"], dtype_v<T>, NormBackwardKind::layer_saved,
                                                   gpu_has_clusters());
                  }});
  return t;
}

template <class T>
const auto& attention_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& out, auto& lse, const auto& q, const auto& k, const auto& v, int64_t bh, int64_t group,
         int64_t seq, int64_t d, bool causal, float scale) {
        attention_fwd_grouped(out, lse, q, k, v, bh, group, seq, d, causal, scale, c);
      },
      attention_space(),
      [](const auto&, const auto&, const auto&, const auto&, const auto&, int64_t bh, int64_t group, int64_t seq,
         int64_t d, bool causal, float) {
        return tuning::Key{tuning::pow2(bh), tuning::pow2(seq), d, causal ? 1 : 0, group};
      },
      TuneOptions{.name = "attention_fwd", .key_names = {"batch_heads", "seq_len", "head_dim", "causal", "kv_group"},
                  .outputs = {0, 1},
                  .fallback =
                      [](const tuning::KeyView& k) {
                        return attention_heuristic(k["seq_len"], k["head_dim"], k["causal"] != 0,
                                                   gpu_has_warpgroup_mma());
                      }},
      [](const Config& c, const auto& out, const auto& lse, const auto& q, const auto& k, const auto& v, int64_t bh,
         int64_t group, int64_t seq, int64_t d, bool causal, float scale) {
        // The same launch attention_fwd_grouped() makes.
        if (scale == 0.0f) scale = 1.0f / std::sqrt(static_cast<float>(d));
        Config lc = attention_launch_config(c, d, causal, scale, group);
        return tuning::specialization(attention_fwd_kernel<T>(), lc, out, lse, q, k, v, seq, seq * d, d, scale);
      });
  return t;
}

// The matmul tuner: keyed by the problem sizes (rounded up to powers of two) and the
// epilogue, which changes registers and so the best tiling.
template <class T, class Out>
const auto& matmul_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& out, const auto& a, const auto& b, int64_t M, int64_t N, int64_t K,
         MatmulOptions o) { matmul(out, a, b, M, N, K, o, nullptr, nullptr, c); },
      matmul_space(),
      [](const auto&, const auto&, const auto&, int64_t M, int64_t N, int64_t K, MatmulOptions o) {
        return tuning::Key{tuning::pow2(M), tuning::pow2(N), tuning::pow2(K), o.b_trans ? 1 : 0,
                           static_cast<int64_t>(o.activation)};
      },
      TuneOptions{.name = std::string("matmul_") + name(dtype_v<Out>), .key_names = {"M", "N", "K", "b_trans", "act"},
                  .outputs = {0},
                  .fallback = [](const tuning::KeyView& k) {
                    return matmul_heuristic(k["M"], k["N"], k["K"], gpu_has_warpgroup_mma(), gpu_sm_count());
                  }},
      [](const Config& c, const auto& out, const auto& a, const auto& b, int64_t M, int64_t N, int64_t K,
         MatmulOptions o) {
        // The same launch matmul() makes.
        Config lc = matmul_config(c, o, false, false);
        take_split_k(lc, "tuned GEMM");  // the same kernel, launched per slice
        return tuning::specialization(matmul_kernel<T, Out>(), lc, out, a, b, a, out, M, N, K, K, o.b_trans ? K : N, N,
                                      o.alpha);
      });
  return t;
}

// The 8-bit GEMM tuner, keyed like matmul's plus the accumulation mode.
template <class TA, class TB, class Out>
const auto& scaled_matmul_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& out, const auto& a, const auto& b, const auto& sa, const auto& sb, int64_t M, int64_t N,
         int64_t K, ScaledMatmulOptions o) { scaled_matmul(out, a, b, sa, sb, M, N, K, o, nullptr, c); },
      scaled_matmul_space(),
      [](const auto&, const auto&, const auto&, const auto&, const auto&, int64_t M, int64_t N, int64_t K,
         ScaledMatmulOptions o) {
        return tuning::Key{tuning::pow2(M), tuning::pow2(N), tuning::pow2(K), o.b_trans ? 1 : 0,
                           static_cast<int64_t>(o.activation), o.precise_accumulation ? 1 : 0};
      },
      TuneOptions{.name = std::string("scaled_matmul_") + name(dtype_v<TA>) + "_" + name(dtype_v<TB>) + "_" +
                          name(dtype_v<Out>),
                  .key_names = {"M", "N", "K", "b_trans", "act", "precise"},
                  .outputs = {0},
                  .fallback = [](const tuning::KeyView& k) {
                    return scaled_matmul_heuristic(k["M"], k["N"], k["K"], gpu_has_warpgroup_mma(), k["precise"] != 0,
                                                   gpu_sm_count());
                  }},
      [](const Config& c, const auto& out, const auto& a, const auto& b, const auto& sa, const auto& sb, int64_t M,
         int64_t N, int64_t K, ScaledMatmulOptions o) {
        // The same launch scaled_matmul() makes.
        Config lc = scaled_matmul_config(c, o, false);
        take_split_k(lc, "tuned GEMM");  // the same kernel, launched per slice
        return tuning::specialization(scaled_matmul_kernel<TA, TB, Out>(), lc, out, a, b, sa, sb, out, M, N, K, K,
                                      o.b_trans ? K : N, N);
      });
  return t;
}

template <class T>
const auto& bias_relu_log_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& y, const auto& x, const auto& b, int64_t rows, int64_t cols) {
        bias_relu_log(y, x, b, rows, cols, c);
      },
      elementwise_space(),
      [](const auto&, const auto&, const auto&, int64_t rows, int64_t cols) { return tuning::Key{tuning::pow2(rows * cols)}; },
      TuneOptions{.name = "bias_relu_log", .key_names = {"n"}, .outputs = {0},
                  .fallback = [](const tuning::KeyView&) { return elementwise_heuristic(); }},
      [](const Config& c, const auto& y, const auto& x, const auto& b, int64_t rows, int64_t cols) {
        return tuning::specialization(bias_relu_log_kernel<T>(), c, y, x, b, rows * cols, cols);
      });
  return t;
}

// SwiGLU: BLOCK columns of one row per program x num_warps. Keyed by the rows (rounded
// up to a power of two), the row length and the layout (packed [gate | up] rows or not).
inline tuning::Space swiglu_space() {
  auto s = tuning::Space::product(
      {tuning::pow2_range("BLOCK", 256, 8192), tuning::values("num_warps", {1, 2, 4, 8, 16})});
  s.prune_if([](const Config& c, const tuning::KeyView& k) -> std::string {
    int64_t b = c.get("BLOCK"), per_thread = b / (32 * c.num_warps);
    if (b > 256 && b > tuning::pow2(k["n_cols"]))
      return "BLOCK " + std::to_string(b) + " > " + std::to_string(k["n_cols"]) + " columns";
    if (per_thread < 2) return std::to_string(per_thread) + " elements per thread (< 2)";
    if (per_thread > 32) return std::to_string(per_thread) + " elements per thread (> 32)";
    return "";
  });
  return s;
}
inline tuning::Key swiglu_key(int64_t M, int64_t N, bool packed) {
  return tuning::Key{tuning::pow2(M), N, packed ? 1 : 0};
}

// Function form of both layouts: with `packed`, a and b are the one [M, 2N] tensor.
template <class T>
const auto& swiglu_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& y, const auto& a, const auto& b, int64_t M, int64_t N, bool packed) {
        if (packed) swiglu_packed(y, a, M, N, c);
        else swiglu(y, a, b, M, N, c);
      },
      with_row_batches(swiglu_space()),
      [](const auto&, const auto&, const auto&, int64_t M, int64_t N, bool packed) { return swiglu_key(M, N, packed); },
      TuneOptions{.name = "swiglu", .key_names = {"n_rows", "n_cols", "packed"}, .outputs = {0},
                  .fallback = [](const tuning::KeyView& k) { return swiglu_heuristic(k["n_cols"], dtype_v<T>); }},
      [](const Config& c, const auto& y, const auto& a, const auto& b, int64_t M, int64_t N, bool packed) {
        return tuning::specialization(swiglu_kernel<T>(), c, y, a, b, M, N, packed ? 2 * N : N, packed ? N : 0);
      });
  return t;
}

// The backward, same space; with `packed`, da and db are the one [M, 2N] gradient.
template <class T>
const auto& swiglu_backward_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& da, auto& db, const auto& dy, const auto& a, const auto& b, int64_t M, int64_t N,
         bool packed) {
        if (packed) swiglu_backward_packed(da, dy, a, M, N, c);
        else swiglu_backward(da, db, dy, a, b, M, N, c);
      },
      with_row_batches(swiglu_space()),
      [](const auto&, const auto&, const auto&, const auto&, const auto&, int64_t M, int64_t N, bool packed) {
        return swiglu_key(M, N, packed);
      },
      TuneOptions{.name = "swiglu_bwd", .key_names = {"n_rows", "n_cols", "packed"}, .outputs = {0, 1},
                  .fallback = [](const tuning::KeyView& k) { return swiglu_heuristic(k["n_cols"], dtype_v<T>, true); }},
      [](const Config& c, const auto& da, const auto& db, const auto& dy, const auto& a, const auto& b, int64_t M,
         int64_t N, bool packed) {
        return tuning::specialization(swiglu_backward_kernel<T>(), c, da, db, dy, a, b, M, N, packed ? 2 * N : N,
                                      packed ? N : 0);
      });
  return t;
}

template <class T>
const auto& softmax_backward_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& dx, const auto& dy, const auto& y, int64_t rows, int64_t cols) {
        softmax_backward(dx, dy, y, rows, cols, c);
      },
      with_row_batches(rowwise_space()),
      [](const auto&, const auto&, const auto&, int64_t rows, int64_t cols) { return rowwise_key(rows, cols); },
      TuneOptions{.name = "softmax_bwd", .key_names = {"n_rows", "n_cols"}, .outputs = {0},
                  .fallback =
                      [](const tuning::KeyView& k) {
                        return softmax_backward_config(k["n_cols"], dtype_v<T>, gpu_has_clusters(),
                                                       contiguous_rows_misaligned(k["n_cols"], dtype_v<T>));
                      }},
      [](const Config& c, const auto& dx, const auto& dy, const auto& y, int64_t rows, int64_t cols) {
        if (Config rc = c; uses_row_batches(rc, cols, "softmax_backward"))
          return tuning::specialization(softmax_backward_rows_kernel<T>(), rc, dx, dy, y, rows, cols, cols);
        const KernelBase& k = row_uses_loop(c, cols)
                                  ? static_cast<const KernelBase&>(softmax_backward_looped_kernel<T>())
                                  : softmax_backward_row_kernel<T>();
        return tuning::specialization(k, c, dx, dy, y, cols, cols);
      });
  return t;
}

// The entry points: same arguments as the gallery host functions, contiguous rows.
template <class Out, class In>
void tuned_softmax(Out&& out, const In& in, int64_t rows, int64_t cols) {
  softmax_tuner<buffer_elem_t<Out>>()(out, in, rows, cols);
}
template <class Out, class In, class W>
void tuned_rmsnorm(Out&& out, const In& in, const W& weight, int64_t rows, int64_t cols, float eps = 1e-6f) {
  rmsnorm_tuner<buffer_elem_t<Out>>()(out, in, weight, rows, cols, eps);
}
template <class Out, class In, class W, class B>
void tuned_layernorm(Out&& out, const In& in, const W& weight, const B& bias, int64_t rows, int64_t cols,
                     float eps = 1e-5f) {
  layernorm_tuner<buffer_elem_t<Out>>()(out, in, weight, bias, rows, cols, eps);
}
// The training forward (also each row's mean and rstd, f32) with the config tuned for the
// plain one: the statistics add 8 bytes per row and no work per element.
template <class Out, class Mean, class Rstd, class In, class W, class B>
  requires(!std::is_arithmetic_v<std::remove_cvref_t<W>>)
void tuned_layernorm(Out&& out, Mean&& mean, Rstd&& rstd, const In& in, const W& weight, const B& bias, int64_t rows,
                     int64_t cols, float eps = 1e-5f) {
  const Config& c = layernorm_tuner<buffer_elem_t<Out>>().config_for(out, in, weight, bias, rows, cols, eps);
  layernorm(out, mean, rstd, in, weight, bias, rows, cols, eps, c);
}
// Norm backward (see norms_backward.hpp); dw, db in the weight's dtype.
template <class DX, class DW, class DY, class X, class W>
void tuned_rmsnorm_backward(DX&& dx, DW&& dw, const DY& dy, const X& x, const W& w, int64_t rows, int64_t cols,
                            float eps = 1e-6f) {
  rmsnorm_backward_tuner<buffer_elem_t<DX>, false>()(dx, dw, dy, dy, x, w, rows, cols, eps);
}
template <class DH, class DW, class DY, class DR, class H, class W>
void tuned_add_rmsnorm_backward(DH&& dh, DW&& dw, const DY& dy, const DR& dres_out, const H& h, const W& w,
                                int64_t rows, int64_t cols, float eps = 1e-6f) {
  rmsnorm_backward_tuner<buffer_elem_t<DH>, true>()(dh, dw, dy, dres_out, h, w, rows, cols, eps);
}
template <class DX, class DW, class DB, class DY, class X, class W>
void tuned_layernorm_backward(DX&& dx, DW&& dw, DB&& db, const DY& dy, const X& x, const W& w, int64_t rows,
                              int64_t cols, float eps = 1e-5f) {
  layernorm_backward_tuner<buffer_elem_t<DX>>()(dx, dw, db, dy, x, w, rows, cols, eps);
}
template <class DX, class DW, class DB, class DY, class X, class W, class M, class R>
  requires(!std::is_arithmetic_v<std::remove_cvref_t<M>>)
void tuned_layernorm_backward(DX&& dx, DW&& dw, DB&& db, const DY& dy, const X& x, const W& w, const M& mean,
                              const R& rstd, int64_t rows, int64_t cols) {
  layernorm_backward_saved_tuner<buffer_elem_t<DX>>()(dx, dw, db, dy, x, w, mean, rstd, rows, cols);
}
template <class Out, class Lse, class Q, class K, class V>
void tuned_attention_fwd(Out&& out, Lse&& lse, const Q& q, const K& k, const V& v, int64_t batch_heads,
                         int64_t seq_len, int64_t head_dim, bool causal, float sm_scale = 0.0f, int64_t kv_group = 1) {
  attention_tuner<buffer_elem_t<Out>>()(out, lse, q, k, v, batch_heads, kv_group, seq_len, head_dim, causal, sm_scale);
}
// c = epilogue(a . b) with the tuned config for this problem (bias and residual: see matmul()).
template <class C, class A, class B>
void tuned_matmul(C&& c, const A& a, const B& b, int64_t M, int64_t N, int64_t K, MatmulOptions o = {}) {
  matmul_tuner<buffer_elem_t<A>, buffer_elem_t<C>>()(c, a, b, M, N, K, o);
}
// c = epilogue(*scale_a * *scale_b * (a . b)) with the tuned config (see scaled_matmul()).
template <class C, class A, class B, class S>
void tuned_scaled_matmul(C&& c, const A& a, const B& b, const S& scale_a, const S& scale_b, int64_t M, int64_t N,
                         int64_t K, ScaledMatmulOptions o = {}) {
  scaled_matmul_tuner<buffer_elem_t<A>, buffer_elem_t<B>, buffer_elem_t<C>>()(c, a, b, scale_a, scale_b, M, N, K, o);
}
template <class Y, class X, class B>
void tuned_bias_relu_log(Y&& y, const X& x, const B& b, int64_t rows, int64_t cols) {
  bias_relu_log_tuner<buffer_elem_t<Y>>()(y, x, b, rows, cols);
}

// SwiGLU (separate a, b or packed ab rows) and softmax backward (dx may be dy).
template <class Y, class A, class B>
void tuned_swiglu(Y&& y, const A& a, const B& b, int64_t M, int64_t N) {
  swiglu_tuner<buffer_elem_t<Y>>()(y, a, b, M, N, false);
}
template <class Y, class AB>
void tuned_swiglu_packed(Y&& y, const AB& ab, int64_t M, int64_t N) {
  swiglu_tuner<buffer_elem_t<Y>>()(y, ab, ab, M, N, true);
}
template <class DA, class DB, class DY, class A, class B>
void tuned_swiglu_backward(DA&& da, DB&& db, const DY& dy, const A& a, const B& b, int64_t M, int64_t N) {
  swiglu_backward_tuner<buffer_elem_t<DA>>()(da, db, dy, a, b, M, N, false);
}
template <class DAB, class DY, class AB>
void tuned_swiglu_backward_packed(DAB&& dab, const DY& dy, const AB& ab, int64_t M, int64_t N) {
  swiglu_backward_tuner<buffer_elem_t<DAB>>()(dab, dab, dy, ab, ab, M, N, true);
}
template <class DX, class DY, class Y>
void tuned_softmax_backward(DX&& dx, const DY& dy, const Y& y, int64_t rows, int64_t cols) {
  softmax_backward_tuner<buffer_elem_t<DX>>()(dx, dy, y, rows, cols);
}

// Cross-entropy: the row space and key (its programs are the softmax's plus a few
// scalars per row), each row-program config also with the target logit taken the
// other way (PICK_TARGET: the rule's choice measured against its alternative); the
// reduction and options only change per-row scalar work.
inline tuning::Space cross_entropy_space() {
  tuning::Space s = rowwise_space();
  std::vector<Config> other;
  for (const Config& c : s.configs())
    if (!row_uses_split(c)) other.push_back(Config(c).set("PICK_TARGET", cross_entropy_picks_target(c) ? 0 : 1));
  for (const Config& c : other) s.add(c);
  s = with_row_batches(with_held_chunks(std::move(s)));
  s.prune_if([](const Config& c, const tuning::KeyView& k) -> std::string {
    if (c.has("PICK_TARGET") && row_uses_loop(c, k["n_cols"])) return "PICK_TARGET on a looped row (no target pick there)";
    return "";
  });
  return s;
}
template <class T>
const auto& cross_entropy_tuner() {
  static const auto t = autotune(
      [](const Config& c, auto& loss, auto& dlogits, const auto& logits, const auto& targets, int64_t M, int64_t V,
         CrossEntropyOptions o) { cross_entropy(loss, dlogits, logits, targets, M, V, o, c); },
      cross_entropy_space(),
      [](const auto&, const auto&, const auto&, const auto&, int64_t M, int64_t V, CrossEntropyOptions) {
        return rowwise_key(M, V);
      },
      TuneOptions{.name = "cross_entropy", .key_names = {"n_rows", "n_cols"}, .outputs = {0, 1},
                  .fallback =
                      [](const tuning::KeyView& k) {
                        return cross_entropy_rows_config(k["n_cols"], dtype_v<T>, gpu_has_clusters(),
                                                         contiguous_rows_misaligned(k["n_cols"], dtype_v<T>));
                      }},
      [](const Config& c, const auto& loss, const auto& dlogits, const auto& logits, const auto& targets, int64_t M,
         int64_t V, CrossEntropyOptions o) {
        // The main launch cross_entropy() makes (the count kernel is the same for every config).
        using TI = buffer_elem_t<decltype(targets)>;
        int64_t ls = o.logits_stride < 0 ? V : o.logits_stride, ds = o.dlogits_stride < 0 ? ls : o.dlogits_stride;
        if (Config rc = c; uses_row_batches(rc, V, "cross_entropy"))
          return tuning::specialization(cross_entropy_rows_kernel<T, TI>(), cross_entropy_config(rc, V, o), loss,
                                        dlogits, logits, targets, loss, int32_t(0), int32_t(0), loss,
                                        static_cast<int32_t>(M), static_cast<int32_t>(V), ls, ds, o.ignore_index,
                                        o.label_smoothing, o.z_loss, o.grad_scale);
        const KernelBase& k = row_uses_loop(c, V)
                                  ? static_cast<const KernelBase&>(cross_entropy_looped_kernel<T, TI>())
                                  : cross_entropy_row_kernel<T, TI>();
        // (count_word and inv_count: loss stands in; n_count and counting: 0, as without a mean.)
        return tuning::specialization(k, cross_entropy_config(c, V, o), loss, dlogits, logits, targets, loss,
                                      int32_t(0), int32_t(0), loss, static_cast<int32_t>(V), ls, ds, o.ignore_index,
                                      o.label_smoothing, o.z_loss, o.grad_scale);
      });
  return t;
}
// Loss and dlogits with the tuned config (arguments as cross_entropy()).
template <class Loss, class DLogits, class Logits, class Targets>
void tuned_cross_entropy(Loss&& loss, DLogits&& dlogits, const Logits& logits, const Targets& targets, int64_t M,
                         int64_t V, CrossEntropyOptions o = {}) {
  cross_entropy_tuner<buffer_elem_t<Logits>>()(loss, dlogits, logits, targets, M, V, o);
}

}  // namespace tilefuse::kernels
