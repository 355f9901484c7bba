#pragma once
// Runs the CUDA toolkit's ptxas on generated PTX (skipped when no toolkit is found).
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#ifndef TILEFUSE_TEST_CUDA_BIN
#define TILEFUSE_TEST_CUDA_BIN ""
#endif

namespace tftest {

inline std::string ptxas_path() {
  std::vector<std::string> dirs;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env); v && *v) dirs.push_back(std::string(v) + "/bin");
  if (*TILEFUSE_TEST_CUDA_BIN) dirs.push_back(TILEFUSE_TEST_CUDA_BIN);
  dirs.push_back("/usr/local/cuda/bin");
  for (auto& d : dirs) {
    std::error_code ec;
    auto p = std::filesystem::path(d) / "ptxas";
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

struct PtxasResult {
  bool ran = false;  // false: no ptxas here
  int status = 0;
  std::string log;
  int registers = -1;
  int spill_stores = -1, spill_loads = -1;
};

inline PtxasResult run_ptxas(const std::string& ptx, const std::string& arch, const std::string& tag) {
  PtxasResult r;
  std::string exe = ptxas_path();
  if (exe.empty()) return r;
  auto dir = std::filesystem::temp_directory_path() / ("tilefuse_nvptx_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string safe = tag;
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  auto ptx_file = dir / (safe + "_" + arch + ".ptx");
  auto log_file = dir / (safe + "_" + arch + ".log");
  std::ofstream(ptx_file) << ptx;
  std::string cmd = exe + " -arch=" + arch + " -O3 -v " + ptx_file.string() + " -o /dev/null > " +
                    log_file.string() + " 2>&1";
  r.ran = true;
  r.status = std::system(cmd.c_str());
  std::ifstream in(log_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.log = ss.str();
  auto num_before = [&](const std::string& key) {
    auto p = r.log.find(key);
    if (p == std::string::npos) return -1;
    auto s = r.log.rfind(' ', p - 2);
    return std::atoi(r.log.c_str() + s + 1);
  };
  r.spill_stores = num_before(" bytes spill stores");
  r.spill_loads = num_before(" bytes spill loads");
  auto u = r.log.find("Used ");
  if (u != std::string::npos) r.registers = std::atoi(r.log.c_str() + u + 5);
  std::filesystem::remove(ptx_file);
  std::filesystem::remove(log_file);
  std::error_code ec;
  std::filesystem::remove(dir, ec);  // the test leaves nothing behind (the folder is per process and now empty)
  return r;
}

}  // namespace tftest
