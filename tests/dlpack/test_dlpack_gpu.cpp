// from_dlpack on CUDA memory: a DLPack view of device buffers runs the gallery's softmax
// on the GPU, on the stream a LaunchStreamScope names, and matches the interpreter.
// Skips (passes with a message) without a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/cuda/stream.hpp"
#include "tilefuse/dlpack.hpp"
#include "tilefuse/kernels/kernels.hpp"
#include "tilefuse/launch_stream.hpp"

using namespace tilefuse;

TEST_CASE("from_dlpack: CUDA tensors run softmax on the scope's stream") {
  std::string why;
  if (!gpu_available(&why)) {
    MESSAGE("GPU test skipped: " << why);
    return;
  }
  const int64_t rows = 37, cols = 1531;
  std::mt19937 g(5);
  std::normal_distribution<float> nd(0.f, 3.f);
  std::vector<float> x(rows * cols), want(x.size());
  for (auto& v : x) v = nd(g);
  kernels::softmax(want, x, rows, cols);  // the interpreter

  DeviceBuffer<float> dx = to_device(x), dy(x.size());
  int64_t shape[2] = {rows, cols};
  auto tensor = [&](void* data) {
    DLManagedTensor m{};
    m.dl_tensor.data = data;
    m.dl_tensor.device = DLDevice{kDLCUDA, cuda::current_device()};
    m.dl_tensor.ndim = 2;
    m.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    m.dl_tensor.shape = shape;
    return m;
  };
  DLManagedTensor in = tensor(dx.data()), out = tensor(dy.data());
  TensorView vin = from_dlpack(&in), vout = from_dlpack(&out);
  CHECK(vin.on_device);
  CHECK(vin.describe() == "f32[37, 1531] on cuda:" + std::to_string(cuda::current_device()));
  CHECK_THROWS_WITH(vin.host<const float>("x"), doctest::Contains("expected a CPU tensor"));

  cuda::Stream s = cuda::Stream::create(/*non_blocking=*/true);
  {
    LaunchStreamScope scope(s.get());
    kernels::softmax(vout.device<float>("out"), vin.device<const float>("x"), rows, cols);
  }
  s.synchronize();
  std::vector<float> got = dy.to_host();
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
}
