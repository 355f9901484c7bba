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

// A TMA tensor map (CUtensorMap) the launch encodes from the kernel's arguments and
// passes as a hidden 128-byte parameter after the signature's (in `tensor_maps` order).
// Dimensions are listed outermost first; a value is argument `param` when param >= 0,
// the launch grid's size along `grid_axis` when that is >= 0, else `constant`.
struct TensorMapSpec {
  struct Value {
    int param = -1;
    int64_t constant = 0;
    int grid_axis = -1;
    bool operator==(const Value&) const = default;
  };
  DType dtype = DType::bf16;  // element type
  int base_param = 0;         // the pointer parameter holding the tensor's address
  std::vector<Value> dims;    // global extent per dimension (elements)
  std::vector<Value> strides; // distance between neighbours per dimension (elements); innermost is 1
  std::vector<int> box;       // elements per dimension one copy moves
  int swizzle_bytes = 0;      // 0 (none), 32, 64 or 128: the shared-memory swizzle of the box
  bool operator==(const TensorMapSpec&) const = default;
};

// The default CompiledKernel::early_launch_max_blocks: any grid (TILEFUSE_PDL_BLOCKS bounds
// it). Bounding it to about one wave measured no better anywhere (H200, bench/NOTES.md).
inline constexpr uint32_t kEarlyLaunchMaxBlocks = 0xffffffffu;

// The bytes before the first cluster's block in a memory cluster workspace.
inline constexpr int64_t kClusterWorkspaceHeader = 256;

struct CompiledKernel {
  std::string name;               // entry symbol in the PTX
  std::string ptx;
  Target target;
  int num_warps = 4;              // threads per block = 32 * num_warps
  int cluster_size = 1;           // programs per cluster along x
  // Clusters the hardware does not hold (more than 16 programs, or a GPU before sm_90)
  // exchange their values through global memory instead: the launch sets no cluster
  // attribute and passes, after the tensor maps, a pointer to a zeroed workspace of
  // kClusterWorkspaceHeader + clusters x cluster_exchange_bytes bytes, which the kernel
  // leaves zeroed (its first word hands out the programs' order, see lower_cluster.cpp).
  bool cluster_in_memory = false;
  int64_t cluster_exchange_bytes = 0;  // 0: the kernel never exchanges (no workspace)
  int shared_bytes = 0;           // dynamic shared memory the launch must provide
  std::vector<ParamAbi> params;   // in signature order
  std::vector<TensorMapSpec> tensor_maps;  // hidden parameters after `params`
  // Programs loop over the grid (Config::persistent): the launch starts at most as many
  // programs as are resident at once, along x, and passes the grid's sizes (x, y, z:
  // three i32) as hidden parameters after the tensor maps.
  bool persistent = false;
  // Programmatic dependent launch (sm_90+), which hides the gap between dependent
  // kernels: in a grid of at most this many blocks the kernel waits for the grids before
  // it in its stream to finish (`griddepcontrol.wait` before any memory access), so the
  // launch may let such a grid start early. 0: never.
  uint32_t early_launch_max_blocks = 0;
};

}  // namespace tilefuse::nvptx
