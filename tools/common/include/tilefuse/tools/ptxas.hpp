#pragma once
// Running the CUDA toolkit's ptxas on generated PTX: the offline check that code
// assembles, and the source of register / shared memory / spill numbers.
#include <string>

namespace tilefuse::tools {

struct PtxasResult {
  bool found = false;     // a ptxas executable exists
  bool ok = false;        // it assembled the PTX
  std::string log;        // its -v output (or why it was not found)
  int registers = -1;     // "Used N registers"
  int spill_stores = -1;  // "N bytes spill stores"
  int spill_loads = -1;
  int shared_bytes = -1;  // "N bytes smem"
};

// Path of a CUDA toolkit executable ($CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin,
// then $PATH), or "".
std::string find_cuda_tool(const std::string& name);
std::string find_ptxas();
// Assembles `ptx` for `arch` (e.g. "sm_90a") with -O3 -v and parses the report.
PtxasResult run_ptxas(const std::string& ptx, const std::string& arch);

}  // namespace tilefuse::tools
