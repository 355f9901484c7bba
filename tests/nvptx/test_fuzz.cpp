// The random tile-program fuzzer in CI (no GPU): every program of a fixed seed list
// runs on the interpreter and compiles to PTX that ptxas accepts for sm_80 and sm_90a.
// The GPU suite (test_fuzz_gpu.cpp) runs the same seeds on the device; tilefuse-fuzz
// runs more. Seeds that once failed stay here as named regression cases.
#include <doctest/doctest.h>

#include "fuzz_programs.hpp"
#include "fuzz_rows.hpp"

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

TEST_CASE("fuzz: random row programs match plain C++ on the interpreter and assemble for sm_80 and sm_90a") {
  int aligned = 0, readable = 0, holes = 0, tiles = 0, held = 0, held_in_shared = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    tftest::RowCase rc;
    auto c = tftest::random_row_program(seed, &rc);
    CAPTURE(seed);
    CAPTURE(c.summary);
    tftest::Arg want_out, want_sums;
    tftest::expect_row_program(rc, c.args, want_out, want_sums);
    auto hv = tftest::values(c.args);
    interp::run(*c.f, tftest::row_grid(rc), hv);
    // Quarters: every sum and product is exact, so the results must be equal.
    int bad = 0;
    for (size_t e = 0; e < want_out.size(); ++e) bad += c.args[0].get(e) != want_out.get(e);
    CHECK(bad == 0);
    for (size_t r = 0; r < want_sums.size(); ++r) CHECK(c.args[1].get(r) == want_sums.get(r));
    auto art = tftest::compile_and_assemble(*c.f, "fuzzrows" + std::to_string(seed));
    held_in_shared += art.plan.find("held in shared") != std::string::npos;
    aligned += c.summary.find(" aligned") != std::string::npos;
    readable += c.summary.find(" readable") != std::string::npos;
    holes += rc.holes;
    tiles += rc.per_program > 1;
    held += rc.held;
  }
  // The seeds keep covering rows from their aligned start, readable runs, holed masks
  // and programs of several rows.
  MESSAGE(aligned << " aligned, " << readable << " readable, " << holes << " holed, " << tiles << " multi-row, " << held
                  << " asked to be held, " << held_in_shared << " held");
  CHECK(aligned >= 5);
  CHECK(readable >= 3);
  CHECK(holes >= 3);
  CHECK(tiles >= 3);
  CHECK(held >= 5);
  CHECK(held_in_shared >= 2);  // where their runs are aligned pieces; the others fall back
}
