#pragma once
// Tile programs of the fused cross-entropy (host function: cross_entropy.hpp).
// The row programs write each row's loss to loss[row]; with sum or mean that is a
// scratch buffer the finish kernel reduces (deterministic; same-address atomics from
// every row cost ~30% of the kernel on H200). REDUCTION (meta): 0 none, 1 sum, 2 mean.
// A mean scales the gradient by 1/count of the rows not ignored: the row kernel's first
// programs count the targets (COUNT per program) while the row programs load their
// rows, and each row program waits for the count only before its gradient; or (COUNT =
// 0) the count kernel, launched before, counts them all.
// The row programs write every dlogit without the one-hot term (comparing each column
// with the target kept ~25 more registers live: 77 vs 53 at 8K bf16 columns); the
// program holding the target column then stores that column's full gradient over it,
// after a barrier (the tile store's element is another thread's). Measured on H200
// against the earlier scatter by the finish kernel: +3 to +9 points of copy bandwidth
// on one-program rows, within ~1.5 on clusters. (f32 rows on clusters of 16-warp
// programs fell 87 -> 59% with it: 69 registers instead of 64, so one program per SM
// instead of two, ncu; the heuristic now caps them, cross_entropy_f32_programs.)
// The loss is stored by the program holding the target column (rank 0 where none does),
// which alone has the target logit: the cluster exchange carries the max and the sum of
// exponentials (and the logit sum with smoothing), as softmax's.
// count_word (i64): the count in its low half, the counting programs arrived in its high
// half (one relaxed atomic each, so a row program's one load sees both; the count kernel
// arrives once); done (i32): the finish programs done. Both zero before and after a call
// (the finish kernel zeroes them).
#include <limits>
#include <string>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/row_chunks.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

namespace detail {

template <class T, class TI>
std::string ce_kernel_name(const char* base) {
  std::string n = std::string(base) + name(dtype_v<T>);
  if constexpr (!std::is_same_v<TI, int64_t>) n += std::string("_") + name(dtype_v<TI>);
  return n;
}

// The row's target as seen by the programs: `valid` (not ignore_index), `in_range`
// (a class index in [0, V)), and `col`, the target column or -1 (matches no column).
// R = 1: the targets of a batch of rows (cross_entropy_row_batches.hpp).
template <int R = 0>
struct CeTarget {
  Tile<bool, R> valid, in_range;
  Tile<int32_t, R> col;
};
template <int R>
CeTarget<R> ce_target(const Tile<int64_t, R>& t, const I32& n_cols, const I64& ignore_index) {
  auto valid = t != ignore_index;
  auto in_range = t >= 0 && t < n_cols.cast<i64>();
  auto col = where(valid && in_range, t, scalar<i64>(-1)).template cast<i32>();
  return {valid, in_range, col};
}

// Per-row scalars from the row's lse and `lin` = (1-eps) x_t + eps sum_x / V, the part
// of the loss linear in the logits (valid in the program holding the target column, the
// only one that stores the loss; the coefficients do not depend on it):
// dx = e * coef_p - coef_u - [col == t] coef_t with e = exp(x - row_max).
template <int R = 0>
struct CeRow {
  Tile<float, R> loss, coef_p, coef_u, coef_t;
};
template <int R>
CeRow<R> ce_row(const CeTarget<R>& t, const Tile<float, R>& row_max, const Tile<float, R>& sum_e,
                const Tile<float, R>& lin, const I32& n_cols, const F32& smoothing, const F32& z_loss,
                const F32& factor) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto lse = row_max + log(sum_e);
  auto v = n_cols.cast<f32>();
  auto loss = lse - lin + z_loss * lse * lse;
  // Ignored rows: 0. A target outside [0, V) (only on the GPU; host targets are
  // checked first): NaN, so the mistake shows in the loss and the gradient.
  auto scale = where(t.valid, where(t.in_range, factor, scalar<f32>(nan)), scalar<f32>(0.0));
  return {where(t.valid, where(t.in_range, loss, scalar<f32>(nan)), scalar<f32>(0.0)),
          scale * (1.0f + 2.0f * z_loss * lse) / sum_e, scale * smoothing / v, scale * (1.0f - smoothing)};
}

// The target logit x[t] as one scalar load where `owns` (the program holding column t;
// an ignored or out-of-range target matches no program: 0). Only the owner reads it,
// and before its own stores, so in place it reads the logit, never the gradient, with
// no ordering between programs.
template <class T>
F32 ce_target_logit(const Ptr<const T>& row, const CeTarget<>& t, const I1& owns) {
  return load(row + where(owns, t.col, scalar<i32>(0)), owns, 0.0f).template cast<f32>();
}

// x at column `col` of the tiles holding it: a masked sum (one reduction; the row
// program runs it only where it holds the column).
inline F32 ce_pick(const std::vector<Tile<float, 1>>& x, const std::vector<Tile<int32_t, 1>>& cols, const I32& col) {
  auto picked = where(cols[0] == col, x[0], 0.0f);
  for (size_t i = 1; i < x.size(); ++i) picked = picked + where(cols[i] == col, x[i], 0.0f);
  return sum(picked, 0);
}

// dx without the one-hot term (added by the target-gradient kernel).
template <class E>
auto ce_grad(const E& e, const CeRow<>& r, bool smoothing) {
  auto dx = e * r.coef_p;
  return smoothing ? dx - r.coef_u : dx;
}
// The full gradient of the target column, from the target logit, stored over the value
// the program's tile store wrote there (by another thread: hence the barrier) by the
// program holding the column.
template <class T>
void ce_store_target_grad(const Ptr<T>& d_row, const CeTarget<>& t, const I1& owns, const F32& x_t,
                          const F32& row_max, const CeRow<>& r, bool smoothing) {
  if_(owns, [&] {
    barrier();
    store(d_row + t.col, (ce_grad(fast_exp(x_t - row_max), r, smoothing) - r.coef_t).template cast<T>());
  });
}

// A counting program of a mean (program q of the first ones): the targets
// [q COUNT, (q + 1) COUNT) not ignore_index added into the count, with its arrival.
template <class TI>
void ce_count_targets(const Ptr<int64_t>& count_word, const Ptr<const TI>& targets, const I32& n_rows,
                      const I64& ignore_index, int64_t count) {
  auto r = program_id(0) * count + arange(0, count);
  auto in = r < n_rows;
  auto t = load(targets + r, in, 0, Cache::EvictLast).template cast<i64>();  // read again by the rows
  atomic_add(count_word, (int64_t(1) << 32) + sum((in && t != ignore_index).template cast<i64>(), 0));
}

// A mean's count word as a row program with counting programs (COUNT > 0) first reads it:
// one relaxed load issued with the row's loads, as they may still be counting (0
// otherwise: unused).
inline I64 ce_count_seen(int64_t reduction, int64_t count, const Ptr<int64_t>& count_word) {
  return reduction == 2 && count > 0 ? load_relaxed(count_word) : scalar<i64>(0);
}

// After the count kernel (a mean without counting programs), its 1/count: loaded with
// the row's loads (that grid finished before this one touched memory), so that no load
// waits after the row's reductions (bf16 rows on clusters measured 4-6% slower with it
// loaded there, bench/NOTES.md). 1 otherwise: unused.
inline F32 ce_inv_count(int64_t reduction, int64_t count, const Ptr<const float>& inv_count) {
  return reduction == 2 && count == 0 ? load(inv_count) : scalar<f32>(1.0f);
}

// The gradient factor of every row: grad_scale, divided for a mean by the count (inf for
// no rows: every factor is then unused). With counting programs, the count once
// `counting` of them have arrived: only where the word seen early fell short (the first
// programs) does a warp poll it again. After the count kernel, times its 1/count `inv`.
// (Rows on clusters that divided by the count word instead ran up to 50% slower, f32
// 1024x256000 on 16 x 16 warps: most likely the same step past 64 registers that ncu
// later showed for the target column's store, bench/NOTES.md.)
inline F32 ce_grad_factor(int64_t reduction, int64_t count, const F32& grad_scale, const Ptr<int64_t>& count_word,
                          const I32& counting, const I64& seen, const F32& inv) {
  if (reduction != 2) return grad_scale;
  if (count == 0) return grad_scale * inv;
  auto need = counting.cast<i64>() << 32;
  auto word = seen;
  if_(seen < need, [&] { word = wait_at_least(count_word, need, MemOrder::Relaxed); });
  return grad_scale * (1.0f / (word & 0xffffffffLL).cast<f32>());
}

// A row kernel's programs: with COUNT (a mean), the first n_count clusters count the
// targets and the rest run `rows` on row id - n_count; without, every cluster a row.
template <class TI, class Rows>
void ce_count_then_rows(int64_t count, const I32& id, const I32& n_count, const Ptr<int64_t>& count_word,
                        const Ptr<const TI>& targets, const I32& n_rows, const I64& ignore_index, Rows&& rows) {
  if (count == 0) return rows(id);
  if_(id < n_count, [&] { ce_count_targets(count_word, targets, n_rows, ignore_index, count); },
      [&] { rows(id - n_count); });
}

}  // namespace detail

// One row per cluster of C programs (C = 1 by default), each holding CHUNKS tiles of
// BLOCK columns in registers (row_chunks.hpp): the row is read once, the gradient
// written over it (or elsewhere) once. SMOOTHING (set by the host from
// label_smoothing > 0) adds the logit sum; without it the row needs two reductions.
template <class T, class TI = int64_t>
const auto& cross_entropy_row_kernel() {
  static auto k = kernel(detail::ce_kernel_name<T, TI>("cross_entropy_"),
      {"loss", "dlogits", "logits", "targets", "count_word", "n_count", "counting", "inv_count", "n_cols", "logits_stride",
       "dlogits_stride", "ignore_index", "smoothing", "z_loss", "grad_scale"},
      [](Ptr<float> loss, Ptr<T> dlogits, Ptr<const T> logits, Ptr<const TI> targets,
         Ptr<i64> count_word, I32 n_count, I32 counting, Ptr<const float> inv_count,
         I32 n_cols, I64 logits_stride, I64 dlogits_stride, I64 ignore_index, F32 smoothing, F32 z_loss,
         F32 grad_scale, Meta<"BLOCK"> BLOCK, Meta<"CHUNKS", int64_t, 1> CHUNKS, Meta<"REDUCTION"> REDUCTION,
         Meta<"SMOOTHING", bool, true> SMOOTHING, Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS,
         Meta<"PICK_TARGET", bool, false> PICK_TARGET, Meta<"COUNT", int64_t, 1024> COUNT,
         Meta<"HELD", int64_t, 0> HELD) {
        auto rows = num_programs(0) / cluster_size() - n_count;
        auto id = cluster_id();
        detail::ce_count_then_rows(COUNT, id, n_count, count_word, targets, rows, ignore_index, [&](I32 row) {
          auto in_row = logits + row * logits_stride;
          // ALIGN_ROWS: the row and its gradient indexed from their 16-byte-aligned starts
          // (row_chunks.hpp).
          auto x_row = in_row;
          auto d_row = dlogits + row * dlogits_stride;
          auto head = align_rows(ALIGN_ROWS, x_row, d_row);
          RowChunks c(cluster_rank(), BLOCK, CHUNKS, n_cols, head);
          auto readable = c.template readable<T>(row * logits_stride, (rows - 1 - row).template cast<i64>() * logits_stride);
          // The target first: nothing waits on it before the row's loads are issued, and
          // it arrives with them.
          auto target = load(targets + row);
          auto seen = detail::ce_count_seen(REDUCTION, COUNT, count_word);
          // The first HELD chunks stay in shared memory (Cache::KeepInShared), read again
          // where they are used: fewer registers for long rows on clusters.
          int64_t held = std::min<int64_t>(HELD, CHUNKS);
          std::vector<Tile<T, 1>> kept;
          std::vector<Tile<float, 1>> x;
          for (int64_t i = 0; i < CHUNKS; ++i) {
            if (i < held) kept.push_back(c.load(x_row, i, -inf, Cache::KeepInShared, readable));
            x.push_back(i < held ? kept.back().template cast<f32>()
                                 : c.load(x_row, i, -inf, c.read_once(), readable).template cast<f32>());
          }
          auto inv = detail::ce_inv_count(REDUCTION, COUNT, inv_count);
          auto t = detail::ce_target(target.template cast<i64>(), n_cols, ignore_index);
          auto first = cluster_rank() * (BLOCK * CHUNKS);
          if (head) first = first - *head;  // the program's first column
          // (t.col is -1 for an ignored row, which a first program's columns from its
          // aligned start may cover: not owned.)
          auto owns = t.col >= 0 && t.col >= first && t.col < first + BLOCK * CHUNKS;
          // The target logit: a load once the target has arrived (a second memory latency
          // before the cluster's exchange), or with PICK_TARGET picked from the registers
          // of the program holding it (a masked sum there: more registers, no latency).
          F32 x_t = scalar<f32>(0.0f);
          if (PICK_TARGET) if_(owns, [&] { x_t = detail::ce_pick(x, c.cols, t.col); });
          else x_t = detail::ce_target_logit(in_row, t, owns);
          // This program's max m and sum of exp(x - m) (ex2.approx, as in softmax), and with
          // SMOOTHING its logit sum; one exchange gives the row's (cluster_max_sumexp). The
          // target logit stays out of it: only its owner needs it, for the loss and the
          // target column, so its load's latency overlaps the exchange.
          auto m = own_row_max(max(combine(x, [](auto a, auto b) { return maximum(a, b); }), 0));
          std::vector<Tile<float, 1>> e;
          for (auto& xi : x) e.push_back(fast_exp(xi - m));
          auto s = sum(combine(e, [](auto a, auto b) { return a + b; }), 0);
          F32 row_max = m, sum_e = s, lin = (1.0f - smoothing) * x_t;
          if (SMOOTHING) {
            std::vector<Tile<float, 1>> xs;
            for (int64_t i = 0; i < CHUNKS; ++i) xs.push_back(where(c.mask[i], x[i], 0.0f));
            auto [mx, se, sx] = cluster_max_sumexp(std::array{m, s, sum(combine(xs, [](auto a, auto b) { return a + b; }), 0)});
            row_max = mx, sum_e = se, lin = lin + smoothing / n_cols.template cast<f32>() * sx;
          } else {
            auto ms = cluster_max_sumexp(std::array{m, s});
            row_max = ms[0], sum_e = ms[1];
          }
          auto factor = detail::ce_grad_factor(REDUCTION, COUNT, grad_scale, count_word, counting, seen, inv);
          // `lin` (so the loss) holds only in the owner, which stores it; rank 0 stores the
          // loss of a row that no program owns (ignored: 0, a target outside [0, V): NaN).
          auto r = detail::ce_row(t, row_max, sum_e, lin, n_cols, smoothing, z_loss, factor);
          auto mine = r;  // for this program's exponentials: exp(x - row_max) = exp(x - m) exp(m - row_max)
          mine.coef_p = r.coef_p * fast_exp(m - row_max);
          for (int64_t i = 0; i < CHUNKS; ++i) {
            auto ei = i < held ? fast_exp(kept[i].template cast<f32>() - m) : e[i];
            store(d_row + c.pos[i], detail::ce_grad(ei, mine, SMOOTHING).template cast<T>(), c.mask[i]);
          }
          store(loss + row, r.loss, owns || (cluster_rank() == 0 && t.col < 0));
          detail::ce_store_target_grad(dlogits + row * dlogits_stride, t, owns, x_t, row_max, r, SMOOTHING);
        });
      });
  return k;
}

// Rows longer than one cluster covers: pass 1 keeps a running max and rescaled sum per
// lane (as the looped softmax) plus the logit sum and the target logit; pass 2 re-reads
// the row (from L2 where it fits) and writes the gradient.
template <class T, class TI = int64_t>
const auto& cross_entropy_looped_kernel() {
  static auto k = kernel(detail::ce_kernel_name<T, TI>("cross_entropy_looped_"),
      {"loss", "dlogits", "logits", "targets", "count_word", "n_count", "counting", "inv_count", "n_cols", "logits_stride",
       "dlogits_stride", "ignore_index", "smoothing", "z_loss", "grad_scale"},
      [](Ptr<float> loss, Ptr<T> dlogits, Ptr<const T> logits, Ptr<const TI> targets,
         Ptr<i64> count_word, I32 n_count, I32 counting, Ptr<const float> inv_count,
         I32 n_cols, I64 logits_stride, I64 dlogits_stride, I64 ignore_index, F32 smoothing, F32 z_loss,
         F32 grad_scale, Meta<"BLOCK"> BLOCK, Meta<"REDUCTION"> REDUCTION, Meta<"SMOOTHING", bool, true> SMOOTHING,
         Meta<"COUNT", int64_t, 1024> COUNT) {
        auto rows = num_programs(0) - n_count;
        auto id = program_id(0);
        detail::ce_count_then_rows(COUNT, id, n_count, count_word, targets, rows, ignore_index, [&](I32 row) {
          auto cols = arange(0, BLOCK);
          auto in_row = logits + row * logits_stride;
          auto target = load(targets + row);
          auto seen = detail::ce_count_seen(REDUCTION, COUNT, count_word);
          auto inv = detail::ce_inv_count(REDUCTION, COUNT, inv_count);
          // Lanes start from a finite floor, so the exponent never sees -inf - -inf.
          auto m = full<f32>({BLOCK}, -3.0e38f);
          auto l = zeros<f32>({BLOCK});
          auto sx = zeros<f32>({BLOCK});  // the logit sum, only with SMOOTHING
          for_range(0, n_cols, BLOCK, [&](I32 start) {
            auto c = start + cols;
            auto mask = c < n_cols;
            auto x = load(in_row + c, mask, -inf, Cache::EvictLast).template cast<f32>();
            auto m_new = maximum(m, x);
            auto e = fast_exp(minimum(m, x) - m_new);  // rescales l, or is x's own term
            l = where(x > m, l * e + 1.0f, l + e);
            m = m_new;
            if (SMOOTHING) sx = sx + where(mask, x, 0.0f);
          });
          // The target logit after the first pass: its load waits on the target's.
          auto t = detail::ce_target(target.template cast<i64>(), n_cols, ignore_index);
          auto owns = t.col >= 0;
          auto x_t = detail::ce_target_logit(in_row, t, owns);
          auto row_max = max(m, 0);
          auto sum_e = sum(l * fast_exp(m - row_max), 0);
          auto lin = (1.0f - smoothing) * x_t;
          if (SMOOTHING) lin = lin + smoothing / n_cols.template cast<f32>() * sum(sx, 0);
          auto factor = detail::ce_grad_factor(REDUCTION, COUNT, grad_scale, count_word, counting, seen, inv);
          auto r = detail::ce_row(t, row_max, sum_e, lin, n_cols, smoothing, z_loss, factor);
          auto out_row = dlogits + row * dlogits_stride;
          for_range(0, n_cols, BLOCK, [&](I32 start) {
            auto c = start + cols;
            auto mask = c < n_cols;
            auto x = load(in_row + c, mask, -inf, Cache::EvictFirst).template cast<f32>();
            store(out_row + c, detail::ce_grad(fast_exp(x - row_max), r, SMOOTHING).template cast<T>(), mask);
          });
          store(loss + row, r.loss);
          detail::ce_store_target_grad(out_row, t, owns, x_t, row_max, r, SMOOTHING);
        });
      });
  return k;
}

// After the rows of a sum or mean (REDUCTION 1, 2), BLOCK rows per program: each
// program adds its rows' losses into partials[program], and the last program to count
// itself done adds the partials in program order (deterministic; a lone program takes
// its own sum), divides a mean by the count (NaN over no rows, as PyTorch: 0 x inf) and
// zeroes the counters for the next call.
inline const auto& cross_entropy_finish_kernel() {
  static auto k = kernel("cross_entropy_finish",
      {"loss", "row_losses", "partials", "count_word", "done", "n_rows"},
      [](Ptr<float> loss, Ptr<const float> row_losses, Ptr<float> partials, Ptr<i64> count_word, Ptr<i32> done,
         I32 n_rows, Meta<"BLOCK"> BLOCK, Meta<"REDUCTION"> REDUCTION) {
        auto lanes = arange(0, BLOCK);
        auto rows = program_id(0) * BLOCK + lanes;
        auto n = num_programs(0);
        auto part = sum(load(row_losses + rows, rows < n_rows, 0.0f), 0);
        auto finish = [&](F32 total) {
          if (REDUCTION == 2) total = total * (1.0f / (load(count_word) & 0xffffffffLL).template cast<f32>());
          store(loss, total);
          store(count_word, scalar<i64>(0));
          store(done, scalar<i32>(0));
        };
        // One program (up to BLOCK rows) needs no ticket: its sum is the loss.
        if_(n == 1, [&] { finish(part); }, [&] {
          store(partials + program_id(0), part);
          if_(atomic_add(done, 1, MemOrder::AcqRel) == n - 1, [&] {
            auto acc = zeros<f32>({BLOCK});
            for_range(0, n, BLOCK, [&](I32 start) {
              auto i = start + lanes;
              acc = acc + load(partials + i, i < n, 0.0f);
            });
            finish(sum(acc, 0));
          });
        });
      });
  return k;
}

// One program, before the rows of a mean whose row kernel has no counting programs
// (COUNT = 0): the count of the rows whose target is not ignore_index, as the count word
// of one arrival (for the finish kernel) and as inv_count = 1/count (for the rows).
template <class TI = int64_t>
const auto& cross_entropy_count_kernel() {
  static auto k = kernel(std::string("cross_entropy_count_") + name(dtype_v<TI>),
      {"count_word", "inv_count", "targets", "n_rows", "ignore_index"},
      [](Ptr<i64> count_word, Ptr<float> inv_count, Ptr<const TI> targets, I32 n_rows, I64 ignore_index,
         Meta<"BLOCK"> BLOCK) {
        auto offs = arange(0, BLOCK);
        auto acc = zeros<i32>({BLOCK});
        for_range(0, n_rows, BLOCK, [&](I32 start) {
          auto r = start + offs;
          auto in = r < n_rows;
          auto t = load(targets + r, in, 0, Cache::EvictLast).template cast<i64>();  // read again by the rows
          acc = acc + (in && t != ignore_index).template cast<i32>();
        });
        auto count = sum(acc, 0);
        store(count_word, (int64_t(1) << 32) + count.template cast<i64>());
        store(inv_count, 1.0f / count.template cast<f32>());
      });
  return k;
}

// The count kernel's config: one program, so its loop is latency-bound (a memory round
// trip per step): the widest steps, on 32 warps (H200, 65536 rows: 15.3 us at 4096 x 8
// warps with the next step staged, 6.9 us at 16384 x 32).
inline Config cross_entropy_count_config() { return Config{{"BLOCK", 16384}, num_warps(32), num_stages(1)}; }

// The finish kernel's config: 1024 rows per program (so that the last program's sum of
// the partials is one step up to a million rows).
inline Config cross_entropy_finish_config() { return Config{{"BLOCK", 1024}, num_warps(8)}; }

// Targets per counting program of a mean: 8 per thread, whatever the row config's warps
// (a wider count would take registers from the row programs, which share the kernel).
inline int64_t cross_entropy_count_tile(const Config& c) { return 256 * c.num_warps; }

}  // namespace tilefuse::kernels
