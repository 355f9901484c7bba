// Loads kept in shared memory (Cache::KeepInShared), offline: which loads are held, the
// copies (cp.async, st.shared of the fill for masked runs) and read-backs (ld.shared per
// reader), the wait and barrier before a store over what the copies read, the fallbacks
// (loads in loops, buffers that do not fit), the store-side error, and ptxas accepting
// the result spill-free. The kernels run against the interpreter in
// tests/gpu/test_gpu_held_loads.cpp.
#include <doctest/doctest.h>

#include "../gpu/held_kernels.hpp"
#include "tilefuse/kernels/kernels.hpp"
#include "tilefuse/nvptx/compiler.hpp"
#include "tilefuse/tools/ptxas.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;

namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

nvptx::CompileArtifacts compile(const KernelBase& k, const Config& cfg, const char* target = "sm_90a") {
  auto f = k.specialize(cfg, std::vector<int64_t>(k.num_runtime_params(), 16));
  return nvptx::compile_with_artifacts(*f, nvptx::CompileOptions{nvptx::parse_target(target)});
}

void check_ptxas(const std::string& ptx, const char* target) {
  if (tools::find_ptxas().empty()) return;
  tools::PtxasResult r = tools::run_ptxas(ptx, target);
  CHECK_MESSAGE(r.ok, r.log);
  CHECK(r.spill_stores == 0);
}

// A held load inside a loop: not held (a plain load).
const auto& held_in_loop_kernel() {
  static auto k = kernel("held_in_loop", {"out", "x", "n"}, [](Ptr<float> out, Ptr<const float> x, I32 n, Meta<"BLOCK"> BLOCK) {
    auto cols = arange(0, BLOCK);
    for_range(0, n, BLOCK, [&](I32 start) {
      auto c = start + cols;
      auto v = load(x + c, c < n, 0.0f, Cache::KeepInShared);
      store(out + c, v * max(v, 0), c < n);
    });
  });
  return k;
}

}  // namespace

TEST_CASE("held loads: own-thread copies, masked runs filled by st.shared, a read-back per reader") {
  for (const char* target : {"sm_80", "sm_90a"}) {
    CAPTURE(target);
    // bf16, 2 chunks of 4096 on 8 warps: 2 runs of 16 bytes per thread per chunk.
    auto art = compile(held::held_rows_kernel<bfloat16>(), Config{{"BLOCK", 4096}, {"CHUNKS", 2}, num_warps(8)}, target);
    const std::string& ptx = art.kernel.ptx;
    CHECK(count(art.plan, "held in shared") == 2);
    CHECK(count(ptx, "cp.async.cg.shared.global") == 4);
    CHECK(count(ptx, "st.shared.v4.b32") >= 4);  // the fill of masked runs
    CHECK(count(ptx, "cp.async.commit_group") == 2);
    CHECK(count(ptx, "ld.global") == 0);  // no tile lives in registers from memory
    // Two readers per chunk x 2 runs x 2 chunks: the max (both chunks' in one reduction
    // group, read once), and x - m (the sum's and the output's, one op after CSE).
    CHECK(count(ptx, "ld.volatile.shared") == 8);
    // The output overwrites the row: every copy landed and every thread past it first.
    size_t store = ptx.find("st.global");
    size_t wait_all = ptx.rfind("cp.async.wait_group 0;", store);
    REQUIRE(store != std::string::npos);
    REQUIRE(wait_all != std::string::npos);
    CHECK(ptx.find("bar.sync", wait_all) < store);
    check_ptxas(ptx, target);
  }
}

TEST_CASE("held loads in the arms of a branch, not in loops, not where they do not fit") {
  auto branch = compile(held::held_branch_kernel<float>(), Config{{"BLOCK", 1024}, num_warps(4)});
  CHECK(count(branch.plan, "held in shared") == 2);
  check_ptxas(branch.kernel.ptx, "sm_90a");
  auto loop = compile(held_in_loop_kernel(), Config{{"BLOCK", 1024}, num_warps(4)});
  CHECK(count(loop.plan, "held in shared") == 0);
  CHECK(loop.kernel.ptx.find("cp.async") == std::string::npos);
  // 4 x 16384 f32 = 256 KB: more than an SM's shared memory, so the tiles stay in registers.
  auto big = compile(held::held_rows_kernel<float>(), Config{{"BLOCK", 16384}, {"CHUNKS", 4}, num_warps(32)});
  CHECK(count(big.plan, "held in shared") == 0);
  CHECK(big.kernel.shared_bytes < 227 * 1024);
}

TEST_CASE("Cache::KeepInShared on a store is a UserError naming the fix") {
  auto k = kernel("held_store", {"out", "x"}, [](Ptr<float> out, Ptr<const float> x, Meta<"BLOCK"> BLOCK) {
    auto c = arange(0, BLOCK);
    store(out + c, load(x + c), c < BLOCK, Cache::KeepInShared);
  });
  try {
    k.specialize(Config{{"BLOCK", 256}}, std::vector<int64_t>(k.num_runtime_params(), 16));
    FAIL("no error");
  } catch (const UserError& e) {
    std::string m = e.what();
    CHECK(m.find("store with Cache::KeepInShared") != std::string::npos);
    CHECK(m.find("Use it on a load") != std::string::npos);
    CHECK(m.find("test_held_ptx.cpp") != std::string::npos);  // the user's line
  }
}

TEST_CASE("the row heuristics hold 16-bit chunks of 8192+ columns on clusters in shared memory, and compile them") {
  Config s = tk::softmax_heuristic(131072, DType::bf16, true);
  CHECK(s.get("HELD") == (s.has("CHUNKS") ? s.get("CHUNKS") : 1));
  CHECK(!tk::softmax_heuristic(131072, DType::f32, true).has("HELD"));
  CHECK(!tk::softmax_heuristic(4096, DType::bf16, true).has("HELD"));  // one program
  Config ce = tk::cross_entropy_heuristic(128256, DType::bf16, true);
  CHECK(ce.get("HELD") == 1);
  CHECK(!tk::cross_entropy_heuristic(151936, DType::bf16, true).has("HELD"));  // chunks of 2048
  CHECK(!tk::cross_entropy_heuristic(256000, DType::f32, true).has("HELD"));
  Config r = tk::rmsnorm_heuristic(65536, DType::bf16, true);  // one 8192 tile per program, no RELOAD
  CHECK(r.get("HELD") == 1);
  Config reload = tk::rmsnorm_heuristic(131072, DType::bf16, true);
  CHECK((reload.has("RELOAD") && !reload.has("HELD")));
  CHECK(!tk::add_rmsnorm_heuristic(65536, DType::bf16, true, false).has("HELD"));
  auto art = compile(tk::softmax_row_kernel<bfloat16>(), s);
  CHECK(count(art.plan, "held in shared") == (s.has("CHUNKS") ? s.get("CHUNKS") : 1));
  check_ptxas(art.kernel.ptx, "sm_90a");
}
