// Cross-entropy's one-program scans (the count of rows not ignored before the rows of a
// mean, the sum of the row losses after them) at several configs and row counts: their
// time grows with the loop's steps, each a memory round trip (bench/NOTES.md).
//   ce_scans [reps (default 50)]
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/kernels/kernels.hpp"

using namespace tilefuse;

int main(int argc, char** argv) {
  int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
  std::string why;
  if (!cuda::driver_available(&why)) {
    std::printf("ce_scans: skipped, no GPU available: %s\n", why.c_str());
    return 0;
  }
  const std::vector<Config> configs = {
      kernels::cross_entropy_scan_config(),  // 16384 on 32 warps
      Config{{"BLOCK", 4096}, num_warps(8), num_stages(2)},
      Config{{"BLOCK", 8192}, num_warps(16), num_stages(2)},
      Config{{"BLOCK", 8192}, num_warps(32), num_stages(2)},
      Config{{"BLOCK", 16384}, num_warps(16), num_stages(1)},
  };
  std::printf("%-8s %-44s %10s %10s\n", "rows", "config", "count us", "sum us");
  for (int64_t M : {8192, 65536, 262144}) {
    std::vector<int64_t> t(M);
    for (int64_t i = 0; i < M; ++i) t[i] = i % 7 == 0 ? -100 : i % 1000;
    std::vector<float> losses(M, 0.5f);
    auto td = to_device(t);
    auto ld = to_device(losses);
    DeviceBuffer<float> inv(1), loss(1);
    for (const Config& c : configs) {
      double count = bench::time_ms([&] {
        kernels::cross_entropy_count_kernel<int64_t>().launch(Grid(1), c, inv, td, M, int64_t(-100));
      }, reps);
      double sum = bench::time_ms([&] {
        kernels::cross_entropy_sum_kernel().launch(Grid(1), Config(c).set("MEAN", 1), loss, ld, inv, M);
      }, reps);
      float got = inv.to_host()[0], want = 1.0f / float(M - (M + 6) / 7);
      std::printf("%-8lld %-44s %10.2f %10.2f%s\n", (long long)M, c.str().c_str(), count * 1e3, sum * 1e3,
                  std::abs(got - want) > 1e-6f * want ? "  WRONG COUNT" : "");
    }
  }
  return 0;
}
