// Bandwidth of the gallery-shaped kernels on the GPU (GB/s, bytes read + written once,
// L2 flushed, median of 20). Informational: skipped unless asked for
// (test_nvptx_gpu --no-skip -tc='*bandwidth*').
#include <doctest/doctest.h>

#include <algorithm>

#include "gpu_diff.hpp"
#include "ir_kernels.hpp"
#include "tilefuse/cuda/stream.hpp"

using namespace tilefuse;

namespace {

// out[row, :] = in[row, :] (the copy baseline, same access pattern as the kernels).
std::unique_ptr<ir::Function> copy_rows(DType dt, int64_t block, int warps) {
  auto f = tftest::new_kernel("copy_rows", warps);
  ir::Builder b(*f);
  auto* out = b.param("out", ir::Type::pointer(dt));
  auto* in = b.param("in", ir::Type::pointer(dt), true);
  auto* n = b.param("n_cols", ir::Type::scalar(DType::i32));
  auto* stride = b.param("stride", ir::Type::scalar(DType::i64));
  auto* cols = b.arange(0, block);
  auto* mask = b.compare(ir::CmpPred::Lt, cols, n);
  auto* off = b.binary(ir::BinaryOp::Mul, b.program_id(0), stride);
  b.store(b.add_ptr(b.add_ptr(out, off), cols), b.load(b.add_ptr(b.add_ptr(in, off), cols), mask), mask);
  tftest::specialize16(*f);
  return f;
}

double median_ms(const cuda::LoadedKernel& k, Grid grid, const std::vector<ArgValue>& args) {
  cuda::L2Flusher flush;
  std::vector<float> ms;
  for (int i = 0; i < 23; ++i) {
    flush.flush();
    auto a = cuda::Event::create(), e = cuda::Event::create();
    a.record();
    k.launch(grid, args);
    e.record();
    e.synchronize();
    if (i >= 3) ms.push_back(cuda::Event::elapsed_ms(a, e));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void bench(const std::string& what, const ir::Function& f, int64_t rows, int64_t cols, DType dt, bool rms = false) {
  auto k = cuda::LoadedKernel::from_ptx(nvptx::compile(f, nvptx::CompileOptions{cuda::device_info().target()}));
  size_t bytes = rows * cols * byte_size(dt);
  void* out = cuda::mem_alloc(bytes);
  void* in = cuda::mem_alloc(bytes);
  void* w = cuda::mem_alloc(cols * byte_size(dt));
  cuda::memset_d8(in, 0x3c, bytes);
  cuda::memset_d8(w, 0x3c, cols * byte_size(dt));
  std::vector<ArgValue> args = {ArgValue::device(out, bytes, dt), ArgValue::device(in, bytes, dt)};
  if (rms) {
    args.push_back(ArgValue::device(w, cols * byte_size(dt), dt));
    args.push_back(ArgValue::integer(cols, DType::i32));
    args.push_back(ArgValue::integer(cols, DType::i32));
    args.push_back(ArgValue::real(1e-6, DType::f32));
  } else {
    args.push_back(ArgValue::integer(cols, DType::i32));
    args.push_back(ArgValue::integer(cols, DType::i64));
  }
  double ms = median_ms(k, Grid(rows), args);
  MESSAGE(what << ": " << rows << " x " << cols << " " << tilefuse::name(dt) << ", " << f.num_warps << " warps: " << ms * 1e3
               << " us, " << 2.0 * bytes / ms / 1e6 << " GB/s (" << k.num_regs() << " registers, " << k.local_bytes()
               << " bytes local)");
  cuda::mem_free(out);
  cuda::mem_free(in);
  cuda::mem_free(w);
}

}  // namespace

TEST_CASE("gpu bandwidth of copy, softmax and rmsnorm" * doctest::skip()) {
  if (!tftest::gpu_present()) return;
  for (int warps : {4, 8, 16}) bench("copy", *copy_rows(DType::bf16, 4096, warps), 8192, 4096, DType::bf16);
  for (int warps : {4, 8, 16}) bench("softmax", *tftest::softmax(DType::bf16, DType::bf16, 4096, warps), 8192, 4096, DType::bf16);
  for (int warps : {8, 16, 32}) bench("softmax", *tftest::softmax(DType::bf16, DType::bf16, 16384, warps), 8192, 16384, DType::bf16);
  for (int warps : {8, 16, 32}) bench("softmax", *tftest::softmax(DType::f32, DType::f32, 16384, warps), 8192, 16384, DType::f32);
  for (int warps : {4, 8, 16}) bench("rmsnorm", *tftest::rmsnorm(DType::bf16, 4096, warps), 8192, 4096, DType::bf16, true);
  for (int warps : {8, 16, 32}) bench("rmsnorm", *tftest::rmsnorm(DType::f32, 16384, warps), 8192, 16384, DType::f32, true);
}
