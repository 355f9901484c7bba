// Persistent kernels (Config::persistent) against the interpreter: the launch starts at
// most 7 programs here (TILEFUSE_PERSISTENT_PROGRAMS, set before any kernel loads), so
// each program runs several of the grid's: program ids and grid sizes over a 3-D grid,
// a loop per program, GEMM with the TMA ring continued from program to program and the
// next program's copies issued before the epilogue (odd M, N, K, NaN padding, both B
// layouts, 2-5 stages), and attention (two pipelined loops; num_programs(1) in a view).
// Label: gpu (skips without a driver).
#include <cmath>
#include <cstdlib>

#include <tilefuse/kernels/kernels.hpp>

#include "padded_gemm.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using difftest::gpu_matches_interp;

namespace {

const bool capped = [] {
  setenv("TILEFUSE_PERSISTENT_PROGRAMS", "7", 1);
  return true;
}();

}  // namespace

TEST_CASE("gpu: persistent programs see their own program ids and the grid's sizes, 3-D grid, loop per program") {
  REQUIRE(capped);
  auto k = kernel("persistent_ids", {"out", "x", "n"}, [](Ptr<f32> out, Ptr<const f32> x, I32 n, Meta<"BLOCK"> BLOCK) {
    auto p0 = program_id(0), p1 = program_id(1), p2 = program_id(2);
    auto flat = p0 + num_programs(0) * (p1 + num_programs(1) * p2);
    auto acc = zeros<f32>({BLOCK});
    for_range(0, p1 + 1, 1, [&](I32 i) {  // a trip count that differs from program to program
      auto o = (flat + i) * BLOCK + arange(0, BLOCK);
      acc = acc + load(x + o, o < n, 0.0f);
    });
    auto o = flat * BLOCK + arange(0, BLOCK);
    store(out + o, acc * (p2 + 1).cast<f32>() + (p0 * 1000 + num_programs(2)).cast<f32>(), o < n);
  });
  for (auto [gx, gy, gz] : {std::tuple{5, 3, 2}, std::tuple{1, 1, 1}, std::tuple{23, 4, 3}}) {
    CAPTURE(gx);
    CAPTURE(gy);
    CAPTURE(gz);
    int n = gx * gy * gz * 32 - 5;
    auto x = ref::random_vec<float>(size_t(n) + 64 * 32, 3, -1, 1);
    std::vector<float> out(n);
    gpu_matches_interp(k, Grid(gx, gy, gz), {{"BLOCK", 32}, num_warps(1), persistent()}, {1e-6, 1e-6}, out, x, n);
  }
}

TEST_CASE_TEMPLATE("gpu: persistent TMA GEMM at odd shapes, the next program's copies issued before the epilogue", T,
                   half, bfloat16) {
  padded_gemm::check<T>({{300, 329, 200, 128, 256, 64, 8, 3}, {277, 300, 190, 64, 128, 64, 4, 4},
                         {530, 170, 33, 128, 64, 32, 4, 2}, {200, 192, 512, 64, 64, 64, 4, 5}},
                        {{"GROUP_M", 2}, persistent()}, 61);
}

TEST_CASE("gpu: persistent attention (two pipelined loops, a view sized by num_programs)") {
  for (auto [n, d, causal, bm, bn, warps] : {std::tuple{301, 64, false, 64, 64, 4}, std::tuple{200, 128, true, 64, 64, 4}}) {
    CAPTURE(n);
    CAPTURE(causal);
    int bh = 3;
    size_t sz = size_t(bh) * n * d;
    auto q = ref::random_vec<half>(sz, 17, -1, 1), k = ref::random_vec<half>(sz, 18, -1, 1),
         v = ref::random_vec<half>(sz, 19, -1, 1);
    std::vector<half> o(sz);
    std::vector<float> lse(bh * n);
    Config cfg{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"HEAD_DIM", d}, {"CAUSAL", causal}, num_warps(warps), num_stages(2),
               persistent()};
    gpu_matches_interp(tk::attention_fwd_kernel<half>(), Grid((n + bm - 1) / bm, bh), cfg, {2e-3, 2e-2}, o, lse, q, k,
                       v, n, int64_t(n) * d, int64_t(d), 1.0f / std::sqrt(float(d)));
  }
}
