#pragma once
// Timing helpers of tilefuse-bench: median of event-timed runs with the L2 flushed
// before each, and the device-to-device copy bandwidth measured the same way.
#include <algorithm>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/cuda/stream.hpp"
#include "tilefuse/ir/dtype.hpp"
#include "tilefuse/ir/errors.hpp"
#include "tilefuse/ir/half.hpp"

namespace tilefuse::bench {

// f(std::type_identity<T>{}) for the element type T of a float dtype; the benchmarks run
// f32, f16 and bf16 only.
template <class F>
auto with_float_type(DType d, F&& f) {
  switch (d) {
    case DType::f32: return f(std::type_identity<float>{});
    case DType::f16: return f(std::type_identity<half>{});
    case DType::bf16: return f(std::type_identity<bfloat16>{});
    default: user_error(std::string("benchmarks run f32, f16 or bf16, not ") + name(d), SourceLoc{});
  }
}

// The row shapes the peers are measured at (peers.py's standard set).
inline std::vector<std::string> standard_row_shapes() {
  return {"65536x1024", "16384x4096", "8192x16384", "2048x65536", "16384x5000"};
}

// Median milliseconds of `fn` over `reps` runs (after `warmup` runs), flushing L2 first.
inline double time_ms(const std::function<void()>& fn, int reps = 20, int warmup = 3) {
  for (int i = 0; i < warmup; ++i) fn();
  cuda::Event start = cuda::Event::create(), stop = cuda::Event::create();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    cuda::flush_l2();
    start.record();
    fn();
    stop.record();
    stop.synchronize();
    ms.push_back(cuda::Event::elapsed_ms(start, stop));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Device-to-device copy bandwidth in GB/s (bytes read + written), for `bytes` per copy.
inline double copy_bandwidth_gbs(size_t bytes = size_t(1) << 30) {
  DeviceBuffer<uint8_t> a(bytes), b(bytes);
  a.memset(1);
  double ms = time_ms([&] { cuda::memcpy_dtod(b.data(), a.data(), bytes); });
  return 2.0 * bytes / (ms * 1e-3) / 1e9;
}

}  // namespace tilefuse::bench
