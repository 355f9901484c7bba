#pragma once
// The machine code ptxas makes of generated PTX (SASS), read offline: assembled by ptxas,
// disassembled by the CUDA toolkit's nvdisasm (also in the nvidia-cuda-nvdisasm Python
// wheel). What a kernel executes can then be looked at without a GPU.
#include <map>
#include <string>

namespace tilefuse::tools {

struct SassResult {
  bool ok = false;   // assembled and disassembled
  std::string text;  // nvdisasm's listing of the code sections
  std::string log;   // why not, when !ok
};

// Assembles `ptx` for `arch` (ptxas -O3) and disassembles it (nvdisasm -c).
SassResult disassemble(const std::string& ptx, const std::string& arch);

// A listing's instructions: how many, and how many of each opcode (its first word
// without modifiers: "FMUL" for "@!P0 FMUL.FTZ R1, R2, R3").
struct SassSummary {
  int instructions = 0;
  std::map<std::string, int> opcodes;
};
SassSummary summarize_sass(const std::string& listing);
// The summary as text: the count, then opcodes by count (ties by name).
std::string to_string(const SassSummary& s);

}  // namespace tilefuse::tools
