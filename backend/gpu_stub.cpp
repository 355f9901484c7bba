// Placeholder until the CUDA executor is wired in.
#include "tilefuse/dsl/kernel.hpp"

namespace tilefuse::detail {
void gpu_execute(const KernelBase& k, const Config&, const Grid&, std::vector<ArgValue>&, void*, const SourceLoc& loc) {
  user_error("kernel '" + k.name() + "': the GPU executor is not available in this build", loc,
             "Pass host buffers to run on the interpreter");
}
}  // namespace tilefuse::detail

#include "tilefuse/gpu.hpp"
namespace tilefuse {
bool gpu_available(std::string* why) {
  if (why) *why = "this build has no GPU backend";
  return false;
}
const char* compiler_version() { return "tilefuse 0.1.0 (no GPU backend)"; }
}  // namespace tilefuse
