// Host cost of a kernel launch: raw cuLaunchKernel vs tilefuse's LoadedKernel::launch,
// in one process, on the same trivial kernel (hand-written PTX, no compiler involved).
// Prints the median host time per launch over several rounds and the ratio.
//   launch_overhead [launches per round (default 2000)] [rounds (default 15)]
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tilefuse/cuda/cuda.hpp"
#include "test_kernels.hpp"

using namespace tilefuse;

// The runtime tests' hand-written `axpb` kernel: y[i] = 2 * x[i] + a (no compiler involved).
static const char* kPtx = tf_test::kTestPtx;

template <class F>
static double us_per_launch(int n, F&& launch_once) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) launch_once();
  auto t1 = std::chrono::steady_clock::now();
  cuda::synchronize();  // not timed: the host cost is what we compare
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::max(1, std::atoi(argv[1])) : 2000;
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 15;
  std::string why;
  if (!cuda::driver_available(&why)) {
    std::printf("launch_overhead: skipped, no GPU available: %s\n", why.c_str());
    return 0;
  }
  try {
    const auto& dev = cuda::device_info();
    nvptx::CompiledKernel ck;
    ck.name = "axpb";
    ck.ptx = kPtx;
    ck.target = {80, false};
    ck.num_warps = 1;
    ck.params = {{true, DType::f32}, {true, DType::f32}, {false, DType::f32}, {false, DType::u32}};
    cuda::LoadedKernel k = cuda::LoadedKernel::from_ptx(ck);

    const uint32_t n = 32;
    DeviceBuffer<float> x(n), y(n);
    x.memset(0);
    // Raw driver path: a prebuilt parameter array, as a hand-written launcher has.
    auto raw_launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(cuda::driver_symbol("cuLaunchKernel"));
    CUfunction f = k.function();
    CUdeviceptr py = y.address(), px = x.address();
    float a = 1.5f;
    uint32_t nn = n;
    void* params[] = {&py, &px, &a, &nn};
    // tilefuse path: the argument vector the front end hands over.
    const std::vector<ArgValue> args = {y.arg(), x.arg(), ArgValue::real(a, DType::f32),
                                        ArgValue::integer(n, DType::u32)};
    const Grid grid(1);

    auto raw = [&] {
      CUresult rc = raw_launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
      if (rc != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuLaunchKernel failed: %d\n", static_cast<int>(rc));
        std::exit(1);
      }
    };
    auto ours = [&] { k.launch(grid, args); };

    us_per_launch(launches, raw);  // warm up both paths
    us_per_launch(launches, ours);
    std::vector<double> t_raw, t_ours;
    for (int r = 0; r < rounds; ++r) {  // interleaved so drifts affect both alike
      t_raw.push_back(us_per_launch(launches, raw));
      t_ours.push_back(us_per_launch(launches, ours));
    }
    double m_raw = median(t_raw), m_ours = median(t_ours);
    std::printf("launch_overhead on %s (driver %d): %d launches x %d rounds, median host time per launch\n",
                dev.name.c_str(), cuda::driver_version(), launches, rounds);
    std::printf("  raw cuLaunchKernel       %8.3f us\n", m_raw);
    std::printf("  LoadedKernel::launch     %8.3f us\n", m_ours);
    std::printf("  ratio                    %8.3f   (target <= 1.25)\n", m_ours / m_raw);
    auto out = y.to_host();
    if (out[0] != 1.5f) {
      std::fprintf(stderr, "launch_overhead: wrong result %g (expected 1.5)\n", out[0]);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launch_overhead: %s\n", e.what());
    return 1;
  }
  return 0;
}
