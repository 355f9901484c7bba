#pragma once
// Helpers of the gallery PTX tests (test_gallery_ptx.cpp, test_row_kernels_ptx.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "tilefuse/kernels/registry.hpp"
#include "tilefuse/nvptx/compiler.hpp"
#include "tilefuse/tools/ptxas.hpp"

namespace gallery_ptx {

using namespace tilefuse;

// True (with a skip message) when the CUDA toolkit's ptxas is absent: the PTX tests then skip.
inline bool no_ptxas() {
  if (!tools::find_ptxas().empty()) return false;
  MESSAGE("[skip] ptxas not found (install the CUDA toolkit or set CUDA_HOME)");
  return true;
}

inline int count(const std::string& s, const std::regex& re) {
  return static_cast<int>(std::distance(std::sregex_iterator(s.begin(), s.end(), re), std::sregex_iterator()));
}

// The PTX of a gallery kernel compiled for sm_90a with every runtime argument known to
// be divisible by `divisibility` (1: pointers and widths of any alignment), the kernel's
// defaults filling in `cfg`.
inline std::string gallery_ptx_of(const std::string& kname, DType d, Config cfg, int64_t divisibility) {
  const auto& g = *std::find_if(kernels::gallery().begin(), kernels::gallery().end(),
                                [&](const auto& k) { return k.name == kname; });
  for (auto& [key, v] : g.default_config.meta)
    if (!cfg.has(key)) cfg.set(key, v);
  CAPTURE(kname);
  CAPTURE(name(d));
  CAPTURE(cfg.str());
  const KernelBase& k = g.get(d);
  auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), divisibility));
  return nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).ptx;
}

// gallery_ptx_of at divisibility 1; checks that ptxas assembles it without spills.
inline std::string assemble_unaligned(const std::string& kname, DType d, Config cfg) {
  std::string ptx = gallery_ptx_of(kname, d, cfg, 1);
  tools::PtxasResult r = tools::run_ptxas(ptx, "sm_90a");
  CHECK_MESSAGE(r.ok, r.log);
  CHECK(r.spill_stores == 0);
  return ptx;
}

}  // namespace gallery_ptx
