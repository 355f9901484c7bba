// Loads staged through shared memory by num_stages on loops without dots (offline):
// which loads are staged (not the one a store of the same loop may overwrite), the
// cp.async copies, their waits, and ptxas accepting the result spill-free for sm_80 and
// sm_90a. The same kernels run against the interpreter in tests/gpu/test_gpu_staged.cpp.
#include <doctest/doctest.h>

#include <regex>

#include "../gpu/cluster_loop_kernels.hpp"
#include "../gpu/staged_kernels.hpp"
#include "tilefuse/nvptx/compiler.hpp"
#include "tilefuse/nvptx/gpu_plan.hpp"
#include "tilefuse/tools/ptxas.hpp"

using namespace tilefuse;

namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

struct Staged {
  const KernelBase* k;
  Config cfg;
  int staged_loads;  // loads num_stages > 1 stages
  int loads_per_iteration;  // of the loop whose waits are checked
};

}  // namespace

TEST_CASE("num_stages stages the loads of loops without dots: own-thread cp.async copies, waits S-1 iterations behind") {
  bool have_ptxas = !tools::find_ptxas().empty();
  if (!have_ptxas) MESSAGE("[skip] ptxas not found: plans and PTX checked, not assembled");
  std::vector<Staged> cases{
      {&staged::staged_rows_kernel<bfloat16>(), Config{{"BLOCK", 1024}, num_warps(4)}, 2, 2},
      {&staged::staged_rows_kernel<float>(), Config{{"BLOCK", 512}, num_warps(2)}, 2, 2},
      {&staged::staged_row_tiles_kernel<bfloat16>(), Config{{"BLOCK", 256}, {"ROWS", 4}, num_warps(4)}, 1, 1},
      // The second inner loop's load of acc is not staged: the loop stores acc.
      {&staged::staged_nested_kernel<bfloat16>(), Config{{"BLOCK", 512}, num_warps(4)}, 2, 1}};
  for (const Staged& c : cases) {
    for (int stages = 1; stages <= 4; ++stages) {
      Config cfg = c.cfg;
      cfg.num_stages = stages;
      auto f = c.k->specialize(cfg, std::vector<int64_t>(c.k->num_runtime_params(), 16));
      for (const char* target : {"sm_80", "sm_90a"}) {
        CAPTURE(c.k->name());
        CAPTURE(stages);
        CAPTURE(target);
        nvptx::CompileArtifacts art = nvptx::compile_with_artifacts(*f, nvptx::CompileOptions{nvptx::parse_target(target)});
        const std::string& ptx = art.kernel.ptx;
        CHECK(count(art.plan, "staged cp.async") == (stages > 1 ? c.staged_loads : 0));
        if (stages > 1) {
          CHECK(art.plan.find(std::to_string(stages - 1) + " iterations ahead") != std::string::npos);
          CHECK(ptx.find("cp.async.") != std::string::npos);
          // Each load waits until only its own iteration's later copies and the next
          // S - 2 iterations' (plus those already issued in this one) are in flight.
          std::string wait = "cp.async.wait_group " + std::to_string((stages - 1) * c.loads_per_iteration - 1) + ";";
          CHECK_MESSAGE(ptx.find(wait) != std::string::npos, wait);
        } else {
          CHECK(ptx.find("cp.async") == std::string::npos);
        }
        if (!have_ptxas) continue;
        tools::PtxasResult r = tools::run_ptxas(ptx, target);
        CHECK_MESSAGE(r.ok, r.log);
        CHECK(r.spill_stores == 0);
      }
    }
  }
}

TEST_CASE("a staged load's buffers are its own: conversions of its tile get scratch of their own") {
  // A 16-bit staged load whose tile is converted (cast to f32 in another layout): the
  // conversion once wrote into stage 0 of the load's buffers, as if the tile lived there.
  Config cfg{{"BLOCK", 1024}, num_warps(4), num_stages(3)};
  const auto& k = staged::staged_rows_kernel<bfloat16>();
  auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
  nvptx::GpuPlan plan = nvptx::plan_kernel(*f, nvptx::Target{90, true});
  std::vector<std::pair<int, int>> staged;
  ir::walk(const_cast<ir::Block&>(f->body), [&](ir::Op& op) {
    const nvptx::OpPlan& p = plan.op(&op);
    if (p.staged) staged.push_back({p.smem_offset, p.smem_offset + p.smem_bytes});
  });
  REQUIRE(staged.size() == 2);
  int scratch_users = 0;
  ir::walk(const_cast<ir::Block&>(f->body), [&](ir::Op& op) {
    const nvptx::OpPlan& p = plan.op(&op);
    if (p.staged || p.smem_bytes == 0) return;
    ++scratch_users;
    for (auto [b, e] : staged) {
      CAPTURE(p.smem_offset);
      CHECK((p.smem_offset + p.smem_bytes <= b || p.smem_offset >= e));
    }
  });
  CHECK(scratch_users >= 3);  // conversions and the two reductions
  // Every use converting a staged tile to another layout has scratch for it.
  int converted = 0;
  ir::walk(const_cast<ir::Block&>(f->body), [&](ir::Op& op) {
    const nvptx::OpPlan& p = plan.op(&op);
    for (int i = 0; i < op.num_operands() && i < static_cast<int>(p.operands.size()); ++i) {
      const ir::Value* v = op.operand(i);
      if (!v->def || !plan.op(v->def).staged || !p.operands[i] || p.operands[i] == plan.layout(v)) continue;
      ++converted;
      CHECK(p.smem_bytes > 0);
    }
  });
  CHECK(converted >= 1);
}

TEST_CASE("cluster reductions inside a loop: two sets of slots and mbarriers, the waited parity from the use count") {
  for (int c : {2, 4, 16}) {
    CAPTURE(c);
    Config cfg{{"B", 1024}, num_warps(4), num_stages(2), cluster(c)};
    const auto& k = cluster_loops::rows_loop_kernel<bfloat16>();
    auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
    nvptx::CompiledKernel ck = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    // Two sibling reductions (max, sum), each with two sets: four mbarriers.
    CHECK(count(ck.ptx, "mbarrier.init.shared::cta.b64") == 4);
    // One exchange per row for both, waiting on a parity computed at run time.
    CHECK(count(ck.ptx, "mbarrier.try_wait.parity.acquire.cluster") == 1);
    CHECK(std::regex_search(ck.ptx, std::regex(R"(try_wait\.parity\.acquire\.cluster[^;]*\], %r\d+;)")));
    CHECK(count(ck.ptx, "st.async.shared::cluster") == 2);
    if (tools::find_ptxas().empty()) continue;
    tools::PtxasResult r = tools::run_ptxas(ck.ptx, "sm_90a");
    CHECK_MESSAGE(r.ok, r.log);
    CHECK(r.spill_stores == 0);
  }
}

TEST_CASE("checked loads of rows from their aligned start are staged: whole 16-byte copies, no element loads in the hot path") {
  bool have_ptxas = !tools::find_ptxas().empty();
  for (auto [readable, fill] : {std::pair{0, 1}, std::pair{1, 1}, std::pair{0, 0}}) {
    for (int stages : {1, 2}) {
      CAPTURE(readable);
      CAPTURE(fill);
      CAPTURE(stages);
      Config cfg{{"B", 1024}, {"READABLE", readable}, {"FILL", fill}, num_warps(4), num_stages(stages)};
      const auto& k = staged::staged_aligned_rows_kernel<bfloat16>();
      // Odd width, no divisibility known: only align_down makes the runs aligned.
      auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 1));
      nvptx::CompileArtifacts art = nvptx::compile_with_artifacts(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
      const std::string& ptx = art.kernel.ptx;
      CHECK(count(art.plan, "checked staged cp.async") == (stages > 1 ? 1 : 0));
      if (stages > 1) {
        CHECK(count(ptx, "cp.async.cg.shared.global") > 0);  // 16-byte copies
        CHECK(ptx.find("ld.global.L1::evict_first.v4") == std::string::npos);  // no direct vector loads left
        // The runs only partly valid and not copied still load element by element (a load
        // without `other` once lost them: read back as the copies' zeros).
        CHECK(ptx.find(fill ? "ld.global.L1::evict_first.b16" : "ld.global.b16") != std::string::npos);
      } else {
        CHECK(ptx.find(fill ? "ld.global.L1::evict_first.v4" : "ld.global.v4") != std::string::npos);
      }
      if (!have_ptxas) continue;
      tools::PtxasResult r = tools::run_ptxas(ptx, "sm_90a");
      CHECK_MESSAGE(r.ok, r.log);
      CHECK(r.spill_stores == 0);
    }
  }
}
