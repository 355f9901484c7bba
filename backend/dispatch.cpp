// Routes a checked launch to an executor: the CPU interpreter for host buffers,
// the CUDA runtime for device buffers.
#include "tilefuse/dsl/kernel.hpp"
#include "tilefuse/interp/interpreter.hpp"
#include "tilefuse/ir/knobs.hpp"
#include "tilefuse/launch_stream.hpp"

namespace tilefuse::detail {

void execute(const KernelBase& k, const Config& cfg, const Grid& grid, std::vector<ArgValue>& args, void* stream,
             const SourceLoc& loc) {
  bool host = false, device = false;
  for (auto& a : args) {
    host |= a.kind == ArgValue::Kind::HostBuffer;
    device |= a.kind == ArgValue::Kind::DevicePtr;
  }
  if (host && device)
    user_error("kernel '" + k.name() + "' was given both host and device buffers", loc,
               "Pass all buffers as host spans (interpreter) or all as device buffers (GPU)");
  std::string forced = knob("TILEFUSE_EXECUTOR");
  if (device || forced == "cuda") {
    if (!stream) stream = current_launch_stream();
    gpu_execute(k, cfg, grid, args, stream, loc);
    return;
  }
  interp::run(*k.specialize(cfg), grid, args);
}

}  // namespace tilefuse::detail
