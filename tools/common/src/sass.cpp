#include "tilefuse/tools/sass.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "tilefuse/tools/ptxas.hpp"

namespace tilefuse::tools {

namespace {

// Runs `cmd` through the shell; its stdout and stderr, and whether it exited 0.
bool run_command(const std::string& cmd, std::string& out) {
  std::array<char, 4096> buf;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return false;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  return pclose(p) == 0;
}

}  // namespace

SassResult disassemble(const std::string& ptx, const std::string& arch) {
  SassResult r;
  std::string ptxas = find_cuda_tool("ptxas"), nvdisasm = find_cuda_tool("nvdisasm");
  if (ptxas.empty() || nvdisasm.empty()) {
    r.log = std::string("no ") + (ptxas.empty() ? "ptxas" : "nvdisasm") +
            " in $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin or $PATH (nvdisasm also comes with the "
            "nvidia-cuda-nvdisasm Python wheel: put its bin/ on PATH)";
    return r;
  }
  char dir_tmpl[] = "/tmp/tilefuse-sass-XXXXXX";
  if (!mkdtemp(dir_tmpl)) {
    r.log = "cannot create a temporary directory";
    return r;
  }
  std::filesystem::path dir(dir_tmpl);
  { std::ofstream(dir / "k.ptx") << ptx; }
  std::string cubin = (dir / "k.cubin").string();
  std::string log;
  if (!run_command("'" + ptxas + "' -arch=" + arch + " -O3 '" + (dir / "k.ptx").string() + "' -o '" + cubin + "'", log)) {
    r.log = "ptxas failed: " + log;
  } else if (!run_command("'" + nvdisasm + "' -c '" + cubin + "'", r.text)) {
    r.log = "nvdisasm failed: " + r.text;
    r.text.clear();
  } else {
    r.ok = true;
  }
  std::filesystem::remove_all(dir);
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
