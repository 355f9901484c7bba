// The random tile-program fuzzer in CI (no GPU): every program of a fixed seed list
// runs on the interpreter and compiles to PTX that ptxas accepts for sm_80 and sm_90a.
// The GPU suite (test_fuzz_gpu.cpp) runs the same seeds on the device; tilefuse-fuzz
// runs more. Seeds that once failed stay here as named regression cases.
#include <doctest/doctest.h>

#include "fuzz_programs.hpp"

using namespace tilefuse;

TEST_CASE("fuzz: random tile programs interpret and assemble for sm_80 and sm_90a") {
  int tma = 0, specialized = 0;
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    auto c = tftest::random_program(seed);
    CAPTURE(seed);
    CAPTURE(c.summary);
    auto hv = tftest::values(c.args);
    interp::run(*c.f, Grid(1), hv);
    auto art = tftest::compile_and_assemble(*c.f, "fuzz" + std::to_string(seed));  // sm_90a's
    tma += !art.kernel.tensor_maps.empty();
    specialized += art.kernel.num_warps > c.f->num_warps;
  }
  // The seeds keep covering TMA-fed and warp-specialized loops.
  MESSAGE(tma << " seeds with TMA copies, " << specialized << " warp-specialized");
  CHECK(tma >= 1);
  CHECK(specialized >= 1);
}
