// tilefuse-fuzz: runs more seeds of the random tile-program fuzzer than the test suite.
//   tilefuse-fuzz [--first N] [--count N] [--rows] [doctest options]
// --rows: the row programs of fuzz_rows.hpp (masked, aligned-start and readable
// accesses) instead of the dot programs.
// On a machine with a GPU each program runs on the device against the interpreter;
// without one it is interpreted and assembled with ptxas for sm_80 and sm_90a. Exits
// non-zero when any seed fails; each failure names its seed and what the program does.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>

#include "fuzz_programs.hpp"
#include "fuzz_rows.hpp"

using namespace tilefuse;

namespace {
uint32_t g_first = 1000, g_count = 200;
bool g_rows = false;
}

TEST_CASE("fuzz seeds") {
  tftest::Tol tol = tftest::fuzz_tol();
  bool gpu = tftest::gpu_present();
  for (uint32_t seed = g_first; seed < g_first + g_count; ++seed) {
    tftest::RowCase rc;
    auto c = g_rows ? tftest::random_row_program(seed, &rc) : tftest::random_program(seed);
    Grid grid = g_rows ? tftest::row_grid(rc) : Grid(1);
    tftest::Tol exact{0, 0};  // row programs: quarters, every result exact
    std::string what = "seed " + std::to_string(seed) + ": " + c.summary;
    if (gpu) {
      tftest::gpu_matches_interp(*c.f, grid, c.args, what, g_rows ? &exact : &tol);
    } else {
      INFO(what);
      auto hv = tftest::values(c.args);
      interp::run(*c.f, grid, hv);
      tftest::compile_and_assemble(*c.f, c.f->name);
    }
  }
}

int main(int argc, char** argv) {
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rows")) {
      g_rows = true;
    } else if ((!std::strcmp(argv[i], "--first") || !std::strcmp(argv[i], "--count")) && i + 1 < argc) {
      (argv[i][2] == 'f' ? g_first : g_count) = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
      ++i;
    } else {
      rest.push_back(argv[i]);
    }
  }
  doctest::Context ctx(static_cast<int>(rest.size()), rest.data());
  return ctx.run();
}
