#pragma once
// LayerNorm backward, f32 math. For y = xhat * w + b with xhat = (x - mean) * rstd and
// g = dy * w:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  dw = sum_rows dy * xhat,  db = sum_rows dy.
// mean and rstd are recomputed from x. With d = x - x[0] (the shift keeps the sums stable
// when |mean| >> std), all four row sums -- d, d^2, g, g*d -- are independent, so they
// share one exchange between warps: mean(g * xhat) = rstd * (E[g d] - E[d] E[g]).
#include <string>

#include "tilefuse/kernels/norm_backward_cluster.hpp"
#include "tilefuse/kernels/norm_backward_common.hpp"

namespace tilefuse::kernels {

// Persistent programs, the whole row in one tile, ROWS rows per step as a [ROWS, BLOCK]
// tile; dW and dB accumulate in registers. PREFETCH: as in rmsnorm_bwd_row_kernel.
template <class T>
const auto& layernorm_bwd_row_kernel() {
  static auto k = kernel(std::string("layernorm_bwd_") + name(dtype_v<T>),
      {"dx", "partials", "dy", "x", "weight", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> partials, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight, I32 n_rows,
         I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"ROWS", int, 1> ROWS,
         Meta<"PREFETCH", bool, false> PREFETCH) {
        auto cols = arange(0, BLOCK);
        auto cmask = cols < n_cols;
        auto lanes = arange(0, ROWS);
        auto starts = [&](I32 first) { return (first + lanes).template cast<i64>() * stride; };
        auto in_rows = [&](I32 first) { return (first + lanes < n_rows).col() && cmask.row(); };
        auto read = [&](Ptr<const T> p, I32 first) {
          return load(p + (starts(first).col() + cols.row()), in_rows(first), 0.0f, Cache::EvictFirst);
        };
        auto read_shift = [&](I32 first) { return load(x + starts(first), first + lanes < n_rows, 0.0f); };
        I32 first0 = program_id(0) * ROWS, step = num_programs(0) * ROWS;
        auto next_x = read(x, first0), next_dy = read(dy, first0);
        auto next_shift = read_shift(first0);
        auto w = load(weight + cols, cmask, 0.0f).template cast<f32>().row();
        auto dw = zeros<f32>({ROWS, BLOCK});
        auto db = zeros<f32>({ROWS, BLOCK});
        for_range(first0, n_rows, step, [&](I32 first) {
          auto xt = next_x, dyt = next_dy, st = next_shift;
          if (PREFETCH) {
            next_x = read(x, first + step);
            next_dy = read(dy, first + step);
            next_shift = read_shift(first + step);
          } else {
            xt = read(x, first);
            dyt = read(dy, first);
            st = read_shift(first);
          }
          auto mask = in_rows(first);
          auto xv = xt.template cast<f32>(), dyv = dyt.template cast<f32>();
          auto d = where(mask, xv - st.template cast<f32>().col(), 0.0f);
          auto g = dyv * w;
          auto mean_d = sum(d, 1) / n_cols;
          auto mean_dd = sum(d * d, 1) / n_cols;
          auto mean_g = sum(g, 1) / n_cols;
          auto mean_gd = sum(g * d, 1) / n_cols;
          auto rstd = rsqrt(maximum(mean_dd - mean_d * mean_d, 0.0f) + eps);
          auto mean_gxhat = rstd * (mean_gd - mean_d * mean_g);
          auto xhat = (d - mean_d.col()) * rstd.col();
          store(dx + (starts(first).col() + cols.row()),
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

// Long rows, ROWS rows per step: pass 1 accumulates the four sums over the rows' chunks,
// pass 2 re-reads them and writes dx; dW and dB accumulate in this program's rows of the
// partials.
template <class T>
const auto& layernorm_bwd_looped_kernel() {
  static auto k = kernel(std::string("layernorm_bwd_looped_") + name(dtype_v<T>),
      {"dx", "partials", "dy", "x", "weight", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> partials, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight, I32 n_rows,
         I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"ROWS", int, 1> ROWS) {
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
          auto shift = load(x + starts, rmask, 0.0f).template cast<f32>().col();
          auto acc_d = zeros<f32>({ROWS, BLOCK});
          auto acc_dd = zeros<f32>({ROWS, BLOCK});
          auto acc_g = zeros<f32>({ROWS, BLOCK});
          auto acc_gd = zeros<f32>({ROWS, BLOCK});
          for_range(0, n_cols, BLOCK, [&](I32 start) {
            auto c = start + cols;
            auto cmask = c < n_cols;
            auto mask = rmask.col() && cmask.row();
            auto xv = load(x + base + c.row(), mask, 0.0f, Cache::EvictLast).template cast<f32>();
            auto g = load(dy + base + c.row(), mask, 0.0f, Cache::EvictLast).template cast<f32>() *
                     load(weight + c, cmask, 0.0f).template cast<f32>().row();
            auto d = where(mask, xv - shift, 0.0f);
            acc_d = acc_d + d;
            acc_dd = acc_dd + d * d;
            acc_g = acc_g + g;
            acc_gd = acc_gd + g * d;
          });
          auto mean_d = sum(acc_d, 1) / n_cols;
          auto mean_g = sum(acc_g, 1) / n_cols;
          auto rstd = rsqrt(maximum(sum(acc_dd, 1) / n_cols - mean_d * mean_d, 0.0f) + eps);
          auto mean_gxhat = (rstd * (sum(acc_gd, 1) / n_cols - mean_d * mean_g)).col();
          auto mean = shift + mean_d.col();
          auto r = rstd.col();
          auto mg = mean_g.col();
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

// layernorm_backward(dx, dw, db, dy, x, w, rows, cols, eps): gradients of
// layernorm(x, w, b) for the upstream gradient dy (the bias itself is not needed);
// rows of `cols` contiguous elements. cfg: as rmsnorm_backward.
template <class DX, class DW, class DB, class DY, class X, class W>
void layernorm_backward(DX&& dx, DW&& dw, DB&& db, const DY& dy, const X& x, const W& w, int64_t rows, int64_t cols,
                        float eps = 1e-5f, ConfigOverride cfg = {}) {
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
  Config c = cfg ? *cfg : norm_backward_heuristic(cols, dtype_v<T>, NormBackwardKind::layer, clusters_usable<DX>());
  check_row_cover(c, cols, fn);
  int64_t programs = c.cluster > 1 ? persistent_clusters<DX>(c, rows) : norm_backward_programs<DX>(c, rows);
  c.meta.erase("PROGRAMS_PER_SM");
  if (c.cluster > 1 || row_uses_loop(c, cols)) c.meta.erase("PREFETCH");  // one-tile programs only
  if (c.cluster > 1) c.meta.erase("ROWS");                                  // one row per cluster step
  auto partials = norm_backward_scratch<DX>(2 * programs * cols);
  if (c.cluster > 1)
    layernorm_bwd_cluster_kernel<T>().launch(Grid(programs * c.cluster), c, dx, partials, dy, x, w, rows, cols, cols,
                                             eps);
  else if (row_uses_loop(c, cols))
    layernorm_bwd_looped_kernel<T>().launch(Grid(programs), c, dx, partials, dy, x, w, rows, cols, cols, eps);
  else
    layernorm_bwd_row_kernel<T>().launch(Grid(programs), c, dx, partials, dy, x, w, rows, cols, cols, eps);
  reduce_norm_partials(dw, db, partials, programs, cols, true);
}

}  // namespace tilefuse::kernels
