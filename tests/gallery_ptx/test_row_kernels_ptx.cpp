// The gallery's row kernels (softmax, norms, cross-entropy) at widths of any alignment:
// their accesses' widths, rows indexed from their aligned start, readable runs, the
// programs per SM asked of ptxas. Skips (with a message) when ptxas is absent.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "gallery_ptx_util.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/registry.hpp"
#include "tilefuse/kernels/swiglu.hpp"
#include "tilefuse/nvptx/compiler.hpp"
#include "tilefuse/tools/ptxas.hpp"

using namespace tilefuse;
using gallery_ptx::assemble_unaligned;
using gallery_ptx::count;

// Runs of unknown alignment (odd widths): by default element accesses in a layout where
// consecutive lanes touch consecutive elements; with TILEFUSE_UNALIGNED=realign 16-byte
// chunks realigned in registers (loads: two chunks and a funnel shift; stores: the next
// lane's run by shuffle).
TEST_CASE("row kernels on rows of unknown alignment: coalesced elements, or realigned 128-bit chunks") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex ld128(R"(ld\.global[^\n]*\.v4\.b32)"), st128(R"(st\.global[^\n]*\.v4\.b32)"),
      st16(R"(st\.global[^\n]*\.b16)");
  for (const char* mode : {"scalar", "realign"}) {
    setenv("TILEFUSE_UNALIGNED", mode, 1);
    bool realign = std::string(mode) == "realign";
    for (std::string kname : {"softmax", "rmsnorm", "layernorm"}) {
      for (DType d : {DType::bf16, DType::f32}) {
        for (int64_t cols : {4099, 30011}) {
          CAPTURE(mode);
          CAPTURE(kname);
          CAPTURE(name(d));
          std::string ptx = assemble_unaligned(kname, d, kernels::row_heuristic(cols, d, true));
          CHECK((count(ptx, ld128) > 0) == realign);
          CHECK((count(ptx, st128) > 0) == realign);
          CHECK((ptx.find("shfl.sync.down") != std::string::npos) == realign);
          if (!realign && d == DType::bf16) CHECK(count(ptx, st16) > 0);
        }
      }
    }
  }
  unsetenv("TILEFUSE_UNALIGNED");
}

TEST_CASE("row kernels indexing rows from their aligned start: 128-bit loads and stores at any width, no spills") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex ld128(R"(ld\.global[^\n]*\.v4\.b32)"), ld64(R"(ld\.global[^\n]*\.v2\.b32)"),
      st128(R"(st\.global[^\n]*\.v4\.b32)");
  for (std::string kname : {"softmax", "rmsnorm", "layernorm"}) {
    for (DType d : {DType::bf16, DType::f32}) {
      for (int64_t cols : {4099, 30011}) {
        Config cfg = kernels::chunked_row_heuristic(kernels::aligned_row_span(cols, d), d, true);
        cfg.set("ALIGN_ROWS", 1);
        CAPTURE(kname);
        CAPTURE(name(d));
        std::string ptx = assemble_unaligned(kname, d, cfg);
        // Every access of the row moves as whole 16-byte runs (one per CHUNK per thread at
        // least); the weight's (RMSNorm, LayerNorm) as the aligned chunk where each run
        // starts and the run's bytes of the next chunk as 8-, 4- and 2-byte pieces (a
        // 16-byte load of that chunk could read past the weight's end).
        int64_t chunks = cfg.has("CHUNKS") ? cfg.get("CHUNKS") : 1;
        int64_t weights = kname == "softmax" ? 0 : kname == "rmsnorm" ? 1 : 2;  // weight runs per row run
        int64_t runs = count(ptx, ld128);
        CHECK(runs >= chunks * (1 + weights));
        CHECK(count(ptx, ld64) * (1 + weights) == runs * weights);
        CHECK(count(ptx, st128) >= chunks);
        CHECK(ptx.find("shfl.sync.down") == std::string::npos);  // no realigned stores
      }
    }
  }
}

// With WEIGHT_COPIES the norms read the weight (and bias) from their shifted copies at
// the row's aligned positions: one 16-byte load per parameter run like the row's own, no
// 8-byte pieces and no funnel shifts.
TEST_CASE("norms with weight copies: every parameter run one aligned 128-bit load, no realignment") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex ld128(R"(ld\.global[^\n]*\.v4\.b32)"), ld64(R"(ld\.global[^\n]*\.v2\.b32)");
  for (std::string kname : {"rmsnorm", "layernorm"}) {
    for (int64_t cols : {4099, 30011}) {
      DType d = DType::bf16;
      Config cfg = kernels::chunked_row_heuristic(kernels::aligned_row_span(cols, d), d, true);
      cfg.set("ALIGN_ROWS", 1);
      CAPTURE(kname);
      CAPTURE(cols);
      int64_t chunks = cfg.has("CHUNKS") ? cfg.get("CHUNKS") : 1;
      int64_t params = kname == "rmsnorm" ? 1 : 2;
      std::string realigned = assemble_unaligned(kname, d, cfg);
      std::string copies = assemble_unaligned(kname, d, Config(cfg).set("WEIGHT_COPIES", 1));
      CHECK(count(copies, ld128) == count(realigned, ld128));  // the realigned runs' first chunks
      CHECK(count(realigned, ld64) > 0);
      CHECK(count(copies, ld64) == 0);
      CHECK(count(copies, ld128) >= chunks * (1 + params));
      CHECK(realigned.find("shf.r.wrap") != std::string::npos);
      CHECK(copies.find("shf.r.wrap") == std::string::npos);
    }
  }
}

TEST_CASE("split-row kernels from the rows' aligned starts: 128-bit loads and stores at any width") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex ld128(R"(ld\.global[^\n]*\.v4\.b32)"), st128(R"(st\.global[^\n]*\.v4\.b32)");
  for (std::string kname : {"softmax", "rmsnorm", "layernorm"}) {
    for (DType d : {DType::bf16, DType::f32}) {
      for (int aligned : {1, 0}) {
        Config cfg{{"BLOCK", 4096}, {"ALIGN_ROWS", aligned}, num_warps(4)};
        CAPTURE(kname);
        CAPTURE(name(d));
        CAPTURE(aligned);
        // RMSNorm's reduce kernel with the residual: it writes in + res as well.
        Config rc = kname == "rmsnorm" ? Config(cfg).set("RESIDUAL", 1) : cfg;
        std::string reduce = assemble_unaligned(kname + "_split_reduce", d, rc);
        std::string normalize = assemble_unaligned(kname + "_split_normalize", d, cfg.set("PARTS", 32));
        // Without ALIGN_ROWS, rows of unknown alignment move element by element.
        CHECK((count(reduce, ld128) > 0) == (aligned == 1));
        if (kname == "rmsnorm") CHECK((count(reduce, st128) > 0) == (aligned == 1));
        CHECK((count(normalize, ld128) > 0) == (aligned == 1));
        CHECK((count(normalize, st128) > 0) == (aligned == 1));
      }
    }
  }
}

TEST_CASE("norm backward cluster programs from the rows' aligned starts: 128-bit loads and stores at odd widths") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex ld128(R"(ld\.global[^\n]*\.v4\.b32)"), st128(R"(st\.global[^\n]*\.v4\.b32)");
  for (std::string kname : {"rmsnorm_bwd_cluster", "layernorm_bwd_cluster"}) {
    for (int aligned : {1, 0}) {
      Config cfg{{"BLOCK", 8192}, {"ALIGN_ROWS", aligned}, num_warps(8), num_stages(2), cluster(4)};
      // RMSNorm with the residual; LayerNorm from saved statistics (recomputing them spills
      // at 8 warps x 8192 columns, aligned or not).
      if (kname == "rmsnorm_bwd_cluster") cfg.set("RESIDUAL", 1);
      else cfg.set("SAVED", 1);
      CAPTURE(kname);
      CAPTURE(aligned);
      std::string ptx = assemble_unaligned(kname, DType::bf16, cfg);
      // Without ALIGN_ROWS, rows of unknown alignment move element by element.
      CHECK((count(ptx, ld128) > 0) == (aligned == 1));
      CHECK((count(ptx, st128) > 0) == (aligned == 1));
    }
  }
}

TEST_CASE("ALIGN_ROWS: the row's partly masked runs are read whole where readable and masked in registers") {
  if (gallery_ptx::no_ptxas()) return;
  // softmax bf16 at 4099 columns on 5 x 1024 (one program): each thread's run of each
  // chunk is one predicated 16-byte load; the run holding the row's first or last
  // element is masked with selects to -inf (0xFF80). TILEFUSE_READABLE=0: the earlier
  // lowering, element by element after the vector loads (no such selects).
  Config cfg = kernels::chunked_row_heuristic(kernels::aligned_row_span(4099, DType::bf16), DType::bf16, false);
  cfg.set("ALIGN_ROWS", 1);
  const std::regex ld128(R"(ld\.global[^\n]*\.v4\.b32)"), masked(R"(selp\.b16\s+%rs\d+, %rs\d+, 0xFF80, %p)");
  std::string ptx = assemble_unaligned("softmax", DType::bf16, cfg);
  CHECK(count(ptx, ld128) == cfg.get("CHUNKS"));
  CHECK(count(ptx, masked) == 8 * cfg.get("CHUNKS"));  // each chunk's run, in its branch
  // Each predicated vector load's registers hold the fill before it: left undefined
  // where the load is off, ptxas handed them to the element load of the run's first
  // element (same address) and rows' ends read garbage on the GPU.
  const std::regex pred_ld128(R"(@%p\d+ ld\.global[^\n]*\.v4\.b32 \{(%r\d+), (%r\d+), (%r\d+), (%r\d+)\})");
  int defined_before = 0, vector_loads = 0;
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), pred_ld128); it != std::sregex_iterator(); ++it) {
    ++vector_loads;
    std::string before_load = ptx.substr(0, static_cast<size_t>(it->position()));
    for (int i = 1; i <= 4; ++i)
      defined_before += count(before_load, std::regex(R"(mov\.[bu]32\s+)" + (*it)[i].str() + ","));
  }
  CHECK(vector_loads == cfg.get("CHUNKS"));
  CHECK(defined_before == 4 * vector_loads);
  setenv("TILEFUSE_READABLE", "0", 1);
  std::string before = assemble_unaligned("softmax", DType::bf16, cfg);
  unsetenv("TILEFUSE_READABLE");
  CHECK(count(before, ld128) == cfg.get("CHUNKS"));
  CHECK(count(before, masked) == 0);
}

// Checked runs' finishing (lower_checked.cpp): where a thread holds 4 or more runs of an
// op, one warp vote per op (whole warps skip every run's test); where it holds one, none
// (the vote measured slower there); TILEFUSE_UNIFORM_RUNS=0 never.
TEST_CASE("checked runs: one warp vote per op of 4 runs per thread, none of one") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex vote(R"(vote\.sync\.all\.pred)"), ld128(R"(ld\.global[^\n]*\.v4\.b32)");
  Config several{{"BLOCK", 8192}, {"num_warps", 8}, {"ALIGN_ROWS", 1}};  // 8192 / 256 / 8: 4 runs
  std::string ptx = assemble_unaligned("softmax", DType::bf16, several);
  CHECK(count(ptx, ld128) == 4);
  CHECK(count(ptx, vote) == 2);  // the row's load and its store
  Config one{{"BLOCK", 1024}, {"CHUNKS", 5}, {"num_warps", 4}, {"ALIGN_ROWS", 1}};  // 1024 / 128 / 8: 1 run
  CHECK(count(assemble_unaligned("softmax", DType::bf16, one), vote) == 0);
  for (std::string kname : {"rmsnorm", "layernorm", "cross_entropy", "softmax_bwd"}) {
    CAPTURE(kname);
    CHECK(count(assemble_unaligned(kname, DType::bf16, several), vote) > 0);
  }
  setenv("TILEFUSE_UNIFORM_RUNS", "0", 1);
  std::string per_run = assemble_unaligned("softmax", DType::bf16, several);
  unsetenv("TILEFUSE_UNIFORM_RUNS");
  CHECK(count(per_run, ld128) == 4);
  CHECK(count(per_run, vote) == 0);
}

TEST_CASE("min_programs_per_sm: the PTX asks for n programs per SM, ptxas caps the registers to fit them") {
  const auto& g = *std::find_if(kernels::gallery().begin(), kernels::gallery().end(),
                                [](const auto& k) { return k.name == "cross_entropy"; });
  const KernelBase& k = g.get(DType::bf16);
  Config base = g.default_config;
  base.set("BLOCK", 8192).set("num_warps", 8).set("cluster", 16);
  int free_registers = -1;
  for (int n : {0, 4, 6}) {
    CAPTURE(n);
    Config cfg = base;
    cfg.min_programs_per_sm = n;
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    CHECK((ck.ptx.find(".minnctapersm " + std::to_string(n)) != std::string::npos) == (n > 0));
    if (tools::find_ptxas().empty()) continue;
    tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90a");
    REQUIRE_MESSAGE(r.ok, r.log);
    if (n == 0) free_registers = r.registers;
    else CHECK(r.registers <= 65536 / (n * 256));
  }
  if (free_registers >= 0) CHECK(free_registers > 65536 / (6 * 256));  // the cap at 6 programs binds
}

TEST_CASE("cross_entropy: PICK_TARGET takes the target logit from registers, without its 16-bit load") {
  const KernelBase& k = kernels::gallery_kernel("cross_entropy").get(DType::bf16);
  const std::regex scalar16(R"(ld\.global[.A-Za-z_:0-9]*\.b16 )");
  for (int pick : {0, 1}) {
    CAPTURE(pick);
    Config cfg = kernels::gallery_kernel("cross_entropy").default_config;
    cfg.set("BLOCK", 8192).set("num_warps", 4).set("cluster", 16).set("SMOOTHING", 0).set("PICK_TARGET", pick);
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    std::string ptx = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).ptx;
    CHECK(count(ptx, scalar16) == (pick ? 0 : 1));  // the owner's load of x[target]
    CHECK(count(ptx, std::regex(R"(ld\.global[.A-Za-z_:0-9]*\.v4\.b32)")) == 8);  // the row: 8192 / 128 / 8
  }
}

// The row reads' cache hint (RowChunks::read_once): none on rows of whole 16-byte runs
// (L1::evict_first measured slower there), L1::evict_first on rows indexed from their
// aligned start (measured faster there); SwiGLU's loads carry none. PTX only: no ptxas.
TEST_CASE("row reads: no evict_first hint on rows of whole runs, evict_first from the aligned start") {
  auto ptx_of = [](const std::string& kname, const Config& cfg, int64_t divisibility) {
    return gallery_ptx::gallery_ptx_of(kname, DType::bf16, cfg, divisibility);
  };
  const std::regex hinted(R"(ld\.global\.L1::evict_first)"), loads(R"(ld\.global[^\n]*\.v4\.b32)");
  for (std::string kname : {"softmax", "rmsnorm", "layernorm", "cross_entropy", "softmax_bwd"}) {
    CAPTURE(kname);
    Config plain{{"BLOCK", 1024}, {"CHUNKS", 4}};
    if (kname == "softmax_bwd") plain = Config{{"BLOCK", 4096}};
    std::string whole = ptx_of(kname, plain, 16);
    CHECK(count(whole, loads) > 0);
    CHECK(count(whole, hinted) == 0);
    Config from_start = plain;
    from_start.set("ALIGN_ROWS", 1);
    std::string aligned = ptx_of(kname, from_start, 1);
    int rows_read = kname == "softmax_bwd" ? 2 : 1;  // dy and y
    int chunks = kname == "softmax_bwd" ? 1 : 4;
    CHECK(count(aligned, hinted) >= rows_read * chunks);
  }
  for (std::string kname : {"swiglu", "swiglu_bwd"}) {
    CAPTURE(kname);
    std::string ptx = ptx_of(kname, kernels::swiglu_heuristic(4096, DType::bf16, kname == "swiglu_bwd"), 16);
    CHECK(count(ptx, loads) > 0);
    CHECK(count(ptx, hinted) == 0);
  }
}

// A per-column parameter broadcast over a batch of rows (the norms' rows programs) is
// read in the rows' layout: on rows off 16 bytes their narrower runs, with no conversion
// through shared memory (no barrier); on aligned rows 16-byte runs, as before.
TEST_CASE("rows programs read the weight and bias in the rows' layout: no conversion through shared memory") {
  if (gallery_ptx::no_ptxas()) return;
  const std::regex ld64(R"(ld\.global[^\n]*\.v2\.b32)"), ld32(R"(ld\.global(\.[a-z0-9:_]+)*\.b32 )"),
      ld128(R"(ld\.global[^\n]*\.v4\.b32)");
  auto ptx_at = [](const std::string& kname, Config cfg, int64_t width_divisibility, int64_t weight_divisibility = 16) {
    const auto& g = *std::find_if(kernels::gallery().begin(), kernels::gallery().end(),
                                  [&](const auto& k) { return k.name == kname; });
    for (auto& [key, v] : g.default_config.meta)
      if (!cfg.has(key)) cfg.set(key, v);
    const KernelBase& k = g.get(DType::bf16);
    // Pointers and the row count on 16, the width and the row stride on `width_divisibility`.
    std::vector<int64_t> div(k.num_runtime_params(), 16);
    div[k.num_runtime_params() - 3] = div[k.num_runtime_params() - 2] = width_divisibility;
    div.back() = 1;  // eps
    div[4] = weight_divisibility;  // the weight (parameter 4 of both programs)
    std::string ptx = nvptx::compile(*k.specialize(cfg, div), nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).ptx;
    tools::PtxasResult r = tools::run_ptxas(ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
    return ptx;
  };
  for (std::string kname : {"layernorm_rows", "rmsnorm_rows"}) {
    CAPTURE(kname);
    // 300 columns (8-byte rows): x, weight, bias and the output in 8-byte runs.
    std::string odd = ptx_at(kname, Config{{"BLOCK", 512}, {"ROWS", 2}, num_warps(1)}, 4);
    CHECK(odd.find("bar.sync") == std::string::npos);
    CHECK(odd.find("st.shared") == std::string::npos);
    CHECK(count(odd, ld128) == 0);
    CHECK(count(odd, ld64) >= (kname == "layernorm_rows" ? 3 : 2) * 4);  // x; weight (and bias): 4 runs each
    // 250 columns (4-byte rows).
    std::string four = ptx_at(kname, Config{{"BLOCK", 256}, {"ROWS", 4}, num_warps(1)}, 2);
    CHECK(four.find("bar.sync") == std::string::npos);
    CHECK(count(four, ld32) > 0);
    // A weight only known to be 2-byte aligned cannot move the rows' 8-byte runs whole: it
    // keeps its own layout (element accesses on consecutive lanes) and the conversion.
    std::string odd_weight = ptx_at(kname, Config{{"BLOCK", 512}, {"ROWS", 2}, num_warps(1)}, 4, 2);
    CHECK(odd_weight.find("bar.sync") != std::string::npos);
    // Aligned rows: 16-byte runs for all of them.
    std::string aligned = ptx_at(kname, Config{{"BLOCK", 512}, {"ROWS", 2}, num_warps(1)}, 16);
    CHECK(count(aligned, ld128) >= (kname == "layernorm_rows" ? 3 : 2) * 2);
  }
}
