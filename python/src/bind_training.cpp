// Training kernels: the fused cross-entropy (loss and dlogits in one pass), the
// backward passes of softmax, RMSNorm (+ residual) and LayerNorm, and SwiGLU forward and
// backward in both layouts (a and b apart, or packed as [..., 2N] rows of [gate, up]).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "bind_util.hpp"
#include "tilefuse/kernels/tuned.hpp"

namespace tilefuse::python {

namespace {

kernels::LossReduction parse_reduction(const std::string& s) {
  if (s == "none") return kernels::LossReduction::none;
  if (s == "sum") return kernels::LossReduction::sum;
  if (s == "mean") return kernels::LossReduction::mean;
  user_error("cross_entropy: unknown reduction '" + s + "'", SourceLoc{}, "Use none, sum or mean");
}

// Calls f(std::type_identity<TI>{}) for the integer type of the targets.
template <class F>
void dispatch_targets(const TensorView& targets, F&& f) {
  if (targets.dtype == DType::i64) return f(std::type_identity<int64_t>{});
  if (targets.dtype == DType::i32) return f(std::type_identity<int32_t>{});
  user_error(std::string("cross_entropy: targets has dtype ") + name(targets.dtype) + ", expected i64 or i32", SourceLoc{},
             "Pass the class indices as int64 (or int32)");
}

void cross_entropy(Output loss_a, Output dlogits_a, Input logits_a, Input targets_a, int64_t ignore_index,
                   float label_smoothing, float z_loss, const std::string& reduction, float grad_scale,
                   uintptr_t stream) {
  TensorView loss = view(loss_a), dlogits = view(dlogits_a), logits = view(logits_a), targets = view(targets_a);
  bool device = same_side({&logits, &targets, &loss, &dlogits}, {"logits", "targets", "loss", "dlogits"});
  kernels::CrossEntropyOptions o;
  o.ignore_index = ignore_index;
  o.label_smoothing = label_smoothing;
  o.z_loss = z_loss;
  o.reduction = parse_reduction(reduction);
  o.grad_scale = grad_scale;
  RowsCols rc = rows_cols(logits, "logits");
  std::vector<int64_t> row_shape(logits.shape.begin(), logits.shape.end() - 1);
  expect_shape(targets, row_shape, "targets");
  expect_shape(dlogits, logits.shape, "dlogits");
  if (o.reduction == kernels::LossReduction::none) expect_shape(loss, row_shape, "loss");
  else if (loss.numel() != 1)
    user_error("cross_entropy: loss is " + loss.describe() + "; reduction " + reduction + " writes one value",
               SourceLoc{}, "Pass a float32 loss of shape [] (or [1])");
  int64_t M = rc.cols == 0 ? targets.numel() : rc.rows;
  if (M == 0) return;  // the package fills a reduced loss of no rows
  if (rc.cols == 0)
    user_error("cross_entropy: logits is " + logits.describe() + "; expected at least one class", SourceLoc{},
               "Pass logits [..., V] with V >= 1");
  dispatch_float(logits.dtype, "cross_entropy", [&]<class T>(std::type_identity<T>) {
    dispatch_targets(targets, [&]<class TI>(std::type_identity<TI>) {
      KernelCall call(stream);
      on_side(device, [&](auto side) {
        kernels::tuned_cross_entropy(buffer<float>(side, loss, "loss"), buffer<T>(side, dlogits, "dlogits"),
                                     buffer<const T>(side, logits, "logits"), buffer<const TI>(side, targets, "targets"),
                                     M, rc.cols, o);
      });
    });
  });
}

void softmax_backward(Output dx_a, Input dy_a, Input y_a, uintptr_t stream) {
  TensorView dx = view(dx_a), dy = view(dy_a), y = view(y_a);
  bool device = same_side({&dy, &y, &dx}, {"dy", "y", "dx"});
  expect_shape(y, dy.shape, "y");
  expect_shape(dx, dy.shape, "dx");
  RowsCols rc = rows_cols(dy, "dy");
  if (rc.empty()) return;
  run_float(dy.dtype, "softmax_backward", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    kernels::tuned_softmax_backward(buffer<T>(side, dx, "dx"), buffer<const T>(side, dy, "dy"),
                                    buffer<const T>(side, y, "y"), rc.rows, rc.cols);
  });
}

// rmsnorm_backward and add_rmsnorm_backward: `dres` is the gradient reaching the residual
// output (residual_out of rmsnorm(..., residual=)), absent for the plain norm.
void rmsnorm_backward(Output dx_a, Output dw_a, Input dy_a, std::optional<Input> dres_a, Input x_a, Input w_a,
                      float eps, uintptr_t stream) {
  TensorView dx = view(dx_a), dw = view(dw_a), dy = view(dy_a), x = view(x_a), w = view(w_a);
  TensorView dres = dres_a ? view(*dres_a) : dy;
  const char* x_name = dres_a ? "residual_out" : "x";
  bool device = same_side({&dy, &x, &w, &dres, &dx, &dw}, {"dy", x_name, "weight", "dresidual_out", "dx", "dweight"});
  expect_shape(x, dy.shape, x_name);
  expect_shape(dres, dy.shape, "dresidual_out");
  expect_shape(dx, dy.shape, "dx");
  RowsCols rc = rows_cols(dy, "dy");
  expect_shape(w, {rc.cols}, "weight");
  expect_shape(dw, {rc.cols}, "dweight");
  if (rc.empty()) return;  // the package zeroes dweight when there are no rows
  run_float(dy.dtype, "rmsnorm_backward", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    auto dxb = buffer<T>(side, dx, "dx");
    auto dwb = buffer<T>(side, dw, "dweight");
    auto dyb = buffer<const T>(side, dy, "dy");
    auto xb = buffer<const T>(side, x, x_name);
    auto wb = buffer<const T>(side, w, "weight");
    if (dres_a)
      kernels::tuned_add_rmsnorm_backward(dxb, dwb, dyb, buffer<const T>(side, dres, "dresidual_out"), xb, wb,
                                          rc.rows, rc.cols, eps);
    else kernels::tuned_rmsnorm_backward(dxb, dwb, dyb, xb, wb, rc.rows, rc.cols, eps);
  });
}

// With mean and rstd (the forward's, float32) the row statistics are read, not recomputed.
void layernorm_backward(Output dx_a, Output dw_a, Output db_a, Input dy_a, Input x_a, Input w_a,
                        std::optional<Input> mean_a, std::optional<Input> rstd_a, float eps, uintptr_t stream) {
  TensorView dx = view(dx_a), dw = view(dw_a), db = view(db_a), dy = view(dy_a), x = view(x_a), w = view(w_a);
  if (mean_a.has_value() != rstd_a.has_value())
    user_error("layernorm_backward: mean and rstd go together", SourceLoc{},
               "Pass both (as the forward wrote them) or neither");
  std::optional<TensorView> mean, rstd;
  if (mean_a) mean = view(*mean_a), rstd = view(*rstd_a);
  bool device = mean ? same_side({&dy, &x, &w, &dx, &dw, &db, &*mean, &*rstd},
                                 {"dy", "x", "weight", "dx", "dweight", "dbias", "mean", "rstd"})
                     : same_side({&dy, &x, &w, &dx, &dw, &db}, {"dy", "x", "weight", "dx", "dweight", "dbias"});
  expect_shape(x, dy.shape, "x");
  expect_shape(dx, dy.shape, "dx");
  RowsCols rc = rows_cols(dy, "dy");
  expect_shape(w, {rc.cols}, "weight");
  expect_shape(dw, {rc.cols}, "dweight");
  expect_shape(db, {rc.cols}, "dbias");
  if (mean) {
    std::vector<int64_t> row_shape(dy.shape.begin(), dy.shape.end() - 1);
    expect_shape(*mean, row_shape, "mean");
    expect_shape(*rstd, row_shape, "rstd");
  }
  if (rc.empty()) return;
  run_float(dy.dtype, "layernorm_backward", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    auto dxb = buffer<T>(side, dx, "dx");
    auto dwb = buffer<T>(side, dw, "dweight");
    auto dbb = buffer<T>(side, db, "dbias");
    auto dyb = buffer<const T>(side, dy, "dy");
    auto xb = buffer<const T>(side, x, "x");
    auto wb = buffer<const T>(side, w, "weight");
    if (mean)
      kernels::tuned_layernorm_backward(dxb, dwb, dbb, dyb, xb, wb, buffer<const float>(side, *mean, "mean"),
                                        buffer<const float>(side, *rstd, "rstd"), rc.rows, rc.cols);
    else kernels::tuned_layernorm_backward(dxb, dwb, dbb, dyb, xb, wb, rc.rows, rc.cols, eps);
  });
}

// The packed layout's N: half of ab's last dimension, which must be even.
RowsCols packed_rows_cols(const TensorView& ab, const char* fn) {
  RowsCols rc = rows_cols(ab, "ab");
  if (rc.cols % 2 != 0)
    user_error(std::string(fn) + ": ab is " + ab.describe() + "; its last dimension must be even ([..., 2N]: gate, up)",
               SourceLoc{}, "Pass ab with rows [gate (N), up (N)], or a and b apart");
  rc.cols /= 2;
  return rc;
}

std::vector<int64_t> with_last(std::vector<int64_t> shape, int64_t last) {
  shape.back() = last;
  return shape;
}

void swiglu(Output y_a, Input a_a, Input b_a, uintptr_t stream) {
  TensorView y = view(y_a), a = view(a_a), b = view(b_a);
  bool device = same_side({&a, &b, &y}, {"a", "b", "out"});
  expect_shape(b, a.shape, "b");
  expect_shape(y, a.shape, "out");
  RowsCols rc = rows_cols(a, "a");
  if (rc.empty()) return;
  run_float(a.dtype, "swiglu", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    kernels::tuned_swiglu(buffer<T>(side, y, "out"), buffer<const T>(side, a, "a"), buffer<const T>(side, b, "b"),
                          rc.rows, rc.cols);
  });
}

void swiglu_packed(Output y_a, Input ab_a, uintptr_t stream) {
  TensorView y = view(y_a), ab = view(ab_a);
  bool device = same_side({&ab, &y}, {"ab", "out"});
  RowsCols rc = packed_rows_cols(ab, "swiglu");
  expect_shape(y, with_last(ab.shape, rc.cols), "out");
  if (rc.empty()) return;
  run_float(ab.dtype, "swiglu", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    kernels::tuned_swiglu_packed(buffer<T>(side, y, "out"), buffer<const T>(side, ab, "ab"), rc.rows, rc.cols);
  });
}

void swiglu_backward(Output da_a, Output db_a, Input dy_a, Input a_a, Input b_a, uintptr_t stream) {
  TensorView da = view(da_a), db = view(db_a), dy = view(dy_a), a = view(a_a), b = view(b_a);
  bool device = same_side({&dy, &a, &b, &da, &db}, {"dy", "a", "b", "da", "db"});
  expect_shape(a, dy.shape, "a");
  expect_shape(b, dy.shape, "b");
  expect_shape(da, dy.shape, "da");
  expect_shape(db, dy.shape, "db");
  RowsCols rc = rows_cols(dy, "dy");
  if (rc.empty()) return;
  run_float(dy.dtype, "swiglu_backward", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    kernels::tuned_swiglu_backward(buffer<T>(side, da, "da"), buffer<T>(side, db, "db"),
                                   buffer<const T>(side, dy, "dy"), buffer<const T>(side, a, "a"),
                                   buffer<const T>(side, b, "b"), rc.rows, rc.cols);
  });
}

void swiglu_backward_packed(Output dab_a, Input dy_a, Input ab_a, uintptr_t stream) {
  TensorView dab = view(dab_a), dy = view(dy_a), ab = view(ab_a);
  bool device = same_side({&dy, &ab, &dab}, {"dy", "ab", "dab"});
  RowsCols rc = packed_rows_cols(ab, "swiglu_backward");
  expect_shape(dy, with_last(ab.shape, rc.cols), "dy");
  expect_shape(dab, ab.shape, "dab");
  if (rc.empty()) return;
  run_float(dy.dtype, "swiglu_backward", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    kernels::tuned_swiglu_backward_packed(buffer<T>(side, dab, "dab"), buffer<const T>(side, dy, "dy"),
                                          buffer<const T>(side, ab, "ab"), rc.rows, rc.cols);
  });
}

}  // namespace

void bind_training(nb::module_& m) {
  using namespace nb::literals;
  m.def("cross_entropy", &cross_entropy, "loss"_a, "dlogits"_a, "logits"_a, "targets"_a, "ignore_index"_a,
        "label_smoothing"_a, "z_loss"_a, "reduction"_a, "grad_scale"_a, "stream"_a);
  m.def("softmax_backward", &softmax_backward, "dx"_a, "dy"_a, "y"_a, "stream"_a);
  m.def("rmsnorm_backward", &rmsnorm_backward, "dx"_a, "dweight"_a, "dy"_a, "dresidual_out"_a.none(), "x"_a,
        "weight"_a, "eps"_a, "stream"_a);
  m.def("layernorm_backward", &layernorm_backward, "dx"_a, "dweight"_a, "dbias"_a, "dy"_a, "x"_a, "weight"_a,
        "mean"_a.none(), "rstd"_a.none(), "eps"_a, "stream"_a);
  m.def("swiglu", &swiglu, "out"_a, "a"_a, "b"_a, "stream"_a);
  m.def("swiglu_packed", &swiglu_packed, "out"_a, "ab"_a, "stream"_a);
  m.def("swiglu_backward", &swiglu_backward, "da"_a, "db"_a, "dy"_a, "a"_a, "b"_a, "stream"_a);
  m.def("swiglu_backward_packed", &swiglu_backward_packed, "dab"_a, "dy"_a, "ab"_a, "stream"_a);
}

}  // namespace tilefuse::python
