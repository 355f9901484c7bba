#pragma once
// LayerNorm backward, f32 math. For y = xhat * w + b with xhat = (x - mean) * rstd and
// g = dy * w:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  dw = sum_rows dy * xhat,  db = sum_rows dy.
// mean and rstd come from the forward (layernorm(out, mean, rstd, ...); two row sums, g
// and g*xhat) or are recomputed from x: with d = x - x[0] (the shift keeps the sums stable
// when |mean| >> std), all four row sums -- d, d^2, g, g*d -- are independent, so they
// share one exchange between warps: mean(g * xhat) = rstd * (E[g d] - E[d] E[g]).
#include <string>

#include "tilefuse/kernels/norm_backward_cluster.hpp"
#include "tilefuse/kernels/norm_backward_common.hpp"

namespace tilefuse::kernels {

// Persistent programs, the whole row in one tile, ROWS rows per step as a [ROWS, BLOCK]
// tile; dW and dB accumulate in registers. PREFETCH and ALIGN_ROWS: as in
// rmsnorm_bwd_row_kernel. SAVED: the rows' mean and rstd come from the forward (mean_in,
// rstd_in; f32), so a row needs two sums, not four; without, those pointers are never
// touched.
template <class T>
const auto& layernorm_bwd_row_kernel() {
  static auto k = kernel(std::string("layernorm_bwd_") + name(dtype_v<T>),
      {"dx", "partials", "dy", "x", "weight", "mean_in", "rstd_in", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> partials, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight,
         Ptr<const float> mean_in, Ptr<const float> rstd_in, I32 n_rows, I32 n_cols, I64 stride, F32 eps,
         Meta<"BLOCK"> BLOCK, Meta<"ROWS", int, 1> ROWS, Meta<"PREFETCH", bool, false> PREFETCH,
         Meta<"SAVED", bool, false> SAVED, Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        I32 first0 = program_id(0) * ROWS, step = num_programs(0) * ROWS;
        NormRowColumns rc(BLOCK, n_cols, ALIGN_ROWS, x, first0, stride);
        const auto& cols = rc.col;
        const auto& cmask = rc.mask;
        auto lanes = arange(0, ROWS);
        auto starts = [&](I32 first) { return (first + lanes).template cast<i64>() * stride; };
        auto within = (lanes.template cast<i64>() * stride).col() + rc.pos.row();
        auto at = [&](auto p, I32 first) { return rc.row_start(p, first, stride) + within; };
        auto in_rows = [&](I32 first) { return (first + lanes < n_rows).col() && cmask.row(); };
        auto read = [&](Ptr<const T> p, I32 first) {
          return rc.load_rows(at(p, first), in_rows(first), ROWS, first, n_rows, stride);
        };
        // Per-row values of a step: the saved mean and rstd, or x[row, 0] (the shift; twice).
        auto read_mean = [&](I32 first) {
          auto m = first + lanes < n_rows;
          return SAVED ? load(mean_in + (first + lanes), m, 0.0f) : load(x + starts(first), m, 0.0f).template cast<f32>();
        };
        auto read_rstd = [&](I32 first, const Tile<float, 1>& mean) {
          return SAVED ? load(rstd_in + (first + lanes), first + lanes < n_rows, 0.0f) : mean;
        };
        auto next_x = read(x, first0), next_dy = read(dy, first0);
        auto next_mean = read_mean(first0);
        auto next_rstd = read_rstd(first0, next_mean);
        auto w = load(weight + cols, cmask, 0.0f).template cast<f32>().row();
        auto dw = zeros<f32>({ROWS, BLOCK});
        auto db = zeros<f32>({ROWS, BLOCK});
        for_range(first0, n_rows, step, [&](I32 first) {
          auto xt = next_x, dyt = next_dy;
          auto mt = next_mean, rt = next_rstd;
          // Saved statistics are read a step ahead even when the rows are staged: their
          // latency would otherwise come before each step's sums.
          if (PREFETCH || SAVED) {
            next_mean = read_mean(first + step);
            next_rstd = read_rstd(first + step, next_mean);
          } else {
            mt = read_mean(first);
            rt = mt;
          }
          if (PREFETCH) {
            next_x = read(x, first + step);
            next_dy = read(dy, first + step);
          } else {
            xt = read(x, first);
            dyt = read(dy, first);
          }
          auto mask = in_rows(first);
          auto xv = xt.template cast<f32>(), dyv = dyt.template cast<f32>();
          auto g = dyv * w;
          Tile<float, 2> xhat;
          Tile<float, 1> rstd, mean_g, mean_gxhat;
          if (SAVED) {
            rstd = rt;
            xhat = xv * rstd.col() - (mt * rstd).col();  // one fma per element
            mean_g = sum(g, 1) / n_cols;
            mean_gxhat = sum(g * xhat, 1) / n_cols;  // g is 0 where masked
          } else {
            auto d = where(mask, xv - mt.col(), 0.0f);
            auto mean_d = sum(d, 1) / n_cols;
            auto mean_dd = sum(d * d, 1) / n_cols;
            mean_g = sum(g, 1) / n_cols;
            auto mean_gd = sum(g * d, 1) / n_cols;
            rstd = rsqrt(maximum(mean_dd - mean_d * mean_d, 0.0f) + eps);
            mean_gxhat = rstd * (mean_gd - mean_d * mean_g);
            xhat = (d - mean_d.col()) * rstd.col();
          }
          store(at(dx, first),
                (rstd.col() * (g - mean_g.col() - xhat * mean_gxhat.col())).template cast<T>(), mask);
          dw = dw + dyv * xhat;
          db = db + dyv;
        });
        // Partials: dW rows [0, P), dB rows [P, 2P).
        auto part = partials + program_id(0).template cast<i64>() * n_cols + cols;
        store(part, sum(dw, 0), cmask);
        store(part + num_programs(0).template cast<i64>() * n_cols, sum(db, 0), cmask);
      });
  return k;
}

// Long rows, ROWS rows per step: pass 1 accumulates the row sums over the rows' chunks
// (four, or two with SAVED), pass 2 re-reads them and writes dx; dW and dB accumulate in
// this program's rows of the partials.
template <class T>
const auto& layernorm_bwd_looped_kernel() {
  static auto k = kernel(std::string("layernorm_bwd_looped_") + name(dtype_v<T>),
      {"dx", "partials", "dy", "x", "weight", "mean_in", "rstd_in", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> partials, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight,
         Ptr<const float> mean_in, Ptr<const float> rstd_in, I32 n_rows, I32 n_cols, I64 stride, F32 eps,
         Meta<"BLOCK"> BLOCK, Meta<"ROWS", int, 1> ROWS, Meta<"SAVED", bool, false> SAVED) {
        auto cols = arange(0, BLOCK);
        auto lanes = arange(0, ROWS);
        auto part_w = partials + program_id(0).template cast<i64>() * n_cols;
        auto part_b = part_w + num_programs(0).template cast<i64>() * n_cols;
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          store(part_w + c, zeros<f32>({BLOCK}), c < n_cols);
          store(part_b + c, zeros<f32>({BLOCK}), c < n_cols);
        });
        for_range(program_id(0) * ROWS, n_rows, num_programs(0) * ROWS, [&](I32 first) {
          auto rows = first + lanes;
          auto rmask = rows < n_rows;
          auto starts = rows.template cast<i64>() * stride;
          auto base = starts.col();
          // Pass 1: f(x, g = dy * w, mask) for each chunk of the rows (x and dy kept in L2
          // for pass 2).
          auto over_chunks = [&](auto&& f) {
            for_range(0, n_cols, BLOCK, [&](I32 start) {
              auto c = start + cols;
              auto cmask = c < n_cols;
              auto mask = rmask.col() && cmask.row();
              auto xv = load(x + base + c.row(), mask, 0.0f, Cache::EvictLast).template cast<f32>();
              auto g = load(dy + base + c.row(), mask, 0.0f, Cache::EvictLast).template cast<f32>() *
                       load(weight + c, cmask, 0.0f).template cast<f32>().row();
              f(xv, g, mask);
            });
          };
          Tile<float, 2> mean, r, mg, mean_gxhat;
          if (SAVED) {
            mean = load(mean_in + rows, rmask, 0.0f).col();
            r = load(rstd_in + rows, rmask, 0.0f).col();
            auto acc_g = zeros<f32>({ROWS, BLOCK});
            auto acc_gxhat = zeros<f32>({ROWS, BLOCK});
            over_chunks([&](auto xv, auto g, auto) {  // g is 0 where masked
              acc_g = acc_g + g;
              acc_gxhat = acc_gxhat + g * ((xv - mean) * r);
            });
            mg = (sum(acc_g, 1) / n_cols).col();
            mean_gxhat = (sum(acc_gxhat, 1) / n_cols).col();
          } else {
            auto shift = load(x + starts, rmask, 0.0f).template cast<f32>().col();
            auto acc_d = zeros<f32>({ROWS, BLOCK});
            auto acc_dd = zeros<f32>({ROWS, BLOCK});
            auto acc_g = zeros<f32>({ROWS, BLOCK});
            auto acc_gd = zeros<f32>({ROWS, BLOCK});
            over_chunks([&](auto xv, auto g, auto mask) {
              auto d = where(mask, xv - shift, 0.0f);
              acc_d = acc_d + d;
              acc_dd = acc_dd + d * d;
              acc_g = acc_g + g;
              acc_gd = acc_gd + g * d;
            });
            auto mean_d = sum(acc_d, 1) / n_cols;
            auto mean_g = sum(acc_g, 1) / n_cols;
            auto rstd = rsqrt(maximum(sum(acc_dd, 1) / n_cols - mean_d * mean_d, 0.0f) + eps);
            mean_gxhat = (rstd * (sum(acc_gd, 1) / n_cols - mean_d * mean_g)).col();
            mean = shift + mean_d.col();
            r = rstd.col();
            mg = mean_g.col();
          }
          for_range(0, n_cols, BLOCK, [&](I32 start) {
            auto c = start + cols;
            auto cmask = c < n_cols;
            auto mask = rmask.col() && cmask.row();
            auto offs = base + c.row();
            // The partial sums first: their loads' latency overlaps the row's.
            auto pw = load(part_w + c, cmask, 0.0f), pb = load(part_b + c, cmask, 0.0f);
            auto xhat = (load(x + offs, mask, 0.0f, Cache::EvictFirst).template cast<f32>() - mean) * r;
            auto dyv = load(dy + offs, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
            auto g = dyv * load(weight + c, cmask, 0.0f).template cast<f32>().row();
            store(dx + offs, (r * (g - mg - xhat * mean_gxhat)).template cast<T>(), mask);
            store(part_w + c, pw + sum(dyv * xhat, 0), cmask);
            store(part_b + c, pb + sum(dyv, 0), cmask);
          });
        });
      });
  return k;
}

namespace detail {
// The launch of either form; `saved`: mean/rstd hold the forward's statistics, else they
// are unused_f32_buffer()s and the kernels recompute them from x.
template <class DX, class DW, class DB, class DY, class X, class W, class M, class R>
void layernorm_backward_launch(DX& dx, DW& dw, DB& db, const DY& dy, const X& x, const W& w, const M& mean,
                               const R& rstd, bool saved, int64_t rows, int64_t cols, float eps, ConfigOverride cfg) {
  using T = buffer_elem_t<DX>;
  static_assert(std::is_same_v<T, buffer_elem_t<DY>> && std::is_same_v<T, buffer_elem_t<X>> &&
                    std::is_same_v<T, buffer_elem_t<W>> && std::is_same_v<T, buffer_elem_t<DW>> &&
                    std::is_same_v<T, buffer_elem_t<DB>>,
                "layernorm_backward: every buffer must have the same dtype");
  const char* fn = "layernorm_backward";
  check_norm_shape(fn, rows, cols);
  std::string mn = "rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols);
  check_norm_arg(fn, "dx", dx, rows * cols, mn.c_str());
  check_norm_arg(fn, "dy", dy, rows * cols, mn.c_str());
  check_norm_arg(fn, "x", x, rows * cols, mn.c_str());
  std::string n = "cols = " + std::to_string(cols);
  check_norm_arg(fn, "weight", w, cols, n.c_str());
  check_norm_arg(fn, "dw", dw, cols, n.c_str());
  check_norm_arg(fn, "db", db, cols, n.c_str());
  if (saved) {
    std::string r = "rows = " + std::to_string(rows);
    check_norm_arg(fn, "mean", mean, rows, r.c_str());
    check_norm_arg(fn, "rstd", rstd, rows, r.c_str());
  }
  bool share = rows_need_alignment(dtype_v<T>, {row_buffer(x, cols), row_buffer(dy, cols), row_buffer(dx, cols)});
  auto kind = saved ? NormBackwardKind::layer_saved : NormBackwardKind::layer;
  Config c = cfg ? *cfg : norm_backward_config(cols, dtype_v<T>, kind, clusters_usable<DX>(), share);
  check_row_cover(c, cols, fn);
  set_norm_backward_align(c, share, cols, dtype_v<T>, kind);
  int64_t programs =
      norm_backward_cluster_programs(c) ? persistent_clusters<DX>(c, rows) : norm_backward_programs<DX>(c, rows);
  const int64_t period = alignment_period(c);
  c.meta.erase("PROGRAMS_PER_SM");
  c.meta.erase("ALIGN_PERIOD");
  if (norm_backward_cluster_programs(c) || row_uses_loop(c, cols)) c.meta.erase("PREFETCH");  // one-tile programs only
  if (norm_backward_cluster_programs(c)) c.meta.erase("ROWS");                               // one row per cluster step
  else c.meta.erase("TAIL");                                                                 // (TAIL=0)
  if (saved) c.set("SAVED", 1);
  else c.meta.erase("SAVED");  // a config asking for them would read unused buffers
  if (!saved || !norm_backward_cluster_programs(c)) c.meta.erase("STATS_AHEAD");  // the cluster programs' choice
  // Rows for the partials: aligned_cluster_count may raise the clusters to the period.
  auto partials = norm_backward_scratch<DX>(2 * std::max(programs, std::min(rows, period)) * cols);
  if (norm_backward_cluster_programs(c)) {
    const auto& k = layernorm_bwd_cluster_kernel<T>();
    programs =
        within_resident(programs, k.resident_clusters(c, dx, partials, dy, x, w, mean, rstd, rows, cols, cols, eps));
    programs = aligned_cluster_count(programs, rows, period);
    k.launch(Grid(programs * c.cluster), c, dx, partials, dy, x, w, mean, rstd, rows, cols, cols, eps);
  } else if (row_uses_loop(c, cols))
    layernorm_bwd_looped_kernel<T>().launch(Grid(programs), c, dx, partials, dy, x, w, mean, rstd, rows, cols, cols,
                                            eps);
  else
    layernorm_bwd_row_kernel<T>().launch(Grid(programs), c, dx, partials, dy, x, w, mean, rstd, rows, cols, cols,
                                         eps);
  reduce_norm_partials(dw, db, partials, programs, cols, true);
}
}  // namespace detail

// layernorm_backward(dx, dw, db, dy, x, w, rows, cols, eps): gradients of
// layernorm(x, w, b) for the upstream gradient dy (the bias itself is not needed);
// rows of `cols` contiguous elements; each row's mean and rstd recomputed from x.
// cfg: as rmsnorm_backward.
template <class DX, class DW, class DB, class DY, class X, class W>
void layernorm_backward(DX&& dx, DW&& dw, DB&& db, const DY& dy, const X& x, const W& w, int64_t rows, int64_t cols,
                        float eps = 1e-5f, ConfigOverride cfg = {}) {
  auto none = unused_f32_buffer<DX>();
  detail::layernorm_backward_launch(dx, dw, db, dy, x, w, none, none, false, rows, cols, eps, cfg);
}

// layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, rows, cols): the same from the
// mean and rstd the forward saved (layernorm(out, mean, rstd, ...); f32, one per row):
// two row sums instead of four, x read once per row as before.
template <class DX, class DW, class DB, class DY, class X, class W, class M, class R>
  requires(!std::is_arithmetic_v<std::remove_cvref_t<M>>)
void layernorm_backward(DX&& dx, DW&& dw, DB&& db, const DY& dy, const X& x, const W& w, const M& mean,
                        const R& rstd, int64_t rows, int64_t cols, ConfigOverride cfg = {}) {
  static_assert(std::is_same_v<buffer_elem_t<M>, float> && std::is_same_v<buffer_elem_t<R>, float>,
                "layernorm_backward: mean and rstd are the f32 buffers the forward wrote");
  detail::layernorm_backward_launch(dx, dw, db, dy, x, w, mean, rstd, true, rows, cols, 0.0f, cfg);
}

}  // namespace tilefuse::kernels
