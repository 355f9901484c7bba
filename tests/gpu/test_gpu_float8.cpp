// 8-bit floats on the GPU against the interpreter: conversions bit for bit (every e4m3
// and e5m2 pattern decoded, f32 values at ties, saturation and subnormals encoded), and
// the 8-bit GEMM at odd shapes over its paths (TMA + wgmma with both operands K-major,
// B [K, N] staged K-major by the dot, plain loads at odd K, 1 to 4 stages).
// Label: gpu (skips without a driver).
#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
using difftest::gpu_matches_interp;
namespace tk = tilefuse::kernels;

TEST_CASE("gpu: 8-bit float conversions match the host formats bit for bit") {
  auto k = kernel("f8_roundtrip", {"e4", "e5", "d4", "d5", "x", "p4", "p5", "n"},
                  [](Ptr<f8e4m3> e4, Ptr<f8e5m2> e5, Ptr<float> d4, Ptr<float> d5, Ptr<const float> x,
                     Ptr<const f8e4m3> p4, Ptr<const f8e5m2> p5, I32 n, Meta<"BLOCK"> BLOCK) {
                    auto i = program_id(0) * BLOCK + arange(0, BLOCK);
                    auto m = i < n;
                    auto v = load(x + i, m, 0.0f);
                    store(e4 + i, v.cast<f8e4m3>(), m);
                    store(e5 + i, v.cast<f8e5m2>(), m);
                    store(d4 + i, load(p4 + i, m).cast<f32>(), m);
                    store(d5 + i, load(p5 + i, m).cast<f32>(), m);
                  });
  int n = 4099;
  auto x = ref::random_vec<float>(n, 7, -70000, 70000);
  // Every pattern decoded; ties and neighbours of every e4m3/e5m2 value, scaled about.
  std::vector<float8_e4m3> p4(n);
  std::vector<float8_e5m2> p5(n);
  for (int i = 0; i < n; ++i) {
    p4[i] = float8_e4m3::from_bits(static_cast<uint8_t>(i));
    p5[i] = float8_e5m2::from_bits(static_cast<uint8_t>(i));
  }
  for (int b = 0; b < 255 && 3 * b + 2 < n; ++b) {
    float lo = static_cast<float>(float8_e4m3::from_bits(static_cast<uint8_t>(b)));
    float hi = static_cast<float>(float8_e4m3::from_bits(static_cast<uint8_t>(b + 1)));
    if (std::isnan(lo) || std::isnan(hi)) continue;
    x[3 * b] = (lo + hi) / 2;
    x[3 * b + 1] = std::nextafter((lo + hi) / 2, hi);
    x[3 * b + 2] = static_cast<float>(float8_e5m2::from_bits(static_cast<uint8_t>(b))) * 1.0625f;
  }
  x[n - 1] = INFINITY;
  x[n - 2] = -1e30f;
  x[n - 3] = NAN;
  std::vector<float8_e4m3> e4(n);
  std::vector<float8_e5m2> e5(n);
  std::vector<float> d4(n), d5(n);
  gpu_matches_interp(k, Grid(3), Config{{"BLOCK", 2048}, num_warps(8)}, {0, 0}, e4, e5, d4, d5, x, p4, p5, n);
}

TEST_CASE_TEMPLATE("gpu: scaled_matmul (8-bit GEMM) at odd M, N, K on every operand path", TA, float8_e4m3, float8_e5m2) {
  struct Case { int m, n, k, bm, bn, bk, warps; bool b_trans; int act; };
  int index = 0;
  for (auto c : {Case{37, 45, 64, 64, 32, 32, 4, true, 0}, Case{130, 70, 128, 64, 64, 64, 4, true, 2},
                 Case{200, 300, 256, 128, 256, 128, 8, true, 1}, Case{70, 129, 96, 64, 128, 32, 4, false, 3},
                 Case{65, 33, 53, 64, 32, 32, 4, true, 0}, Case{17, 40, 99, 64, 64, 64, 4, false, 0},
                 Case{256, 200, 640, 128, 128, 128, 8, true, 0}}) {
    ++index;
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    auto a = ref::random_vec<TA>(size_t(c.m) * c.k, 71, -3, 3);
    auto b = ref::random_vec<float8_e4m3>(size_t(c.k) * c.n, 72, -3, 3);
    auto bias = ref::random_vec<float>(c.n, 73, -1, 1);
    std::vector<float> scale_a{0.5f}, scale_b{0.75f};
    std::vector<float> out(size_t(c.m) * c.n);
    for (int stages : {1, 2, 4}) {
      int precise = (stages + index) % 3;  // every accumulation mode across the cases
      CAPTURE(stages);
      CAPTURE(precise);
      Config cfg{{"BLOCK_M", c.bm}, {"BLOCK_N", c.bn}, {"BLOCK_K", c.bk}, {"GROUP_M", 4}, {"B_TRANS", c.b_trans},
                 {"ACT", c.act}, {"BIAS", c.act != 0}, {"PRECISE_ACC", precise}, num_warps(c.warps),
                 num_stages(stages)};
      int64_t tiles = int64_t((c.m + c.bm - 1) / c.bm) * ((c.n + c.bn - 1) / c.bn);
      // Hopper's 8-bit MMAs accumulate with fewer bits than f32 (measured: 3.5e-4 relative
      // at K = 96, 0.033 absolute at K = 640 against the interpreter's exact sum); the
      // products themselves are exact. The error grows with K.
      difftest::Tolerance tol{1e-4 * c.k, 2e-3};
      gpu_matches_interp(tk::scaled_matmul_kernel<TA, float8_e4m3, float>(), Grid(tiles), cfg, tol, out, a, b,
                         scale_a, scale_b, bias, c.m, c.n, c.k, int64_t(c.k), int64_t(c.b_trans ? c.k : c.n),
                         int64_t(c.n));
    }
  }
}

// B [K, N] too: transposed into [N, K] scratch by the host function (the default rule).
TEST_CASE("gpu: scaled_matmul's host function with the heuristic's config, bf16 out, both B layouts") {
  if (!difftest::have_gpu()) return;
  int m = 300, n = 520, k = 384;
  auto a = ref::random_vec<float8_e4m3>(size_t(m) * k, 81, -2, 2), b = ref::random_vec<float8_e4m3>(size_t(n) * k, 82, -2, 2);
  std::vector<float> sa{2.0f}, sb{0.25f};
  auto da = to_device(a), db = to_device(b);
  auto dsa = to_device(sa), dsb = to_device(sb);
  for (bool trans : {true, false}) {
    CAPTURE(trans);
    DeviceBuffer<bfloat16> c(size_t(m) * n);
    tk::ScaledMatmulOptions o;
    o.b_trans = trans;
    tk::scaled_matmul(c, da, db, dsa, dsb, m, n, k, o);
    auto want = ref::matmul(ref::to_float(a), ref::to_float(b), m, n, k, trans, 0.5, 0, {}, {});
    // The 8-bit MMAs' short accumulator (see the kernel test above) plus bf16 rounding.
    CHECK(ref::max_rel_err(c.to_host(), want, 1e-4 * k, 1e-2) <= 1.0);
  }
}

// Split-K on the 8-bit GEMM (gemm_split_k.hpp): by the rule (a skinny GEMM: 64x64 tiles,
// K in slices) and forced (odd N, K off 16 bytes, bias + activation, B [K, N]), against
// plain C++.
TEST_CASE("gpu: scaled_matmul splits K where few output tiles would leave the GPU idle") {
  if (!difftest::have_gpu()) return;
  struct Case { int m, n, k; const char* forced; bool trans, bias; tk::Activation act; };
  Case cases[] = {{64, 4096, 4096, "", true, false, tk::Activation::none},
                  {16, 1000, 3000, "3", false, true, tk::Activation::gelu_tanh},
                  {33, 517, 2000, "5", true, true, tk::Activation::relu}};
  for (auto& c : cases) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    if (*c.forced) setenv("TILEFUSE_SPLIT_K", c.forced, 1);
    auto a = ref::random_vec<float8_e4m3>(size_t(c.m) * c.k, 95, -2, 2);
    auto b = ref::random_vec<float8_e4m3>(size_t(c.n) * c.k, 96, -2, 2);
    auto bias = ref::random_vec<bfloat16>(c.n, 97, -1, 1);
    std::vector<float> sa{0.5f}, sb{0.75f};
    auto da = to_device(a), db = to_device(b);
    auto dbias = to_device(bias);
    auto dsa = to_device(sa), dsb = to_device(sb);
    DeviceBuffer<bfloat16> out(size_t(c.m) * c.n);
    tk::ScaledMatmulOptions o;
    o.b_trans = c.trans;
    o.activation = c.act;
    if (c.bias) tk::scaled_matmul(out, da, db, dsa, dsb, c.m, c.n, c.k, o, dbias);
    else tk::scaled_matmul(out, da, db, dsa, dsb, c.m, c.n, c.k, o);
    unsetenv("TILEFUSE_SPLIT_K");
    auto want = ref::matmul(ref::to_float(a), ref::to_float(b), c.m, c.n, c.k, c.trans, 0.375, static_cast<int>(c.act),
                            c.bias ? ref::to_float(bias) : std::vector<float>{}, {});
    CHECK(ref::max_rel_err(out.to_host(), want, 1e-4 * c.k, 1e-2) <= 1.0);
  }
}

// The last partial wave's tiles split on the 8-bit GEMM (SPLIT_TAIL): 132 whole 128x128
// tiles and 12 (rounded to 18, whole columns) in 3 slices, scales, bias and GELU, odd K.
TEST_CASE("gpu: scaled_matmul splits the tiles of its last partial wave") {
  if (!difftest::have_gpu()) return;
  const int m = 1100, n = 2048, k = 2000;
  auto a = ref::random_vec<float8_e4m3>(size_t(m) * k, 98, -2, 2);
  auto b = ref::random_vec<float8_e4m3>(size_t(n) * k, 99, -2, 2);
  auto bias = ref::random_vec<bfloat16>(n, 100, -1, 1);
  std::vector<float> sa{0.5f}, sb{0.75f};
  auto da = to_device(a), db = to_device(b);
  auto dbias = to_device(bias);
  auto dsa = to_device(sa), dsb = to_device(sb);
  DeviceBuffer<bfloat16> out(size_t(m) * n);
  tk::ScaledMatmulOptions o;
  o.b_trans = true;
  o.activation = tk::Activation::gelu_tanh;
  tk::scaled_matmul(out, da, db, dsa, dsb, m, n, k, o, dbias,
                    Config{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 128}, {"GROUP_M", 16}, {"SPLIT_K", 3},
                           {"SPLIT_TAIL", 1}, num_warps(8), num_stages(6)});
  auto want = ref::matmul(ref::to_float(a), ref::to_float(b), m, n, k, true, 0.375, static_cast<int>(o.activation),
                          ref::to_float(bias), {});
  CHECK(ref::max_rel_err(out.to_host(), want, 1e-4 * k, 1e-2) <= 1.0);
}

// Odd K (rows of A and B off 16 bytes) and B [K, N] with odd N: the host function copies
// such operands into aligned rows first, and transposes a B [K, N] (forced here;
// TILEFUSE_GEMM_COPY=0: neither), same results either way.
TEST_CASE("gpu: scaled_matmul's host function on operands in rows off 16 bytes, copied or not") {
  if (!difftest::have_gpu()) return;
  for (const char* mode : {"1", "0"}) {
    for (auto [m, n, k, trans] : {std::tuple{300, 520, 333, true}, std::tuple{260, 777, 256, false},
                                  std::tuple{129, 301, 97, false}, std::tuple{200, 256, 192, false}}) {
      CAPTURE(mode);
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      setenv("TILEFUSE_GEMM_COPY", mode, 1);
      auto a = ref::random_vec<float8_e4m3>(size_t(m) * k, 91, -2, 2), b = ref::random_vec<float8_e4m3>(size_t(n) * k, 92, -2, 2);
      std::vector<float> sa{0.5f}, sb{1.5f};
      auto da = to_device(a), db = to_device(b);
      auto dsa = to_device(sa), dsb = to_device(sb);
      DeviceBuffer<float> c(size_t(m) * n);
      tk::ScaledMatmulOptions o;
      o.b_trans = trans;
      tk::scaled_matmul(c, da, db, dsa, dsb, m, n, k, o);
      auto want = ref::matmul(ref::to_float(a), ref::to_float(b), m, n, k, trans, 0.75, 0, {}, {});
      CHECK(ref::max_rel_err(c.to_host(), want, 1e-4 * k, 1e-3) <= 1.0);
    }
  }
  unsetenv("TILEFUSE_GEMM_COPY");
}
