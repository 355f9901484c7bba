// Kernels whose tensor-core MMAs stay in flight (wgmma groups waited for later, warp
// specialization) on sm_90a: how they load (the whole-program JIT, which honours
// setmaxnreg), the shared memory their in-flight MMAs still read, the ping-pong turns of
// two consumer warpgroups, and the register cap an MMA needs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "tilefuse/cuda/module.hpp"
#include "tilefuse/kernels/attention.hpp"
#include "tilefuse/kernels/registry.hpp"
#include "tilefuse/nvptx/compiler.hpp"
#include "tilefuse/nvptx/gpu_plan.hpp"
#include "tilefuse/tools/ptxas.hpp"
#include "gallery_ptx_util.hpp"

using namespace tilefuse;

TEST_CASE("kernels load through the whole-program JIT, with TILEFUSE_WHOLE_PROGRAM_JIT=0 only the warp-specialized ones") {
  // The linker compiles PTX as relocatable code, where ptxas ignores setmaxnreg's budgets
  // (d128 attention's consumers spilled 248 bytes a thread on the H200) and gave the
  // other kernels slower code.
  Config att{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"HEAD_DIM", 128}, {"PV_LAG", 1}, num_warps(8), num_stages(2)};
  const std::string plain = gallery_ptx::gallery_ptx_of("attention_fwd", DType::f16, att, 16);
  const std::string softmax = gallery_ptx::gallery_ptx_of("softmax", DType::bf16, Config{}, 16);
  att.warp_specialize = 1;
  const std::string ws = gallery_ptx::gallery_ptx_of("attention_fwd", DType::f16, att, 16);
  CHECK(ws.find("setmaxnreg.inc.sync.aligned.u32 232;") != std::string::npos);
  CHECK(plain.find("setmaxnreg") == std::string::npos);
  CHECK(cuda::needs_whole_program_jit(plain));
  CHECK(cuda::needs_whole_program_jit(softmax));
  CHECK(cuda::needs_whole_program_jit(ws));
  for (const char* off : {"0", "off", "false"}) {
    CAPTURE(off);
    setenv("TILEFUSE_WHOLE_PROGRAM_JIT", off, 1);
    CHECK_FALSE(cuda::needs_whole_program_jit(plain));
    CHECK_FALSE(cuda::needs_whole_program_jit(softmax));
    CHECK(cuda::needs_whole_program_jit(ws));  // never the linker: it would spill
  }
  setenv("TILEFUSE_WHOLE_PROGRAM_JIT", "1", 1);
  CHECK(cuda::needs_whole_program_jit(softmax));
  unsetenv("TILEFUSE_WHOLE_PROGRAM_JIT");
}

TEST_CASE("a wgmma left in flight keeps its shared-memory operands: one-stage attention's V copy is not placed over K") {
  // PV_LAG on one stage: V's copy comes after Q.K^T's issue but before its wait (the
  // softmax's first read), while the MMAs still read K. The allocator ended K's buffer at
  // the issue and put V over it: wrong outputs on the H200 once ptxas moved the copy
  // (test_gpu_gallery, n = 77 and 130).
  for (auto [d, bn, warps] : {std::tuple{64, 32, 4}, std::tuple{128, 64, 8}}) {
    CAPTURE(d);
    Config cfg{{"BLOCK_M", 64}, {"BLOCK_N", bn}, {"HEAD_DIM", d}, {"CAUSAL", 0}, {"PV_LAG", 1},
               num_warps(warps), num_stages(1)};
    const auto& k = kernels::attention_fwd_kernel<half>();
    std::vector<int64_t> div(k.num_runtime_params(), 16);
    div[5] = 1;  // an odd sequence length
    auto f = k.specialize(cfg, div);
    nvptx::GpuPlan plan = nvptx::plan_kernel(*f, nvptx::Target{90, true});
    // Each loop over key blocks (the full blocks, then the masked ones): K's copy, Q.K^T,
    // V's copy, P.V.
    std::map<const ir::Block*, std::vector<const ir::Op*>> copies, dots;
    ir::walk(const_cast<ir::Block&>(f->body), [&](ir::Op& op) {
      if (op.parent == &f->body) return;
      if (plan.op(&op).async_copy) copies[op.parent].push_back(&op);
      if (op.kind == ir::OpKind::Dot) dots[op.parent].push_back(&op);
    });
    // Position in the loop body of the op that `o` is or is nested in.
    auto position = [](const ir::Block* body, const ir::Op* o) {
      while (o->parent != body) o = o->parent->parent;
      for (size_t i = 0; i < body->ops.size(); ++i)
        if (body->ops[i].get() == o) return static_cast<int>(i);
      return -1;
    };
    int in_flight = 0;  // loops where Q.K^T's wait comes after V's copy
    for (auto& [body, c] : copies) {
      REQUIRE(c.size() == 2);
      REQUIRE(dots[body].size() == 2);
      const ir::Op* qk = dots[body][0];
      int wait = -1;
      for (auto& [at, w] : plan.wgmma_waits)
        if (std::find(w.values.begin(), w.values.end(), qk->result()) != w.values.end()) wait = position(body, at);
      if (!plan.op(qk).wgmma_defer || wait < position(body, c[1])) continue;
      ++in_flight;
      const nvptx::OpPlan &kp = plan.op(c[0]), &vp = plan.op(c[1]);
      CHECK((kp.smem_offset + kp.smem_bytes <= vp.smem_offset || vp.smem_offset + vp.smem_bytes <= kp.smem_offset));
    }
    CHECK(in_flight >= 1);  // the full blocks' loop
  }
}

TEST_CASE("ping-pong turns: on by default only where each warpgroup owns its rows, and no consumer barrier while a turn is held") {
  // In text order (the per-warpgroup arms of a take or a pass sit side by side): a turn is
  // held from a take (bar.sync 2|3) to the next pass (bar.arrive 2|3). The consumers'
  // barrier (bar.sync 1) with a turn held would wait for the other warpgroup, itself
  // waiting for that turn: a hang. The last turn op is warpgroup 0 consuming the final
  // hand-over; the epilogue's barriers come after it.
  auto check_turns = [](const std::string& ptx) {
    std::regex op(R"(bar\.(sync|arrive) (\d+), 256;)");
    std::vector<std::pair<size_t, std::string>> ops;  // (position, "take" | "pass" | "meet")
    for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), op); it != std::sregex_iterator(); ++it) {
      const std::string kind = (*it)[1], id = (*it)[2];
      if (id == "1" && kind == "sync") ops.push_back({size_t(it->position()), "meet"});
      else if (id == "2" || id == "3") ops.push_back({size_t(it->position()), kind == "sync" ? "take" : "pass"});
    }
    size_t last_turn = 0;
    for (auto& [pos, k] : ops)
      if (k != "meet") last_turn = pos;
    bool held = false;
    int meets_checked = 0;
    for (auto& [pos, k] : ops) {
      if (k == "take") held = true;
      if (k == "pass") held = false;
      if (k == "meet" && pos < last_turn) {
        CHECK_MESSAGE(!held, "bar.sync 1 with a turn held at PTX offset " << pos);
        ++meets_checked;
      }
    }
    return meets_checked;
  };
  auto has_turns = [](const std::string& ptx) { return ptx.find("bar.arrive 3, 256;") != std::string::npos; };
  Config d128 = kernels::attention_heuristic(4096, 128, false, true);
  REQUIRE(d128.warp_specialize == 1);
  std::string ptx = gallery_ptx::gallery_ptx_of("attention_fwd", DType::f16, d128, 16);
  CHECK(has_turns(ptx));
  check_turns(ptx);
  // 64 rows on two warpgroups split N: they exchange P through shared memory between
  // their MMAs, so no turns by default; forced, every barrier passes the turn first.
  Config m64{{"BLOCK_M", 64}, {"BLOCK_N", 128}, {"HEAD_DIM", 128}, {"PV_LAG", 1}, {"RESCALE_LATE", 1}, {"TMA_STORE", 0},
             num_warps(8), num_stages(2), warp_specialize()};
  CHECK_FALSE(has_turns(gallery_ptx::gallery_ptx_of("attention_fwd", DType::f16, m64, 16)));
  setenv("TILEFUSE_PINGPONG", "1", 1);
  std::string forced = gallery_ptx::gallery_ptx_of("attention_fwd", DType::f16, m64, 16);
  unsetenv("TILEFUSE_PINGPONG");
  CHECK(has_turns(forced));
  CHECK(check_turns(forced) > 0);  // the P exchange's barriers sit between turns
}

TEST_CASE("a register cap below one warpgroup MMA's needs is a user error naming the config and the fix") {
  // min_programs_per_sm caps registers at 64K / (threads x programs); ptxas needs a 64xN
  // wgmma's N / 2 accumulator registers and 26 more, else it stops (C7602) when the
  // driver loads the kernel. 8 warps x 3 programs: 80 registers; 8 x 2: 128.
  auto compile = [](const char* kname, DType d, Config cfg) {
    const kernels::GalleryKernel& g = kernels::gallery_kernel(kname);
    for (auto& [key, v] : g.default_config.meta)
      if (!cfg.has(key)) cfg.set(key, v);
    CAPTURE(cfg.str());
    const KernelBase& k = g.get(d);
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    return nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).ptx;
  };
  auto error_of = [&](const char* kname, DType d, const Config& cfg) -> std::string {
    try {
      compile(kname, d, cfg);
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  };
  const Config att{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"HEAD_DIM", 64}, {"PV_LAG", 1}, num_warps(8), num_stages(2),
                   min_programs_per_sm(3)};
  std::string m = error_of("attention_fwd", DType::f16, att);
  CHECK(m.find("kernel 'attention_fwd_f16' is configured with num_warps = 8 and min_programs_per_sm = 3, which caps "
               "each thread at 80 registers") != std::string::npos);
  CHECK(m.find("x tile<64x128xf16> runs as warpgroup MMAs of 64x128 that need at least 90 (at attention.hpp:") !=
        std::string::npos);
  CHECK(m.find("Use fewer programs per SM (min_programs_per_sm), fewer warps, or a narrower BLOCK_N") !=
        std::string::npos);
  const Config gemm{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, num_warps(8), num_stages(3),
                    min_programs_per_sm(2)};
  m = error_of("matmul", DType::bf16, gemm);
  CHECK(m.find("caps each thread at 128 registers") != std::string::npos);
  CHECK(m.find("warpgroup MMAs of 64x256 that need at least 154 (at gemm_tile.hpp:") != std::string::npos);
  // Within the cap: 64-column MMAs at 80 registers (32 accumulators), the d64 heuristic's
  // 4 warps x 3 programs (168), one program of 8 warps. ptxas assembles them.
  Config narrow = att;
  narrow.set("BLOCK_N", 64);
  Config four = att;
  four.set("BLOCK_M", 64).set("num_warps", 4);
  Config one = gemm;
  one.set("min_programs_per_sm", 1);
  for (auto [kname, d, cfg] : {std::tuple{"attention_fwd", DType::f16, narrow}, std::tuple{"attention_fwd", DType::f16, four},
                               std::tuple{"matmul", DType::bf16, one}}) {
    std::string ptx;
    CHECK_NOTHROW(ptx = compile(kname, d, cfg));
    if (gallery_ptx::no_ptxas()) continue;
    tools::PtxasResult r = tools::run_ptxas(ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
  }
}

TEST_CASE("persistent warp-specialized kernels: the producer loops over the programs as the consumers do") {
  // The grid's sizes arrive as three more parameters; the producer issues each copy once
  // in its loop over the programs (no prologue copies outside it, as the non-warp-
  // specialized persistent kernels have); ptxas assembles both roles. The persistent
  // attention keeps one more value per program than 232 registers hold (4 bytes stored
  // before the key loops and read back after them), nothing in the loops.
  auto count = [](const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
    return n;
  };
  Config d128 = kernels::attention_heuristic(1024, 128, false, true);
  REQUIRE(d128.warp_specialize == 1);
  d128.persistent = 0;
  const std::string once = gallery_ptx::gallery_ptx_of("attention_fwd", DType::bf16, d128, 16);
  d128.persistent = 1;
  const std::string ptx = gallery_ptx::gallery_ptx_of("attention_fwd", DType::bf16, d128, 16);
  CHECK(ptx.find("setmaxnreg.inc.sync.aligned.u32 232;") != std::string::npos);
  CHECK(count(ptx, ".param .u32") == count(once, ".param .u32") + 3);
  CHECK(count(ptx, "cp.async.bulk.tensor") == count(once, "cp.async.bulk.tensor"));
  Config gemm{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"GROUP_M", 8}, num_warps(8), num_stages(4),
              warp_specialize()};
  const std::string gemm_once = gallery_ptx::gallery_ptx_of("matmul", DType::bf16, gemm, 16);
  gemm.persistent = 1;
  const std::string gemm_ptx = gallery_ptx::gallery_ptx_of("matmul", DType::bf16, gemm, 16);
  CHECK(count(gemm_ptx, ".param .u32") == count(gemm_once, ".param .u32") + 3);
  CHECK(count(gemm_ptx, "cp.async.bulk.tensor") == count(gemm_once, "cp.async.bulk.tensor"));
  CHECK(gemm_ptx.find("setmaxnreg.dec.sync.aligned.u32 40;") != std::string::npos);
  // The producer's loop over the programs (LLVM IR before optimization): its header, the
  // program and the ring's position carried around it, the copy loops inside.
  const auto& k = kernels::attention_fwd_kernel<bfloat16>();
  Config cfg = kernels::attention_heuristic(1024, 128, false, true);
  cfg.persistent = 1;
  cfg.set("HEAD_DIM", 128).set("CAUSAL", 0);
  auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
  const std::string ir = nvptx::compile_with_artifacts(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).llvm_ir;
  const size_t header = ir.find("\ncopy_program.header:"), body = ir.find("\ncopy_program.body:");
  REQUIRE(header != std::string::npos);
  CHECK(ir.find("%copy_program_round = phi i32", header) != std::string::npos);
  CHECK(ir.find("%copy_program_parity = phi i32", header) != std::string::npos);
  CHECK(ir.find("%copy_program_ring_stage = phi i32", header) != std::string::npos);
  REQUIRE(body != std::string::npos);
  CHECK(ir.find("\ncopy.header:", body) != std::string::npos);
  // The ring's buffers stay allocated for the whole program, beside the epilogue's layout
  // conversion where both fit, else with the dots' results stored in their own layout (as
  // persistent kernels without a producer): 128x256 tiles on 4 stages compile.
  Config wide{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, {"GROUP_M", 8}, num_warps(8), num_stages(4),
              warp_specialize(), persistent()};
  std::string wide_ptx;
  CHECK_NOTHROW(wide_ptx = gallery_ptx::gallery_ptx_of("matmul", DType::bf16, wide, 16));
  CHECK(wide_ptx.find("setmaxnreg") != std::string::npos);
  if (gallery_ptx::no_ptxas()) return;
  for (auto [p, spill] : {std::pair{&ptx, 8}, std::pair{&gemm_ptx, 0}}) {
    tools::PtxasResult r = tools::run_ptxas(*p, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores <= spill);
  }
}

TEST_CASE("persistent warp-specialized attention keeps the ring's buffers apart from the epilogue's shared memory") {
  // Once a program's loops end, its epilogue (the output staged for a TMA store) may take
  // the bytes of the K and V stages, unless the producer still fills them: persistent, it
  // copies the next program's first blocks there meanwhile.
  auto overlaps = [](bool persistent) {
    Config cfg = kernels::attention_heuristic(1024, 128, false, true);
    cfg.set("TMA_STORE", 1).set("HEAD_DIM", 128).set("CAUSAL", 0);
    cfg.persistent = persistent ? 1 : 0;
    const auto& k = kernels::attention_fwd_kernel<bfloat16>();
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::GpuPlan plan = nvptx::plan_kernel(*f, nvptx::Target{90, true});
    REQUIRE(plan.warp_specialized());
    std::vector<const ir::Op*> ring, other;
    ir::walk(const_cast<ir::Block&>(f->body), [&](ir::Op& op) {
      const nvptx::OpPlan& p = plan.op(&op);
      if (p.smem_bytes <= 0) return;
      (op.kind == ir::OpKind::Load && p.tma_map >= 0 ? ring : other).push_back(&op);
    });
    REQUIRE(ring.size() >= 2);  // K and V
    int n = 0;
    for (const ir::Op* r : ring)
      for (const ir::Op* o : other) {
        const nvptx::OpPlan &rp = plan.op(r), &op = plan.op(o);
        n += !(rp.smem_offset + rp.smem_bytes <= op.smem_offset || op.smem_offset + op.smem_bytes <= rp.smem_offset);
      }
    return n;
  };
  CHECK(overlaps(false) > 0);  // one program per block: the epilogue reuses the stages
  CHECK(overlaps(true) == 0);
}

TEST_CASE("TILEFUSE_PRODUCER_REGS sets the producer's register budget, the consumers taking the rest") {
  Config d128 = kernels::attention_heuristic(4096, 128, false, true);
  REQUIRE(d128.warp_specialize == 1);
  auto budgets = [&](const char* value) {
    if (value) setenv("TILEFUSE_PRODUCER_REGS", value, 1);
    const std::string ptx = gallery_ptx::gallery_ptx_of("attention_fwd", DType::bf16, d128, 16);
    unsetenv("TILEFUSE_PRODUCER_REGS");
    std::smatch dec, inc;
    std::regex_search(ptx, dec, std::regex(R"(setmaxnreg\.dec\.sync\.aligned\.u32 (\d+);)"));
    std::regex_search(ptx, inc, std::regex(R"(setmaxnreg\.inc\.sync\.aligned\.u32 (\d+);)"));
    return std::pair{dec.empty() ? 0 : std::stoi(dec[1]), inc.empty() ? 0 : std::stoi(inc[1])};
  };
  CHECK(budgets(nullptr) == std::pair{40, 232});
  CHECK(budgets("24") == std::pair{24, 240});  // (65536 - 128 x 24) / 256, rounded down to 8
  CHECK(budgets("56") == std::pair{56, 224});
  CHECK(budgets("20") == std::pair{40, 232});  // outside 24-256 or not a multiple of 8: the default
  CHECK(budgets("30") == std::pair{40, 232});
}

TEST_CASE("the producer copies view blocks read outside loops: attention's last V block, Q's with Q_VIEW") {
  // What the producer copies besides its loops' rings (GpuPlan::producer_copies): the
  // load, how many producer loops come before it, its tensor map; and the kernel's
  // copies in the PTX (TMA boxes of 64 columns, cp.async runs).
  struct Seen {
    std::vector<std::pair<int, int>> copies;  // (after_loops, tma_map)
    std::vector<int> buffers;                 // each copy's
    int v_map = -1;                           // the key loop's V map
    size_t boxes = 0, cp_async = 0, consumer_barriers = 0;
  };
  auto seen = [](Config cfg, const char* knob, int64_t d = 128) {
    if (knob) setenv("TILEFUSE_PRODUCER_COPIES", knob, 1);
    cfg.set("HEAD_DIM", d).set("CAUSAL", 1);
    const auto& k = kernels::attention_fwd_kernel<bfloat16>();
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::GpuPlan plan = nvptx::plan_kernel(*f, nvptx::Target{90, true});
    Seen s;
    REQUIRE(plan.warp_specialized());
    for (const auto& c : plan.producer_copies) {
      CHECK(c.load->parent == &f->body);
      s.copies.push_back({c.after_loops, plan.op(c.load).tma_map});
      s.buffers.push_back(plan.op(c.load).stages);
    }
    const ir::Op* loop = plan.producer_loops.front();
    s.v_map = plan.op(plan.pipelines.at(loop).loads.back()).tma_map;
    const std::string ptx = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).ptx;
    unsetenv("TILEFUSE_PRODUCER_COPIES");
    s.boxes = gallery_ptx::count(ptx, std::regex("cp\\.async\\.bulk\\.tensor"));
    s.cp_async = gallery_ptx::count(ptx, std::regex("cp\\.async\\.c[ag]\\.shared"));
    s.consumer_barriers = gallery_ptx::count(ptx, std::regex("bar\\.sync 1, 256;"));
    return s;
  };
  // (N4096: blocks in ascending order, the diagonal after the key loop.)
  Config d128 = kernels::attention_heuristic(4096, 128, true, true);
  REQUIRE(d128.warp_specialize == 1);
  REQUIRE(d128.get("DIAGONAL_FIRST") == 0);
  // The last P.V-behind V block (after the key loop, before the masked one), by V's map.
  Seen v_only = seen(d128, nullptr);
  REQUIRE(v_only.copies.size() == 1);
  CHECK(v_only.copies[0] == std::pair{1, v_only.v_map});
  // Without: the consumers copy it (cp.async runs) and meet at a barrier more.
  Seen off = seen(d128, "0");
  CHECK(off.copies.empty());
  CHECK(off.boxes + 2 == v_only.boxes);  // its 128 columns: two boxes
  CHECK(off.cp_async > v_only.cp_async);
  CHECK(off.consumer_barriers > v_only.consumer_barriers);
  // Q's block through a view too: copied before the first loop; no cp.async left, and
  // no consumer barrier before the key loop (the epilogue's layout conversion keeps its own).
  Config q_view = d128;
  q_view.set("Q_VIEW", 1);
  Seen both = seen(q_view, nullptr);
  REQUIRE(both.copies.size() == 2);
  CHECK(both.copies[0].first == 0);
  CHECK(both.copies[1] == std::pair{1, both.v_map});
  CHECK(both.cp_async == 0);
  CHECK(both.boxes == v_only.boxes + 2);
  CHECK(both.consumer_barriers < v_only.consumer_barriers);
  CHECK(both.buffers == std::vector<int>{1, 1});
  // Persistent: Q gets two buffers, the programs' in turn (one would hold the next
  // program's ring copies back until this program ends); the V block one, released at
  // the program's end. At d64 both fit beside the ring: no cp.async left.
  q_view.persistent = 1;
  Seen persistent = seen(q_view, nullptr, 64);
  REQUIRE(persistent.copies.size() == 2);
  CHECK(persistent.copies[0].first == 0);
  CHECK(persistent.copies[1] == std::pair{1, persistent.v_map});
  CHECK(persistent.buffers == std::vector<int>{2, 1});
  CHECK(persistent.cp_async == 0);
  // At d128 they fit (224 KB of buffers, the mbarriers apart) once the epilogue stores O
  // in the accumulator's layout (its conversion would be the one buffer not live for the
  // whole kernel): no cp.async, Q's two boxes, and fewer consumer barriers than with Q
  // copied by the consumers (their barriers around Q's copy, the conversion's).
  Seen persistent128 = seen(q_view, nullptr);
  CHECK(persistent128.cp_async == 0);
  CHECK(persistent128.boxes == v_only.boxes + 2);
  Config q_by_consumers = d128;
  q_by_consumers.persistent = 1;
  Seen persistent_q_consumers = seen(q_by_consumers, nullptr);
  CHECK(persistent_q_consumers.cp_async > 0);
  CHECK(persistent128.consumer_barriers < persistent_q_consumers.consumer_barriers);
  // Where two buffers do not fit even so (a 256-wide head on 64-key blocks), Q goes back
  // to the consumers, the V block stays the producer's.
  Config wide{{"BLOCK_M", 128}, {"BLOCK_N", 64}, {"HEAD_DIM", 256}, {"CAUSAL", 1}, {"PV_LAG", 1}, {"RESCALE_LATE", 1},
              {"TMA_STORE", 0}, {"Q_VIEW", 1}, num_warps(8), num_stages(2), warp_specialize()};
  wide.persistent = 1;
  std::string wide_ptx;
  REQUIRE_NOTHROW(wide_ptx = gallery_ptx::gallery_ptx_of("attention_fwd", DType::bf16, wide, 16));
  CHECK(wide_ptx.find("setmaxnreg") != std::string::npos);
  CHECK(gallery_ptx::count(wide_ptx, std::regex("cp\\.async\\.c[ag]\\.shared")) > 0);
  setenv("TILEFUSE_PRODUCER_COPIES", "0", 1);
  std::string wide_off = gallery_ptx::gallery_ptx_of("attention_fwd", DType::bf16, wide, 16);
  unsetenv("TILEFUSE_PRODUCER_COPIES");
  const std::regex bulk("cp\\.async\\.bulk\\.tensor");
  CHECK(gallery_ptx::count(wide_ptx, bulk) > gallery_ptx::count(wide_off, bulk));  // the V block's boxes
}

TEST_CASE("causal attention with the diagonal block first: the producer copies its K block and the last V block") {
  // DIAGONAL_FIRST (the heuristic's at causal N1024 d128): the diagonal block's Q.K^T
  // before the key loop, which runs down to block 0, and block 0's P.V after it; no
  // masked loop after the key loop.
  Config d128 = kernels::attention_heuristic(1024, 128, true, true);
  REQUIRE(d128.get("DIAGONAL_FIRST") == 1);
  CHECK(d128.get("TMA_STORE") == 1);  // (and the output by TMA store, up to 2048 keys)
  CHECK(kernels::attention_heuristic(2048, 128, true, true).get("DIAGONAL_FIRST") == 1);
  REQUIRE(kernels::attention_heuristic(4096, 128, true, true).get("DIAGONAL_FIRST") == 0);
  CHECK(kernels::attention_heuristic(4096, 128, true, true).get("TMA_STORE") == 0);
  REQUIRE(kernels::attention_heuristic(1024, 128, false, true).get("DIAGONAL_FIRST") == 0);
  CHECK(kernels::attention_heuristic(16384, 64, true, true).get("DIAGONAL_FIRST") == 1);
  auto plan_of = [](Config cfg, std::string* ptx) {
    cfg.set("HEAD_DIM", 128).set("CAUSAL", 1);
    const auto& k = kernels::attention_fwd_kernel<bfloat16>();
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::GpuPlan plan = nvptx::plan_kernel(*f, nvptx::Target{90, true});
    *ptx = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).ptx;
    std::vector<std::pair<int, int>> copies;  // (after_loops, tma_map)
    for (const auto& c : plan.producer_copies) copies.push_back({c.after_loops, plan.op(c.load).tma_map});
    const ir::Op* loop = plan.producer_loops.front();
    const int k_map = plan.op(plan.pipelines.at(loop).loads.front()).tma_map;
    const int v_map = plan.op(plan.pipelines.at(loop).loads.back()).tma_map;
    return std::tuple{plan.producer_loops.size(), copies, k_map, v_map};
  };
  std::string first_ptx, after_ptx;
  auto [loops, copies, k_map, v_map] = plan_of(d128, &first_ptx);
  CHECK(loops == 1);
  CHECK(copies == std::vector<std::pair<int, int>>{{0, k_map}, {1, v_map}});
  Config after = d128;
  after.set("DIAGONAL_FIRST", 0);
  auto [loops_after, copies_after, k_after, v_after] = plan_of(after, &after_ptx);
  CHECK(loops_after == 2);  // the key loop, then the masked one
  CHECK(copies_after == std::vector<std::pair<int, int>>{{1, v_after}});
  const std::regex mma("wgmma\\.mma_async");
  CHECK(gallery_ptx::count(first_ptx, mma) < gallery_ptx::count(after_ptx, mma));
  if (gallery_ptx::no_ptxas()) return;
  tools::PtxasResult r = tools::run_ptxas(first_ptx, "sm_90a");
  CHECK_MESSAGE(r.ok, r.log);
  CHECK(r.spill_stores == 0);
}

TEST_CASE("TMA copies keep their mbarriers apart from their 1024-aligned stages") {
  // A stage read by wgmma starts on 1024 bytes (its swizzle works on address bits); the
  // barriers after it would pad the next such buffer out by 992 bytes.
  Config cfg = kernels::attention_heuristic(4096, 128, true, true);
  cfg.set("HEAD_DIM", 128).set("CAUSAL", 1).set("Q_VIEW", 1);
  cfg.persistent = 1;
  const auto& k = kernels::attention_fwd_kernel<bfloat16>();
  auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
  nvptx::GpuPlan plan = nvptx::plan_kernel(*f, nvptx::Target{90, true});
  // Every copy's buffers are live from kernel entry (a persistent producer's), so the
  // leaders' stages and barriers must all be disjoint; later loops' loads share their
  // leader's stages and barriers.
  std::vector<std::pair<int, int>> ranges;  // [begin, end) of every stage and barrier buffer
  int copies = 0;
  ir::walk(f->body, [&](ir::Op& op) {
    const nvptx::OpPlan& p = plan.op(&op);
    if (op.kind != ir::OpKind::Load || p.tma_map < 0 || !p.async_copy) return;
    ++copies;
    const int barriers = nvptx::tma_barrier_bytes(plan, &op);
    CHECK(barriers == 16 * p.stages);  // full and empty, 8 bytes each, per stage
    CHECK(p.barrier_offset % 8 == 0);
    if (auto leader = plan.ring_leader.find(&op); leader != plan.ring_leader.end() && leader->second != &op) {
      CHECK(p.smem_offset == plan.op(leader->second).smem_offset);
      CHECK(p.barrier_offset == plan.op(leader->second).barrier_offset);
      return;
    }
    CHECK(p.smem_offset % 1024 == 0);
    CHECK(p.smem_bytes % 1024 == 0);  // the stages alone
    ranges.push_back({p.smem_offset, p.smem_offset + p.smem_bytes});
    ranges.push_back({p.barrier_offset, p.barrier_offset + barriers});
  });
  CHECK(copies == 6);
  CHECK(ranges.size() == 8);  // 4 leaders
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = i + 1; j < ranges.size(); ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK((ranges[i].second <= ranges[j].first || ranges[j].second <= ranges[i].first));
    }  // K and V in both key loops (one ring each), the V block after them, Q
  // Q's two buffers fit beside the rings: 224 KB of stages and 128 bytes of barriers.
  const std::string ptx = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")}).ptx;
  CHECK(gallery_ptx::count(ptx, std::regex("cp\\.async\\.c[ag]\\.shared")) == 0);
}
