// 16-bit tiles carried around loops, offline: one 32-bit phi per pair of elements (no
// 16-bit phis, which ptxas gives a 32-bit register each), for tiles carried as loaded,
// as rounded f32 and from constants; ptxas accepts the PTX for sm_80 and sm_90a. The same
// kernel runs against the interpreter in tests/gpu/test_gpu_ops.cpp.
#include <doctest/doctest.h>

#include <regex>

#include "../gpu/loop_carry_kernels.hpp"
#include "tilefuse/nvptx/compiler.hpp"
#include "tilefuse/tools/ptxas.hpp"

using namespace tilefuse;

TEST_CASE_TEMPLATE("loops carry 16-bit tiles as packed pairs", T, half, bfloat16) {
  const auto& k = loop_carry::carry16_kernel<T>();
  auto f = k.specialize(Config{{"BLOCK", 128}, num_warps(2)}, std::vector<int64_t>(k.num_runtime_params(), 16));
  for (const char* target : {"sm_80", "sm_90a"}) {
    CAPTURE(target);
    nvptx::CompileArtifacts art = nvptx::compile_with_artifacts(*f, nvptx::CompileOptions{nvptx::parse_target(target)});
    const std::string& ir = art.llvm_ir_opt;
    auto count = [&](const char* re) {
      std::regex r(re);
      return std::distance(std::sregex_iterator(ir.begin(), ir.end(), r), std::sregex_iterator());
    };
    // 128 elements over 64 threads: 2 per thread and tile, one pair; three tiles.
    CHECK(count(R"(= phi (half|bfloat) )") == 0);
    CHECK(count(R"(= phi (i32|<2 x (half|bfloat)>) )") >= 3);
    if (!tools::find_ptxas().empty()) {
      tools::PtxasResult r = tools::run_ptxas(art.kernel.ptx, target);
      CHECK_MESSAGE(r.ok, r.log);
      CHECK(r.spill_stores == 0);
    }
  }
}
