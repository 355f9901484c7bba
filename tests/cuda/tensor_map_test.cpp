// TMA tensor maps resolved against launch arguments, on the CPU: the driver-order
// conversion and the errors that name the view before the driver sees it.
#include <doctest/doctest.h>

#include <string>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/tensor_map.hpp"

using namespace tilefuse;
using namespace tilefuse::cuda;

namespace {

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

void* fake_device_address(uint64_t offset = 0) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(0x7f1200000000ull + offset));
}

// A bf16 [M, K] operand with row stride lda: arguments (A, M, K, lda).
nvptx::TensorMapSpec gemm_operand() {
  nvptx::TensorMapSpec s;
  s.dtype = DType::bf16;
  s.base_param = 0;
  s.dims = {{1, 0}, {2, 0}};
  s.strides = {{3, 0}, {-1, 1}};
  s.box = {128, 64};
  s.swizzle_bytes = 128;
  return s;
}

std::vector<ArgValue> gemm_args(int64_t M, int64_t K, int64_t lda, uint64_t offset = 0) {
  return {ArgValue::device(fake_device_address(offset), 0, DType::bf16), ArgValue::integer(M, DType::i32),
          ArgValue::integer(K, DType::i32), ArgValue::integer(lda, DType::i64)};
}

// The message of the UserError resolving throws ("" when it does not throw).
std::string resolve_error(const nvptx::TensorMapSpec& s, const std::vector<ArgValue>& args) {
  try {
    resolve_tensor_map(s, args, "gemm", 1);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a tensor map resolves to the driver's innermost-first arrays") {
  ResolvedTensorMap m = resolve_tensor_map(gemm_operand(), gemm_args(1000, 4099, 4104), "gemm", 0);
  CHECK(m.dtype == DType::bf16);
  CHECK(m.rank == 2);
  CHECK(m.address == 0x7f1200000000ull);
  CHECK(m.dims[0] == 4099);  // K, the innermost
  CHECK(m.dims[1] == 1000);  // M
  CHECK(m.strides[0] == 4104 * 2);  // the row stride in bytes; the innermost stride is implicit
  CHECK(m.box[0] == 64);
  CHECK(m.box[1] == 128);
  CHECK(m.swizzle_bytes == 128);
  CHECK(m.str() == "bf16 rank 2 at 0x7f1200000000: globalDim {4099, 1000}, globalStrides {8208} bytes, "
                   "boxDim {64, 128}, swizzle 128B");
  // Equal arguments resolve equal (the launch cache's key); another address does not.
  CHECK(m == resolve_tensor_map(gemm_operand(), gemm_args(1000, 4099, 4104)));
  CHECK_FALSE(m == resolve_tensor_map(gemm_operand(), gemm_args(1000, 4099, 4104, 4096)));
}

TEST_CASE("constants and three dimensions convert in order") {
  nvptx::TensorMapSpec s;  // f32 [batch=3, rows=arg 1, cols=96] with strides [arg 2, 128, 1]
  s.dtype = DType::f32;
  s.base_param = 0;
  s.dims = {{-1, 3}, {1, 0}, {-1, 96}};
  s.strides = {{2, 0}, {-1, 128}, {-1, 1}};
  s.box = {1, 32, 32};
  std::vector<ArgValue> args = {ArgValue::device(fake_device_address(), 0, DType::f32),
                                ArgValue::integer(200, DType::i32), ArgValue::integer(200 * 128, DType::i64)};
  ResolvedTensorMap m = resolve_tensor_map(s, args);
  CHECK(m.rank == 3);
  CHECK(m.dims[0] == 96);
  CHECK(m.dims[1] == 200);
  CHECK(m.dims[2] == 3);
  CHECK(m.strides[0] == 128 * 4);
  CHECK(m.strides[1] == 200 * 128 * 4);
  CHECK(m.box[0] == 32);
  CHECK(m.box[1] == 32);
  CHECK(m.box[2] == 1);
  CHECK(m.swizzle_bytes == 0);
  CHECK(contains(m.str(), "swizzle none"));
}

TEST_CASE("a view with a dimension of 0 is empty: a 1-element map that reads zeros") {
  auto m = tilefuse::cuda::resolve_tensor_map(gemm_operand(), gemm_args(1000, 0, 4104));
  CHECK(m.empty);
  CHECK(m.address == 0);  // the zero page is substituted when encoding
  CHECK(m.dims[0] == 1);
  CHECK(m.dims[1] == 1);
  CHECK(m.strides[0] == 16);
  CHECK(m.box[0] == 64);  // the box is the kernel's, whatever the view
  CHECK(!tilefuse::cuda::resolve_tensor_map(gemm_operand(), gemm_args(1000, 4099, 4104)).empty);
}

TEST_CASE("dimensions above 2^32 name the view and the fix") {
  std::string e = resolve_error(gemm_operand(), gemm_args((int64_t(1) << 32) + 1, 4099, 4104));
  CHECK(contains(e, "dimension 0 of 2 has 4294967297 elements"));
  CHECK(contains(e, "at most 2^32"));
  CHECK(resolve_error(gemm_operand(), gemm_args(int64_t(1) << 32, 64, 64)).empty());  // 2^32 itself is allowed
}

TEST_CASE("strides must be 16-byte multiples below 2^40 bytes, the innermost contiguous") {
  std::string e = resolve_error(gemm_operand(), gemm_args(1000, 4099, 4099));
  CHECK(contains(e, "dimension 0 of 2 has a stride of 4099 elements (8198 bytes), not a multiple of 16 bytes"));
  CHECK(contains(e, "pad the rows to a multiple of 8 elements (e.g. a stride of 4104)"));
  e = resolve_error(gemm_operand(), gemm_args(8, 4099, int64_t(1) << 39));  // 2^40 bytes of bf16
  CHECK(contains(e, "2^40 bytes or more"));
  CHECK(resolve_error(gemm_operand(), gemm_args(8, 4099, (int64_t(1) << 39) - 8)).empty());
  e = resolve_error(gemm_operand(), gemm_args(8, 4099, -4104));
  CHECK(contains(e, "negative stride"));

  nvptx::TensorMapSpec s = gemm_operand();
  s.strides[1] = {-1, 2};
  e = resolve_error(s, gemm_args(1000, 4099, 4104));
  CHECK(contains(e, "dimension 1 of 2 (the innermost) has a stride of 2 elements"));
  CHECK(contains(e, "contiguous"));
}

TEST_CASE("the base must be a 16-byte aligned device pointer") {
  std::string e = resolve_error(gemm_operand(), gemm_args(1000, 4099, 4104, 2));
  CHECK(contains(e, "kernel 'gemm'"));
  CHECK(contains(e, "the address 0x7f1200000002 of argument 0 is not 16-byte aligned (2 bytes past a boundary)"));
  CHECK(contains(e, "a multiple of 8 elements"));
  auto args = gemm_args(1000, 4099, 4104);
  args[0] = ArgValue::host(fake_device_address(), 64, DType::bf16);
  e = resolve_error(gemm_operand(), args);
  CHECK(contains(e, "argument 0 is the tensor's base and must be a device pointer, but got a host buffer"));
}

TEST_CASE("box dimensions outside 1..256 and narrow inner rows are rejected") {
  nvptx::TensorMapSpec s = gemm_operand();
  s.box = {512, 64};
  std::string e = resolve_error(s, gemm_args(1000, 4099, 4104));
  CHECK(contains(e, "has 512 elements along dimension 0 of 2"));
  CHECK(contains(e, "1..256"));
  s.box = {128, 0};
  CHECK(contains(resolve_error(s, gemm_args(1000, 4099, 4104)), "has 0 elements along dimension 1 of 2"));
  s.box = {128, 4};  // 8 bytes per row
  s.swizzle_bytes = 0;
  e = resolve_error(s, gemm_args(1000, 4099, 4104));
  CHECK(contains(e, "innermost dimension is 4 elements (8 bytes)"));
  CHECK(contains(e, "a multiple of 8 along dimension 1 of 2"));
}

TEST_CASE("a non-integer argument where an extent or stride is expected") {
  auto args = gemm_args(1000, 4099, 4104);
  args[2] = ArgValue::real(4099.0, DType::f32);
  std::string e = resolve_error(gemm_operand(), args);
  CHECK(contains(e, "argument 2 gives the extent of dimension 1 of 2 and must be an integer, but got a float"));
  args = gemm_args(1000, 4099, 4104);
  args[3] = ArgValue::device(fake_device_address(), 0, DType::i64);
  e = resolve_error(gemm_operand(), args);
  CHECK(contains(e, "argument 3 gives the stride of dimension 0 of 2 and must be an integer, but got a device pointer"));
}

TEST_CASE("a malformed spec is the compiler's bug") {
  nvptx::TensorMapSpec s = gemm_operand();
  s.box = {128};
  CHECK_THROWS_AS(resolve_tensor_map(s, gemm_args(1000, 4099, 4104)), InternalError);
  s = gemm_operand();
  s.dims[0] = {7, 0};  // no argument 7
  CHECK_THROWS_AS(resolve_tensor_map(s, gemm_args(1000, 4099, 4104)), InternalError);
}

TEST_CASE("encoding without a driver throws the driver-missing error") {
  if (driver_available()) return;  // covered by the GPU tests
  alignas(128) unsigned char storage[128];
  CHECK_THROWS_AS(encode_tensor_map(gemm_operand(), gemm_args(1000, 4099, 4104),
                                    reinterpret_cast<CUtensorMap*>(storage), "gemm"),
                  UserError);
}
