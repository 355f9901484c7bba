// The fuzzer's fixed seeds on the GPU against the interpreter (skips without a driver).
#include <doctest/doctest.h>

#include "fuzz_programs.hpp"
#include "fuzz_rows.hpp"

using namespace tilefuse;

TEST_CASE("gpu: fuzz: random tile programs match the interpreter") {
  tftest::Tol tol = tftest::fuzz_tol();
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    auto c = tftest::random_program(seed);
    tftest::gpu_matches_interp(*c.f, Grid(1), c.args, "seed " + std::to_string(seed) + ": " + c.summary, &tol);
  }
}

TEST_CASE("gpu: fuzz: random row programs (checked, readable and realigned accesses) match the interpreter") {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    tftest::RowCase rc;
    auto c = tftest::random_row_program(seed, &rc);
    tftest::Tol exact{0, 0};  // quarters: every sum and product is exact
    tftest::gpu_matches_interp(*c.f, tftest::row_grid(rc), c.args, "row seed " + std::to_string(seed) + ": " + c.summary,
                               &exact);
  }
}
