// from_dlpack / from_dltensor: views of host DLPack tensors run the gallery on the
// interpreter; bad dtypes, devices, lanes and layouts are UserErrors naming the problem.
#include <dlpack/dlpack.h>
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tilefuse/dlpack.hpp"
#include "tilefuse/kernels/kernels.hpp"

using namespace tilefuse;

namespace {

// A borrowed DLManagedTensor over a host vector (no deleter: the test owns the memory).
struct HostTensor {
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
  HostTensor(void* data, DLDataType dtype, std::vector<int64_t> shp, std::vector<int64_t> str = {})
      : shape(std::move(shp)), strides(std::move(str)) {
    DLTensor& t = managed.dl_tensor;
    t.data = data;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
  }
};

constexpr DLDataType kF32{kDLFloat, 32, 1};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("from_dlpack: a host float tensor runs softmax on the interpreter") {
  const int64_t rows = 7, cols = 45;
  std::mt19937 g(7);
  std::normal_distribution<float> nd(0.f, 2.f);
  std::vector<float> x(rows * cols), y(rows * cols);
  for (auto& v : x) v = nd(g);
  HostTensor in(x.data(), kF32, {rows, cols}), out(y.data(), kF32, {rows, cols});
  TensorView vin = from_dlpack(&in.managed), vout = from_dlpack(&out.managed);
  CHECK(vin.numel() == rows * cols);
  CHECK(vin.strides == std::vector<int64_t>{cols, 1});
  CHECK(vin.describe() == "f32[7, 45] on cpu");
  kernels::softmax(vout.host<float>("out"), vin.host<const float>("x"), rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(x[r * cols + c]));
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(double(x[r * cols + c]) - m);
    for (int64_t c = 0; c < cols; ++c)
      CHECK(y[r * cols + c] == doctest::Approx(std::exp(double(x[r * cols + c]) - m) / sum).epsilon(1e-5));
  }
}

TEST_CASE("from_dlpack: byte_offset, explicit compact strides and dtypes map to tilefuse's") {
  std::vector<int16_t> buf(10);
  HostTensor t(buf.data(), DLDataType{kDLBfloat, 16, 1}, {2, 3}, {3, 1});
  t.managed.dl_tensor.byte_offset = 4;
  TensorView v = from_dlpack(&t.managed);
  CHECK(v.dtype == DType::bf16);
  CHECK(v.data == static_cast<void*>(buf.data() + 2));
  CHECK(v.contiguous());
  for (auto [dt, want] : {std::pair{DLDataType{kDLFloat, 16, 1}, DType::f16}, {DLDataType{kDLFloat, 64, 1}, DType::f64},
                          {DLDataType{kDLInt, 32, 1}, DType::i32}, {DLDataType{kDLUInt, 8, 1}, DType::u8}}) {
    HostTensor u(buf.data(), dt, {1});
    CHECK(from_dlpack(&u.managed).dtype == want);
  }
}

TEST_CASE("from_dlpack: what tilefuse cannot run is a UserError naming it") {
  float x[6] = {};
  CHECK(error_of([] { from_dlpack(nullptr); }).find("a null DLManagedTensor") != std::string::npos);
  HostTensor complex(x, DLDataType{kDLComplex, 64, 1}, {3});
  CHECK(error_of([&] { from_dlpack(&complex.managed); }).find("dtype complex64, which tilefuse has no element type") !=
        std::string::npos);
  HostTensor lanes(x, DLDataType{kDLFloat, 32, 4}, {1});
  CHECK(error_of([&] { from_dlpack(&lanes.managed); }).find("dtype float32x4") != std::string::npos);
  HostTensor opencl(x, kF32, {6});
  opencl.managed.dl_tensor.device = DLDevice{kDLOpenCL, 0};
  CHECK(error_of([&] { from_dlpack(&opencl.managed); }).find("on device type 4") != std::string::npos);

  HostTensor strided(x, kF32, {3}, {2});  // every other element
  TensorView v = from_dlpack(&strided.managed);
  CHECK_FALSE(v.contiguous());
  CHECK(error_of([&] { v.host<float>("x"); }).find("x (f32[3] on cpu) is not contiguous") != std::string::npos);
  HostTensor plain(x, kF32, {2, 3});
  TensorView p = from_dlpack(&plain.managed);
  CHECK(error_of([&] { p.host<double>("w"); }).find("w has dtype f32, expected f64") != std::string::npos);
  CHECK(error_of([&] { p.device<float>("w"); }).find("w is f32[2, 3] on cpu, expected a CUDA tensor") !=
        std::string::npos);
}
