// Gallery-shaped kernels through the whole pipeline; PTX assembled with ptxas for
// sm_80 and sm_90a; 128-bit global accesses and no spills where expected.
#include <doctest/doctest.h>

#include <chrono>
#include <iostream>

#include "ir_kernels.hpp"
#include "check.hpp"
#include "tilefuse/nvptx/compiler.hpp"

using namespace tilefuse;

namespace {

nvptx::CompileOptions sm(const char* t) { return tftest::opts_for(t); }
using tftest::compile_and_assemble;

bool has_128bit_load(const std::string& ptx) {
  return ptx.find("ld.global.v4.b32") != std::string::npos || ptx.find("ld.global.v4.u32") != std::string::npos ||
         ptx.find("ld.global.v4.f32") != std::string::npos || ptx.find("ld.global.nc.v4") != std::string::npos ||
         ptx.find("ld.global.v2.u64") != std::string::npos || ptx.find("ld.global.v2.b64") != std::string::npos ||
         ptx.find("ld.global.v2.f64") != std::string::npos || ptx.find("ld.global.v4.b16") != std::string::npos;
}
bool has_128bit_store(const std::string& ptx) {
  return ptx.find("st.global.v4.b32") != std::string::npos || ptx.find("st.global.v4.u32") != std::string::npos ||
         ptx.find("st.global.v4.f32") != std::string::npos || ptx.find("st.global.v2.u64") != std::string::npos ||
         ptx.find("st.global.v2.b64") != std::string::npos || ptx.find("st.global.v2.f64") != std::string::npos;
}

}  // namespace

TEST_CASE("softmax-like kernels: every config assembles, 128-bit accesses, no spills") {
  struct Cfg {
    DType in, out;
    int64_t block;
    int warps;
  };
  std::vector<Cfg> cfgs = {{DType::bf16, DType::bf16, 1024, 4}, {DType::f32, DType::f32, 4096, 8},
                           {DType::bf16, DType::bf16, 4096, 8}, {DType::f32, DType::bf16, 2048, 4},
                           {DType::f16, DType::f16, 16, 1},     {DType::f32, DType::f32, 128, 4},
                           {DType::bf16, DType::bf16, 256, 1},  {DType::f32, DType::f32, 16384, 8}};
  for (auto& c : cfgs) {
    auto f = tftest::softmax(c.in, c.out, c.block, c.warps);
    std::string tag = std::string("softmax_") + name(c.in) + "_" + std::to_string(c.block) + "_w" + std::to_string(c.warps);
    INFO(tag);
    auto art = compile_and_assemble(*f, tag, c.block <= 4096);
    bool wide = c.block * byte_size(c.in) >= 16 * 32 * c.warps;  // at least 16 bytes per thread
    if (wide) {
      CHECK(has_128bit_load(art.kernel.ptx));
      CHECK(has_128bit_store(art.kernel.ptx) == (c.block * byte_size(c.out) >= 16 * 32 * c.warps));
    }
  }
}

TEST_CASE("rmsnorm-like kernels assemble with 128-bit accesses and no spills") {
  for (auto [dt, block, warps] : {std::tuple{DType::bf16, int64_t(4096), 8}, std::tuple{DType::f32, int64_t(1024), 4},
                                  std::tuple{DType::bf16, int64_t(512), 2}, std::tuple{DType::f16, int64_t(64), 1}}) {
    auto f = tftest::rmsnorm(dt, block, warps);
    std::string tag = std::string("rmsnorm_") + name(dt) + "_" + std::to_string(block);
    INFO(tag);
    auto art = compile_and_assemble(*f, tag, true);
    if (block * byte_size(dt) >= 16 * 32 * warps) {
      CHECK(has_128bit_load(art.kernel.ptx));
      CHECK(has_128bit_store(art.kernel.ptx));
    }
  }
}

TEST_CASE("flash-attention-like loop with two dots and loop-carried tiles assembles") {
  for (auto [bm, bn, d, warps] : {std::tuple{64, 64, 64, 4}, std::tuple{16, 16, 16, 1}, std::tuple{128, 32, 64, 8},
                                  std::tuple{32, 64, 128, 4}}) {
    auto f = tftest::attention(bm, bn, d, warps);
    std::string tag = "attention_" + std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(d);
    INFO(tag);
    auto art = compile_and_assemble(*f, tag, false);
    CHECK(art.kernel.shared_bytes > 0);
  }
}

TEST_CASE("compile time of a softmax stays well under 50 ms") {
  auto f = tftest::softmax(DType::bf16, DType::bf16, 4096, 8);
  nvptx::compile(*f, sm("sm_90a"));  // warm: libdevice read, target machine built
  double best = 1e9;
  nvptx::CompileArtifacts art;
  for (int i = 0; i < 5; ++i) {
    auto t = std::chrono::steady_clock::now();
    art = nvptx::compile_with_artifacts(*f, sm("sm_90a"));
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
  }
  MESSAGE("softmax bf16 4096 compile: " << best << " ms (plan " << art.ms_plan << ", lower " << art.ms_lower
                                        << ", O3 " << art.ms_opt << ", ptx " << art.ms_ptx
                                        << ", libdevice " << art.linked_libdevice << ")");
  CHECK(best < 50);
}
