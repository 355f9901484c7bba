// GEMM whose tensor-view operands move by TMA on sm_90a (16-byte-multiple row strides),
// against the interpreter: odd M, N, K inside padded rows whose padding holds NaN (a copy
// reading past a view's edge would show), both B layouts, the tilings the heuristic and
// the tuner use, and an empty view (K = 0). Label: gpu (skips without a driver).
#include <cmath>
#include <cstdlib>

#include <tilefuse/cuda/kernel_cache.hpp>
#include <tilefuse/kernels/kernels.hpp>
#include <tilefuse/nvptx/compiler.hpp>

#include "padded_gemm.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using difftest::gpu_matches_interp;

using padded_gemm::padded;
using padded_gemm::round_up8;

TEST_CASE_TEMPLATE("gpu: TMA-fed GEMM at odd shapes inside padded rows, both B layouts", T, half, bfloat16) {
  padded_gemm::check<T>({{200, 129, 100, 128, 256, 64, 8, 4}, {77, 300, 190, 64, 128, 64, 4, 3},
                         {130, 70, 33, 128, 128, 32, 4, 2}, {64, 64, 512, 64, 64, 64, 4, 5}},
                        {}, 41);
}

TEST_CASE("gpu: TMA views with a dimension of 0 read zeros (K = 0 gives the epilogue of 0)") {
  int m = 77, n = 96;
  auto a = ref::random_vec<half>(size_t(m) * 64, 51, -1, 1), b = ref::random_vec<half>(size_t(64) * n, 52, -1, 1);
  auto bias = ref::random_vec<half>(n, 53, -1, 1);
  std::vector<float> c(size_t(m) * n, 5.0f);
  Config cfg{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"BIAS", 1}, num_warps(4), num_stages(3)};
  gpu_matches_interp(tk::matmul_kernel<half, float>(), Grid(2 * 2), cfg, {1e-6, 1e-6}, c, a, b, bias, c, m, n, 0,
                     int64_t(64), int64_t(n), int64_t(n), 1.0f);
}

// View stores leave by TMA on sm_90 where the engine writes exactly the view's elements
// (rows of 16-byte-multiple extents and strides, innermost coordinates on 16 bytes):
// 64 x 64 blocks computed from a source tile, written at odd row counts across every
// edge (negative coordinates included) and into one batch of a 3-D view, against the
// interpreter; the padding columns and everything outside the block keep their values.
// A row of 45 columns and a column offset of 3 take plain stores (same results).
TEST_CASE_TEMPLATE("gpu: TMA view stores at odd shapes and edges, 2-D and 3-D views", T, float, bfloat16) {
  auto k2 = kernel(std::string("tma_store2d_") + name(dtype_v<T>), {"out", "src", "rows", "cols", "ld", "r0", "c0"},
                   [](Ptr<T> out, Ptr<const T> src, I32 rows, I32 cols, I64 ld, I32 r0, I32 c0) {
                     auto t = load(src + arange(0, 64).col() * 64 + arange(0, 64).row()).template cast<f32>();
                     store(tensor_view(out, {rows, cols}, {ld, 1}), {r0, c0}, (t * 2.0f + 1.0f).template cast<T>());
                   });
  const int rows = 77, ld = 64;  // 256 or 128 bytes per row
  auto src = ref::random_vec<T>(64 * 64, 61, -1, 1);
  for (auto [cols, r0, c0] : {std::tuple{48, 0, 0}, {48, 64, 32}, {48, -5, 16}, {48, 70, -16}, {48, -70, 0},
                              {48, 76, 32}, {48, 100, 0}, {45, 13, 0}, {48, 13, 3}}) {
    CAPTURE(cols);
    CAPTURE(r0);
    CAPTURE(c0);
    auto out = ref::random_vec<T>(size_t(rows) * ld, 62, -1, 1);
    gpu_matches_interp(k2, Grid(1), Config{}, {0, 0}, out, src, rows, cols, int64_t(ld), r0, c0);
  }
  auto k3 = kernel(std::string("tma_store3d_") + name(dtype_v<T>), {"out", "src", "B", "N", "b", "n0"},
                   [](Ptr<T> out, Ptr<const T> src, I32 B, I32 N, I32 b, I32 n0) {
                     auto t = load(src + arange(0, 32).col() * 64 + arange(0, 64).row());
                     store(tensor_view(out, {B, N, 64}, {N * 64, 64, 1}), {b, n0, 0}, t);
                   });
  const int B = 3, N = 37;
  for (auto [b, n0] : {std::pair{1, 0}, {2, 16}, {3, 0}, {0, -20}}) {
    CAPTURE(b);
    CAPTURE(n0);
    auto out = ref::random_vec<T>(size_t(B) * N * 64, 63, -1, 1);
    gpu_matches_interp(k3, Grid(1), Config{}, {0, 0}, out, src, B, N, b, n0);
  }
}

// Attention with head dim d (128 unless told) on 128-row blocks over two warpgroups (8
// warps, two stages) against the interpreter: 3 heads of n positions, `extra` adding
// BLOCK_N and the rest of the config; random inputs from `seed`.
static void check_attention_d128(int n, bool causal, int lag, const Config& extra, unsigned seed, int d = 128) {
  CAPTURE(n);
  CAPTURE(causal);
  CAPTURE(lag);
  CAPTURE(d);
  int bh = 3;
  size_t sz = size_t(bh) * n * d;
  auto q = ref::random_vec<half>(sz, seed, -1, 1), k = ref::random_vec<half>(sz, seed + 1, -1, 1),
       v = ref::random_vec<half>(sz, seed + 2, -1, 1);
  std::vector<half> o(sz);
  std::vector<float> lse(bh * n);
  Config cfg = extra;
  cfg.set("BLOCK_M", 128).set("HEAD_DIM", d).set("CAUSAL", causal).set("PV_LAG", lag);
  cfg.num_warps = 8;
  cfg.num_stages = 2;
  gpu_matches_interp(tk::attention_fwd_kernel<half>(), Grid((n + 127) / 128, bh), cfg, {2e-3, 2e-2}, o, lse, q, k, v,
                     n, int64_t(n) * d, int64_t(d), 1.0f / std::sqrt(float(d)));
}

// A bf16 GEMM on 128x128 tiles of two consumer warpgroups (3 stages, warp-specialized,
// `extra` added) at odd M, N, K inside padded rows, against the interpreter.
static void check_ws_gemm(int m, int n, int k, const Config& extra, unsigned seed) {
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  int lda = round_up8(k) + 8, ldb = round_up8(n) + 8;
  auto a = padded<bfloat16>(m, k, lda, seed);
  auto b = padded<bfloat16>(k, n, ldb, seed + 1);
  std::vector<float> c(size_t(m) * n);
  Config cfg = extra;
  cfg.set("BLOCK_M", 128).set("BLOCK_N", 128).set("BLOCK_K", 64).set("GROUP_M", 3);
  cfg.num_warps = 8;
  cfg.num_stages = 3;
  cfg.warp_specialize = 1;
  int64_t tiles = int64_t((m + 127) / 128) * ((n + 127) / 128);
  gpu_matches_interp(tk::matmul_kernel<bfloat16, float>(), Grid(tiles), cfg, {1e-3, 1e-3}, c, a, b, a, c, m, n, k,
                     int64_t(lda), int64_t(ldb), int64_t(n), 1.0f);
}

// Ping-pong turns: two consumer warpgroups of a warp-specialized kernel alternate their
// MMA issues on named barriers 2 and 3 (attention's default; TILEFUSE_PINGPONG=1 forces
// them on the GEMM too). The knob is read when a kernel compiles; these configs
// (warp_specialize, 8 warps) are launched nowhere else in this process, so none is found
// already loaded without it.
TEST_CASE("gpu: ping-pong warpgroups: attention (P.V behind or not, causal or not) and GEMM at odd shapes") {
  setenv("TILEFUSE_PINGPONG", "1", 1);
  for (auto [n, causal, lag] : {std::tuple{301, false, 1}, std::tuple{200, true, 1}, std::tuple{333, false, 0},
                                std::tuple{129, true, 0}})
    check_attention_d128(n, causal, lag, Config{{"BLOCK_N", 64}, warp_specialize()}, 27);
  for (auto [m, n, k] : {std::tuple{300, 329, 200}, std::tuple{129, 70, 520}}) check_ws_gemm(m, n, k, Config{}, 31);
  unsetenv("TILEFUSE_PINGPONG");
}

// Warp-specialized kernels load through a whole-program JIT: compiled as relocatable code
// (the driver's linker), ptxas held d128 attention's consumers to the launch's 168
// registers instead of the 232 setmaxnreg gives them, and they spilled 248 bytes a thread.
TEST_CASE("gpu: warp-specialized attention d128 loads without spills, and matches the interpreter") {
  if (!difftest::have_gpu()) return;
  Config cfg{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"HEAD_DIM", 128}, {"CAUSAL", 0}, {"PV_LAG", 1},
             num_warps(8), num_stages(2), warp_specialize()};
  const auto& kern = tk::attention_fwd_kernel<half>();
  auto f = kern.specialize(cfg, std::vector<int64_t>(kern.num_runtime_params(), 16));
  const nvptx::Target target = cuda::device_info().target();
  if (!target.arch_specific || target.sm < 90) return;  // no warpgroup MMAs, no setmaxnreg
  auto compile = [&] { return nvptx::compile(*f, nvptx::CompileOptions{target}); };
  nvptx::CompiledKernel ck = compile();
  REQUIRE(cuda::needs_whole_program_jit(ck.ptx));
  cuda::KernelCache cache(nullptr);
  const cuda::LoadedKernel& k = cache.get(cuda::make_cache_key("ws attention d128", target, cfg.str(), "test"), compile);
  CHECK(k.local_bytes() == 0);
  CHECK(k.num_regs() <= 168);  // the launch's budget; the consumers run on 232 after setmaxnreg
  // The linker's relocatable compile of the same PTX, for the record (a driver may change it).
  cuda::Cubin c = cuda::link_ptx_to_cubin(ck.ptx, ck.name);
  MESSAGE("relocatable compile: " << cuda::LoadedKernel::from_cubin(ck, c.bytes).local_bytes() << " bytes local");
  for (auto [n, causal] : {std::pair{333, false}, std::pair{200, true}})
    check_attention_d128(n, causal, 1, Config{{"BLOCK_N", 128}, warp_specialize()}, 41);
}

// Persistent warp-specialized kernels: the producer runs its copies program after
// program, so the ring's stages and phases carry over, and copies for the next program
// land during this one's epilogue (a TMA store's staging included). At most 5 or 7 blocks
// (TILEFUSE_PERSISTENT_PROGRAMS, read when a kernel loads; these persistent configs load
// nowhere else in this process), so each block runs several programs, whose loops have
// different trip counts (causal) or none for the masked blocks (n a multiple of 128).
TEST_CASE("gpu: persistent warp-specialized attention d128 and GEMM, blocks running several programs") {
  setenv("TILEFUSE_PERSISTENT_PROGRAMS", "5", 1);
  for (auto [n, causal, store] : {std::tuple{1000, false, 0}, std::tuple{777, true, 0}, std::tuple{1024, false, 1},
                                  std::tuple{129, true, 1}, std::tuple{640, true, 0}}) {
    CAPTURE(store);
    check_attention_d128(n, causal, 1,
                         Config{{"BLOCK_N", 128}, {"RESCALE_LATE", 1}, {"TMA_STORE", store}, warp_specialize(),
                                persistent()},
                         47);
  }
  setenv("TILEFUSE_PERSISTENT_PROGRAMS", "7", 1);
  for (auto [m, n, k] : {std::tuple{500, 329, 200}, std::tuple{129, 700, 520}})
    check_ws_gemm(m, n, k, Config{persistent()}, 33);
  unsetenv("TILEFUSE_PERSISTENT_PROGRAMS");
}

// Warp-specialized attention whose blocks read outside loops the producer copies by TMA
// (GpuPlan::producer_copies): the last P.V-behind V block, and with Q_VIEW Q's, per part
// of the head (96 = 64 + 32, 80 = 64 + 16); rows past N zero-filled by the view; and
// persistent (the V block's buffer handed back each program; TILEFUSE_PERSISTENT_PROGRAMS
// is read when a kernel loads, and these Q_VIEW configs load nowhere else in this process).
TEST_CASE("gpu: the producer copies attention's Q and last V blocks: odd N, heads in parts, persistent") {
  const Config ws{{"BLOCK_N", 128}, {"RESCALE_LATE", 1}, {"Q_VIEW", 1}, warp_specialize()};
  for (auto [n, causal, d] : {std::tuple{301, false, 128}, std::tuple{200, true, 128}, std::tuple{1000, true, 128},
                              std::tuple{257, false, 96}, std::tuple{190, true, 80}})
    check_attention_d128(n, causal, 1, ws, 53, d);
  setenv("TILEFUSE_PERSISTENT_PROGRAMS", "5", 1);
  Config persistent_ws = ws;
  persistent_ws.persistent = 1;
  for (auto [n, causal] : {std::pair{1000, false}, std::pair{777, true}, std::pair{129, true}})
    check_attention_d128(n, causal, 1, persistent_ws, 59);
  // d64 on the same tiling: Q's two buffers fit, used by a block's programs in turn (5
  // blocks, 24 or 15 programs: both buffers' barriers complete several phases).
  for (auto [n, causal] : {std::pair{1000, true}, std::pair{600, false}})
    check_attention_d128(n, causal, 1, persistent_ws, 71, 64);
  unsetenv("TILEFUSE_PERSISTENT_PROGRAMS");
}

// Attention at the head-dim-128 heuristic tiling (128x128 on two warpgroups, K and V by
// TMA two stages deep): odd N, causal or not, P.V one block behind or not.
TEST_CASE("gpu: attention at the head-dim-128 heuristic tiling, odd N") {
  for (auto [n, causal, lag] : {std::tuple{301, false, 1}, std::tuple{200, true, 1}, std::tuple{333, false, 0},
                                std::tuple{129, true, 0}, std::tuple{1000, true, 1}})
    check_attention_d128(n, causal, lag, Config{{"BLOCK_N", 128}}, 37);
}

// Causal rows with the diagonal block first (DIAGONAL_FIRST, the d128 heuristic's at N
// <= 2048, with a TMA store): the producer copies the diagonal's K block before the key
// loop and block 0's V after it; odd N (the last query block partial, one query block
// alone at 129), plain or TMA stores, warp-specialized or not, late rescale or not, and
// persistent (where the copy before the loop goes back to the consumers).
TEST_CASE("gpu: causal attention with the diagonal block first, odd N") {
  const Config ws{{"BLOCK_N", 128}, {"RESCALE_LATE", 1}, {"TMA_STORE", 0}, {"DIAGONAL_FIRST", 1}, warp_specialize()};
  for (int n : {1000, 129, 385, 64}) check_attention_d128(n, true, 1, ws, 61);
  for (int n : {1000, 129}) check_attention_d128(n, true, 1, Config(ws).set("TMA_STORE", 1), 62);
  check_attention_d128(777, true, 1, Config{{"BLOCK_N", 128}, {"DIAGONAL_FIRST", 1}}, 63);
  check_attention_d128(300, true, 1, Config{{"BLOCK_N", 128}, {"RESCALE_LATE", 1}, {"DIAGONAL_FIRST", 1}}, 65, 64);
  setenv("TILEFUSE_PERSISTENT_PROGRAMS", "5", 1);
  Config persistent_ws = ws;
  persistent_ws.persistent = 1;
  for (int n : {777, 129}) check_attention_d128(n, true, 1, persistent_ws, 67);
  unsetenv("TILEFUSE_PERSISTENT_PROGRAMS");
}

// Heads that are not powers of two (in parts: 96 = 64 + 32, 80 = 64 + 16, 40 -> 32 +
// 16 with 8 columns past the head, 176 -> 128 + 64; in one block: 112 -> 128, 200 ->
// 256), a row stride off 16 bytes (33: no TMA), 160 on 128-key blocks and 192 / 256 on
// 64-key blocks, at the sm_90a heuristic's tilings (and 65-127 columns at d128's tiling
// and in one block too) against the interpreter, odd N, causal or not; bf16 too.
TEST_CASE_TEMPLATE("gpu: attention at any head dim, heuristic tilings", T, half, bfloat16) {
  for (auto [d, n, causal] : {std::tuple{96, 301, false}, std::tuple{96, 200, true}, std::tuple{80, 333, false},
                              std::tuple{40, 257, true}, std::tuple{33, 130, false}, std::tuple{200, 150, true},
                              std::tuple{192, 210, false}, std::tuple{256, 190, true}, std::tuple{256, 129, false},
                              std::tuple{112, 170, true}, std::tuple{160, 250, false}, std::tuple{176, 140, true},
                              std::tuple{64, 300, true}, std::tuple{48, 1000, true}}) {
    CAPTURE(d);
    CAPTURE(n);
    CAPTURE(causal);
    int bh = 2;
    size_t sz = size_t(bh) * n * d;
    auto q = ref::random_vec<T>(sz, 81, -1, 1), k = ref::random_vec<T>(sz, 82, -1, 1),
         v = ref::random_vec<T>(sz, 83, -1, 1);
    std::vector<T> o(sz);
    std::vector<float> lse(bh * n);
    float scale = 1.0f / std::sqrt(float(d));
    std::vector<Config> cfgs{tk::attention_heuristic(n, d, causal, true)};
    if (d > 64 && d < 128) {  // d128's tiling (128 rows over two warpgroups); the head in one block
      cfgs.push_back(Config{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"PV_LAG", 1}, {"TMA_STORE", 0}, num_warps(8),
                            num_stages(2)});
      cfgs.push_back(Config(cfgs[0]).set("HEAD_SPLIT", 0));
    }
    if (d <= 64 && d % 16 != 0)  // and the 64-row tiling of heads on 32-byte rows
      cfgs.push_back(tk::attention_heuristic(n, 64, causal, true));
    for (const Config& c : cfgs) {
      CAPTURE(c.str());
      Config cfg = tk::attention_launch_config(c, d, causal, scale);
      int64_t bm = cfg.get("BLOCK_M");
      gpu_matches_interp(tk::attention_fwd_kernel<T>(), Grid((n + bm - 1) / bm, bh), cfg, {2e-3, 2e-2}, o, lse, q, k,
                         v, n, int64_t(n) * d, int64_t(d), scale);
    }
  }
}

// attention_fwd_grouped through the host function on device buffers against the same call
// on host buffers (the interpreter), at the sm_90a heuristic's tiling; bh query heads,
// bh / group key/value heads, random inputs from `seed`.
template <class T>
void check_attention_host_function(int bh, int group, int n, int d, bool causal, unsigned seed) {
  const size_t sz = size_t(bh) * n * d;
  auto q = ref::random_vec<T>(sz, seed, -1, 1), k = ref::random_vec<T>(sz / group, seed + 1, -1, 1),
       v = ref::random_vec<T>(sz / group, seed + 2, -1, 1);
  std::vector<T> want(sz);
  std::vector<float> want_lse(size_t(bh) * n);
  Config cfg = tk::attention_heuristic(n, d, causal, true);
  tk::attention_fwd_grouped(want, want_lse, q, k, v, bh, group, n, d, causal, 0.0f, cfg);
  DeviceBuffer<T> dq = to_device(q), dk = to_device(k), dv = to_device(v), dout(sz);
  DeviceBuffer<float> dlse(size_t(bh) * n);
  tk::attention_fwd_grouped(dout, dlse, dq, dk, dv, bh, group, n, d, causal, 0.0f, cfg);
  auto got = dout.to_host();
  auto got_lse = dlse.to_host();
  double worst = 0, worst_lse = 0;
  for (size_t i = 0; i < sz; ++i) worst = std::max(worst, std::abs(double(float(got[i])) - float(want[i])));
  for (size_t i = 0; i < got_lse.size(); ++i) worst_lse = std::max(worst_lse, std::abs(double(got_lse[i]) - want_lse[i]));
  CHECK(worst < 2e-2);
  CHECK(worst_lse < 2e-3);
}

// attention_fwd on rows off 16 bytes (head dims that are not multiples of 8): Q, K and V
// copied into aligned rows and the output copied back (the copy forced), and the kernel
// on the rows as given (copy off).
TEST_CASE("gpu: attention at head dims off 16-byte rows, through aligned copies or not") {
  if (!difftest::have_gpu()) return;
  for (auto [d, n, causal] : {std::tuple{36, 300, false}, std::tuple{44, 257, true}, std::tuple{33, 130, false},
                              std::tuple{100, 190, true}}) {
    for (const char* mode : {"1", "0"}) {
      CAPTURE(d);
      CAPTURE(n);
      CAPTURE(causal);
      CAPTURE(mode);
      setenv("TILEFUSE_GEMM_COPY", mode, 1);
      check_attention_host_function<bfloat16>(3, 1, n, d, causal, 91);
    }
  }
  unsetenv("TILEFUSE_GEMM_COPY");
}

// Grouped-query attention at the heuristic's tilings (K and V by TMA over the key/value
// heads).
TEST_CASE("gpu: grouped-query attention, heuristic tilings") {
  if (!difftest::have_gpu()) return;
  for (auto [d, n, group, causal] : {std::tuple{64, 300, 4, false}, std::tuple{128, 257, 2, true},
                                     std::tuple{96, 190, 8, true}, std::tuple{40, 133, 4, false}}) {
    CAPTURE(d);
    CAPTURE(n);
    CAPTURE(group);
    CAPTURE(causal);
    check_attention_host_function<half>(8, group, n, d, causal, 95);
  }
}

// The GEMM host functions on operands in rows off 16 bytes (odd K; B [K, N] with odd N):
// with the copy to aligned rows forced, left to the rule, and turned off, the result
// matches a double-precision reference (the copy's padding is never read: the views
// keep K and N). f32 output, both B layouts, a bias. Rows an odd multiple of 16 bytes
// apart (K = 520 and 136, N = 1000 and 3000) are copied into 128-byte rows too: forced,
// and by the rule at 4096x3000x136 (384 tiles: B, read by 4096 rows, is copied; A, read
// by 3000 columns, is not).
TEST_CASE("gpu: matmul copies operands whose rows are off 16 bytes into aligned rows, same results") {
  if (!difftest::have_gpu()) return;
  for (const char* mode : {"1", "", "0"}) {
    for (auto [m, n, k] : {std::tuple{300, 517, 263}, std::tuple{520, 1001, 1024}, std::tuple{256, 512, 4095},
                           std::tuple{300, 1000, 520}, std::tuple{4096, 3000, 136}}) {
      for (bool trans : {false, true}) {
        CAPTURE(mode);
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(trans);
        setenv("TILEFUSE_GEMM_COPY", mode, 1);
        auto a = ref::random_vec<bfloat16>(size_t(m) * k, 71, -1, 1), b = ref::random_vec<bfloat16>(size_t(k) * n, 72, -1, 1);
        auto bias = ref::random_vec<bfloat16>(n, 73, -1, 1);
        DeviceBuffer<bfloat16> da = to_device(a), db = to_device(b), dbias = to_device(bias);
        DeviceBuffer<float> dc(size_t(m) * n);
        tk::MatmulOptions o;
        o.b_trans = trans;
        tk::matmul(dc, da, db, m, n, k, o, dbias);
        auto want = ref::matmul(ref::to_float(a), ref::to_float(b), m, n, k, trans, 1.0, 0, ref::to_float(bias), {});
        auto got = dc.to_host();
        double worst = 0;
        for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]) / (1.0 + std::abs(want[i])));
        CHECK(worst < 2e-3);
      }
    }
  }
  unsetenv("TILEFUSE_GEMM_COPY");
}
