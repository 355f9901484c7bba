// GEMM: c = act(a @ b [+ bias]) for a [M, K], b [K, N] (or [N, K] with b_trans) in
// float16 / bfloat16; c has a's dtype. The 8-bit GEMM: c = act(scale_a * scale_b *
// (a @ b) [+ bias]) for 8-bit float a and b; c float32, float16 or bfloat16.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "bind_util.hpp"
#include "tilefuse/kernels/tuned.hpp"

namespace tilefuse::python {

namespace {

kernels::Activation parse_activation(const std::string& s) {
  if (s == "none") return kernels::Activation::none;
  if (s == "relu") return kernels::Activation::relu;
  if (s == "gelu_tanh") return kernels::Activation::gelu_tanh;
  if (s == "silu") return kernels::Activation::silu;
  user_error("unknown activation '" + s + "'", SourceLoc{}, "Use none, relu, gelu_tanh or silu");
}

void matmul(Output c_a, Input a_a, Input b_a, std::optional<Input> bias_a,
            bool b_trans, const std::string& activation, uintptr_t stream) {
  TensorView c = view(c_a), a = view(a_a), b = view(b_a);
  std::optional<TensorView> bias;
  if (bias_a) bias = view(*bias_a);
  bool device = bias ? same_side({&a, &b, &c, &*bias}, {"a", "b", "out", "bias"}) : same_side({&a, &b, &c}, {"a", "b", "out"});
  if (a.shape.size() != 2) user_error("matmul: a is " + a.describe() + "; expected [M, K]", SourceLoc{});
  if (b.shape.size() != 2) user_error("matmul: b is " + b.describe() + "; expected a matrix", SourceLoc{});
  int64_t M = a.shape[0], K = a.shape[1], N = b_trans ? b.shape[0] : b.shape[1];
  expect_shape(b, b_trans ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, "b");
  expect_shape(c, {M, N}, "out");
  if (bias) expect_shape(*bias, {N}, "bias");
  kernels::MatmulOptions o;
  o.b_trans = b_trans;
  o.activation = parse_activation(activation);
  if (a.dtype == DType::f32) user_error("matmul: dtype f32 is not supported", SourceLoc{}, "Use float16 or bfloat16");
  if (M == 0 || N == 0) return;
  dispatch_float(a.dtype, "matmul", [&]<class T>(std::type_identity<T>) {
    if constexpr (!std::is_same_v<T, float>) {
      KernelCall call(stream);
      on_side(device, [&](auto side) {
        auto out = buffer<T>(side, c, "out");
        auto lhs = buffer<const T>(side, a, "a");
        auto rhs = buffer<const T>(side, b, "b");
        if (bias) kernels::matmul(out, lhs, rhs, M, N, K, o, buffer<const T>(side, *bias, "bias"));
        else kernels::tuned_matmul(out, lhs, rhs, M, N, K, o);
      });
    }
  });
}

// f(std::type_identity<T>{}) for an 8-bit float dtype.
template <class F>
void dispatch_float8(DType d, const std::string& what, F&& f) {
  if (d == DType::f8e4m3) return f(std::type_identity<float8_e4m3>{});
  if (d == DType::f8e5m2) return f(std::type_identity<float8_e5m2>{});
  user_error("scaled_matmul: " + what + " is " + name(d) + "; it takes 8-bit floats", SourceLoc{},
             "Pass float8_e4m3fn or float8_e5m2 tensors (use matmul for float16/bfloat16)");
}

void scaled_matmul(Output c_a, Input a_a, Input b_a, Input sa_a, Input sb_a, std::optional<Input> bias_a, bool b_trans,
                   const std::string& activation, bool precise, uintptr_t stream) {
  TensorView c = view(c_a), a = view(a_a), b = view(b_a), sa = view(sa_a), sb = view(sb_a);
  std::optional<TensorView> bias;
  if (bias_a) bias = view(*bias_a);
  bool device = bias ? same_side({&a, &b, &c, &sa, &sb, &*bias}, {"a", "b", "out", "scale_a", "scale_b", "bias"})
                     : same_side({&a, &b, &c, &sa, &sb}, {"a", "b", "out", "scale_a", "scale_b"});
  if (a.shape.size() != 2) user_error("scaled_matmul: a is " + a.describe() + "; expected [M, K]", SourceLoc{});
  if (b.shape.size() != 2) user_error("scaled_matmul: b is " + b.describe() + "; expected a matrix", SourceLoc{});
  int64_t M = a.shape[0], K = a.shape[1], N = b_trans ? b.shape[0] : b.shape[1];
  expect_shape(b, b_trans ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, "b");
  expect_shape(c, {M, N}, "out");
  for (auto [s, what] : {std::pair{&sa, "scale_a"}, std::pair{&sb, "scale_b"}}) {
    if (s->numel() != 1 || s->dtype != DType::f32)
      user_error("scaled_matmul: " + std::string(what) + " is " + s->describe() + "; expected one float32", SourceLoc{},
                 "Pass the per-tensor scale as a float32 tensor of one element");
  }
  if (bias) {
    expect_shape(*bias, {N}, "bias");
    if (bias->dtype != c.dtype)
      user_error("scaled_matmul: bias is " + bias->describe() + " but out is " + name(c.dtype), SourceLoc{},
                 "Pass the bias in the output's dtype");
  }
  kernels::ScaledMatmulOptions o;
  o.b_trans = b_trans;
  o.activation = parse_activation(activation);
  o.precise_accumulation = precise;
  if (M == 0 || N == 0) return;
  dispatch_float8(a.dtype, "a", [&]<class TA>(std::type_identity<TA>) {
    dispatch_float8(b.dtype, "b", [&]<class TB>(std::type_identity<TB>) {
      dispatch_float(c.dtype, "scaled_matmul", [&]<class Out>(std::type_identity<Out>) {
        KernelCall call(stream);
        on_side(device, [&](auto side) {
          auto out = buffer<Out>(side, c, "out");
          auto lhs = buffer<const TA>(side, a, "a");
          auto rhs = buffer<const TB>(side, b, "b");
          auto scale_a = buffer<const float>(side, sa, "scale_a");
          auto scale_b = buffer<const float>(side, sb, "scale_b");
          if (bias)
            kernels::scaled_matmul(out, lhs, rhs, scale_a, scale_b, M, N, K, o, buffer<const Out>(side, *bias, "bias"));
          else
            kernels::tuned_scaled_matmul(out, lhs, rhs, scale_a, scale_b, M, N, K, o);
        });
      });
    });
  });
}

}  // namespace

void bind_matmul(nb::module_& m) {
  using namespace nb::literals;
  m.def("matmul", &matmul, "out"_a, "a"_a, "b"_a, "bias"_a.none(), "b_trans"_a, "activation"_a, "stream"_a);
  m.def("scaled_matmul", &scaled_matmul, "out"_a, "a"_a, "b"_a, "scale_a"_a, "scale_b"_a, "bias"_a.none(), "b_trans"_a,
        "activation"_a, "precise"_a, "stream"_a);
}

}  // namespace tilefuse::python
