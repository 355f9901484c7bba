#pragma once
// The stable text form of the tile IR: the debugging surface and the golden format
// for tests. Values are numbered in program order; parameters print by name.
#include <ostream>
#include <string>

#include "tilefuse/ir/ir.hpp"

namespace tilefuse::ir {

struct PrintOptions {
  bool locations = false;  // append "loc(file:line)" to each op
};

std::string to_string(const Function& f, PrintOptions opts = {});
void print(std::ostream& os, const Function& f, PrintOptions opts = {});

}  // namespace tilefuse::ir
