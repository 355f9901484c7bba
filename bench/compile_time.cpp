// Cold and warm compile time of the gallery softmax, each in a fresh process.
// Run it twice with the same, initially empty, TILEFUSE_CACHE_DIR: the first run
// compiles (trace + passes + LLVM O3 + PTX, libdevice parsed), the second finds the
// kernel on disk and skips LLVM. On a GPU it also reports the driver's PTX -> SASS
// time (set CUDA_CACHE_DISABLE=1 so the driver's own cache does not hide it).
#include <chrono>
#include <cstdio>

#include "tilefuse/cuda/disk_cache.hpp"
#include "tilefuse/cuda/kernel_cache.hpp"
#include "tilefuse/cuda/module.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/ir/printer.hpp"
#include "tilefuse/kernels/softmax.hpp"
#include "tilefuse/nvptx/compiler.hpp"

using namespace tilefuse;
using clk = std::chrono::steady_clock;

static double ms(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

int main() {
  try {
    auto t0 = clk::now();
    const auto& k = kernels::softmax_row_kernel<bfloat16>();
    Config cfg{{"BLOCK", 1024}, num_warps(4)};
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    auto t1 = clk::now();
    nvptx::Target target = nvptx::parse_target("sm_90a");
    cuda::CacheKey key = cuda::make_cache_key(ir::to_string(*f), target, "warps=4 stages=1", compiler_version());
    cuda::KernelCache cache(&cuda::DiskCache::global());
    bool from_disk = false;
    nvptx::CompiledKernel ck =
        cache.compiled(key, [&] { return nvptx::compile(*f, nvptx::CompileOptions{target}); }, &from_disk);
    auto t2 = clk::now();
    std::printf("softmax bf16 BLOCK=1024: trace + passes %.2f ms, %s %.2f ms, total %.2f ms (%s start)\n", ms(t0, t1),
                from_disk ? "load from disk cache" : "LLVM lower + O3 + PTX", ms(t1, t2), ms(t0, t2),
                from_disk ? "warm" : "cold");
    std::string why;
    if (gpu_available(&why)) {
      cuda::Cubin c = cuda::link_ptx_to_cubin(ck.ptx, ck.name);
      std::printf("driver PTX -> SASS (cuLink): %.2f ms\n", c.jit_ms);
    } else {
      std::printf("driver PTX -> SASS: not measured (%s)\n", why.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compile_time: %s\n", e.what());
    return 1;
  }
  return 0;
}
