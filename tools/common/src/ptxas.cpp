#include "tilefuse/tools/ptxas.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

namespace tilefuse::tools {

std::string find_cuda_tool(const std::string& name) {
  namespace fs = std::filesystem;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(env))
      if (fs::exists(fs::path(root) / "bin" / name)) return (fs::path(root) / "bin" / name).string();
  if (fs::exists(fs::path("/usr/local/cuda/bin") / name)) return (fs::path("/usr/local/cuda/bin") / name).string();
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      fs::path cand = fs::path(p.substr(start, end - start)) / name;
      if (!p.substr(start, end - start).empty() && fs::exists(cand)) return cand.string();
      start = end + 1;
    }
  }
  return "";
}

std::string find_ptxas() { return find_cuda_tool("ptxas"); }

static int capture_int(const std::string& log, const char* pattern) {
  std::smatch m;
  if (std::regex_search(log, m, std::regex(pattern))) return std::stoi(m[1]);
  return -1;
}

bool run_command(const std::string& cmd, std::string& out) {
  std::array<char, 4096> buf;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return false;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  return pclose(p) == 0;
}

bool with_cubin(const std::string& ptx, const std::string& arch, std::string& log,
                const std::function<void(const std::string&)>& use) {
  std::string exe = find_ptxas();
  if (exe.empty()) {
    log = "no ptxas in $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin or $PATH";
    return false;
  }
  char dir_tmpl[] = "/tmp/tilefuse-ptxas-XXXXXX";
  if (!mkdtemp(dir_tmpl)) {
    log = "cannot create a temporary directory";
    return false;
  }
  std::filesystem::path dir(dir_tmpl);
  { std::ofstream(dir / "k.ptx") << ptx; }
  std::string cubin = (dir / "k.cubin").string();
  bool ok = run_command("'" + exe + "' -arch=" + arch + " -O3 -v '" + (dir / "k.ptx").string() + "' -o '" + cubin + "'",
                        log);
  if (ok) use(cubin);
  std::filesystem::remove_all(dir);
  return ok;
}

PtxasResult run_ptxas(const std::string& ptx, const std::string& arch) {
  PtxasResult r;
  r.found = !find_ptxas().empty();
  r.ok = with_cubin(ptx, arch, r.log, [](const std::string&) {});
  r.registers = capture_int(r.log, "Used (\\d+) registers");
  r.spill_stores = capture_int(r.log, "(\\d+) bytes spill stores");
  r.spill_loads = capture_int(r.log, "(\\d+) bytes spill loads");
  r.shared_bytes = capture_int(r.log, "(\\d+) bytes smem");
  return r;
}

}  // namespace tilefuse::tools
