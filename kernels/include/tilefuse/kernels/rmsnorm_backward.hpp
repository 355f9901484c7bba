#pragma once
// RMSNorm backward (optionally of the fused residual add), f32 math. For
// y = x * rstd * w with rstd = rsqrt(mean(x^2) + eps) and g = dy * w:
//   dx = rstd * (g - x * rstd^2 * mean(g * x)),   dw = sum over rows of dy * x * rstd.
// rstd is recomputed from x (read anyway), so the forward stores nothing extra. With
// RESIDUAL, x is h = x + res of add_rmsnorm and dres (the gradient arriving through the
// residual stream) is added: dh = dx + dres, the gradient of both x and res.
#include <string>

#include "tilefuse/kernels/norm_backward_cluster.hpp"
#include "tilefuse/kernels/norm_backward_common.hpp"

namespace tilefuse::kernels {

// Persistent programs, the whole row in one tile, ROWS rows per step as a [ROWS, BLOCK]
// tile; dW accumulates in registers ([ROWS, BLOCK], summed over the rows once at the end).
// PREFETCH: each step loads the next step's rows before its own reductions, so a program
// keeps its next reads in flight while it computes and stores (persistent programs do
// not get that overlap from other resident programs alone). ALIGN_ROWS (ROWS = 1): rows
// indexed from their 16-byte-aligned start (NormRowColumns).
template <class T>
const auto& rmsnorm_bwd_row_kernel() {
  static auto k = kernel(std::string("rmsnorm_bwd_") + name(dtype_v<T>),
      {"dx", "dw_partial", "dy", "x", "weight", "dres", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> dw_partial, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight, Ptr<const T> dres,
         I32 n_rows, I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"RESIDUAL", bool> RESIDUAL,
         Meta<"ROWS", int, 1> ROWS, Meta<"PREFETCH", bool, false> PREFETCH, Meta<"ALIGN_ROWS", bool, false> ALIGN_ROWS) {
        I32 first0 = program_id(0) * ROWS, step = num_programs(0) * ROWS;
        NormRowColumns rc(BLOCK, n_cols, ALIGN_ROWS, x, first0, stride);
        const auto& cols = rc.col;
        const auto& cmask = rc.mask;
        auto lanes = arange(0, ROWS);
        auto within = (lanes.template cast<i64>() * stride).col() + rc.pos.row();
        auto at = [&](auto p, I32 first) { return rc.row_start(p, first, stride) + within; };
        auto in_rows = [&](I32 first) { return (first + lanes < n_rows).col() && cmask.row(); };
        auto read = [&](Ptr<const T> p, I32 first) {
          return rc.load_rows(at(p, first), in_rows(first), ROWS, first, n_rows, stride);
        };
        auto next_x = read(x, first0), next_dy = read(dy, first0);
        auto next_res = RESIDUAL ? read(dres, first0) : next_x;
        auto w = load(weight + cols, cmask, 0.0f).template cast<f32>().row();
        auto dw = zeros<f32>({ROWS, BLOCK});
        for_range(first0, n_rows, step, [&](I32 first) {
          auto xt = next_x, dyt = next_dy, rt = next_res;
          if (PREFETCH) {
            next_x = read(x, first + step);
            next_dy = read(dy, first + step);
            if (RESIDUAL) next_res = read(dres, first + step);
          } else {
            xt = read(x, first);
            dyt = read(dy, first);
            if (RESIDUAL) rt = read(dres, first);
          }
          auto xv = xt.template cast<f32>(), dyv = dyt.template cast<f32>();
          auto g = dyv * w;
          // Two independent reductions: one exchange between warps.
          auto rstd = rsqrt(sum(xv * xv, 1) / n_cols + eps);
          auto mean_gx = sum(g * xv, 1) / n_cols;
          auto grad = rstd.col() * g - xv * (rstd * rstd * rstd * mean_gx).col();
          if (RESIDUAL) grad = grad + rt.template cast<f32>();
          store(at(dx, first), grad.template cast<T>(), in_rows(first));
          dw = dw + dyv * xv * rstd.col();
        });
        store(dw_partial + program_id(0).template cast<i64>() * n_cols + cols, sum(dw, 0), cmask);
      });
  return k;
}

// Persistent programs over long rows, ROWS rows per step: pass 1 sums x^2 and g*x over
// the rows' chunks, pass 2 re-reads them (from L2 where it fits) and writes dx. dW
// accumulates in this program's own row of the partials (read and written by it alone,
// once per chunk per ROWS rows).
template <class T>
const auto& rmsnorm_bwd_looped_kernel() {
  static auto k = kernel(std::string("rmsnorm_bwd_looped_") + name(dtype_v<T>),
      {"dx", "dw_partial", "dy", "x", "weight", "dres", "n_rows", "n_cols", "stride", "eps"},
      [](Ptr<T> dx, Ptr<float> dw_partial, Ptr<const T> dy, Ptr<const T> x, Ptr<const T> weight, Ptr<const T> dres,
         I32 n_rows, I32 n_cols, I64 stride, F32 eps, Meta<"BLOCK"> BLOCK, Meta<"RESIDUAL", bool> RESIDUAL,
         Meta<"ROWS", int, 1> ROWS) {
        auto cols = arange(0, BLOCK);
        auto lanes = arange(0, ROWS);
        auto part = dw_partial + program_id(0).template cast<i64>() * n_cols;
        for_range(0, n_cols, BLOCK, [&](I32 start) {
          auto c = start + cols;
          store(part + c, zeros<f32>({BLOCK}), c < n_cols);
        });
        for_range(program_id(0) * ROWS, n_rows, num_programs(0) * ROWS, [&](I32 first) {
          auto rows = first + lanes;
          auto rmask = (rows < n_rows).col();
          auto base = (rows.template cast<i64>() * stride).col();
          auto acc_xx = zeros<f32>({ROWS, BLOCK});
          auto acc_gx = zeros<f32>({ROWS, BLOCK});
          for_range(0, n_cols, BLOCK, [&](I32 start) {
            auto c = start + cols;
            auto cmask = c < n_cols;
            auto mask = rmask && cmask.row();
            auto xv = load(x + base + c.row(), mask, 0.0f, Cache::EvictLast).template cast<f32>();
            auto dyv = load(dy + base + c.row(), mask, 0.0f, Cache::EvictLast).template cast<f32>();
            auto w = load(weight + c, cmask, 0.0f).template cast<f32>().row();
            acc_xx = acc_xx + xv * xv;
            acc_gx = acc_gx + dyv * w * xv;
          });
          auto rstd = rsqrt(sum(acc_xx, 1) / n_cols + eps);
          auto scale = (rstd * rstd * rstd * (sum(acc_gx, 1) / n_cols)).col();
          auto r = rstd.col();
          for_range(0, n_cols, BLOCK, [&](I32 start) {
            auto c = start + cols;
            auto cmask = c < n_cols;
            auto mask = rmask && cmask.row();
            auto offs = base + c.row();
            auto xv = load(x + offs, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
            auto dyv = load(dy + offs, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
            auto w = load(weight + c, cmask, 0.0f).template cast<f32>().row();
            auto grad = r * dyv * w - xv * scale;
            if (RESIDUAL) grad = grad + load(dres + offs, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
            store(dx + offs, grad.template cast<T>(), mask);
            store(part + c, load(part + c, cmask, 0.0f) + sum(dyv * xv * r, 0), cmask);
          });
        });
      });
  return k;
}

namespace detail {
template <class DX, class DW, class DY, class X, class W, class DR>
void rmsnorm_backward_impl(const char* fn, DX& dx, DW& dw, const DY& dy, const X& x, const W& w, const DR& dres,
                           bool residual, int64_t rows, int64_t cols, float eps, ConfigOverride cfg) {
  using T = buffer_elem_t<DX>;
  static_assert(std::is_same_v<T, buffer_elem_t<DY>> && std::is_same_v<T, buffer_elem_t<X>> &&
                    std::is_same_v<T, buffer_elem_t<W>> && std::is_same_v<T, buffer_elem_t<DW>> &&
                    std::is_same_v<T, buffer_elem_t<DR>>,
                "rmsnorm_backward: every buffer must have the same dtype");
  check_norm_shape(fn, rows, cols);
  std::string mn = "rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols);
  check_norm_arg(fn, "dx", dx, rows * cols, mn.c_str());
  check_norm_arg(fn, "dy", dy, rows * cols, mn.c_str());
  check_norm_arg(fn, "x", x, rows * cols, mn.c_str());
  if (residual) check_norm_arg(fn, "dres_out", dres, rows * cols, mn.c_str());
  std::string n = "cols = " + std::to_string(cols);
  check_norm_arg(fn, "weight", w, cols, n.c_str());
  check_norm_arg(fn, "dw", dw, cols, n.c_str());
  auto kind = residual ? NormBackwardKind::rms_residual : NormBackwardKind::rms;
  bool share = rows_need_alignment(dtype_v<T>, {row_buffer(x, cols), row_buffer(dy, cols), row_buffer(dx, cols),
                                                row_buffer(residual ? dres : x, cols)});
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
  c.set("RESIDUAL", residual);
  // Rows for the partials: aligned_cluster_count may raise the clusters to the period.
  auto partials = norm_backward_scratch<DX>(std::max(programs, std::min(rows, period)) * cols);
  if (norm_backward_cluster_programs(c)) {
    const auto& k = rmsnorm_bwd_cluster_kernel<T>();
    programs = within_resident(programs, k.resident_clusters(c, dx, partials, dy, x, w, dres, rows, cols, cols, eps));
    programs = aligned_cluster_count(programs, rows, period);
    k.launch(Grid(programs * c.cluster), c, dx, partials, dy, x, w, dres, rows, cols, cols, eps);
  } else if (row_uses_loop(c, cols))
    rmsnorm_bwd_looped_kernel<T>().launch(Grid(programs), c, dx, partials, dy, x, w, dres, rows, cols, cols, eps);
  else
    rmsnorm_bwd_row_kernel<T>().launch(Grid(programs), c, dx, partials, dy, x, w, dres, rows, cols, cols, eps);
  reduce_norm_partials(dw, dw, partials, programs, cols, false);
}
}  // namespace detail

// rmsnorm_backward(dx, dw, dy, x, w, rows, cols, eps): gradients of rmsnorm(x, w) for the
// upstream gradient dy; rows of `cols` contiguous elements. cfg: BLOCK, num_warps, ROWS
// (rows per program step) and PROGRAMS_PER_SM (persistent programs per SM; in all on the
// interpreter), PREFETCH, num_stages; or cluster(C) with BLOCK x C covering the row:
// persistent clusters, PROGRAMS_PER_SM programs per SM (norm_backward_cluster.hpp).
template <class DX, class DW, class DY, class X, class W>
void rmsnorm_backward(DX&& dx, DW&& dw, const DY& dy, const X& x, const W& w, int64_t rows, int64_t cols,
                      float eps = 1e-6f, ConfigOverride cfg = {}) {
  detail::rmsnorm_backward_impl("rmsnorm_backward", dx, dw, dy, x, w, dy, false, rows, cols, eps, cfg);
}

// Backward of add_rmsnorm: h = x + res (its res_out), y = rmsnorm(h) * w. dres_out is
// the gradient reaching res_out from later layers; dh = rmsnorm'(dy) + dres_out is the
// gradient of both x and res.
template <class DH, class DW, class DY, class DR, class H, class W>
void add_rmsnorm_backward(DH&& dh, DW&& dw, const DY& dy, const DR& dres_out, const H& h, const W& w, int64_t rows,
                          int64_t cols, float eps = 1e-6f, ConfigOverride cfg = {}) {
  detail::rmsnorm_backward_impl("add_rmsnorm_backward", dh, dw, dy, h, w, dres_out, true, rows, cols, eps, cfg);
}

}  // namespace tilefuse::kernels
