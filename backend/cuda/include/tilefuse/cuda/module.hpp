#pragma once
// Loading compiled kernels into the driver and launching them.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/tensor_map.hpp"
#include "tilefuse/ir/kernel_args.hpp"
#include "tilefuse/nvptx/compiled_kernel.hpp"

namespace tilefuse::cuda {

// PTX assembled to SASS by the driver's linker (cuLinkCreate/AddData/Complete), for the
// current device. Errors throw CudaError with the JIT error log in the text.
struct Cubin {
  std::string bytes;     // the cubin image
  std::string info_log;  // ptxas-style info (registers, spills, shared memory)
  double jit_ms = 0;     // PTX -> SASS time
};
Cubin link_ptx_to_cubin(const std::string& ptx, const std::string& kernel_name);

// Whether the PTX is compiled as a whole program (cuModuleLoadDataEx) rather than through
// the linker, which compiles PTX as relocatable code. Every kernel is, by default:
// ptxas's relocatable code ignores the register budgets `setmaxnreg` sets (warp-specialized
// attention d128 spilled 248 bytes a thread, 17% slower), and gives other kernels other
// registers and schedules, slower on the H200 where they differ (bench/NOTES.md: attention
// d64 +4-12%, softmax bf16 1024x100002 +21 points of copy, f32 cross-entropy +12-14).
// TILEFUSE_WHOLE_PROGRAM_JIT=0 sends the kernels without setmaxnreg through the linker
// (whose cubin the disk cache keeps), for comparison.
bool needs_whole_program_jit(const std::string& ptx);

// One kernel loaded into the current device's primary context. Move-only; unloads its
// module when destroyed.
class LoadedKernel {
 public:
  // JIT-compiles the PTX with cuModuleLoadDataEx (info and error logs captured; the error
  // log is in the exception text) and prepares the launch (shared memory opt-in, checks).
  static LoadedKernel from_ptx(const nvptx::CompiledKernel& k);
  // Loads a cubin produced by link_ptx_to_cubin for this device; `k` gives the launch ABI.
  // jit_ms is the given value (the time spent producing the cubin, 0 for a cached one).
  static LoadedKernel from_cubin(const nvptx::CompiledKernel& k, std::string_view cubin, double jit_ms = 0,
                                 std::string jit_log = {});

  LoadedKernel(LoadedKernel&&) noexcept;
  LoadedKernel& operator=(LoadedKernel&&) noexcept;
  ~LoadedKernel();

  // Launches on `stream` (nullptr: the legacy default stream) with 32*num_warps threads
  // per block and shared_bytes of dynamic shared memory. `args` follow params() in
  // order: DevicePtr for pointers, Int for integer scalars, Float for float scalars.
  // A grid with a zero dimension launches nothing. Errors throw CudaError naming the
  // kernel and the launch configuration. Allocates nothing for up to 32 parameters.
  // A kernel with tensor maps gets them encoded from `args` (resolve_tensor_map: its
  // UserErrors name the view) and appended after the signature's parameters; a launch
  // with the same resolved values as the previous one reuses the encoded maps.
  void launch(const Grid& grid, const std::vector<ArgValue>& args, CUstream stream = nullptr) const;
  // Launch with a ready cuLaunchKernel parameter array (one pointer per parameter). For
  // a kernel with tensor_maps() the array must end with one pointer per map, in order,
  // to a 64-byte aligned CUtensorMap (encode_tensor_map) that stays alive until this returns.
  // A persistent kernel starts min(programs of `grid`, resident_programs()) blocks and
  // gets the grid's sizes as its last (hidden) parameters.
  void launch_raw(const Grid& grid, void** params, CUstream stream = nullptr) const;

  const std::string& name() const { return name_; }
  int num_warps() const { return num_warps_; }
  int threads_per_block() const { return 32 * num_warps_; }
  int shared_bytes() const { return shared_bytes_; }  // dynamic shared memory per launch
  const std::vector<nvptx::ParamAbi>& params() const { return params_; }
  // Hidden parameters after params(), encoded at each launch.
  const std::vector<nvptx::TensorMapSpec>& tensor_maps() const { return tensor_maps_; }
  nvptx::Target target() const { return target_; }
  int device() const { return device_; }

  double jit_ms() const { return jit_ms_; }    // PTX -> SASS (0 when loaded from a cached cubin)
  double load_ms() const { return load_ms_; }  // module load + function setup
  const std::string& jit_log() const { return jit_log_; }  // JIT info log (may be empty)
  int num_regs() const { return num_regs_; }
  int local_bytes() const { return local_bytes_; }          // per-thread local memory (spills)
  int static_shared_bytes() const { return static_shared_; }
  int max_threads_per_block() const { return max_threads_; }  // given registers and limits
  // Persistent kernels (nvptx::CompiledKernel::persistent): programs resident at once
  // on the device (occupancy x SMs, capped by TILEFUSE_PERSISTENT_PROGRAMS); 0 otherwise.
  int resident_programs() const { return resident_; }
  // Kernels in clusters: how many of its clusters the device holds at once (memory
  // clusters: programs per SM x SMs / cluster size)
  // (cuOccupancyMaxActiveClusters: a cluster's programs share one GPC, so this can be
  // well under programs per SM x SMs / cluster size); 0 where unknown.
  int resident_clusters() const { return resident_clusters_; }
  // Grids of at most this many blocks launch with programmatic dependent launch: the
  // kernel waits for the grids before it there (nvptx::CompiledKernel::
  // early_launch_max_blocks), so such a grid may start while the previous kernel in its
  // stream finishes. 0: none (also before sm_90, or with TILEFUSE_PDL=0).
  uint32_t early_launch_max_blocks() const { return early_launch_max_blocks_; }

  CUfunction function() const { return func_; }
  CUmodule module() const { return module_; }

  // "kernel 'name' with grid (x, y, z), T threads per block, S bytes of dynamic shared memory"
  std::string describe_launch(const Grid& grid) const;

 private:
  LoadedKernel() = default;
  void init_function(const nvptx::CompiledKernel& k);
  void print_resources() const;  // TILEFUSE_PRINT_RESOURCES
  void launch_slow(const Grid& grid, const std::vector<ArgValue>& args, CUstream stream) const;
  void encode_maps(const std::vector<ArgValue>& args, const Grid& grid, CUtensorMap* out) const;
  bool empty_grid(const Grid& g) const;  // true: launches nothing; throws for a negative dimension
  [[noreturn]] void bad_arg(size_t i, const ArgValue& a) const;
  [[noreturn]] void bad_grid(const Grid& g) const;
  [[noreturn]] void launch_failed(int rc, const Grid& g) const;
  void launch_persistent(const Grid& g, void** params, CUstream stream) const;
  // Memory clusters: the parameters with the cluster workspace after them.
  void launch_with_workspace(const Grid& g, void** params, CUstream stream) const;
  // cuLaunchKernel, or cuLaunchKernelEx with the cluster and early-launch attributes.
  int launch_blocks(unsigned gx, unsigned gy, unsigned gz, void** params, CUstream stream) const;

  enum class Slot : uint8_t { Ptr, I32, U32, I64, F32, F64, F16, BF16 };
  static bool marshal(Slot slot, const ArgValue& a, void* out);
  std::string name_;
  nvptx::Target target_;
  int num_warps_ = 4;
  int cluster_size_ = 1;
  int resident_clusters_ = 0;
  bool cluster_in_memory_ = false;        // nvptx::CompiledKernel::cluster_in_memory
  int64_t cluster_exchange_bytes_ = 0;    // per cluster; > 0: the launch passes a workspace
  int resident_programs_ = 0;             // memory clusters: programs the device holds at once
  int shared_bytes_ = 0;
  std::vector<nvptx::ParamAbi> params_;
  std::vector<Slot> slots_;
  std::vector<nvptx::TensorMapSpec> tensor_maps_;
  struct TensorMapCache;
  std::unique_ptr<TensorMapCache> map_cache_;  // set when tensor_maps_ is not empty
  int device_ = 0;
  CUcontext ctx_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction func_ = nullptr;
  double jit_ms_ = 0, load_ms_ = 0;
  std::string jit_log_;
  int num_regs_ = 0, local_bytes_ = 0, static_shared_ = 0, max_threads_ = 0;
  int resident_ = 0;  // persistent kernels: programs started per launch at most
  uint32_t early_launch_max_blocks_ = 0;
};

}  // namespace tilefuse::cuda
