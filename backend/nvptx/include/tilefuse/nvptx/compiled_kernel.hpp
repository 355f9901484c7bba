#pragma once
// What the GPU compiler hands the runtime: PTX plus what a launch needs to know.
// Shared contract between backend/nvptx (producer) and backend/cuda (consumer).
#include <cstdint>
#include <string>
#include <vector>

#include "tilefuse/ir/dtype.hpp"

namespace tilefuse::nvptx {

// A CUDA compute capability target: sm_80, sm_90, or sm_90a (arch-specific features).
struct Target {
  int sm = 90;                    // 80, 86, 89, 90, ...
  bool arch_specific = false;     // the "a" suffix (wgmma, setmaxnreg): runs only on that exact arch
  std::string name() const { return "sm_" + std::to_string(sm) + (arch_specific ? "a" : ""); }
  bool operator==(const Target&) const = default;
};
// Parses "sm_80", "sm_90", "sm_90a"; throws UserError on anything else.
Target parse_target(const std::string& s);

// How one kernel parameter is passed at launch (the PTX .param type).
struct ParamAbi {
  bool is_pointer = false;  // .u64 global address
  DType dtype = DType::i32; // scalar type (i32, u32, i64, f32, f64) or the pointee
};

struct CompiledKernel {
  std::string name;               // entry symbol in the PTX
  std::string ptx;
  Target target;
  int num_warps = 4;              // threads per block = 32 * num_warps
  int cluster_size = 1;           // blocks per thread-block cluster along x (launch attribute)
  int shared_bytes = 0;           // dynamic shared memory the launch must provide
  std::vector<ParamAbi> params;   // in signature order
};

}  // namespace tilefuse::nvptx
