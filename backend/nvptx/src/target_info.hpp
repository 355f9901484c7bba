#pragma once
// Target quirks behind one small interface: what the chosen architecture has.
#include <algorithm>
#include <string>

#include "tilefuse/nvptx/compiled_kernel.hpp"

namespace tilefuse::nvptx {

class TargetInfo {
 public:
  explicit TargetInfo(Target t) : t_(t) {}
  const Target& target() const { return t_; }
  std::string cpu() const;       // LLVM CPU name: sm_80, sm_90a
  std::string features() const;  // LLVM feature string (PTX ISA version)
  // Raises the PTX ISA version to at least `v` (e.g. 74 for L1 eviction hints).
  void require_ptx(int v) { min_ptx_ = std::max(min_ptx_, v); }
  // The CPU's default PTX ISA version in LLVM 19.
  int default_ptx() const;
  int threads_per_warp() const { return 32; }
  // Native f32 atomic max/min in PTX (sm_90+); older targets use the integer trick.
  bool has_float_atomic_minmax() const { return t_.sm >= 90; }
  // wgmma / setmaxnreg exist only with the architecture-specific target.
  bool has_wgmma() const { return t_.sm == 90 && t_.arch_specific; }
  // Programmatic dependent launch (griddepcontrol, PTX ISA 7.8): sm_90 and newer.
  bool has_grid_dependency_control() const { return t_.sm >= 90; }
  int max_shared_bytes() const { return t_.sm >= 90 ? 232448 : (t_.sm == 80 ? 166912 : 101376); }

 private:
  Target t_;
  int min_ptx_ = 0;
};

}  // namespace tilefuse::nvptx
