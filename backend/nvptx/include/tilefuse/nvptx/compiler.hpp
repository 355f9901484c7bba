#pragma once
// The GPU compiler: tile IR -> GPU passes -> LLVM IR (nvptx64-nvidia-cuda) -> O3 -> PTX.
// Thread-safe: each call uses its own LLVM context; compile configs in parallel freely.
#include <string>

#include "tilefuse/ir/ir.hpp"
#include "tilefuse/nvptx/compiled_kernel.hpp"

namespace tilefuse::nvptx {

struct CompileOptions {
  Target target;
  int opt_level = 3;  // LLVM optimization level 0-3 (TILEFUSE_PTX_OPT overrides)
};

// Compiles one traced kernel specialization. Throws UserError for programs the backend
// cannot compile (unsupported parameter types, ...), InternalError on our bugs.
CompiledKernel compile(const ir::Function& f, const CompileOptions& opts);

// The same pipeline, keeping the timings and (with keep_text) the intermediate forms as
// text: tests, tools, dumps. Printing them costs ~20% of a large kernel's compile, which
// compile() skips.
struct CompileArtifacts {
  CompiledKernel kernel;
  std::string plan;           // tile IR annotated with layouts (dump_plan)
  std::string llvm_ir;        // before optimization
  std::string llvm_ir_opt;    // after O3
  bool linked_libdevice = false;
  double ms_plan = 0, ms_lower = 0, ms_opt = 0, ms_ptx = 0;
};
CompileArtifacts compile_with_artifacts(const ir::Function& f, const CompileOptions& opts, bool keep_text = true);

// Where libdevice was found ("" when it was not): the configure-time CUDA root,
// overridden by $CUDA_HOME / $CUDA_PATH, else /usr/local/cuda.
std::string libdevice_path();

}  // namespace tilefuse::nvptx
