// Placeholder until the CUDA executor is wired in.
#include "tilefuse/dsl/kernel.hpp"

namespace tilefuse::detail {
void gpu_execute(const KernelBase& k, const Config&, const Grid&, std::vector<ArgValue>&, void*, const SourceLoc& loc) {
  user_error("kernel '" + k.name() + "': the GPU executor is not available in this build", loc,
             "Pass host buffers to run on the interpreter");
}
}  // namespace tilefuse::detail
