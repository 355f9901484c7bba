// The knob registry: count-valued knobs read from the environment.
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "tilefuse/ir/errors.hpp"
#include "tilefuse/ir/knobs.hpp"

using namespace tilefuse;

TEST_CASE("a count knob: 0 when unset, its value when positive, a UserError naming it otherwise") {
  const char* name = "TILEFUSE_PERSISTENT_PROGRAMS";
  unsetenv(name);
  CHECK(knob_count(name) == 0);
  setenv(name, "7", 1);
  CHECK(knob_count(name) == 7);
  for (const char* bad : {"0", "-3", "12x", "many", "99999999999999999999999"}) {
    CAPTURE(bad);
    setenv(name, bad, 1);
    std::string what = std::string(name) + " = '" + bad + "' is not a positive integer";
    CHECK_THROWS_WITH_AS(knob_count(name), doctest::Contains(what.c_str()), UserError);
    CHECK_THROWS_WITH_AS(knob_count(name), doctest::Contains("Unset it or set a count"), UserError);
  }
  unsetenv(name);
}
