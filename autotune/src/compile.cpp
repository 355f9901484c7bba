#include "compile.hpp"

#include <algorithm>
#include <cstdio>

#include "tilefuse/cuda/kernel_cache.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/ir/printer.hpp"
#include "tilefuse/nvptx/compiler.hpp"

namespace tilefuse::tuning::detail {
namespace {

// The options string must match backend/gpu_execute.cpp (and the divisibility rule is
// the shared specialization_divisibility()), or tuning compiles kernels the launch
// path never looks up.
std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  return l.size() > 160 ? l.substr(0, 157) + "..." : l;
}

Compiled compile_one(const Problem& p, const Config& cfg, const nvptx::Target& target) {
  Compiled c;
  try {
    Specialization s = p.plan(cfg);
    if (!s.kernel) throw UserError("the problem's plan names no kernel for " + cfg.str());
    std::vector<int64_t> div(s.args.size());
    std::transform(s.args.begin(), s.args.end(), div.begin(), specialization_divisibility);
    auto f = s.kernel->specialize(s.config, div);
    std::string options = "warps=" + std::to_string(f->num_warps) + " stages=" + std::to_string(f->num_stages);
    c.key = cuda::make_cache_key(ir::to_string(*f), target, options, compiler_version());
    c.kernel = cuda::KernelCache::global().compiled(c.key, [&] { return nvptx::compile(*f, nvptx::CompileOptions{target}); });
    c.ok = true;
  } catch (const std::exception& e) {
    c.error = first_line(e.what());
  }
  return c;
}

}  // namespace

std::vector<Compiled> compile_all(const Problem& p, const std::vector<Config>& cfgs, const nvptx::Target& target,
                                  int threads) {
  std::vector<Compiled> out(cfgs.size());
  parallel_for(cfgs.size(), threads, [&](size_t i) { out[i] = compile_one(p, cfgs[i], target); });
  return out;
}

std::string kb(int64_t bytes) {
  char buf[32];
  if (bytes < 1024) std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  else if (bytes % 1024 == 0) std::snprintf(buf, sizeof buf, "%lld KB", static_cast<long long>(bytes / 1024));
  else std::snprintf(buf, sizeof buf, "%.1f KB", bytes / 1024.0);
  return buf;
}

}  // namespace tilefuse::tuning::detail
