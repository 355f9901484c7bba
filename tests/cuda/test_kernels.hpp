#pragma once
// Hand-written PTX kernels for the runtime tests (independent of the compiler).
#include <vector>

#include "tilefuse/nvptx/compiled_kernel.hpp"

namespace tf_test {

inline const char* kTestPtx = R"PTX(
.version 7.0
.target sm_80
.address_size 64

// y[i] = 2 * x[i] + a for i < n
.visible .entry axpb(.param .u64 y, .param .u64 x, .param .f32 a, .param .u32 n)
{
  .reg .pred %p;
  .reg .b32 %r<5>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [y];
  ld.param.u64 %rd2, [x];
  ld.param.f32 %f1, [a];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra DONE;
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f2, [%rd4];
  fma.rn.f32 %f3, %f2, 0f40000000, %f1;
  add.s64 %rd5, %rd1, %rd3;
  st.global.f32 [%rd5], %f3;
DONE:
  ret;
}

// y[i] = v for i < n (64-bit scalars)
.visible .entry fill64(.param .u64 y, .param .f64 v, .param .s64 n)
{
  .reg .pred %p;
  .reg .b32 %r<5>;
  .reg .f64 %d1;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [y];
  ld.param.f64 %d1, [v];
  ld.param.s64 %rd2, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.wide.u32 %rd3, %r2, %r3, 0;
  cvt.u64.u32 %rd4, %r4;
  add.s64 %rd3, %rd3, %rd4;
  setp.ge.s64 %p, %rd3, %rd2;
  @%p bra DONE;
  cvta.to.global.u64 %rd1, %rd1;
  shl.b64 %rd4, %rd3, 3;
  add.s64 %rd5, %rd1, %rd4;
  st.global.f64 [%rd5], %d1;
DONE:
  ret;
}

// Reverses x within each block through dynamic shared memory: y[i] = x[block + ntid-1-tid]
.extern .shared .align 16 .b8 dsmem[];
.visible .entry reverse_block(.param .u64 y, .param .u64 x)
{
  .reg .b32 %r<8>;
  .reg .f32 %f1;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [y];
  ld.param.u64 %rd2, [x];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  mov.u32 %r5, dsmem;
  shl.b32 %r6, %r3, 2;
  add.s32 %r6, %r5, %r6;
  st.shared.f32 [%r6], %f1;
  bar.sync 0;
  sub.s32 %r7, %r2, %r3;
  sub.s32 %r7, %r7, 1;
  shl.b32 %r7, %r7, 2;
  add.s32 %r7, %r5, %r7;
  ld.shared.f32 %f1, [%r7];
  add.s64 %rd5, %rd1, %rd3;
  st.global.f32 [%rd5], %f1;
  ret;
}

// Requires exactly 64 threads per block.
.visible .entry needs64() .reqntid 64, 1, 1
{
  ret;
}

// At most 64 threads per block (reported by CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).
.visible .entry max64() .maxntid 64, 1, 1
{
  ret;
}
)PTX";

inline tilefuse::nvptx::CompiledKernel test_kernel(const char* name, std::vector<tilefuse::nvptx::ParamAbi> params,
                                                   int num_warps = 4, int shared_bytes = 0) {
  tilefuse::nvptx::CompiledKernel k;
  k.name = name;
  k.ptx = kTestPtx;
  k.target = {80, false};
  k.num_warps = num_warps;
  k.shared_bytes = shared_bytes;
  k.params = std::move(params);
  return k;
}

using tilefuse::DType;
using P = tilefuse::nvptx::ParamAbi;
inline tilefuse::nvptx::CompiledKernel axpb_kernel() {
  return test_kernel("axpb", {P{true, DType::f32}, P{true, DType::f32}, P{false, DType::f32}, P{false, DType::u32}});
}

}  // namespace tf_test
