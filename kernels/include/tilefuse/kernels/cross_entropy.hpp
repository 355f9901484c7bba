#pragma once
// Fused cross-entropy forward + backward over rows of logits, f32 math:
//   lse = logsumexp(x_r); loss_r = (1-eps)(lse - x_t) + eps(lse - mean_j x_j) + z lse^2
//   dx_j = scale ((1 + 2 z lse) softmax_j - (1-eps)[j == t] - eps/V)
// with label smoothing eps, z-loss coefficient z and ignore_index rows (loss 0, dx 0).
// Each logit is read once and each dlogit written once (dlogits may be the logits
// buffer itself): one row per cluster of programs holds the row in registers; a looped
// program (online max/sum, then a gradient pass re-reading the row) takes longer rows.
// Tile programs are in cross_entropy_programs.hpp; this file holds the host function.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/cross_entropy_programs.hpp"
#include "tilefuse/kernels/cross_entropy_row_batches.hpp"
#include "tilefuse/kernels/row_batches.hpp"
#include "tilefuse/launch_stream.hpp"

namespace tilefuse::kernels {

enum class LossReduction { none = 0, sum = 1, mean = 2 };

struct CrossEntropyOptions {
  int64_t ignore_index = -100;   // rows with this target have loss 0 and dlogits 0
  float label_smoothing = 0.0f;  // eps in [0, 1)
  float z_loss = 0.0f;           // coefficient of lse^2, >= 0
  LossReduction reduction = LossReduction::mean;  // mean: over rows not ignored
  float grad_scale = 1.0f;       // upstream gradient of the (reduced) loss
  int64_t logits_stride = -1;    // elements between rows of logits (-1: V)
  int64_t dlogits_stride = -1;   // of dlogits (-1: logits_stride)
};

// Programs per SM of f32 cross-entropy rows on a cluster: those of 8 or more warps at
// E + 24 registers (softmax's f32 rows on 4-8 warps lose with every cap tried: they run
// at 91-100% of copy uncapped). Measured on H200 (f32, % of copy, uncapped -> this cap,
// bench/NOTES.md): 8 warps x 40 values 4 programs (2048x151936 80 -> 95), x 32 values 4 (4096x128256 89 ->
// 95; 5: 87), x 52 values 3 (1024x200000 55 -> 97; 4: 74), 16 warps x 32 values 2
// (1024x256000 58 -> 88). 4-warp programs gain 2-4 points at 32-40 values (at the
// right cap: 40 values gain at 7, lose at 8) but lose 1-5 at 48-56 on clusters of 4-8
// (16384x50304 86 -> 83 at 6; 1024x100000 on 16 gains 1.4): left uncapped.
inline int cross_entropy_f32_programs(const Config& c) {
  return c.num_warps >= 8 ? register_capped_programs(c, 24, 8) : 0;
}

// The row heuristic. One program up to 8K columns (16K without clusters), as CHUNKS x
// BLOCK (chunked_row_config). Longer rows: with clusters, the power-of-two cluster of
// programs of at most 8K columns each (16K where 16 programs of 8K fall short) whose
// CHUNKS x BLOCK tiles cover the row with the fewest columns (151936 = 16 x 5 x 2048 =
// 163840, not 16 x 16384 = 262144); on a tie the larger cluster while programs keep 4K
// columns. Measured on H200 (bench/runners_cross_entropy): 2-byte rows run best at 4
// warps per program (32-64 elements per thread: bf16 8192x32000 61% -> 69% of copy,
// 4096x128256 55% -> 61%), more warps past 64 (2048x151936: 80 -> 40 elements per
// thread, 68.0% -> 74.9%), f32 at about 32 elements per thread, and f32 programs of
// more than 8K columns as 1K chunks (2048x151936 f32 69% -> 83%). Where rows loop,
// 4K-column tiles: the looped program carries three running values per lane.
// Programs per SM: row_programs_per_sm, measured on both kernels, asked about the rows'
// own width (`width`, 0: V) where V is the span of rows indexed from their aligned start;
// rows in one program too (H200 bf16 16384x4099 64.2% -> 68.0% of copy; 4097, 3001 and 1025
// columns within a point). Cross-entropy holds about 4 registers more than softmax (the
// target, its column, the count): 16-bit rows of 56 values per thread then take 6
// programs where softmax takes 7 (bf16 16384x50304 79% -> 91-93%, 4096x50257 45% -> 72%,
// 1024x100000 72% -> 80%; 7 spilled 48 bytes). f32 programs of 8+ warps on clusters:
// E + 24 registers (cross_entropy_f32_programs).
inline Config cross_entropy_heuristic(int64_t V, DType dtype, bool clusters = false, int64_t width = 0) {
  constexpr int64_t kPerProgram = 8192, kMaxCluster = 16;
  constexpr int kExtraRegisters = 4;  // over softmax's row program, for row_programs_per_sm
  if (V <= kPerProgram || (!clusters && V <= 2 * kPerProgram)) {
    Config c = chunked_row_config(V, dtype);
    c.min_programs_per_sm = row_programs_per_sm(c, dtype, width ? width : V, kExtraRegisters);
    return c;
  }
  if (clusters && V <= kMaxCluster * 2 * kPerProgram) {
    int64_t limit = V <= kMaxCluster * kPerProgram ? kPerProgram : 2 * kPerProgram;
    std::optional<Config> best;
    for (int64_t cl = 2; cl <= kMaxCluster; cl *= 2) {
      int64_t per = (V + cl - 1) / cl;
      if (per > limit) continue;
      Config c = per > kPerProgram && byte_size(dtype) >= 4
                     ? Config{{"BLOCK", 1024}, {"CHUNKS", (per + 1023) / 1024}}
                     : chunked_row_config(per, dtype);
      int64_t cover = row_cover(c);  // per program
      c.num_warps = byte_size(dtype) < 4
                        ? static_cast<int>(std::bit_ceil(uint64_t(std::clamp<int64_t>((cover + 2047) / 2048, 4, 16))))
                        : static_cast<int>(std::bit_floor(uint64_t(std::clamp<int64_t>(cover / 1024, 1, 16))));
      c.cluster = static_cast<int>(cl);
      c.min_programs_per_sm = byte_size(dtype) == 4 ? cross_entropy_f32_programs(c)
                                                    : row_programs_per_sm(c, dtype, width ? width : V, kExtraRegisters);
      hold_chunks(c, dtype);
      int64_t best_cover = best ? row_cover(*best) : 0;
      if (!best || row_cover(c) < best_cover || (row_cover(c) == best_cover && cover >= 4096)) best = c;
    }
    if (best) return *best;
  }
  return Config{{"BLOCK", 4096}, num_warps(16)};
}

// The heuristic config of cross-entropy's rows of V logits (`align`: they may be indexed
// from their aligned start, rows_need_alignment): what cross_entropy() starts from, and the
// tuner's fallback and the benchmark with it.
inline Config cross_entropy_rows_config(int64_t V, DType dtype, bool clusters, bool align) {
  auto heuristic = [&](int64_t n) { return cross_entropy_heuristic(n, dtype, clusters, V); };
  Config c = aligned_rows_heuristic(align, V, dtype, heuristic);
  batch_short_rows(c, dtype);  // rows of 1 KB or less: several per program (row_batches.hpp)
  return c;
}

namespace detail {

template <class B>
constexpr bool is_device_buffer = requires(const std::remove_cvref_t<B>& b) { b.arg(); };

template <class X>
std::string ce_dtype_name() {
  if constexpr (Element<X>) return name(dtype_v<X>);
  else return "a non-tilefuse type";
}

// Dtype checks as UserErrors (not static_asserts) so the message names the argument.
template <class L, class D, class T, class TI>
void ce_check_dtypes() {
  auto fail = [](const std::string& what, const std::string& fix) {
    user_error("cross_entropy: " + what, SourceLoc{}, fix);
  };
  if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, half> && !std::is_same_v<T, bfloat16>)
    fail("logits has dtype " + ce_dtype_name<T>() + ", expected f32, f16 or bf16", "Pass the logits as f32, f16 or bf16");
  if constexpr (!std::is_same_v<D, T>)
    fail("dlogits has dtype " + ce_dtype_name<D>() + " but logits has " + ce_dtype_name<T>(),
         "Pass dlogits in the logits' dtype (or the logits buffer itself for an in-place gradient)");
  if constexpr (!std::is_same_v<L, float>)
    fail("loss has dtype " + ce_dtype_name<L>() + ", expected f32",
         "Pass an f32 loss buffer: [M] with reduction none, [1] with sum or mean");
  if constexpr (!std::is_same_v<TI, int64_t> && !std::is_same_v<TI, int32_t>)
    fail("targets has dtype " + ce_dtype_name<TI>() + ", expected i64 (or i32)", "Pass the class indices as int64");
}

inline void ce_check_size(const char* arg, size_t have, int64_t want, const std::string& why) {
  if (static_cast<int64_t>(have) < want)
    user_error("cross_entropy: " + std::string(arg) + " has " + std::to_string(have) + " elements, but " + why +
                   " needs " + std::to_string(want),
               SourceLoc{}, std::string("Pass a larger ") + arg + " buffer, or check M, V and the row strides");
}

// Host targets are checked here, so the interpreter reports a bad one by row. (On the
// GPU the targets stay in device memory: a row whose target is outside [0, V) and not
// ignore_index gets loss NaN and dlogits NaN, and the kernel never reads outside the row.)
template <class Targets>
void ce_check_host_targets(const Targets& targets, int64_t M, int64_t V, int64_t ignore_index) {
  const auto* t = std::data(targets);
  for (int64_t r = 0; r < M; ++r) {
    int64_t v = static_cast<int64_t>(t[r]);
    if (v != ignore_index && (v < 0 || v >= V))
      user_error("cross_entropy: targets[" + std::to_string(r) + "] (the target of row " + std::to_string(r) +
                     ") is " + std::to_string(v) + ", outside the V = " + std::to_string(V) + " classes [0, " +
                     std::to_string(V) + ") and not ignore_index (" + std::to_string(ignore_index) + ")",
                 SourceLoc{}, "Pass class indices in [0, V), or ignore_index for rows without a target");
  }
}

// Device scratch of at least n floats per (device, stream) on each host thread: the
// row losses of a sum or mean, the finish kernel's partial sums, the count kernel's
// 1/count, written and read by the launches of one call, in order on one stream.
// Kept for the process (launches may be in flight at exit); a larger one replaces it
// after the device is idle.
inline DevicePtr<float> ce_device_scratch(size_t n) {
  thread_local std::map<std::pair<int, void*>, DevicePtr<float>> scratch;
  auto key = std::make_pair(cuda::current_device(), current_launch_stream());
  DevicePtr<float>& s = scratch[key];
  if (s.size() < n) {
    if (!s.empty()) {
      cuda::synchronize();
      cuda::mem_free(s.data());
    }
    s = DevicePtr<float>(static_cast<float*>(cuda::mem_alloc(n * sizeof(float))), n);
  }
  return s;
}

}  // namespace detail

// Whether the row program takes the target logit from its registers (PICK_TARGET)
// rather than by a load issued once the target arrives. Measured on H200 (bf16,
// bench/NOTES.md): the pick's masked sum takes ~15 more registers, so it pays where the
// program is at its register cap either way — 48 or more f32 values per thread
// (4096x128256 on 16 x 8192 columns, 4 warps: 73.5% -> 78.6% of copy; 16384x50304 on 8
// x 7 x 1024: 77.3% -> 78.8%) — and loses where it lowers the programs per SM (32
// values per thread: 8192x32000 on 8 x 4096 columns, 77.9% -> 67.8%). Not on rows
// indexed from their aligned start (ALIGN_ROWS), where the pick compares positions
// minus the head: 2048x128257 58.1-58.7% picked, 60.1-60.6% loaded; 4096x50257 64.0 /
// 64.4%. Past the rule's reach: 1024x256000 (16 x 16384 on 8 warps) 70.5% picked, 71.4-71.9%
// loaded; the tune space times both.
inline bool cross_entropy_picks_target(const Config& c) {
  int64_t values = row_values_per_thread(c);
  bool aligned_rows = c.has("ALIGN_ROWS") && c.get("ALIGN_ROWS") != 0;
  return values >= 48 && !aligned_rows;
}

// Whether a mean's rows count the targets in the row kernel's first programs (else the
// count kernel runs before them): where each row is one program. Measured on H200 (mean,
// % of copy, the count kernel -> counting programs): bf16 65536x1024 77.9 -> 82.0,
// 262144x512 62.7 -> 68.5, f32 87.6 -> 90.2 and 82.2 -> 89.0, the other one-program rows
// equal. Rows on clusters lost (bf16 8192x32000 92 -> 88; f32 1024x256000 88 -> 58, then
// uncapped: most likely the step past 64 registers, cross_entropy_f32_programs).
inline bool cross_entropy_counts_in_rows(const Config& c, int64_t V) {
  return c.cluster == 1 && !row_uses_loop(c, V);
}

// The config the main launch uses: the row config plus the reduction and whether the
// logit sum is needed (SMOOTHING: label_smoothing > 0; set here, never by the caller),
// the targets per counting program of a mean (COUNT; 0: the count kernel counts them,
// as for other reductions, which have none; a config may set it for a mean), and
// PICK_TARGET where the config leaves it out (looped rows: never; rows in batches: their
// program's default).
inline Config cross_entropy_config(Config c, int64_t V, const CrossEntropyOptions& o) {
  check_row_cover(c, V, "cross_entropy");
  if (row_uses_loop(c, V)) c.meta.erase("PICK_TARGET");
  else if (!c.has("PICK_TARGET") && !c.has("ROWS")) c.set("PICK_TARGET", cross_entropy_picks_target(c) ? 1 : 0);
  c.meta.erase("RELOAD");
  c.set("SMOOTHING", o.label_smoothing > 0.0f ? 1 : 0);
  bool mean = o.reduction == LossReduction::mean;
  if (!mean) c.set("COUNT", 0);
  else if (!c.has("COUNT")) c.set("COUNT", cross_entropy_counts_in_rows(c, V) ? cross_entropy_count_tile(c) : 0);
  if (c.get("COUNT") < 0)
    user_error("cross_entropy: the config's COUNT is " + std::to_string(c.get("COUNT")) + ", expected >= 0",
               SourceLoc{}, "Set COUNT to the targets per counting program, or 0 for the count kernel");
  return c.set("REDUCTION", static_cast<int64_t>(o.reduction));
}

// The counting clusters in front of a mean's rows: COUNT targets per program.
inline int64_t cross_entropy_count_clusters(const Config& c, int64_t V, int64_t M) {
  int64_t count = c.get("COUNT");
  if (count == 0) return 0;
  int64_t per_cluster = count * (row_uses_loop(c, V) ? 1 : c.cluster);
  return (M + per_cluster - 1) / per_cluster;
}

// cross_entropy(loss, dlogits, logits, targets, M, V, options[, config]): loss and
// gradient of softmax cross-entropy over M rows of V logits (see the top of the file).
// loss: f32, [M] with reduction none, [1] otherwise. dlogits: the logits' dtype and
// shape, or the logits buffer itself (in place). targets: i64 (or i32), [M].
template <class Loss, class DLogits, class Logits, class Targets>
void cross_entropy(Loss&& loss, DLogits&& dlogits, const Logits& logits, const Targets& targets, int64_t M, int64_t V,
                   CrossEntropyOptions o = {}, ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Logits>;
  using D = buffer_elem_t<DLogits>;
  using L = buffer_elem_t<Loss>;
  using TI = buffer_elem_t<Targets>;
  detail::ce_check_dtypes<L, D, T, TI>();
  if constexpr (std::is_same_v<L, float> && std::is_same_v<D, T> &&
                (std::is_same_v<TI, int64_t> || std::is_same_v<TI, int32_t>) &&
                (std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)) {
    if (M < 1 || V < 1 || M > INT32_MAX || V > INT32_MAX)
      user_error("cross_entropy: M and V must be in [1, 2^31), got M = " + std::to_string(M) +
                     ", V = " + std::to_string(V),
                 SourceLoc{}, "Pass the logits' shape [M, V]");
    int64_t ls = o.logits_stride < 0 ? V : o.logits_stride;
    int64_t ds = o.dlogits_stride < 0 ? ls : o.dlogits_stride;
    if (ls < V || ds < V)
      user_error("cross_entropy: the row strides (logits_stride " + std::to_string(ls) + ", dlogits_stride " +
                     std::to_string(ds) + ") must be at least V = " + std::to_string(V),
                 SourceLoc{}, "Pass strides in elements between rows, or -1 for contiguous rows");
    if (static_cast<const void*>(std::data(dlogits)) == static_cast<const void*>(std::data(logits)) && ds != ls)
      user_error("cross_entropy: dlogits is the logits buffer (in place) but dlogits_stride " + std::to_string(ds) +
                     " differs from logits_stride " + std::to_string(ls),
                 SourceLoc{}, "Leave dlogits_stride at -1 for an in-place gradient");
    if (!(o.label_smoothing >= 0.0f && o.label_smoothing < 1.0f))
      user_error("cross_entropy: label_smoothing is " + std::to_string(o.label_smoothing) + ", outside [0, 1)",
                 SourceLoc{}, "Pass a label_smoothing in [0, 1)");
    if (!(o.z_loss >= 0.0f))
      user_error("cross_entropy: z_loss is " + std::to_string(o.z_loss) + ", expected >= 0", SourceLoc{},
                 "Pass a non-negative z_loss coefficient (0 turns it off)");
    detail::ce_check_size("logits", std::size(logits), (M - 1) * ls + V, "[M, V] with its row stride");
    detail::ce_check_size("dlogits", std::size(dlogits), (M - 1) * ds + V, "[M, V] with its row stride");
    detail::ce_check_size("targets", std::size(targets), M, "one target per row");
    bool none = o.reduction == LossReduction::none;
    detail::ce_check_size("loss", std::size(loss), none ? M : 1, none ? "reduction none (one loss per row)" : "the reduced loss");
    if constexpr (!detail::is_device_buffer<Targets>) detail::ce_check_host_targets(targets, M, V, o.ignore_index);

    bool align = rows_need_alignment(dtype_v<T>, {row_buffer(logits, ls), row_buffer(dlogits, ds)});
    // ALIGN_ROWS first: the PICK_TARGET rule (cross_entropy_config) depends on it.
    Config c = cfg ? *cfg : cross_entropy_rows_config(V, dtype_v<T>, clusters_usable<Logits>(), align);
    set_align_rows(c, align, aligned_row_span(V, dtype_v<T>), aligned_rows_pay(c, V, dtype_v<T>));
    c = cross_entropy_config(c, V, o);
    // Scratch: the row losses of a sum or mean (none writes `loss` itself), the finish
    // kernel's partial sums, the count kernel's 1/count.
    Config fin = cross_entropy_finish_config().set("REDUCTION", static_cast<int64_t>(o.reduction));
    int64_t finish_programs = (M + fin.get("BLOCK") - 1) / fin.get("BLOCK");
    bool batches = uses_row_batches(c, V, "cross_entropy");
    int64_t n_count = cross_entropy_count_clusters(c, V, M);
    bool count_kernel = o.reduction == LossReduction::mean && n_count == 0;
    // The arrivals a mean's rows wait for: each counting program's, or the count kernel's.
    int64_t counting = count_kernel ? 1 : n_count * (row_uses_loop(c, V) ? 1 : c.cluster);
    // Counters (zero before and after): a mean's count word, the finish programs done.
    auto run = [&](const auto& row_losses, const auto& partials, const auto& inv_count, const auto& count_word,
                   const auto& done) {
      if (count_kernel)
        cross_entropy_count_kernel<TI>().launch(Grid(1), cross_entropy_count_config(), count_word, inv_count,
                                                targets, M, o.ignore_index);
      if (batches)
        cross_entropy_rows_kernel<T, TI>().launch(row_batch_grid(c, M, n_count), c, row_losses, dlogits, logits,
                                                  targets, count_word, n_count, counting, inv_count, M, V, ls, ds,
                                                  o.ignore_index, o.label_smoothing, o.z_loss, o.grad_scale);
      else
        launch_rows(cross_entropy_row_kernel<T, TI>(), cross_entropy_looped_kernel<T, TI>(), c, M + n_count, V,
                    row_losses, dlogits, logits, targets, count_word, n_count, counting, inv_count, V, ls, ds,
                    o.ignore_index, o.label_smoothing, o.z_loss, o.grad_scale);
      if (!none)
        cross_entropy_finish_kernel().launch(Grid(finish_programs), fin, loss, row_losses, partials, count_word, done,
                                             M);
    };
    if constexpr (detail::is_device_buffer<Loss>) {
      DevicePtr<float> s = detail::ce_device_scratch(M + finish_programs + 1);
      uint32_t* counters = cuda::stream_counters(static_cast<CUstream>(current_launch_stream()));
      DevicePtr<int64_t> count_word(reinterpret_cast<int64_t*>(counters), 1);  // counters 0 and 1
      DevicePtr<int32_t> done(reinterpret_cast<int32_t*>(counters + 2), 1);
      auto partials = s.subview(M, finish_programs), inv_count = s.subview(M + finish_programs, 1);
      if (none) run(loss, partials, inv_count, count_word, done);
      else run(s.subview(0, M), partials, inv_count, count_word, done);
    } else {
      std::vector<float> s(M + finish_programs + 1);
      std::vector<int64_t> count_word(1, 0);
      std::vector<int32_t> done(1, 0);
      std::span<float> all(s);
      auto partials = all.subspan(M, finish_programs), inv_count = all.subspan(M + finish_programs, 1);
      if (none) run(loss, partials, inv_count, count_word, done);
      else run(all.subspan(0, M), partials, inv_count, count_word, done);
    }
  }
}

}  // namespace tilefuse::kernels
