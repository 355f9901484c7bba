#include "tilefuse/tools/sass.hpp"

#include <algorithm>
#include <regex>
#include <sstream>
#include <vector>

#include "tilefuse/tools/ptxas.hpp"

namespace tilefuse::tools {

SassResult disassemble(const std::string& ptx, const std::string& arch) {
  SassResult r;
  std::string nvdisasm = find_cuda_tool("nvdisasm");
  if (nvdisasm.empty()) {
    r.log = "no nvdisasm in $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin or $PATH (it also comes with the "
            "nvidia-cuda-nvdisasm Python wheel: put its bin/ on PATH)";
    return r;
  }
  std::string log;
  bool assembled = with_cubin(ptx, arch, log, [&](const std::string& cubin) {
    r.ok = run_command("'" + nvdisasm + "' -c '" + cubin + "'", r.text);
  });
  if (!assembled) {
    r.log = "ptxas: " + log;
  } else if (!r.ok) {
    r.log = "nvdisasm failed: " + r.text;
    r.text.clear();
  }
  return r;
}

SassSummary summarize_sass(const std::string& listing) {
  // "        /*0a70*/              @!P1  FMUL R33, R33, 0.5 ;": the offset comment, an
  // optional predicate, then the opcode with its modifiers.
  static const std::regex line(R"(^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]+\s+)?([A-Z][A-Z0-9_]*))");
  SassSummary s;
  std::istringstream in(listing);
  std::string l;
  std::smatch m;
  while (std::getline(in, l))
    if (std::regex_search(l, m, line)) {
      ++s.instructions;
      ++s.opcodes[m[1]];
    }
  return s;
}

std::string to_string(const SassSummary& s) {
  std::vector<std::pair<std::string, int>> ops(s.opcodes.begin(), s.opcodes.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::ostringstream os;
  os << s.instructions << " instructions\n";
  for (auto& [op, n] : ops) os << "  " << op << " " << n << "\n";
  return os.str();
}

}  // namespace tilefuse::tools
