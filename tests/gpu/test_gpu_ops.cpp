// Every op family on the GPU against the interpreter (differential), on random
// inputs at odd sizes with masked tails. Label: gpu (skips without a driver).
#include <random>

#include "differential.hpp"
#include "loop_carry_kernels.hpp"

using namespace tilefuse;
using difftest::gpu_matches_interp;
using difftest::Tolerance;

namespace {

template <class T>
std::vector<T> rnd(size_t n, uint32_t seed, float lo = -4, float hi = 4) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_integral_v<T>) x = static_cast<T>(std::lround(d(g) * 1000));
    else x = T(d(g));
  }
  return v;
}

constexpr Tolerance kMath{1e-6, 2e-6};  // libdevice vs libm: a few ulp

}  // namespace

TEST_CASE("gpu: elementwise arithmetic, comparisons, select and casts") {
  auto k = kernel("ew", {"out", "outi", "a", "b", "ia", "ib", "n"},
      [](Ptr<f32> out, Ptr<i32> outi, Ptr<const f32> a, Ptr<const f32> b, Ptr<const i32> ia, Ptr<const i32> ib, I32 n,
         Meta<"BLOCK"> BLOCK) {
        auto o = program_id(0) * BLOCK + arange(0, BLOCK);
        auto m = o < n;
        auto x = load(a + o, m, 1.0f);
        auto y = load(b + o, m, 1.0f);
        auto xi = load(ia + o, m, 1);
        auto yi = load(ib + o, m, 7);
        auto r = where(x > y, x * y - 2.5f, x / y) + fma(x, y, 1.0f) + minimum(x, y) * maximum(x, 0.5f) - abs(y);
        store(out + o, r, m);
        auto ri = xi / yi + xi % yi * 3 - (xi & 0xff) + (yi >> 2) - (xi << 1) + (x.cast<i32>() ^ yi) +
                  (xi == yi).cast<i32>() + where(xi != 0 && yi >= 0, 1, -1);
        store(outi + o, ri, m);
      });
  for (int n : {1, 1000, 1531}) {
    CAPTURE(n);
    auto a = rnd<float>(n, 1), b = rnd<float>(n, 2);
    auto ia = rnd<int32_t>(n, 3), ib = rnd<int32_t>(n, 4);
    for (auto& v : ib) v = v == 0 ? 3 : v;
    std::vector<float> out(n);
    std::vector<int32_t> outi(n);
    gpu_matches_interp(k, Grid((n + 255) / 256), {{"BLOCK", 256}, num_warps(4)}, {1e-5, 1e-5}, out, outi, a, b, ia, ib, n);
  }
}

TEST_CASE("gpu: math functions") {
  auto k = kernel("math", {"out", "a", "n"}, [](Ptr<f32> out, Ptr<const f32> a, I32 n, Meta<"BLOCK"> BLOCK) {
    auto o = program_id(0) * BLOCK + arange(0, BLOCK);
    auto m = o < n;
    auto x = load(a + o, m, 0.5f);
    auto p = abs(x) + 0.1f;
    auto r = exp(x * 0.5f) + exp2(x * 0.25f) + log(p) + log2(p) + sqrt(p) + rsqrt(p) + sin(x) + cos(x) + tanh(x) +
             erf(x) + sigmoid(x) + floor(x) + ceil(x);
    store(out + o, r, m);
  });
  int n = 999;
  auto a = rnd<float>(n, 5);
  std::vector<float> out(n);
  gpu_matches_interp(k, Grid(8), {{"BLOCK", 128}, num_warps(2)}, {1e-5, 1e-5}, out, a, n);
}

TEST_CASE("gpu: f16 and bf16 loads, stores and rounding casts") {
  auto k = kernel("cvt", {"h", "bf", "f", "a", "n"},
      [](Ptr<f16> h, Ptr<bf16> bf, Ptr<f32> f, Ptr<const f32> a, I32 n, Meta<"BLOCK"> BLOCK) {
        auto o = program_id(0) * BLOCK + arange(0, BLOCK);
        auto m = o < n;
        auto x = load(a + o, m, 0.0f) * 1000.0f;
        store(h + o, x.cast<f16>(), m);
        store(bf + o, x.cast<bf16>(), m);
        store(f + o, x.cast<f16>().cast<f32>() + x.cast<bf16>().cast<f32>(), m);
      });
  int n = 4097;
  auto a = rnd<float>(n, 6);
  std::vector<half> h(n);
  std::vector<bfloat16> bf(n);
  std::vector<float> f(n);
  gpu_matches_interp(k, Grid((n + 511) / 512), {{"BLOCK", 512}, num_warps(4)}, {0, 0}, h, bf, f, a, n);
}

TEST_CASE("gpu: 2-D tiles, broadcasting, trans, reshape and reductions along both axes") {
  auto k = kernel("red2d", {"rows_out", "cols_out", "argm", "t_out", "x", "R", "C"},
      [](Ptr<f32> rows_out, Ptr<f32> cols_out, Ptr<i32> argm, Ptr<f32> t_out, Ptr<const f32> x, I32 R, I32 C,
         Meta<"BM"> BM, Meta<"BN"> BN) {
        auto r = arange(0, BM);
        auto c = arange(0, BN);
        auto m = (r < R).col() && (c < C).row();
        auto t = load(x + r.col() * C + c.row(), m, 0.0f);
        store(rows_out + r, sum(t, 1) + max(t, 1) * 2.0f + min(t, 1), r < R);
        store(cols_out + c, sum(t, 0) - max(t, 0), c < C);
        store(argm + r, argmax(where(m, t, -inf), 1) + argmin(where(m, t, inf), 1) * 1000, r < R);
        auto tt = trans(t);  // [BN, BM]
        auto flat = reshape(tt, {BM * BN});
        auto idx = arange(0, BM * BN);
        store(t_out + idx, flat * 2.0f, idx < BM * BN);
      });
  int R = 13, C = 29;
  auto x = rnd<float>(R * C, 7);
  std::vector<float> rows_out(R), cols_out(C), t_out(16 * 32);
  std::vector<int32_t> argm(R);
  gpu_matches_interp(k, Grid(1), {{"BM", 16}, {"BN", 32}, num_warps(4)}, {1e-5, 1e-5}, rows_out, cols_out, argm, t_out,
                     x, R, C);
}

TEST_CASE("gpu: 1-D reductions across warps, custom reduce and cumsum") {
  auto k = kernel("red1d", {"out", "scan", "x", "n"},
      [](Ptr<f32> out, Ptr<f32> scan, Ptr<const f32> x, I32 n, Meta<"BLOCK"> BLOCK) {
        auto o = arange(0, BLOCK);
        auto m = o < n;
        auto v = load(x + o, m, 0.0f);
        auto prod_like = reduce(where(m, v, 0.0f), 0, [](F32 a, F32 b) { return maximum(a, b) + minimum(a, b) * 0.0f; });
        store(out + 0, sum(v, 0));
        store(out + 1, max(where(m, v, -inf), 0));
        store(out + 2, prod_like);
        store(out + 3, argmax(where(m, v, -inf), 0).cast<f32>());
        store(scan + o, cumsum(v, 0), m);
      });
  for (int warps : {1, 4, 8}) {
    int n = 1000;
    auto x = rnd<float>(n, 8);
    std::vector<float> out(4), scan(n);
    CAPTURE(warps);
    gpu_matches_interp(k, Grid(1), {{"BLOCK", 1024}, num_warps(warps)}, {1e-4, 1e-4}, out, scan, x, n);
  }
}

TEST_CASE("gpu: dot for f32, f16 and bf16 with accumulators") {
  auto k = kernel("mm", {"c", "a", "b", "a16", "b16", "abf", "bbf", "M", "N", "K"},
      [](Ptr<f32> c, Ptr<const f32> a, Ptr<const f32> b, Ptr<const f16> a16, Ptr<const f16> b16, Ptr<const bf16> abf,
         Ptr<const bf16> bbf, I32 M, I32 N, I32 K, Meta<"BM"> BM, Meta<"BN"> BN, Meta<"BK"> BK) {
        auto rm = arange(0, BM);
        auto rn = arange(0, BN);
        auto rk = arange(0, BK);
        auto am = (rm < M).col() && (rk < K).row();
        auto bm = (rk < K).col() && (rn < N).row();
        auto aoff = rm.col() * K + rk.row();
        auto boff = rk.col() * N + rn.row();
        auto acc = dot(load(a + aoff, am, 0.0f), load(b + boff, bm, 0.0f));
        acc = dot(load(a16 + aoff, am, 0.0f), load(b16 + boff, bm, 0.0f), acc);
        acc = dot(load(abf + aoff, am, 0.0f), load(bbf + boff, bm, 0.0f), acc);
        store(c + rm.col() * N + rn.row(), acc, (rm < M).col() && (rn < N).row());
      });
  int M = 45, N = 23, K = 37;
  auto a = rnd<float>(M * K, 9, -1, 1), b = rnd<float>(K * N, 10, -1, 1);
  auto a16 = rnd<half>(M * K, 11, -1, 1), b16 = rnd<half>(K * N, 12, -1, 1);
  auto abf = rnd<bfloat16>(M * K, 13, -1, 1), bbf = rnd<bfloat16>(K * N, 14, -1, 1);
  std::vector<float> c(M * N);
  gpu_matches_interp(k, Grid(1), {{"BM", 64}, {"BN", 32}, {"BK", 64}, num_warps(4)}, {1e-4, 1e-4}, c, a, b, a16, b16,
                     abf, bbf, M, N, K);
}

TEST_CASE("gpu: loops with carried tiles, if_, 2-D/3-D grids and num_programs") {
  auto k = kernel("ctrl", {"out", "x", "n"}, [](Ptr<f32> out, Ptr<const f32> x, I32 n, Meta<"BLOCK"> BLOCK) {
    auto pid = program_id(0) + program_id(1) * num_programs(0) + program_id(2) * num_programs(0) * num_programs(1);
    auto o = arange(0, BLOCK);
    auto acc = zeros<f32>({BLOCK});
    auto best = full<f32>({BLOCK}, -inf);
    for_range(0, n, BLOCK, [&](I32 s) {
      auto v = load(x + s + o, s + o < n, -inf);
      best = maximum(best, v);
      acc = acc + where(s + o < n, v, 0.0f);
    });
    auto total = sum(acc, 0);
    auto sign = scalar<f32>(1.0);
    if_(total < 0.0f, [&] { sign = scalar<f32>(-1.0); });
    store(out + pid * 2 + 0, total * sign + pid.cast<f32>());
    store(out + pid * 2 + 1, max(best, 0));
  });
  int n = 777;
  auto x = rnd<float>(n, 15);
  std::vector<float> out(2 * 2 * 3 * 2);
  gpu_matches_interp(k, Grid(2, 3, 2), {{"BLOCK", 128}, num_warps(4)}, {1e-4, 1e-5}, out, x, n);
}

TEST_CASE_TEMPLATE("gpu: 16-bit tiles carried around loops (packed pairs): loaded, rounded and constant", T, half,
                   bfloat16) {
  const auto& k = loop_carry::carry16_kernel<T>();
  for (int n : {1, 300, 777}) {
    CAPTURE(n);
    auto x = rnd<T>(n, 16);
    std::vector<T> out(3 * 128);
    gpu_matches_interp(k, Grid(1), {{"BLOCK", 128}, num_warps(2)}, {1e-2, 1e-2}, out, x, n);  // fma contraction
  }
}

TEST_CASE("gpu: atomics") {
  auto k = kernel("hist", {"hist", "mx", "cas", "x", "n", "bins"},
      [](Ptr<i32> hist, Ptr<f32> mx, Ptr<i32> cas, Ptr<const f32> x, I32 n, I32 bins, Meta<"BLOCK"> BLOCK) {
        auto o = program_id(0) * BLOCK + arange(0, BLOCK);
        auto m = o < n;
        auto v = load(x + o, m, 0.0f);
        auto bin = minimum(maximum(((v + 4.0f) * 2.0f).cast<i32>(), 0), bins - 1);
        atomic_add(hist + bin, 1, m);
        atomic_max(mx + 0 * o, v, m);
        atomic_cas(cas + program_id(0), 0, program_id(0) + 1);
      });
  int n = 5000, bins = 16;
  auto x = rnd<float>(n, 16);
  std::vector<int32_t> hist(bins, 0), cas((n + 255) / 256, 0);
  std::vector<float> mx(1, -100.0f);
  gpu_matches_interp(k, Grid((n + 255) / 256), {{"BLOCK", 256}, num_warps(4)}, {0, 0}, hist, mx, cas, x, n, bins);
}

// MemOrder::AcqRel: every program stores its tile and counts itself in; the last to
// arrive (in whatever order the GPU ran them) adds all the programs' tiles in program
// order — the interpreter's bits if it saw every store — and zeroes the counter again.
TEST_CASE("gpu: the last program to count itself in sees what the others stored") {
  auto k = kernel("last_adds", {"out", "partials", "count", "x"},
      [](Ptr<f32> out, Ptr<f32> partials, Ptr<i32> count, Ptr<const f32> x, Meta<"BLOCK"> BLOCK) {
        auto offs = arange(0, BLOCK);
        auto mine = program_id(0) * BLOCK + offs;
        store(partials + mine, load(x + mine) + 0.25f);  // (no FMA to contract: exact)
        auto before = atomic_add(count, 1, MemOrder::AcqRel);
        if_(before == num_programs(0) - 1, [&] {
          auto acc = load(partials + offs);
          for_range(1, num_programs(0), 1, [&](I32 p) { acc = acc + load(partials + p * BLOCK + offs); });
          store(out + offs, acc);
          store(count, scalar<i32>(0));
        });
      });
  const int programs = 528, block = 1024;
  auto x = rnd<float>(programs * block, 17);
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    std::vector<float> out(block, 0.0f), partials(programs * block, 0.0f);
    std::vector<int32_t> count(1, 0);
    gpu_matches_interp(k, Grid(programs), {{"BLOCK", block}, num_warps(4)}, {0, 0}, out, partials, count, x);
  }
}

// barrier(): a second store over elements that other threads of the program stored
// (the tile reversed, then one element: a fix-up as cross-entropy's target column)
// leaves the later value, as the interpreter's program order does.
TEST_CASE("gpu: a store after barrier() wins over the program's earlier store of the same elements") {
  auto k = kernel("store_over", {"out", "x", "at"},
      [](Ptr<f32> out, Ptr<const f32> x, Ptr<const i32> at, Meta<"BLOCK"> BLOCK) {
        auto offs = arange(0, BLOCK);
        auto row = out + program_id(0) * BLOCK;
        auto v = load(x + program_id(0) * BLOCK + offs);
        store(row + offs, v);
        barrier();
        store(row + (BLOCK - 1 - offs), v * 2.0f, offs < BLOCK / 2);
        barrier();
        store(row + load(at + program_id(0)), scalar<f32>(-7.0f));
      });
  const int programs = 300, block = 512;
  auto x = rnd<float>(programs * block, 23);
  std::vector<int32_t> at(programs);
  for (int p = 0; p < programs; ++p) at[p] = (p * 131 + 7) % block;
  std::vector<float> out(programs * block, 0.0f);
  gpu_matches_interp(k, Grid(programs), {{"BLOCK", block}, num_warps(8)}, {0, 0}, out, x, at);
}

// A kernel object made where a destroyed one lived (a local of a function called
// twice) runs its own code: compiled kernels are found by the kernel's identity, not
// its address (they once were, and the second call ran the first kernel).
static void add_constant_on_gpu(float c, DeviceBuffer<float>& x) {
  auto k = kernel("add_constant", {"x", "n"}, [c](Ptr<f32> x, I32 n) {
    auto offs = arange(0, 256);
    store(x + offs, load(x + offs, offs < n, 0.0f) + c, offs < n);
  });
  k.launch(grid(1), {}, x, static_cast<int>(x.size()));
}

TEST_CASE("gpu: a kernel made at the address of a destroyed one runs its own code") {
  if (!difftest::have_gpu()) return;
  std::vector<float> host = rnd<float>(200, 91);
  DeviceBuffer<float> x = to_device(host);
  add_constant_on_gpu(1.0f, x);
  add_constant_on_gpu(10.0f, x);
  std::vector<float> got = x.to_host();
  for (size_t i = 0; i < host.size(); ++i) REQUIRE(got[i] == host[i] + 1.0f + 10.0f);
}

// Programmatic dependent launch (sm_90+, on by default): each kernel may be scheduled
// while the one before it in the stream still runs, and waits for it before touching
// memory. A chain of dependent launches, each reading what the previous one wrote
// (ping-pong buffers, no synchronization between them), must see every predecessor's
// stores.
TEST_CASE("gpu: a chain of dependent kernels launched early sees every predecessor's stores") {
  if (!difftest::have_gpu()) return;
  auto step = kernel("chain_step", {"out", "in", "n"}, [](Ptr<f32> out, Ptr<const f32> in, I32 n, Meta<"BLOCK"> BLOCK) {
    auto o = program_id(0) * BLOCK + arange(0, BLOCK);
    auto m = o < n;
    store(out + o, load(in + o, m, 0.0f) * 0.5f + 1.0f, m);
  });
  const int n = (1 << 22) + 13, steps = 41;
  auto x = rnd<float>(n, 11, -1000, 1000);
  DeviceBuffer<float> a = to_device(std::span<const float>(x)), b(n);
  Config cfg{{"BLOCK", 1024}, num_warps(4)};
  for (int s = 0; s < steps; ++s) {
    auto& src = s % 2 ? b : a;
    auto& dst = s % 2 ? a : b;
    step.launch(Grid((n + 1023) / 1024), cfg, dst, DevicePtr<const float>(src.view().data(), n), n);
  }
  auto y = (steps % 2 ? b : a).to_host();
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float want = x[i];
    for (int s = 0; s < steps; ++s) want = want * 0.5f + 1.0f;  // exact: halving, then one rounding
    bad += y[i] != want;
  }
  CHECK(bad == 0);
}
