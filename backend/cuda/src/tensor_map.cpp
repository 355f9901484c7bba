// TMA tensor maps: resolving a spec against launch arguments, and the driver's encoding.
#include "tilefuse/cuda/tensor_map.hpp"

#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "driver_api.hpp"

namespace tilefuse::cuda {
namespace {

constexpr uint64_t kMaxDim = uint64_t(1) << 32;          // globalDim <= 2^32
constexpr uint64_t kMaxStrideBytes = uint64_t(1) << 40;  // globalStrides < 2^40
constexpr int64_t kMaxBox = 256;
constexpr uint64_t kAlign = 16;  // address and strides

const char* kind_text(ArgValue::Kind k) {
  switch (k) {
    case ArgValue::Kind::HostBuffer: return "a host buffer";
    case ArgValue::Kind::DevicePtr: return "a device pointer";
    case ArgValue::Kind::Int: return "an integer";
    case ArgValue::Kind::Float: return "a float";
  }
  return "an unknown argument";
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// One resolution: the spec, the arguments and the message prefix naming them.
struct Resolver {
  const nvptx::TensorMapSpec& spec;
  const std::vector<ArgValue>& args;
  std::string_view kernel;
  int index;
  Grid grid;

  std::string where() const {
    std::string r = kernel.empty() ? std::string() : "kernel '" + std::string(kernel) + "': ";
    return r + "TMA tensor map " + std::to_string(index) + " (the " + name(spec.dtype) + " view of argument " +
           std::to_string(spec.base_param) + ")";
  }
  // Dimensions are named outermost first, as the kernel indexes the view.
  std::string dim_name(size_t d) const {
    return "dimension " + std::to_string(d) + " of " + std::to_string(spec.dims.size());
  }
  [[noreturn]] void fail(const std::string& what) const { throw UserError(where() + ": " + what); }

  const ArgValue& arg(int param) const {
    if (param < 0 || static_cast<size_t>(param) >= args.size())
      internal_error(where() + " refers to argument " + std::to_string(param) + " of " + std::to_string(args.size()));
    return args[static_cast<size_t>(param)];
  }

  int64_t value(const nvptx::TensorMapSpec::Value& v, const char* what, size_t d) const {
    if (v.grid_axis >= 0) return v.grid_axis == 0 ? grid.x : v.grid_axis == 1 ? grid.y : grid.z;
    if (v.param < 0) return v.constant;
    const ArgValue& a = arg(v.param);
    if (a.kind != ArgValue::Kind::Int)
      fail("argument " + std::to_string(v.param) + " gives the " + what + " of " + dim_name(d) +
           " and must be an integer, but got " + kind_text(a.kind) + "; pass the " + what + " as an integer");
    return a.i;
  }

  uint64_t address() const {
    const ArgValue& a = arg(spec.base_param);
    if (a.kind != ArgValue::Kind::DevicePtr)
      fail("argument " + std::to_string(spec.base_param) + " is the tensor's base and must be a device pointer, but got " +
           kind_text(a.kind) + (a.kind == ArgValue::Kind::HostBuffer ? "; copy it to the device first" : ""));
    uint64_t p = reinterpret_cast<uintptr_t>(a.ptr);
    if (p % kAlign != 0)
      fail("the address " + hex(p) + " of argument " + std::to_string(spec.base_param) + " is not 16-byte aligned (" +
           std::to_string(p % kAlign) + " bytes past a boundary); TMA needs 16-byte aligned tensors: start the view " +
           "at a multiple of " + std::to_string(kAlign / byte_size(spec.dtype)) + " elements from an allocation");
    return p;
  }

  uint64_t dim(size_t d) const {
    int64_t n = value(spec.dims[d], "extent", d);
    if (n < 1) return 0;  // an empty view
    if (static_cast<uint64_t>(n) > kMaxDim)
      fail(dim_name(d) + " has " + std::to_string(n) + " elements; TMA allows at most 2^32 (4294967296) per " +
           "dimension: split the tensor into smaller views");
    return static_cast<uint64_t>(n);
  }

  // The stride in bytes; the innermost must be 1 element (TMA has no stride there).
  uint64_t stride_bytes(size_t d) const {
    const int64_t es = byte_size(spec.dtype);
    int64_t s = value(spec.strides[d], "stride", d);
    bool inner = d + 1 == spec.strides.size();
    if (inner) {
      if (s != 1)
        fail(dim_name(d) + " (the innermost) has a stride of " + std::to_string(s) + " elements; TMA needs it " +
             "contiguous (stride 1): pass a contiguous tensor (copy it first)");
      return static_cast<uint64_t>(es);
    }
    if (s < 0)
      fail(dim_name(d) + " has a negative stride (" + std::to_string(s) + " elements); TMA needs non-negative " +
           "strides: pass a tensor with positive strides (copy it first)");
    if (static_cast<uint64_t>(s) >= kMaxStrideBytes / static_cast<uint64_t>(es))
      fail(dim_name(d) + " has a stride of " + std::to_string(s) + " elements, 2^40 bytes or more; TMA needs " +
           "strides below 2^40 bytes: split the tensor into smaller views");
    uint64_t b = static_cast<uint64_t>(s) * static_cast<uint64_t>(es);
    if (b % kAlign != 0) {
      int64_t per = static_cast<int64_t>(kAlign) / es;  // elements per 16 bytes
      fail(dim_name(d) + " has a stride of " + std::to_string(s) + " elements (" + std::to_string(b) +
           " bytes), not a multiple of 16 bytes; TMA needs 16-byte multiples: pad the rows to a multiple of " +
           std::to_string(per) + " elements (e.g. a stride of " + std::to_string((s + per - 1) / per * per) + ")");
    }
    return b;
  }

  uint32_t box(size_t d) const {
    int64_t b = spec.box[d];
    if (b < 1 || b > kMaxBox)
      fail("the box (the block one copy moves) has " + std::to_string(b) + " elements along " + dim_name(d) +
           "; TMA moves 1..256 elements per dimension: use a block size of at most 256 along it");
    return static_cast<uint32_t>(b);
  }
};

CUtensorMapDataType data_type(DType t) {
  switch (t) {
    case DType::i1: case DType::i8: case DType::u8: case DType::f8e4m3: case DType::f8e5m2:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // copies move bits
    case DType::i16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case DType::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DType::u32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case DType::i64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::f64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  }
  internal_error(std::string("no TMA data type for ") + name(t));
}

CUtensorMapSwizzle swizzle(int bytes) {
  switch (bytes) {
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

template <class A>
std::string list(const A& a, int n) {
  std::string r = "{";
  for (int i = 0; i < n; ++i) r += (i ? ", " : "") + std::to_string(a[static_cast<size_t>(i)]);
  return r + "}";
}

}  // namespace

std::string ResolvedTensorMap::str() const {
  return std::string(name(dtype)) + " rank " + std::to_string(rank) + " at " + hex(address) + ": globalDim " +
         list(dims, rank) + ", globalStrides " + list(strides, rank - 1) + " bytes, boxDim " + list(box, rank) +
         ", swizzle " + (swizzle_bytes ? std::to_string(swizzle_bytes) + "B" : std::string("none"));
}

namespace {

// 16 zero bytes in the current context, allocated once per context and kept (the
// address of empty views' maps).
uint64_t zero_page() {
  static std::mutex m;
  static std::unordered_map<CUcontext, CUdeviceptr> pages;
  const detail::DriverApi& A = detail::api();
  CUcontext ctx = nullptr;
  detail::check(A.CtxGetCurrent(&ctx), "cuCtxGetCurrent", "(zero page of empty tensor views)");
  std::lock_guard<std::mutex> lock(m);
  CUdeviceptr& p = pages[ctx];
  if (!p) {
    detail::check(A.MemAlloc(&p, 256), "cuMemAlloc", "(zero page of empty tensor views)");
    detail::check(A.MemsetD8(p, 0, 256), "cuMemsetD8", "(zero page of empty tensor views)");
  }
  return static_cast<uint64_t>(p);
}

}  // namespace

ResolvedTensorMap resolve_tensor_map(const nvptx::TensorMapSpec& spec, const std::vector<ArgValue>& args,
                                     std::string_view kernel, int index, const Grid& grid) {
  Resolver r{spec, args, kernel, index, grid};
  const size_t rank = spec.dims.size();
  if (rank < 1 || rank > static_cast<size_t>(kMaxTensorMapRank) || spec.strides.size() != rank ||
      spec.box.size() != rank)
    internal_error(r.where() + " has " + std::to_string(rank) + " dimensions, " + std::to_string(spec.strides.size()) +
                   " strides and " + std::to_string(spec.box.size()) + " box sizes (TMA takes 1 to 5 of each)");
  if (spec.swizzle_bytes != 0 && spec.swizzle_bytes != 32 && spec.swizzle_bytes != 64 && spec.swizzle_bytes != 128)
    internal_error(r.where() + " has a swizzle of " + std::to_string(spec.swizzle_bytes) + " bytes");

  ResolvedTensorMap m;
  m.dtype = spec.dtype;
  m.rank = static_cast<int>(rank);
  m.swizzle_bytes = spec.swizzle_bytes;
  m.address = r.address();
  for (size_t d = 0; d < rank; ++d) {  // spec index d is driver index rank-1-d
    size_t k = rank - 1 - d;
    m.dims[k] = r.dim(d);
    m.empty = m.empty || m.dims[k] == 0;
    uint64_t s = r.stride_bytes(d);
    if (k > 0) m.strides[k - 1] = s;
    m.box[k] = r.box(d);
  }
  if (m.empty) {  // no element: a 1-element map on a zero page reads the same zeros
    m.address = 0;
    for (size_t k = 0; k < rank; ++k) m.dims[k] = 1;
    for (size_t k = 0; k + 1 < rank; ++k) m.strides[k] = kAlign;
  }
  const uint64_t row = uint64_t(m.box[0]) * static_cast<uint64_t>(byte_size(spec.dtype));
  if (row % kAlign != 0)
    r.fail("the box's innermost dimension is " + std::to_string(m.box[0]) + " elements (" + std::to_string(row) +
           " bytes); TMA needs a multiple of 16 bytes: use a block size that is a multiple of " +
           std::to_string(kAlign / byte_size(spec.dtype)) + " along " + r.dim_name(rank - 1));
  if (spec.swizzle_bytes != 0 && row > static_cast<uint64_t>(spec.swizzle_bytes))
    internal_error(r.where() + ": an inner box row of " + std::to_string(row) + " bytes is wider than its " +
                   std::to_string(spec.swizzle_bytes) + "-byte swizzle");
  return m;
}

void encode_tensor_map(const ResolvedTensorMap& m, CUtensorMap* out, std::string_view kernel) {
  const detail::DriverApi& A = detail::api();
  std::string who = kernel.empty() ? std::string("a kernel") : "kernel '" + std::string(kernel) + "'";
  if (!A.TensorMapEncodeTiled)
    throw UserError(who + " uses TMA tensor maps, but the CUDA driver (version " + std::to_string(A.version) +
                    ") has no cuTensorMapEncodeTiled; update the NVIDIA driver");
  const cuuint32_t element_strides[kMaxTensorMapRank] = {1, 1, 1, 1, 1};
  const uint64_t address = m.empty ? zero_page() : m.address;
  // Wider L2 fetches pay off once a box row fills a 128-byte line.
  const bool wide = uint64_t(m.box[0]) * static_cast<uint64_t>(byte_size(m.dtype)) >= 128;
  CUresult rc = A.TensorMapEncodeTiled(
      out, data_type(m.dtype), static_cast<cuuint32_t>(m.rank), reinterpret_cast<void*>(static_cast<uintptr_t>(address)),
      m.dims.data(), m.strides.data(), m.box.data(), element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle(m.swizzle_bytes), wide ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) detail::throw_error(rc, "cuTensorMapEncodeTiled", "(" + who + ", tensor map " + m.str() + ")");
}

void encode_tensor_map(const nvptx::TensorMapSpec& spec, const std::vector<ArgValue>& args, CUtensorMap* out,
                       std::string_view kernel, int index, const Grid& grid) {
  encode_tensor_map(resolve_tensor_map(spec, args, kernel, index, grid), out, kernel);
}

}  // namespace tilefuse::cuda
