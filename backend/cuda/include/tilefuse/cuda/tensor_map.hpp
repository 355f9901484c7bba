#pragma once
// TMA tensor maps: a kernel's nvptx::TensorMapSpec resolved against one launch's
// arguments, checked against the driver's limits, then encoded into a CUtensorMap.
// Resolution needs no GPU (tests check its errors on the CPU); encoding calls the driver.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tilefuse/ir/dtype.hpp"
#include "tilefuse/ir/kernel_args.hpp"
#include "tilefuse/nvptx/compiled_kernel.hpp"

// Declared exactly as cuda.h declares it (see driver.hpp), so this header needs no toolkit.
typedef struct CUtensorMap_st CUtensorMap;

namespace tilefuse::cuda {

constexpr int kMaxTensorMapRank = 5;  // cuTensorMapEncodeTiled's limit

// The values cuTensorMapEncodeTiled takes, in the driver's order: innermost dimension
// first (the spec lists outermost first).
struct ResolvedTensorMap {
  DType dtype = DType::bf16;
  int rank = 0;
  uint64_t address = 0;                                   // 16-byte aligned
  std::array<uint64_t, kMaxTensorMapRank> dims{};         // globalDim: elements, 1..2^32
  std::array<uint64_t, kMaxTensorMapRank - 1> strides{};  // globalStrides: bytes, dims 1..rank-1
  std::array<uint32_t, kMaxTensorMapRank> box{};          // boxDim: elements, 1..256
  int swizzle_bytes = 0;                                  // 0, 32, 64 or 128
  // A view with a dimension of 0 (or less) holds no element, so every copy from it must
  // read zeros: it is encoded as a 1-element tensor (all dims 1) on a zeroed device page
  // (the address and strides given here are placeholders).
  bool empty = false;
  bool operator==(const ResolvedTensorMap&) const = default;
  // "bf16 rank 2 at 0x7f..00: globalDim {4099, 1000}, globalStrides {8208} bytes, boxDim {64, 128}, swizzle 128B"
  std::string str() const;
};

// Resolves `spec` against `args` (the signature's arguments): a dimension or stride is
// args[param].i (an Int argument) or the constant; the address is args[base_param] (a
// DevicePtr). Throws UserError naming the kernel, tensor map `index`, the dimension
// (outermost first, as the kernel indexes the view), the value and the fix, when TMA
// cannot describe the view: a dimension above 2^32 (one below 1 makes the view empty), an innermost stride other than
// 1, a stride not a multiple of 16 bytes or >= 2^40, an address not 16-byte aligned, a
// box dimension outside 1..256 or an inner box row not a multiple of 16 bytes (or wider
// than the swizzle span), or a non-Int argument where an integer is expected.
// A malformed spec (the compiler's bug) throws InternalError.
// Sizes taken from the launch grid (TensorMapSpec::Value::grid_axis) come from `grid`.
ResolvedTensorMap resolve_tensor_map(const nvptx::TensorMapSpec& spec, const std::vector<ArgValue>& args,
                                     std::string_view kernel = {}, int index = 0, const Grid& grid = {});

// cuTensorMapEncodeTiled of a resolved map into *out (64-byte aligned): no interleave,
// element strides 1, out-of-bounds elements read as zero, L2 promotion of 128 bytes
// (256 when the box's inner row is 128 bytes or more). Throws UserError when the driver
// lacks the entry point and CudaError (with the map's values) when the call fails.
void encode_tensor_map(const ResolvedTensorMap& map, CUtensorMap* out, std::string_view kernel = {});
// resolve_tensor_map, then encode_tensor_map.
void encode_tensor_map(const nvptx::TensorMapSpec& spec, const std::vector<ArgValue>& args, CUtensorMap* out,
                       std::string_view kernel = {}, int index = 0, const Grid& grid = {});

}  // namespace tilefuse::cuda
