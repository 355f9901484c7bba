// Row kernels: softmax, RMSNorm (with and without a residual), LayerNorm and the fused
// log(relu(x + b)). Each normalizes or transforms rows of the last dimension.
#include <nanobind/stl/optional.h>

#include "bind_util.hpp"
#include "tilefuse/kernels/tuned.hpp"

namespace tilefuse::python {

namespace {

void softmax(Output out_a, Input x_a, uintptr_t stream) {
  TensorView out = view(out_a), x = view(x_a);
  bool device = same_side({&x, &out}, {"x", "out"});
  expect_shape(out, x.shape, "out");
  RowsCols rc = rows_cols(x, "x");
  if (rc.empty()) return;
  run_float(x.dtype, "softmax", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    kernels::tuned_softmax(buffer<T>(side, out, "out"), buffer<const T>(side, x, "x"), rc.rows, rc.cols);
  });
}

void rmsnorm(Output out_a, Input x_a, Input w_a, float eps, uintptr_t stream) {
  TensorView out = view(out_a), x = view(x_a), w = view(w_a);
  bool device = same_side({&x, &out, &w}, {"x", "out", "weight"});
  expect_shape(out, x.shape, "out");
  RowsCols rc = rows_cols(x, "x");
  expect_shape(w, {rc.cols}, "weight");
  if (rc.empty()) return;
  run_float(x.dtype, "rmsnorm", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    kernels::tuned_rmsnorm(buffer<T>(side, out, "out"), buffer<const T>(side, x, "x"),
                           buffer<const T>(side, w, "weight"), rc.rows, rc.cols, eps);
  });
}

void add_rmsnorm(Output out_a, Output res_out_a, Input x_a, Input res_a,
                 Input w_a, float eps, uintptr_t stream) {
  TensorView out = view(out_a), res_out = view(res_out_a), x = view(x_a), res = view(res_a), w = view(w_a);
  bool device = same_side({&x, &out, &res_out, &res, &w}, {"x", "out", "residual_out", "residual", "weight"});
  expect_shape(out, x.shape, "out");
  expect_shape(res_out, x.shape, "residual_out");
  expect_shape(res, x.shape, "residual");
  RowsCols rc = rows_cols(x, "x");
  expect_shape(w, {rc.cols}, "weight");
  if (rc.empty()) return;
  run_float(x.dtype, "rmsnorm", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    kernels::add_rmsnorm(buffer<T>(side, out, "out"), buffer<T>(side, res_out, "residual_out"),
                         buffer<const T>(side, x, "x"), buffer<const T>(side, res, "residual"),
                         buffer<const T>(side, w, "weight"), rc.rows, rc.cols, eps);
  });
}

// With mean and rstd (float32, x's shape without its last dimension) the forward also
// writes each row's statistics for layernorm_backward.
void layernorm(Output out_a, Input x_a, Input w_a, Input b_a, std::optional<Output> mean_a,
               std::optional<Output> rstd_a, float eps, uintptr_t stream) {
  TensorView out = view(out_a), x = view(x_a), w = view(w_a), b = view(b_a);
  if (mean_a.has_value() != rstd_a.has_value())
    user_error("layernorm: mean and rstd go together", SourceLoc{}, "Pass both (or neither)");
  std::optional<TensorView> mean, rstd;
  if (mean_a) mean = view(*mean_a), rstd = view(*rstd_a);
  bool device = mean ? same_side({&x, &out, &w, &b, &*mean, &*rstd}, {"x", "out", "weight", "bias", "mean", "rstd"})
                     : same_side({&x, &out, &w, &b}, {"x", "out", "weight", "bias"});
  expect_shape(out, x.shape, "out");
  RowsCols rc = rows_cols(x, "x");
  expect_shape(w, {rc.cols}, "weight");
  expect_shape(b, {rc.cols}, "bias");
  if (mean) {
    std::vector<int64_t> row_shape(x.shape.begin(), x.shape.end() - 1);
    expect_shape(*mean, row_shape, "mean");
    expect_shape(*rstd, row_shape, "rstd");
  }
  if (rc.empty()) return;
  run_float(x.dtype, "layernorm", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    auto o = buffer<T>(side, out, "out");
    auto xb = buffer<const T>(side, x, "x");
    auto wb = buffer<const T>(side, w, "weight");
    auto bb = buffer<const T>(side, b, "bias");
    if (mean)
      kernels::tuned_layernorm(o, buffer<float>(side, *mean, "mean"), buffer<float>(side, *rstd, "rstd"), xb, wb, bb,
                               rc.rows, rc.cols, eps);
    else kernels::tuned_layernorm(o, xb, wb, bb, rc.rows, rc.cols, eps);
  });
}

void bias_relu_log(Output out_a, Input x_a, Input b_a, uintptr_t stream) {
  TensorView out = view(out_a), x = view(x_a), b = view(b_a);
  bool device = same_side({&x, &out, &b}, {"x", "out", "bias"});
  expect_shape(out, x.shape, "out");
  RowsCols rc = rows_cols(x, "x");
  expect_shape(b, {rc.cols}, "bias");
  if (rc.empty()) return;
  run_float(x.dtype, "bias_relu_log", device, stream, [&]<class T>(auto side, std::type_identity<T>) {
    kernels::tuned_bias_relu_log(buffer<T>(side, out, "out"), buffer<const T>(side, x, "x"),
                                 buffer<const T>(side, b, "bias"), rc.rows, rc.cols);
  });
}

}  // namespace

void bind_rows(nb::module_& m) {
  using namespace nb::literals;
  m.def("softmax", &softmax, "out"_a, "x"_a, "stream"_a);
  m.def("rmsnorm", &rmsnorm, "out"_a, "x"_a, "weight"_a, "eps"_a, "stream"_a);
  m.def("add_rmsnorm", &add_rmsnorm, "out"_a, "residual_out"_a, "x"_a, "residual"_a, "weight"_a, "eps"_a,
        "stream"_a);
  m.def("layernorm", &layernorm, "out"_a, "x"_a, "weight"_a, "bias"_a, "mean"_a.none(), "rstd"_a.none(), "eps"_a,
        "stream"_a);
  m.def("bias_relu_log", &bias_relu_log, "out"_a, "x"_a, "bias"_a, "stream"_a);
}

}  // namespace tilefuse::python
