// GPU differential tests of the compiler: each kernel runs on the interpreter and on
// the device (PTX for sm_80 and for the device's own target) with the same inputs.
// Every case skips with a message when no CUDA driver is present.
#include <doctest/doctest.h>

#include <cmath>

#include "gpu_diff.hpp"
#include "op_kernels.hpp"
#include "tilefuse/kernels/scaled_matmul.hpp"

using namespace tilefuse;
using tftest::Arg;
using tftest::buffer;
using tftest::gpu_matches_interp;

namespace {

std::string tag(const std::string& base, std::initializer_list<std::string> parts) {
  std::string s = base;
  for (auto& p : parts) s += "_" + p;
  return s;
}

// Arguments of a TileKernel-shaped function: (out, in..., n).
std::vector<Arg> tile_args(const ir::Function& f, int64_t numel, int64_t n, double lo, double hi,
                           double lo1 = NAN, double hi1 = NAN) {
  std::vector<Arg> a;
  for (size_t i = 0; i + 1 < f.params.size(); ++i) {
    DType d = f.params[i].value->type.dtype;
    bool second = i == 2 && !std::isnan(lo1);
    a.push_back(buffer(d, numel, second ? lo1 : lo, second ? hi1 : hi, static_cast<uint32_t>(i + 1)));
  }
  a.push_back(Arg::scalar_int(n));
  return a;
}

}  // namespace

TEST_CASE("gpu: softmax-like kernels match the interpreter") {
  struct C {
    DType in, out;
    int64_t block;
    int warps;
    bool aligned;
    int64_t n_cols;
  };
  for (auto c : {C{DType::bf16, DType::bf16, 1024, 4, true, 1008}, C{DType::f32, DType::f32, 4096, 8, true, 4096},
                 C{DType::f32, DType::f32, 16384, 8, true, 16368}, C{DType::bf16, DType::f32, 4096, 4, true, 4000},
                 C{DType::f32, DType::f32, 16384, 32, true, 16384}, C{DType::bf16, DType::bf16, 4096, 16, false, 4095},
                 C{DType::f32, DType::f32, 8, 2, false, 7},
                 C{DType::f32, DType::bf16, 2048, 4, false, 2001}, C{DType::f16, DType::f16, 16, 1, false, 13},
                 C{DType::f32, DType::f32, 128, 4, true, 128}, C{DType::bf16, DType::bf16, 256, 1, false, 255}}) {
    auto f = tftest::softmax(c.in, c.out, c.block, c.warps, c.aligned);
    int64_t rows = 5, stride = c.block;
    std::vector<Arg> a = {buffer(c.out, rows * stride, 0, 0), buffer(c.in, rows * stride, -4, 4, 2),
                          Arg::scalar_int(c.n_cols), Arg::scalar_int(stride, DType::i64)};
    gpu_matches_interp(*f, Grid(rows), a, tag("softmax", {name(c.in), std::to_string(c.block), std::to_string(c.warps)}));
  }
}

TEST_CASE("gpu: rmsnorm-like kernels match the interpreter") {
  for (auto [dt, block, warps, n] : {std::tuple{DType::bf16, int64_t(4096), 8, int64_t(4096)},
                                     std::tuple{DType::f32, int64_t(1024), 4, int64_t(1008)},
                                     std::tuple{DType::f16, int64_t(64), 1, int64_t(48)},
                                     std::tuple{DType::f32, int64_t(16384), 32, int64_t(16384)}}) {
    auto f = tftest::rmsnorm(dt, block, warps);
    int64_t rows = 3;
    std::vector<Arg> a = {buffer(dt, rows * block, 0, 0), buffer(dt, rows * block, -2, 2, 3), buffer(dt, block, 0.5, 1.5, 4),
                          Arg::scalar_int(n), Arg::scalar_int(block), Arg::scalar_float(1e-5)};
    gpu_matches_interp(*f, Grid(rows), a, tag("rmsnorm", {name(dt), std::to_string(block)}));
  }
}

TEST_CASE("gpu: flash-attention-like loop matches the interpreter") {
  for (auto [bm, bn, d, warps] : {std::tuple{64, 64, 64, 4}, std::tuple{16, 16, 16, 1}, std::tuple{128, 32, 64, 8},
                                  std::tuple{32, 64, 128, 4}}) {
    auto f = tftest::attention(bm, bn, d, warps);
    int64_t n_ctx = 4 * bn, m = 2 * bm;
    std::vector<Arg> a = {buffer(DType::f16, m * d, 0, 0), buffer(DType::f16, m * d, -1, 1, 5),
                          buffer(DType::f16, n_ctx * d, -1, 1, 6), buffer(DType::f16, n_ctx * d, -1, 1, 7),
                          Arg::scalar_int(d), Arg::scalar_int(n_ctx), Arg::scalar_float(0.125 * 1.4426950408889634)};
    gpu_matches_interp(*f, Grid(m / bm), a, tag("attention", {std::to_string(bm), std::to_string(bn), std::to_string(d)}));
  }
}

TEST_CASE("gpu: elementwise ops, math and casts") {
  for (DType dt : {DType::i32, DType::u32, DType::i64, DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8,
                   DType::u8, DType::i16}) {
    auto f = tftest::binary_kernel(dt);
    gpu_matches_interp(*f, Grid(1), tile_args(*f, 256, 250, -20, 20, 1, 7), tag("binary", {name(dt)}));
  }
  for (DType dt : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (bool approx : {false, true}) {
      auto f = tftest::unary_kernel(dt, approx);
      tftest::Tol t = tftest::tol_for(dt);
      if (approx && dt == DType::f32) t = {1e-3, 1e-3};
      gpu_matches_interp(*f, Grid(1), tile_args(*f, 512, 512, 0.1, 2), tag("unary", {name(dt), approx ? "approx" : ""}), &t);
    }
  for (DType dt : {DType::i32, DType::u32, DType::i64, DType::i8}) {
    auto f = tftest::int_unary_kernel(dt);
    gpu_matches_interp(*f, Grid(1), tile_args(*f, 128, 128, -100, 100), tag("intunary", {name(dt)}));
  }
  for (DType dt : {DType::i32, DType::u32, DType::f32, DType::f16, DType::i64}) {
    auto f = tftest::cmpsel_kernel(dt);
    gpu_matches_interp(*f, Grid(1), tile_args(*f, 512, 500, -3, 3), tag("cmpsel", {name(dt)}));
  }
  for (DType from : tftest::all_dtypes()) {
    auto f = tftest::cast_kernel(from);
    tftest::Tol t{1e-2, 1e-2};
    gpu_matches_interp(*f, Grid(1), tile_args(*f, 64, 64, -300, 300), tag("casts", {name(from)}), &t);
  }
}

TEST_CASE("gpu: program ids and shape ops") {
  auto f = tftest::shapes_kernel();
  auto a = tile_args(*f, 512, 512, -2, 2);
  a[0] = buffer(DType::f32, 8 * 512, 0, 0);
  gpu_matches_interp(*f, Grid(2, 2, 2), a, "shapes");
}

TEST_CASE("gpu: loads and stores with masks, other values, hints, bools and scalars") {
  for (DType dt : {DType::i1, DType::i8, DType::f16, DType::f32, DType::i64, DType::f64})
    for (int64_t n : {int64_t(16), int64_t(128), int64_t(2048)})
      for (bool lim16 : {true, false}) {
        auto f = tftest::memory_kernel(dt, n, lim16);
        std::vector<Arg> a = {buffer(dt, 2 * n, 0, 0), buffer(dt, n, -5, 5, 9), Arg::scalar_int(n - (lim16 ? 16 : 5))};
        gpu_matches_interp(*f, Grid(1), a, tag("memory", {name(dt), std::to_string(n), lim16 ? "lim16" : "lim"}));
      }
}

TEST_CASE("gpu: atomics and cas, including replicated small tiles") {
  for (auto& [op, dt] : tftest::atomic_cases())
    for (int64_t n : {int64_t(16), int64_t(256)}) {
      auto f = tftest::atomic_kernel(op, dt, n);
      std::vector<Arg> a = {buffer(dt, n, -50, 50, 11), buffer(dt, n + 1, 0, 0), Arg::scalar_int(n - 3)};
      gpu_matches_interp(*f, Grid(1), a, tag("atomics", {ir::name(op), name(dt), std::to_string(n)}));
    }
  for (DType dt : {DType::i32, DType::u32, DType::i64, DType::f32}) {
    auto f = tftest::cas_kernel(dt);
    std::vector<Arg> a = {buffer(dt, 65, 0, 2, 12), buffer(dt, 65, 0, 0)};
    gpu_matches_interp(*f, Grid(1), a, tag("cas", {name(dt)}));
  }
}

TEST_CASE("gpu: reductions of every kind") {
  for (auto& [shape, warps] : tftest::reduce_shapes())
    for (DType dt : {DType::f32, DType::i32, DType::f16}) {
      auto f = tftest::reduce_kernel(shape, warps, dt, dt != DType::f16);
      int64_t numel = 1;
      for (auto d : shape) numel *= d;
      tftest::Tol t{1e-3, 1e-4};
      gpu_matches_interp(*f, Grid(1), tile_args(*f, numel, numel, -50, 50), tag("reduce", {ir::shape_str(shape), name(dt)}), &t);
    }
}

TEST_CASE("gpu: scans") {
  for (auto& [shape, warps] : tftest::scan_shapes())
    for (DType dt : {DType::f32, DType::i32, DType::f16}) {
      auto f = tftest::scan_kernel(shape, warps, dt);
      int64_t numel = 1;
      for (auto d : shape) numel *= d;
      tftest::Tol t = dt == DType::f16 ? tftest::Tol{5e-2, 2e-2} : tftest::Tol{1e-3, 1e-4};
      gpu_matches_interp(*f, Grid(1), tile_args(*f, numel, numel, -4, 4), tag("scan", {ir::shape_str(shape), name(dt)}), &t);
    }
}

TEST_CASE("gpu: dots") {
  for (auto& d : tftest::dot_shapes())
    for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
      auto f = tftest::dot_kernel(d[0], d[1], d[2], static_cast<int>(d[3]), dt);
      std::vector<Arg> a = {buffer(DType::f32, d[0] * d[1], -1, 1, 13), buffer(dt, d[0] * d[2], -1, 1, 14),
                            buffer(dt, d[2] * d[1], -1, 1, 15)};
      tftest::Tol t{1e-4, 1e-4};
      gpu_matches_interp(*f, Grid(1), a, tag("dot", {std::to_string(d[0]), std::to_string(d[1]), std::to_string(d[2]), name(dt)}), &t);
    }
}

TEST_CASE("gpu: warpgroup MMA widths 8 to 256, operands by descriptor, transposed, in registers and staged") {
  // M x N x K x warps: one warpgroup, two along M, two along N (instr_n = N / 2); K = 128
  // gives 256-byte rows (two 128-byte column blocks), N = 256 four MN-major blocks.
  std::vector<std::array<int64_t, 4>> shapes;
  for (int64_t n : {8, 16, 32, 64, 128, 256}) shapes.push_back({64, n, 64, 4});
  for (int64_t n : {16, 64, 128}) shapes.push_back({128, n, 128, 8});
  shapes.push_back({64, 256, 32, 8});
  shapes.push_back({256, 32, 16, 4});
  using tftest::DotOperands;
  for (auto& d : shapes)
    for (DotOperands how : {DotOperands::Copied, DotOperands::BTransposed, DotOperands::AComputed, DotOperands::BComputed})
      for (DType dt : {DType::f16, DType::bf16}) {
        auto f = tftest::dot_operands_kernel(d[0], d[1], d[2], static_cast<int>(d[3]), dt, how);
        std::vector<Arg> a = {buffer(DType::f32, d[0] * d[1], -1, 1, 21), buffer(dt, d[0] * d[2], -1, 1, 22),
                              buffer(dt, d[2] * d[1], -1, 1, 23)};
        tftest::Tol t{1e-3, 1e-3};
        gpu_matches_interp(*f, Grid(1), a,
                           tag("dot_operands", {std::to_string(d[0]), std::to_string(d[1]), std::to_string(d[2]),
                                                std::to_string(d[3]), std::to_string(static_cast<int>(how)), name(dt)}),
                           &t);
      }
}

TEST_CASE("gpu: a dot operand used in a loop inside an if and after it") {
  auto f = tftest::hoist_across_if_kernel();
  for (int64_t c : {0, 1}) {
    std::vector<Arg> a = {buffer(DType::f32, 32 * 32, -1, 1, 18), buffer(DType::f16, 32 * 32, -1, 1, 19),
                          buffer(DType::f16, 32 * 32, -1, 1, 20), Arg::scalar_int(2), Arg::scalar_int(c)};
    tftest::Tol t{1e-3, 1e-3};
    gpu_matches_interp(*f, Grid(1), a, "hoist_if c=" + std::to_string(c), &t);
  }
}

TEST_CASE("gpu: tf32 dots match the interpreter's tf32 rounding") {
  auto shapes = tftest::dot_shapes();
  shapes.push_back({8, 8, 8, 1});  // below one MMA tile: the FMA path rounds the same way
  for (auto& d : shapes) {
    auto f = tftest::dot_kernel(d[0], d[1], d[2], static_cast<int>(d[3]), DType::f32, ir::DotPrecision::Tf32);
    std::vector<Arg> a = {buffer(DType::f32, d[0] * d[1], -1, 1, 13), buffer(DType::f32, d[0] * d[2], -1, 1, 14),
                          buffer(DType::f32, d[2] * d[1], -1, 1, 15)};
    tftest::Tol t{1e-5, 1e-4};  // same rounded products; only the summation order differs
    gpu_matches_interp(*f, Grid(1), a, tag("dot_tf32", {std::to_string(d[0]), std::to_string(d[1]), std::to_string(d[2])}), &t);
  }
}

TEST_CASE("gpu: a cp.async copy with loop-carried addresses feeding both dot operands, zero-trip loop") {
  auto f = tftest::carried_pointer_dot_kernel();
  for (int stages : {1, 3})
    for (int64_t n : {0, 1, 3}) {
      f->num_stages = stages;
      std::vector<Arg> a = {buffer(DType::f32, 32 * 32, -1, 1, 16), buffer(DType::f16, 2048 * 3 + 1024, -1, 1, 17),
                            Arg::scalar_int(n)};
      tftest::Tol t{1e-3, 1e-3};
      gpu_matches_interp(*f, Grid(1), a, "carried n=" + std::to_string(n) + " stages=" + std::to_string(stages), &t);
    }
}

TEST_CASE("gpu: layout conversions (transposes through addresses and through trans)") {
  for (auto [r, c, warps] : {std::tuple{64, 64, 4}, std::tuple{16, 128, 8}, std::tuple{128, 8, 2}, std::tuple{32, 32, 1}})
    for (DType dt : {DType::f16, DType::f32})
      for (bool via_trans : {false, true}) {
        auto f = tftest::transpose_kernel(dt, r, c, warps, via_trans);
        std::vector<Arg> a = {buffer(DType::f32, r * c, 0, 0), buffer(dt, r * c, -3, 3, 17)};
        gpu_matches_interp(*f, Grid(1), a, tag("transpose", {std::to_string(r), std::to_string(c), name(dt), via_trans ? "trans" : "addr"}));
      }
}

TEST_CASE("gpu: control flow") {
  auto f = tftest::control_kernel();
  std::vector<Arg> a = {buffer(DType::f32, 256, 0, 0), buffer(DType::f32, 256 * 5, -2, 2, 16), Arg::scalar_int(5)};
  gpu_matches_interp(*f, Grid(1), a, "control");
}

TEST_CASE("gpu: 8-bit float dots on FMAs (sm_80), mma.sync m16n8k32 (sm_90) and wgmma (the device)") {
  const KernelBase& k = kernels::scaled_matmul_kernel<float8_e4m3, float8_e5m2, float>();
  for (auto [m, n, kk, bm, bn, bk, warps, trans] : {std::tuple{64, 48, 96, 64, 32, 32, 4, 1},
                                                    std::tuple{128, 80, 64, 64, 64, 64, 4, 0}}) {
    Config cfg{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"B_TRANS", trans}, num_warps(warps), num_stages(2)};
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    std::vector<Arg> args{buffer(DType::f32, size_t(m) * n),
                          buffer(DType::f8e4m3, size_t(m) * kk, -4, 4, 2),
                          buffer(DType::f8e5m2, size_t(kk) * n, -4, 4, 3),
                          buffer(DType::f32, 1, 0.5, 0.5),
                          buffer(DType::f32, 1, 1.5, 1.5),
                          buffer(DType::f32, size_t(n)),
                          Arg::scalar_int(m), Arg::scalar_int(n), Arg::scalar_int(kk),
                          Arg::scalar_int(kk, DType::i64), Arg::scalar_int(trans ? kk : n, DType::i64),
                          Arg::scalar_int(n, DType::i64)};
    tftest::Tol tol{2e-2, 2e-3};  // wgmma's 8-bit accumulation keeps fewer bits than f32
    gpu_matches_interp(*f, Grid((m / bm) * ((n + bn - 1) / bn)), args, "scaled_matmul " + std::to_string(trans), &tol,
                       {nvptx::Target{90, false}});
  }
}
