#pragma once
// Shared by the GPU-compiler tests: compile for sm_80 and sm_90a, assemble with ptxas.
#include <doctest/doctest.h>

#include "ptxas.hpp"
#include "tilefuse/nvptx/compiler.hpp"

namespace tftest {

inline tilefuse::nvptx::CompileOptions opts_for(const char* t) {
  return tilefuse::nvptx::CompileOptions{tilefuse::nvptx::parse_target(t)};
}

// Compiles for sm_80 and sm_90a and assembles both; returns the sm_90a artifacts.
inline tilefuse::nvptx::CompileArtifacts compile_and_assemble(const tilefuse::ir::Function& f, const std::string& tag,
                                                              bool expect_no_spill = false) {
  tilefuse::nvptx::CompileArtifacts last;
  for (const char* t : {"sm_80", "sm_90a"}) {
    const std::string target = t;
    INFO("kernel " << tag << " target " << target);
    auto art = tilefuse::nvptx::compile_with_artifacts(f, opts_for(t));
    CHECK(art.kernel.name == f.name);
    // A warp-specialized kernel adds its producer warpgroup.
    CHECK((art.kernel.num_warps == f.num_warps || (f.warp_specialize && art.kernel.num_warps == f.num_warps + 4)));
    CHECK(art.kernel.params.size() == f.params.size());
    CHECK(art.kernel.ptx.find(".entry " + f.name) != std::string::npos);
    auto r = run_ptxas(art.kernel.ptx, t, tag);
    if (!r.ran) {
      MESSAGE("ptxas not found; skipping assembly of " << tag);
    } else {
      INFO(r.log);
      if (r.status != 0) INFO(art.plan << "\n" << art.kernel.ptx);
      CHECK(r.status == 0);
      // C7515/C7511/C7508: ptxas serialized the warpgroup MMAs or ignored setmaxnreg.
      CHECK(r.log.find("C75") == std::string::npos);
      if (expect_no_spill) CHECK(r.spill_stores == 0);
    }
    last = std::move(art);
  }
  return last;
}

}  // namespace tftest
