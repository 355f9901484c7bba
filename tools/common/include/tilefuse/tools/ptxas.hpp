#pragma once
// Running the CUDA toolkit's ptxas on generated PTX: the offline check that code
// assembles, and the source of register / shared memory / spill numbers.
#include <functional>
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
// Runs a shell command; its stdout and stderr appended to `out`; whether it exited 0.
bool run_command(const std::string& cmd, std::string& out);
// Assembles `ptx` for `arch` (ptxas -O3 -v) in a temporary directory and calls `use` with
// the cubin's path while it exists; ptxas's output goes to `log`. False when ptxas is
// missing or fails.
bool with_cubin(const std::string& ptx, const std::string& arch, std::string& log,
                const std::function<void(const std::string&)>& use);
// Assembles `ptx` for `arch` (e.g. "sm_90a") with -O3 -v and parses the report.
PtxasResult run_ptxas(const std::string& ptx, const std::string& arch);

}  // namespace tilefuse::tools
