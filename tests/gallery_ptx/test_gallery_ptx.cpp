// Every gallery kernel, for each dtype it supports and several configs, compiles to
// PTX that ptxas accepts for sm_80 and sm_90a; the softmax and RMSNorm programs use
// 128-bit global loads and stores and spill nothing. Skips (with a message) when the
// CUDA toolkit's ptxas is absent.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <tuple>

#include "tilefuse/kernels/attention.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/cross_entropy.hpp"
#include "tilefuse/kernels/gemm_operands.hpp"
#include "tilefuse/kernels/gemm_split_k.hpp"
#include "tilefuse/kernels/registry.hpp"
#include "tilefuse/nvptx/compiler.hpp"
#include "tilefuse/tools/ptxas.hpp"
#include "gallery_ptx_util.hpp"

using namespace tilefuse;
using gallery_ptx::assemble_unaligned;
using gallery_ptx::count;

namespace {

// The default config and one variation that changes the tiling and the warps.
std::vector<Config> configs_for(const kernels::GalleryKernel& g) {
  std::vector<Config> out{g.default_config};
  Config v = g.default_config;
  if (v.has("BLOCK")) {
    v.set("BLOCK", v.get("BLOCK") * 4);
    v.num_warps = std::min(16, v.num_warps * 2);
    v.num_stages = 1;  // 4x the tile in each stage may exceed shared memory (the default has them)
  } else if (v.has("HEAD_DIM")) {  // attention
    v.set("HEAD_DIM", 128).set("BLOCK_N", 32).set("CAUSAL", 1);
  } else {  // matmul: transposed B, bias + tanh-GELU epilogue, another tiling
    v.set("BLOCK_N", 64).set("BLOCK_K", 64).set("B_TRANS", 1).set("BIAS", 1).set("ACT", 2);
    v.num_warps = 4;
  }
  out.push_back(v);
  return out;
}

}  // namespace

TEST_CASE("every gallery kernel assembles with ptxas for sm_80 and sm_90a") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex ld128(R"(ld\.global[^\n]*\.v4\.b32)"), st128(R"(st\.global[^\n]*\.v4\.b32)");
  int assembled = 0;
  for (const auto& g : kernels::gallery()) {
    for (DType d : g.dtypes) {
      const KernelBase& k = g.get(d);
      auto cfgs = configs_for(g);
      for (const Config& cfg : cfgs) {
        auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
        for (const char* target : {"sm_80", "sm_90a"}) {
          if (cfg.cluster > 1 && std::string(target) == "sm_80") continue;  // clusters need sm_90
          CAPTURE(g.name);
          CAPTURE(name(d));
          CAPTURE(cfg.str());
          CAPTURE(target);
          nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target(target)});
          tools::PtxasResult r = tools::run_ptxas(ck.ptx, target);
          CHECK_MESSAGE(r.ok, r.log);
          ++assembled;
          if (g.name == "attention_fwd" || g.name == "matmul") {
            // On tensor cores: warpgroup MMAs on sm_90a (GEMM's operands straight from the
            // copied tiles), mma.sync fed by ldmatrix on sm_80.
            bool hopper = std::string(target) == "sm_90a";
            CHECK(ck.ptx.find(hopper ? "wgmma.mma_async.sync.aligned" : "mma.sync.aligned.m16n8k16") !=
                  std::string::npos);
            if (!hopper) CHECK(ck.ptx.find("ldmatrix.sync.aligned") != std::string::npos);
            if (hopper && g.name == "matmul") CHECK(ck.ptx.find("ldmatrix") == std::string::npos);
            CHECK(r.log.find("C75") == std::string::npos);  // wgmma not serialized by ptxas
            if (g.name == "matmul" && cfg.has("ACT") && cfg.get("ACT") == 2 && byte_size(d) == 2)  // 16-bit GELU
              CHECK(ck.ptx.find("tanh.approx.f32") != std::string::npos);
            if (&cfg == &cfgs.front()) CHECK(r.spill_stores == 0);  // the default config
          }
          bool streaming = g.name == "softmax" || g.name == "rmsnorm" || g.name == "swiglu" ||
                           g.name == "swiglu_bwd" || g.name == "softmax_bwd";
          if (streaming) {
            CHECK(r.spill_stores == 0);
            CHECK(count(ck.ptx, ld128) > 0);
            CHECK(count(ck.ptx, st128) > 0);
          }
        }
      }
    }
  }
  CHECK(assembled >= 100);
}

TEST_CASE("row kernels split over thread-block clusters assemble for sm_90a, spill-free at the heuristic's configs") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex barrier(R"(barrier\.cluster\.arrive\.relaxed)"), send(R"(st\.async\.shared::cluster)"),
      wait(R"(mbarrier\.try_wait)"), fence(R"(\bfence\.(sc|acq_rel)\.cluster|membar)");
  for (std::string kname : {"softmax", "rmsnorm", "layernorm", "softmax_bwd", "cross_entropy"}) {
    const auto& g = *std::find_if(kernels::gallery().begin(), kernels::gallery().end(),
                                  [&](const auto& k) { return k.name == kname; });
    for (DType d : {DType::bf16, DType::f32}) {
      for (int64_t cols : {20000, 65536, 262144}) {
        // Cross-entropy's own heuristic (row_heuristic's f32 8192 x 8 warps, not one it picks,
        // spills 4 bytes with approximate math flushing subnormals).
        Config cfg = kname == "cross_entropy" ? kernels::cross_entropy_heuristic(cols, d, true)
                                              : kernels::row_heuristic(cols, d, true);
        for (auto& [key, v] : g.default_config.meta)
          if (!cfg.has(key)) cfg.set(key, v);
        // As the host function launches it: a mean's count in the count kernel (COUNT = 0).
        if (kname == "cross_entropy") cfg = kernels::cross_entropy_config(cfg, cols, {});
        CAPTURE(kname);
        CAPTURE(name(d));
        CAPTURE(cfg.str());
        REQUIRE(cfg.cluster > 1);
        const KernelBase& k = g.get(d);
        auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
        nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
        CHECK(ck.cluster_size == cfg.cluster);
        tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90a");
        CHECK_MESSAGE(r.ok, r.log);
        // Cross-entropy's 16-bit rows of 16 x 16384 (64 values per thread) at 3 programs per SM
        // spill 76 bytes and still run fastest (H200 bf16 512x262144: 74.4% of copy, 69.4% at 2
        // programs without spills, 37.8% uncapped; bench/NOTES.md).
        bool measured_spill = kname == "cross_entropy" && d == DType::bf16 && cols == 262144;
        CHECK(r.spill_stores <= (measured_spill ? 96 : 0));
        // Values sent per program: max and sum of exponentials (softmax, cross-entropy: its
        // target logit stays with the program holding it; a third value, the logit sum,
        // only with label smoothing), LayerNorm's two sums, one sum otherwise.
        int values = kname == "rmsnorm" || kname == "softmax_bwd" ? 1 : 2;
        CHECK(count(ck.ptx, barrier) == 1);  // once, after initializing the mbarriers
        CHECK(count(ck.ptx, send) == values);
        // One exchange each: LayerNorm's two sums are independent; softmax and
        // cross-entropy combine each program's (max, sum of exp(x - max)) in one.
        CHECK(count(ck.ptx, wait) == 1);
        // No cluster-wide memory fence (a mean's count has GPU-scope ones, once per program).
        CHECK(count(ck.ptx, fence) == 0);
      }
    }
  }
}

TEST_CASE("num_stages pipelines the tensor-core operand copies: cp.async into S buffers, waits S-1 iterations behind") {
  if (gallery_ptx::no_ptxas()) return;
  const kernels::GalleryKernel* mm = nullptr;
  const kernels::GalleryKernel* at = nullptr;
  for (const auto& g : kernels::gallery()) {
    if (g.name == "matmul") mm = &g;
    if (g.name == "attention_fwd") at = &g;
  }
  REQUIRE(mm);
  REQUIRE(at);
  for (int stages = 1; stages <= 4; ++stages) {
    for (const kernels::GalleryKernel* g : {mm, at}) {
      Config cfg = g->default_config;
      cfg.num_stages = stages;
      const KernelBase& k = g->get(DType::bf16);
      auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
      for (const char* target : {"sm_80", "sm_90a"}) {
        CAPTURE(g->name);
        CAPTURE(stages);
        CAPTURE(target);
        nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target(target)});
        tools::PtxasResult r = tools::run_ptxas(ck.ptx, target);
        CHECK_MESSAGE(r.ok, r.log);
        CHECK(r.spill_stores == 0);
        CHECK(ck.ptx.find(std::string(target) == "sm_90a" ? "wgmma.mma_async" : "ldmatrix.sync.aligned") !=
              std::string::npos);
        if (std::string(target) == "sm_90a" && stages > 1) {
          // The operands are tensor-view blocks: pipelined, TMA moves them (see below).
          CHECK(ck.ptx.find(g == mm ? "cp.async.bulk.tensor.2d" : "cp.async.bulk.tensor.3d") != std::string::npos);
          if (g == mm) CHECK(ck.ptx.find("cp.async.cg.shared.global") == std::string::npos);  // (attention's Q is)
          CHECK(ck.tensor_maps.size() == 3);  // the two operands, and the output's TMA store
          continue;
        }
        CHECK(ck.ptx.find("cp.async.cg.shared.global") != std::string::npos);
        // Two copies per iteration, issued S - 1 iterations ahead by their dot right after
        // its wait: GEMM's dot needs both of this iteration's (2S - 4 younger groups may
        // stay pending), attention's first dot only K (2S - 3: this iteration's V too).
        // On sm_90a GEMM's MMAs of one iteration stay in flight into the next (S >= 3),
        // so its copies run S - 2 iterations ahead: 2S - 6.
        bool lagged = g == mm && std::string(target) == "sm_90a" && stages >= 3;
        int pending = stages == 1 ? 0 : (g == mm ? 2 * stages - (lagged ? 6 : 4) : 2 * stages - 3);
        if (lagged) CHECK(ck.ptx.find("wgmma.wait_group.sync.aligned 1;") != std::string::npos);
        std::string wait = "cp.async.wait_group " + std::to_string(pending) + ";";
        CHECK_MESSAGE(ck.ptx.find(wait) != std::string::npos, wait);
        if (g == mm)  // a copy of the A [128, 32] and B [32, 128] bf16 tiles per stage
          CHECK(ck.shared_bytes >= stages * 2 * (128 * 32 * 2));
      }
    }
  }
}

TEST_CASE("GEMM's tensor-view operands move by TMA on sm_90a when the launch can encode the views") {
  const kernels::GalleryKernel* mm = nullptr;
  for (const auto& g : kernels::gallery())
    if (g.name == "matmul") mm = &g;
  REQUIRE(mm);
  // Parameters: c a b bias residual M N K lda ldb ldc alpha.
  enum { A = 1, B = 2, M = 5, N = 6, K = 7, LDA = 8, LDB = 9, LDC = 10 };
  const KernelBase& k = mm->get(DType::bf16);
  auto compile = [&](Config cfg, std::vector<int64_t> div, const char* target = "sm_90a") {
    auto f = k.specialize(cfg, div);
    return nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target(target)});
  };
  Config cfg{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, num_warps(8), num_stages(4)};
  std::vector<int64_t> aligned(k.num_runtime_params(), 16);
  nvptx::CompiledKernel ck = compile(cfg, aligned);
  REQUIRE(ck.tensor_maps.size() == 3);
  using V = nvptx::TensorMapSpec::Value;
  const nvptx::TensorMapSpec& a = ck.tensor_maps[0];
  const nvptx::TensorMapSpec& b = ck.tensor_maps[1];
  CHECK(a.base_param == A);
  CHECK(a.dims == std::vector<V>{{M, 0}, {K, 0}});
  CHECK(a.strides == std::vector<V>{{LDA, 0}, {-1, 1}});
  CHECK(a.box == std::vector<int>{128, 64});  // one 128-byte column block
  CHECK(a.swizzle_bytes == 128);
  CHECK(b.base_param == B);
  CHECK(b.dims == std::vector<V>{{K, 0}, {N, 0}});
  CHECK(b.box == std::vector<int>{64, 64});  // four boxes per [64, 256] tile
  // C's block leaves by a TMA store: written to shared memory swizzled as four boxes of
  // [128, 64], copied out by thread 0, its buffer held until the engine has read it.
  const nvptx::TensorMapSpec& c = ck.tensor_maps[2];
  CHECK(c.base_param == 0);
  CHECK(c.dims == std::vector<V>{{M, 0}, {N, 0}});
  CHECK(c.strides == std::vector<V>{{LDC, 0}, {-1, 1}});
  CHECK(c.box == std::vector<int>{128, 64});
  CHECK(c.swizzle_bytes == 128);
  CHECK(count(ck.ptx, std::regex(R"(cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group)")) == 4);
  CHECK(ck.ptx.find("cp.async.bulk.wait_group.read 0") != std::string::npos);
  // Hidden parameters: two 128-byte maps read in parameter space; mbarrier phases.
  CHECK(ck.ptx.find(".param .align 64 .b8 matmul_bf16_bf16_param_12[128]") != std::string::npos);
  CHECK(ck.ptx.find("cvta.param") != std::string::npos);
  CHECK(ck.ptx.find("mbarrier.try_wait.parity.shared::cta.b64") != std::string::npos);
  CHECK(ck.ptx.find("mbarrier.arrive.expect_tx") != std::string::npos);
  if (!tools::find_ptxas().empty()) {
    tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
    CHECK(r.log.find("C75") == std::string::npos);
  }
  // A row stride that is not a multiple of 16 bytes (odd K): A's rows cannot be copied
  // whole, it loads like a pointer tile; B still moves by TMA.
  std::vector<int64_t> odd_lda = aligned;
  odd_lda[LDA] = 1;
  ck = compile(cfg, odd_lda);
  REQUIRE(ck.tensor_maps.size() == 2);
  CHECK(ck.tensor_maps[0].base_param == B);
  CHECK(ck.ptx.find("cp.async.bulk.tensor.2d") != std::string::npos);
  // ldb a multiple of 8 bytes only: B moves by 8-byte cp.async copies, A by TMA.
  std::vector<int64_t> ldb8 = aligned;
  ldb8[LDB] = 4;
  ck = compile(cfg, ldb8);
  REQUIRE(ck.tensor_maps.size() == 2);
  CHECK(ck.tensor_maps[0].base_param == A);
  CHECK(ck.ptx.find("cp.async.ca.shared.global") != std::string::npos);
  // N, ldb and ldc multiples of 8 only (N = 3000): the last column of tiles moves left to
  // end at N, its start still 16 bytes aligned, so B and C keep their TMA copies.
  std::vector<int64_t> n8 = aligned;
  n8[N] = n8[LDB] = n8[LDC] = 8;
  for (int shift_n : {1, 0}) {
    CAPTURE(shift_n);
    ck = compile(Config(cfg).set("EDGE_SHIFT_N", shift_n), n8);
    CHECK(ck.tensor_maps.size() == 3);
    CHECK(count(ck.ptx, std::regex(R"(cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group)")) == 4);
  }
  // Transposed B ([N, K] rows): the copy is [BN, BK], read by the dot transposed.
  Config t = cfg;
  t.set("B_TRANS", 1);
  ck = compile(t, aligned);
  REQUIRE(ck.tensor_maps.size() == 3);
  CHECK(ck.tensor_maps[1].dims == std::vector<V>{{N, 0}, {K, 0}});
  CHECK(ck.tensor_maps[1].box == std::vector<int>{256, 64});
  // Not on sm_80 (mma.sync path), nor with one stage, nor when turned off.
  Config small{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 32}, num_warps(4), num_stages(3)};
  CHECK(compile(small, aligned, "sm_80").tensor_maps.empty());
  CHECK(compile(small, aligned, "sm_90a").tensor_maps.size() == 3);
  Config one = cfg;
  one.num_stages = 1;  // the operands load like pointer tiles; C's store needs no pipeline
  ck = compile(one, aligned);
  REQUIRE(ck.tensor_maps.size() == 1);
  CHECK(ck.tensor_maps[0].base_param == 0);
  setenv("TILEFUSE_TMA", "0", 1);
  CHECK(compile(cfg, aligned).tensor_maps.empty());
  unsetenv("TILEFUSE_TMA");
  // C's rows off 16 bytes (an odd ldc), or TMA stores turned off: plain stores.
  std::vector<int64_t> odd_ldc = aligned;
  odd_ldc[LDC] = 1;
  ck = compile(cfg, odd_ldc);
  CHECK(ck.tensor_maps.size() == 2);
  CHECK(ck.ptx.find("global.shared::cta.bulk_group") == std::string::npos);
  CHECK(ck.ptx.find("st.global") != std::string::npos);
  setenv("TILEFUSE_TMA_STORE", "0", 1);
  CHECK(compile(cfg, aligned).tensor_maps.size() == 2);
  unsetenv("TILEFUSE_TMA_STORE");
}

TEST_CASE("the sm_90a attention heuristic gives causal d64 rows of up to 1024 keys 64-key blocks") {
  // The diagonal block, half masked, is a large share of few key blocks (bench/NOTES.md).
  auto block_n = [](int64_t n, int64_t d, bool causal) {
    return kernels::attention_heuristic(n, d, causal, true).get("BLOCK_N");
  };
  CHECK(block_n(1024, 64, true) == 64);
  CHECK(block_n(300, 48, true) == 64);
  CHECK(block_n(1025, 64, true) == 128);
  CHECK(block_n(1024, 64, false) == 128);
  CHECK(block_n(1024, 128, true) == 128);
  Config cfg = kernels::attention_launch_config(kernels::attention_heuristic(1024, 64, true, true), 64, true, 0.1f);
  std::string ptx;
  REQUIRE_NOTHROW(ptx = gallery_ptx::gallery_ptx_of("attention_fwd", DType::bf16, cfg, 16));
  CHECK(ptx.find("wgmma.mma_async") != std::string::npos);
  if (gallery_ptx::no_ptxas()) return;
  tools::PtxasResult r = tools::run_ptxas(ptx, "sm_90a");
  CHECK_MESSAGE(r.ok, r.log);
  CHECK(r.spill_stores == 0);
}

TEST_CASE("attention's K and V blocks move by TMA on sm_90a, its two loops sharing the two maps") {
  const kernels::GalleryKernel* at = nullptr;
  for (const auto& g : kernels::gallery())
    if (g.name == "attention_fwd") at = &g;
  REQUIRE(at);
  // Parameters: out lse q k v seq_len stride_h stride_n sm_scale.
  enum { K = 3, V = 4, SEQ = 5, SH = 6, SN = 7 };
  for (int64_t d : {64, 128}) {
    CAPTURE(d);
    Config cfg = kernels::attention_heuristic(4096, d, true, true);
    const KernelBase& k = at->get(DType::f16);
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    // The output's block leaves by a TMA store of the same [heads, seq, d] shape at d64;
    // the heuristic keeps plain stores at d128 (TMA_STORE = 0, measured 1% faster).
    bool out_tma = !cfg.has("TMA_STORE") || cfg.get("TMA_STORE");
    CHECK(out_tma == (d == 64));
    REQUIRE(ck.tensor_maps.size() == (out_tma ? 3u : 2u));
    using Val = nvptx::TensorMapSpec::Value;
    if (out_tma) {
      CHECK(ck.tensor_maps[2].base_param == 0);
      CHECK(ck.tensor_maps[2].box == std::vector<int>{1, static_cast<int>(cfg.get("BLOCK_M")), 64});
    }
    CHECK((ck.ptx.find("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group") != std::string::npos) == out_tma);
    for (int i = 0; i < 2; ++i) {
      const auto& s = ck.tensor_maps[i];
      CHECK(s.base_param == (i ? V : K));
      CHECK(s.dims == std::vector<Val>{{-1, 0, 1}, {SEQ, 0}, {-1, d}});  // [grid.y heads, seq, d]
      CHECK(s.strides == std::vector<Val>{{SH, 0}, {SN, 0}, {-1, 1}});
      CHECK(s.box == std::vector<int>{1, static_cast<int>(cfg.get("BLOCK_N")), 64});
    }
    CHECK(ck.ptx.find("cp.async.bulk.tensor.3d") != std::string::npos);
    if (!tools::find_ptxas().empty()) {
      tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90a");
      CHECK_MESSAGE(r.ok, r.log);
      CHECK(r.spill_stores == 0);
    }
  }
}

TEST_CASE("attention at heads that are not powers of two: each part's K and V blocks by TMA, wgmma, no spills") {
  const kernels::GalleryKernel* at = nullptr;
  for (const auto& g : kernels::gallery())
    if (g.name == "attention_fwd") at = &g;
  REQUIRE(at);
  enum { K = 3, V = 4 };
  for (int64_t d : {40, 80, 96, 200, 256}) {
    CAPTURE(d);
    Config cfg = kernels::attention_launch_config(kernels::attention_heuristic(4096, d, false, true), d, false, 0.1f);
    const KernelBase& k = at->get(DType::bf16);
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    // One map per operand (K, V, and the output's where it leaves by TMA store) and block
    // width: a part's width, or 64 columns (128 bytes, the widest swizzle) for wider
    // parts. The view is the head's own width, so the engine reads 0 past the head.
    std::set<std::pair<int, int>> maps, want;  // (operand, box width)
    for (const auto& s : ck.tensor_maps) {
      CHECK(s.dims.back().constant == d);
      maps.insert({s.base_param, s.box.back()});
    }
    const bool out_tma = !cfg.has("TMA_STORE") || cfg.get("TMA_STORE");
    for (auto part : kernels::head_parts(d))
      for (int operand : {int(K), int(V), 0})
        if (operand != 0 || out_tma) want.insert({operand, static_cast<int>(std::min<int64_t>(part.width, 64))});
    CHECK(maps == want);
    CHECK(ck.tensor_maps.size() == want.size());
    CHECK(ck.ptx.find("wgmma.mma_async") != std::string::npos);
    CHECK(ck.ptx.find("cp.async.bulk.tensor.3d") != std::string::npos);
    if (!tools::find_ptxas().empty()) {
      tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90a");
      CHECK_MESSAGE(r.ok, r.log);
      CHECK(r.spill_stores == 0);
    }
  }
}

TEST_CASE("warp-specialized GEMM: a producer warpgroup copies, the consumers meet on a named barrier") {
  const kernels::GalleryKernel* mm = nullptr;
  for (const auto& g : kernels::gallery())
    if (g.name == "matmul") mm = &g;
  REQUIRE(mm);
  Config cfg{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, num_warps(8), num_stages(4)};
  const KernelBase& k = mm->get(DType::bf16);
  auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
  setenv("TILEFUSE_WARP_SPECIALIZE", "1", 1);
  nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  unsetenv("TILEFUSE_WARP_SPECIALIZE");
  CHECK(ck.num_warps == 12);  // 8 consumers + the producer warpgroup
  CHECK(ck.ptx.find(".maxntid 384, 1, 1") != std::string::npos);
  CHECK(ck.ptx.find("bar.sync 1, 256;") != std::string::npos);
  CHECK(ck.ptx.find("mbarrier.arrive.shared::cta.b64") != std::string::npos);  // stages released
  // The copies: once in the producer's loop (A, then B's four column blocks), no prologue.
  CHECK(count(ck.ptx, std::regex(R"(cp\.async\.bulk\.tensor\.2d\.shared::cluster)")) == 5);
  if (!tools::find_ptxas().empty()) {
    tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
    CHECK(r.log.find("C75") == std::string::npos);
  }
  // The config knob does the same as the environment's.
  Config ws = cfg;
  ws.set("warp_specialize", 1);
  CHECK(ws.str().find("warp_specialize=1") != std::string::npos);
  auto fw = k.specialize(ws, std::vector<int64_t>(k.num_runtime_params(), 16));
  CHECK(nvptx::compile(*fw, nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).ptx == ck.ptx);
  // Where a pipelined copy is not TMA (B's rows 8-byte multiples: cp.async), no split.
  std::vector<int64_t> odd(k.num_runtime_params(), 16);
  odd[9] = 4;  // ldb
  CHECK(nvptx::compile(*k.specialize(ws, odd), nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).num_warps == 8);
  // Attention: its two loops (unmasked, then masked blocks) feed one ring of stages; with
  // two consumer warpgroups, registers move from the producer to them.
  const kernels::GalleryKernel* at = nullptr;
  for (const auto& g : kernels::gallery())
    if (g.name == "attention_fwd") at = &g;
  const KernelBase& ka = at->get(DType::f16);
  Config ca = kernels::attention_heuristic(4096, 128, true, true);
  ca.set("warp_specialize", 1);
  auto fa = ka.specialize(ca, std::vector<int64_t>(ka.num_runtime_params(), 16));
  nvptx::CompiledKernel cka = nvptx::compile(*fa, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  CHECK(cka.num_warps == fa->num_warps + 4);
  // K, V (2 boxes) x 2 loops, and the last P.V-behind V block between them (the producer's too)
  CHECK(count(cka.ptx, std::regex(R"(cp\.async\.bulk\.tensor\.3d\.shared::cluster)")) == 10);
  CHECK(cka.ptx.find("setmaxnreg.dec.sync.aligned.u32 40;") != std::string::npos);
  CHECK(cka.ptx.find("setmaxnreg.inc.sync.aligned.u32 232;") != std::string::npos);
  if (!tools::find_ptxas().empty()) {
    tools::PtxasResult r = tools::run_ptxas(cka.ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
    CHECK(r.log.find("C75") == std::string::npos);  // setmaxnreg honoured, wgmma not serialized
  }
}

TEST_CASE("attention with P.V one block behind: Q.K^T and P.V in flight together, the softmax waits for Q.K^T only") {
  const kernels::GalleryKernel* at = nullptr;
  for (const auto& g : kernels::gallery())
    if (g.name == "attention_fwd") at = &g;
  REQUIRE(at);
  const KernelBase& k = at->get(DType::f16);
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    Config cfg = kernels::attention_heuristic(4096, 128, causal, true);
    REQUIRE(cfg.get("PV_LAG") == 1);  // the heuristic's choice for head dim 128 on sm_90a
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    // The lagged loop waits with one group (its P.V) still in flight.
    CHECK(ck.ptx.find("wgmma.wait_group.sync.aligned 1;") != std::string::npos);
    // Q.K^T starts from a zero accumulator: its first K step writes it (scale-d 0), no
    // registers zeroed per block.
    CHECK(ck.ptx.find("setp.ne.b32 p, 0, 0;\nwgmma.mma_async") != std::string::npos);
    // P leaves the softmax as packed f16 pairs (one cvt per pair) and crosses the back
    // edge as such: one 32-bit phi per pair, no 16-bit phis.
    CHECK(ck.ptx.find("cvt.rn.f16x2.f32") != std::string::npos);
    nvptx::CompileArtifacts art = nvptx::compile_with_artifacts(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    // 128x128 P over 256 threads: 32 words per loop (as i32 once LLVM folds the bitcasts)
    CHECK(count(art.llvm_ir_opt, std::regex(R"(= phi (i32|<2 x half>) )")) >= 64);
    CHECK(count(art.llvm_ir_opt, std::regex(R"(= phi half )")) == 0);
    if (!tools::find_ptxas().empty()) {
      tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90a");
      CHECK_MESSAGE(r.ok, r.log);
      CHECK(r.spill_stores == 0);
      CHECK(r.log.find("C75") == std::string::npos);  // no wait injected for the rescaled accumulator
    }
  }
  // Warp-specialized (the heuristic's d128 config) with ping-pong turns: warpgroup w
  // takes its turn on barrier 2 + w and hands it to the other by an arrive; attention's
  // loops (two dots) take turns by default, TILEFUSE_PINGPONG=0 turns them off.
  Config ws = kernels::attention_heuristic(4096, 128, false, true);
  REQUIRE(ws.warp_specialize == 1);
  CHECK(ws.get("RESCALE_LATE") == 1);
  auto f = k.specialize(ws, std::vector<int64_t>(k.num_runtime_params(), 16));
  nvptx::CompiledKernel pp = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  setenv("TILEFUSE_PINGPONG", "0", 1);
  nvptx::CompiledKernel plain = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  unsetenv("TILEFUSE_PINGPONG");
  CHECK(plain.ptx.find("bar.arrive") == std::string::npos);
  // K's stage goes back to the producer as soon as Q.K^T has completed, before the
  // softmax's exp2 (early release), and V's after P.V's wait.
  for (const std::string* p : {&pp.ptx, &plain.ptx}) {
    size_t qk_done = p->find("wgmma.wait_group.sync.aligned 1;");
    REQUIRE(qk_done != std::string::npos);
    size_t release = p->find("mbarrier.arrive.shared::cta.b64", qk_done);
    CHECK(release < p->find("ex2.approx", qk_done));
  }
  for (const char* s : {"bar.sync 2, 256;", "bar.sync 3, 256;", "bar.arrive 2, 256;", "bar.arrive 3, 256;"})
    CHECK_MESSAGE(pp.ptx.find(s) != std::string::npos, s);
  if (!tools::find_ptxas().empty()) {
    tools::PtxasResult r = tools::run_ptxas(pp.ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
    CHECK(r.log.find("used 4 barriers") != std::string::npos);  // immediate ids: 0, 1, 2, 3
  }
}

TEST_CASE("persistent GEMM: programs loop over the grid, the TMA ring continues, the next copies before the epilogue") {
  const kernels::GalleryKernel* mm = nullptr;
  for (const auto& g : kernels::gallery())
    if (g.name == "matmul") mm = &g;
  REQUIRE(mm);
  Config cfg{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, num_warps(8), num_stages(3), persistent()};
  CHECK(cfg.str().find(" persistent=1") != std::string::npos);
  const KernelBase& k = mm->get(DType::bf16);
  auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
  CHECK(f->persistent);
  nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  CHECK(ck.persistent);
  CHECK(ck.num_warps == 8);
  // The grid's sizes follow the three tensor maps (A, B; C's store) as hidden parameters.
  CHECK(ck.tensor_maps.size() == 3);
  CHECK(std::regex_search(ck.ptx, std::regex(R"(\.param \.u32 matmul_bf16_bf16_param_15,)")));
  CHECK(std::regex_search(ck.ptx, std::regex(R"(\.param \.u32 matmul_bf16_bf16_param_17\s*\))")));
  // Copies of A (one box) and B (four) at three sites: before the programs' loop, in the
  // pipelined loop, and at its exit for the next program. No barrier invalidated: the
  // ring lives as long as the kernel.
  CHECK(count(ck.ptx, std::regex(R"(cp\.async\.bulk\.tensor\.2d\.shared::cluster)")) == 15);
  CHECK(count(ck.ptx, std::regex(R"(cp\.async\.bulk\.tensor\.2d\.global)")) == 4);  // C's store, 4 boxes
  CHECK(ck.ptx.find("mbarrier.inval") == std::string::npos);
  CHECK(count(ck.ptx, std::regex(R"(mbarrier\.init)")) == 6);  // once per stage of A and of B
  if (!tools::find_ptxas().empty()) {
    tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
    CHECK(r.log.find("C75") == std::string::npos);
  }
  // Without TMA (sm_80) the programs still loop, with no prefetch.
  nvptx::CompiledKernel c80 = nvptx::compile(*k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16)),
                                             nvptx::CompileOptions{nvptx::parse_target("sm_80")});
  CHECK(c80.persistent);
  CHECK(c80.ptx.find("cp.async.bulk") == std::string::npos);
  CHECK(std::regex_search(c80.ptx, std::regex(R"(\.param \.u32 matmul_bf16_bf16_param_14\s*\))")));
  // A persistent configuration in clusters, or a value other than 0/1, is a UserError.
  Config clustered = cfg;
  clustered.set("cluster", 2);
  CHECK_THROWS_WITH_AS(k.specialize(clustered, std::vector<int64_t>(k.num_runtime_params(), 16)),
                       doctest::Contains("persistent programs do not run in thread-block clusters"), UserError);
  Config two = cfg;
  two.set("persistent", 2);
  CHECK_THROWS_WITH_AS(k.specialize(two, std::vector<int64_t>(k.num_runtime_params(), 16)),
                       doctest::Contains("persistent = 2"), UserError);
}

TEST_CASE("GEMM over plain loads at odd K: 128-bit checked loads, MMAs waited for before the next tile is staged") {
  const kernels::GalleryKernel* mm = nullptr;
  for (const auto& g : kernels::gallery())
    if (g.name == "matmul") mm = &g;
  REQUIRE(mm);
  const std::regex wait1(R"(wgmma\.wait_group\.sync\.aligned 1;)"), ld128(R"(ld\.global[^\n]*\.v4\.b32)");
  const KernelBase& k = mm->get(DType::f16);
  for (bool persistent_programs : {false, true}) {
    CAPTURE(persistent_programs);
    Config cfg{{"BLOCK_M", 128}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"B_TRANS", 1}, num_warps(4), num_stages(3),
               persistent(persistent_programs)};
    // Rows of 16-byte-multiple strides but sizes of any divisibility (M, N, K = 530, 170,
    // 33): TMA moves A and B (it bounds-checks by element; cp.async could not copy the
    // K tail's runs whole), C's rows take plain stores (TMA would write past N).
    std::vector<int64_t> div(k.num_runtime_params(), 16);
    for (int i : {5, 6, 7}) div[i] = 1;
    nvptx::CompiledKernel by_tma = nvptx::compile(*k.specialize(cfg, div), nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    REQUIRE(by_tma.tensor_maps.size() == 2);
    CHECK(by_tma.tensor_maps[0].base_param == 1);
    CHECK(by_tma.tensor_maps[1].base_param == 2);
    if (!tools::find_ptxas().empty()) {
      tools::PtxasResult r = tools::run_ptxas(by_tma.ptx, "sm_90a");
      CHECK_MESSAGE(r.ok, r.log);
      CHECK(r.spill_stores == 0);
    }
    // Without TMA each operand tile is a masked load staged by the dot itself.
    setenv("TILEFUSE_TMA", "0", 1);
    nvptx::CompiledKernel odd = nvptx::compile(*k.specialize(cfg, div), nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    unsetenv("TILEFUSE_TMA");
    CHECK(odd.tensor_maps.empty());
    // The K tail's mask changes inside 8-element runs: tested per run, 16-byte loads kept.
    CHECK(count(odd.ptx, ld128) >= 6);
    // The staging buffer and A's registers are rewritten by the next iteration: its
    // MMAs must be complete first (a wait for one group left in flight raced there).
    CHECK(count(odd.ptx, wait1) == 0);
    // Operands read by descriptor from a 3-stage TMA ring may stay in flight.
    nvptx::CompiledKernel tma = nvptx::compile(*k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16)),
                                               nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    CHECK(tma.tensor_maps.size() == 3);
    CHECK(count(tma.ptx, wait1) >= 1);
  }
}

TEST_CASE("shared memory over the limit at a given num_stages is a user error naming the stages") {
  const kernels::GalleryKernel* mm = nullptr;
  for (const auto& g : kernels::gallery())
    if (g.name == "matmul") mm = &g;
  REQUIRE(mm);
  Config cfg{{"BLOCK_M", 256}, {"BLOCK_N", 256}, {"BLOCK_K", 128}, num_warps(8), num_stages(4)};
  const KernelBase& k = mm->get(DType::f16);
  auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
  try {
    nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    FAIL("no error");
  } catch (const UserError& e) {
    std::string m = e.what();
    CHECK(m.find("bytes of shared memory but sm_90a allows 232448") != std::string::npos);
    CHECK(m.find("num_stages=4 keeps that many copies of each pipelined tile") != std::string::npos);
    CHECK(m.find("Use smaller block sizes or fewer stages") != std::string::npos);
  }
}

TEST_CASE("8-bit GEMM: wgmma k32 with TMA operands on sm_90a, mma.sync m16n8k32 on sm_90, FMAs on sm_80") {
  if (gallery_ptx::no_ptxas()) return;
  const kernels::GalleryKernel& g = kernels::gallery_kernel("scaled_matmul");
  for (DType d : {DType::f8e4m3, DType::f8e5m2}) {
    CAPTURE(name(d));
    const KernelBase& k = g.get(d);
    std::string types = d == DType::f8e4m3 ? "e4m3.e4m3" : "e5m2.e4m3";
    auto compile = [&](Config cfg, const char* target) {
      CAPTURE(cfg.str());
      CAPTURE(target);
      for (auto& [key, v] : g.default_config.meta)
        if (!cfg.has(key)) cfg.set(key, v);
      auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
      nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target(target)});
      tools::PtxasResult r = tools::run_ptxas(ck.ptx, target);
      CHECK_MESSAGE(r.ok, r.log);
      CHECK(r.spill_stores == 0);
      CHECK(r.log.find("C75") == std::string::npos);  // wgmma not serialized by ptxas
      return ck;
    };
    // The Hopper heuristic's tile: both operands K-major, read by descriptor from TMA copies.
    Config hopper{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 128}, {"GROUP_M", 16}, num_warps(8), num_stages(4)};
    nvptx::CompiledKernel ck = compile(hopper, "sm_90a");
    CHECK(ck.ptx.find("wgmma.mma_async.sync.aligned.m64n256k32.f32." + types + " ") != std::string::npos);
    CHECK(ck.ptx.find("cp.async.bulk.tensor") != std::string::npos);
    CHECK(ck.tensor_maps.size() == 3);
    CHECK(ck.ptx.find("ldmatrix") == std::string::npos);
    // B [K, N]: N-major, which 8-bit wgmma cannot read; the dot stores a K-major copy.
    Config b_kn = hopper;
    b_kn.set("B_TRANS", 0);
    CHECK(compile(b_kn, "sm_90a").ptx.find("k32.f32." + types) != std::string::npos);
    // Portable Hopper PTX: warp-level MMAs on 8-bit floats (PTX ISA 8.4).
    ck = compile(g.default_config, "sm_90");
    CHECK(ck.ptx.find("mma.sync.aligned.m16n8k32.row.col.f32." + types + ".f32") != std::string::npos);
    CHECK(ck.ptx.find(".version 8.4") != std::string::npos);
    // Ampere has no 8-bit tensor cores: f32 FMAs over the decoded operands.
    Config ampere{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, num_warps(4), num_stages(1)};
    ck = compile(ampere, "sm_80");
    CHECK(ck.ptx.find("mma.sync") == std::string::npos);
    CHECK(ck.ptx.find("fma.rn.f32") != std::string::npos);
  }
}

TEST_CASE("the 8-bit B transposition moves 128-bit vectors on both sides, no spills") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex ld128(R"(ld\.global[^\n]*\.v4\.b32)"), st128(R"(st\.global[^\n]*\.v4\.b32)");
  const KernelBase& k = kernels::transpose_kernel<float8_e4m3>();
  // dst, src, rows, cols, ld_dst, ld_src: aligned everything, then B's rows at an odd N
  // (the stores stay 128-bit: dst's rows are padded to 16 bytes).
  for (int64_t ld_src_div : {16, 1}) {
    CAPTURE(ld_src_div);
    auto f = k.specialize(kernels::transpose_config<float8_e4m3>(), {16, 16, 1, 1, 16, ld_src_div});
    std::string ptx = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).ptx;
    tools::PtxasResult r = tools::run_ptxas(ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
    CHECK(count(ptx, st128) > 0);
    if (ld_src_div == 16) CHECK(count(ptx, ld128) > 0);
  }
}

TEST_CASE("casting to an 8-bit float for sm_80 is a user error naming the target and the fix") {
  auto k = kernel("to_f8", {"y", "x"}, [](Ptr<f8e5m2> y, Ptr<const float> x, Meta<"BLOCK"> BLOCK) {
    auto i = arange(0, BLOCK);
    store(y + i, load(x + i).cast<f8e5m2>());
  });
  auto f = k.specialize(Config{{"BLOCK", 128}}, std::vector<int64_t>(k.num_runtime_params(), 16));
  try {
    nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_80")});
    FAIL("no error");
  } catch (const UserError& e) {
    std::string msg = e.what();
    CHECK(msg.find("cast to f8e5m2 on sm_80: converting to 8-bit floats needs sm_89 or newer") != std::string::npos);
    CHECK(msg.find("Compile for sm_90 or sm_90a") != std::string::npos);
    CHECK(msg.find("test_gallery_ptx.cpp") != std::string::npos);
  }
  // The same kernel for Hopper: one satfinite conversion per element.
  std::string ptx = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90")}).ptx;
  CHECK(ptx.find("cvt.rn.satfinite.e5m2x2.f32") != std::string::npos);
}

TEST_CASE("view stores move by TMA only where the engine writes exactly the view's elements") {
  auto k = kernel("view_store_ptx", {"out", "src", "rows", "cols", "ld", "r0", "c0"},
                  [](Ptr<f32> out, Ptr<const f32> src, I32 rows, I32 cols, I64 ld, I32 r0, I32 c0) {
                    auto t = load(src + arange(0, 64).col() * 64 + arange(0, 64).row());
                    store(tensor_view(out, {rows, cols}, {ld, 1}), {r0, c0}, t * 3.0f);
                  });
  enum { OUT = 0, COLS = 3, LD = 4, R0 = 5, C0 = 6 };
  auto compile = [&](std::vector<int64_t> div, const char* target = "sm_90") {
    return nvptx::compile(*k.specialize(Config{}, div), nvptx::CompileOptions{nvptx::parse_target(target)});
  };
  const std::vector<int64_t> aligned(k.num_runtime_params(), 16);
  const std::regex bulk_store(R"(cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group)");
  // A [64, 64] f32 block: two boxes of 32 columns (128-byte swizzle), on sm_90 (no wgmma needed).
  nvptx::CompiledKernel ck = compile(aligned);
  REQUIRE(ck.tensor_maps.size() == 1);
  CHECK(ck.tensor_maps[0].box == std::vector<int>{64, 32});
  CHECK(count(ck.ptx, bulk_store) == 2);
  // Blocks at negative coordinates (the engine faults on those) take plain stores.
  CHECK(ck.ptx.find("st.global") != std::string::npos);
  if (!tools::find_ptxas().empty()) {
    tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
  }
  // The row coordinate may be anything; a row of 4 floats (16 bytes) suffices.
  auto with = [&](int i, int64_t d) {
    std::vector<int64_t> v = aligned;
    v[i] = d;
    return v;
  };
  CHECK(compile(with(R0, 1)).tensor_maps.size() == 1);
  CHECK(compile(with(COLS, 4)).tensor_maps.size() == 1);
  // Plain stores where TMA would write past the view (a row ending off 16 bytes), fault
  // (an innermost coordinate off 16 bytes), or cannot describe it (stride, alignment).
  for (auto div : {with(COLS, 2), with(C0, 2), with(LD, 2), with(OUT, 8)}) {
    nvptx::CompiledKernel plain = compile(div);
    CHECK(plain.tensor_maps.empty());
    CHECK(count(plain.ptx, bulk_store) == 0);
    CHECK(plain.ptx.find("st.global") != std::string::npos);
  }
  CHECK(compile(aligned, "sm_80").tensor_maps.empty());
}

TEST_CASE("split-K in one cluster: wgmma or mma.sync partial tiles added through distributed shared memory") {
  // Parameters: c a b scale_a scale_b bias residual M N K lda ldb ldc k_chunk alpha.
  const auto& k = kernels::matmul_cluster_split_k_kernel<bfloat16, bfloat16, bfloat16, bfloat16, bfloat16>();
  struct Case { Config cfg; bool wgmma; };
  for (const Case& c :
       {Case{Config{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"BIAS", 1}, {"ACT", 2}, num_warps(4),
                    num_stages(6), cluster(4)},
             true},
        Case{Config{{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, num_warps(4), num_stages(4), cluster(8)}, false}}) {
    CAPTURE(c.cfg.str());
    auto f = k.specialize(c.cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    CHECK(ck.cluster_size == c.cfg.cluster);
    const std::string& ptx = ck.ptx;
    CHECK((ptx.find("wgmma.mma_async") != std::string::npos) == c.wgmma);
    // Every program's registers read from each of the cluster's programs, 128 bits at a
    // time, between two cluster barriers; no partials written to global memory.
    CHECK(count(ptx, std::regex(R"(ld\.shared::cluster\.v4\.b32)")) >= 2);
    CHECK(count(ptx, std::regex(R"(barrier\.cluster\.arrive\.aligned;)")) == 2);
    CHECK(count(ptx, std::regex(R"(barrier\.cluster\.wait\.aligned;)")) == 2);
    CHECK(ptx.find("st.async") == std::string::npos);
    // The exchange reuses the pipeline's buffers: two programs per SM still fit.
    CHECK(ck.shared_bytes <= 113 * 1024);
    tools::PtxasResult r = tools::run_ptxas(ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
  }
}

TEST_CASE("split tail: whole and split tiles in one wgmma GEMM, the last slice adding the partials") {
  // Parameters: c a b scale_a scale_b bias residual partials counters M N K lda ldb ldc
  // k_chunk whole alpha.
  const auto& k = kernels::matmul_split_tail_kernel<bfloat16, bfloat16, bfloat16, bfloat16, bfloat16>();
  for (const Config& cfg :
       {Config{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"SPLITS", 8}, {"GROUP_M", 16}, num_warps(8),
               num_stages(6)},
        Config{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, {"SPLITS", 4}, {"GROUP_M", 16}, {"BIAS", 1},
               {"ACT", 2}, num_warps(8), num_stages(4)}}) {
    CAPTURE(cfg.str());
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    const std::string& ptx = ck.ptx;
    CHECK(ptx.find("wgmma.mma_async") != std::string::npos);
    CHECK(ptx.find("cp.async.bulk.tensor") != std::string::npos);
    // One ordered count per split program; the partials in 8-byte (or wider) pieces.
    CHECK(count(ptx, std::regex(R"(atom\.acq_rel\.gpu\.global\.add\.u32)")) == 1);
    CHECK(count(ptx, std::regex(R"(st\.global\.v[24]\.f32)")) > 0);
    tools::PtxasResult r = tools::run_ptxas(ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
  }
}
