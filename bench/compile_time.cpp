// Cold and warm compile time of a gallery kernel, each in a fresh process:
//   compile_time [softmax | attention64 | attention128][c]   (c: causal; default softmax)
// softmax: bf16, BLOCK=1024; attention: f16, the sm_90a heuristic config for that head
// dim. Run it twice with the same, initially empty, TILEFUSE_CACHE_DIR: the first run
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
#include "tilefuse/kernels/attention.hpp"
#include "tilefuse/kernels/softmax.hpp"
#include "tilefuse/nvptx/compiler.hpp"

using namespace tilefuse;
using clk = std::chrono::steady_clock;

static double ms(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

int main(int argc, char** argv) {
  try {
    std::string what = argc > 1 ? argv[1] : "softmax";
    bool causal = what.size() > 1 && what.back() == 'c' && what.starts_with("attention");
    if (causal) what.pop_back();
    if (what != "softmax" && what != "attention64" && what != "attention128") {
      std::fprintf(stderr, "usage: compile_time [softmax | attention64 | attention128][c]\n");
      return 2;
    }
    auto t0 = clk::now();
    const KernelBase* k = nullptr;
    Config cfg;
    if (what == "softmax") {
      k = &kernels::softmax_row_kernel<bfloat16>();
      cfg = Config{{"BLOCK", 1024}, num_warps(4)};
    } else {
      int64_t d = what == "attention64" ? 64 : 128;
      k = &kernels::attention_fwd_kernel<half>();
      cfg = kernels::attention_launch_config(kernels::attention_heuristic(4096, d, causal, true), d, causal, 0.125f);
    }
    auto f = k->specialize(cfg, std::vector<int64_t>(k->num_runtime_params(), 16));
    auto t1 = clk::now();
    nvptx::Target target = nvptx::parse_target("sm_90a");
    cuda::CacheKey key = cuda::make_cache_key(ir::to_string(*f), target, cfg.str(), compiler_version());
    cuda::KernelCache cache(&cuda::DiskCache::global());
    bool from_disk = false;
    nvptx::CompiledKernel ck =
        cache.compiled(key, [&] { return nvptx::compile(*f, nvptx::CompileOptions{target}); }, &from_disk);
    auto t2 = clk::now();
    std::printf("%s%s {%s}: trace + passes %.2f ms, %s %.2f ms, total %.2f ms (%s start)\n", what.c_str(),
                causal ? " causal" : "", cfg.str().c_str(), ms(t0, t1),
                from_disk ? "load from disk cache" : "LLVM lower + O3 + PTX", ms(t1, t2), ms(t0, t2),
                from_disk ? "warm" : "cold");
    std::string why;
    if (gpu_available(&why)) {
      cuda::LoadedKernel loaded = cuda::LoadedKernel::from_ptx(ck);
      std::printf("driver PTX -> SASS (cuModuleLoadDataEx, whole program; its JIT cache may hold it): %.2f ms\n",
                  loaded.jit_ms());
    } else {
      std::printf("driver PTX -> SASS: not measured (%s)\n", why.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compile_time: %s\n", e.what());
    return 1;
  }
  return 0;
}
