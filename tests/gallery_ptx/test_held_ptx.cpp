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

TEST_CASE("a store over a held tile's source waits for every copy and every thread first") {
  for (const char* target : {"sm_80", "sm_90a"}) {
    CAPTURE(target);
    auto art = compile(held::held_overwrite_kernel<bfloat16>(), Config{{"BLOCK", 1024}, num_warps(4)}, target);
    const std::string& ptx = art.kernel.ptx;
    CHECK(count(art.plan, "held in shared") == 1);
    size_t store = ptx.find("st.global");
    REQUIRE(store != std::string::npos);
    std::string before = ptx.substr(0, store);
    CHECK(before.find("ld.volatile.shared") == std::string::npos);  // nothing read the tile yet
    size_t wait_all = before.rfind("cp.async.wait_group 0;");
    REQUIRE(wait_all != std::string::npos);
    CHECK(before.find("bar.sync", wait_all) != std::string::npos);
    check_ptxas(ptx, target);
  }
}

TEST_CASE("held tiles read by a dot (not held), or only in a branch's arm (waited for after it)") {
  // A dot reads its operand in another layout (a loop would convert it before starting):
  // not held. A tile read only inside a branch: its copies are waited for after the branch.
  auto dot_kernel = kernel("held_dot", {"out", "a", "b"}, [](Ptr<float> out, Ptr<const half> a, Ptr<const half> b) {
    auto r = arange(0, 32), c = arange(0, 32);
    auto off = (r * 32).col() + c.row();
    auto av = load(a + off, r.col() < 32, 0.0f, Cache::KeepInShared);
    auto acc = zeros<f32>({32, 32});
    for_range(0, 2, 1, [&](I32) { acc = dot(av, load(b + off), acc); });
    store(out + off, acc);
  });
  auto dot = compile(dot_kernel, Config{num_warps(4)});
  CHECK(count(dot.plan, "held in shared") == 0);
  auto branch_only = kernel("held_branch_only", {"out", "x", "flag"},
      [](Ptr<float> out, Ptr<const float> x, I32 flag, Meta<"BLOCK"> BLOCK) {
        auto c = arange(0, BLOCK);
        auto v = load(x + c, c < BLOCK, 0.0f, Cache::KeepInShared);
        if_(flag > 0, [&] { store(out + c, v * 2.0f); });
        store(out + c + BLOCK, zeros<f32>({BLOCK}) + max(load(x + c + BLOCK), 0));
      });
  auto art = compile(branch_only, Config{{"BLOCK", 256}, num_warps(2)});
  CHECK(count(art.plan, "held in shared") == 1);
  // The reduction after the branch may reuse the buffer's bytes: every copy lands first.
  const std::string& ptx = art.kernel.ptx;
  size_t red = ptx.find("st.shared.f32");
  REQUIRE(red != std::string::npos);
  // One wait inside the branch (its reader), one after it for the path that skipped it.
  CHECK(count(ptx.substr(0, red), "cp.async.wait_group 0;") == 2);
}

TEST_CASE("a held tile's reader is lowered where its buffer lives, not deferred behind a checked load") {
  // d's mask may change inside a run (n not known to divide 8): its checked runs finish
  // later, and ops reading it are deferred with them; v + d must still read v here, before
  // the reduction whose scratch may take v's bytes.
  auto k = kernel("held_deferred", {"out", "x", "y", "n"},
      [](Ptr<float> out, Ptr<const float> x, Ptr<const float> y, I32 n, Meta<"BLOCK"> BLOCK) {
        auto c = arange(0, BLOCK);
        auto v = load(x + c, c < BLOCK, 0.0f, Cache::KeepInShared);
        auto d = load(y + c, c < n, 0.0f);
        auto t = v + d;
        auto s = max(load(y + BLOCK + c), 0);
        store(out + c, t + s);
      });
  auto f = k.specialize(Config{{"BLOCK", 1024}, num_warps(4)}, {16, 16, 16, 1});
  auto art = nvptx::compile_with_artifacts(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  const std::string& ptx = art.kernel.ptx;
  REQUIRE(count(art.plan, "held in shared") == 1);
  REQUIRE(count(art.plan, "checked") >= 1);
  size_t reduction = ptx.find("st.shared.f32");
  REQUIRE(reduction != std::string::npos);
  CHECK(ptx.find("ld.volatile.shared", reduction) == std::string::npos);
  check_ptxas(ptx, "sm_90a");
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

TEST_CASE("the row heuristics hold 16-bit chunks of 8192+ columns (LayerNorm: 4096) on clusters in shared memory, and compile them") {
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
  // LayerNorm: every 16-bit config of chunks of 4096 on clusters, RELOAD or not, of 8192 on
  // one program of 16384 columns, and of 8192 in the 64 KB programs (held_64k_programs,
  // 262144); not odd widths.
  for (int64_t cols : {16384, 65536, 262144}) {
    Config ln = tk::layernorm_heuristic(cols, DType::bf16, true);
    int64_t block = cols == 65536 ? 4096 : 8192;
    int64_t chunks = cols == 16384 ? 2 : 4;
    CHECK((ln.get("BLOCK") == block && ln.get("CHUNKS") == chunks && ln.get("HELD") == ln.get("CHUNKS")));
  }
  auto ln64k_art = compile(tk::layernorm_row_kernel<bfloat16>(),
                           tk::layernorm_config(tk::layernorm_heuristic(262144, DType::bf16, true), 262144, DType::bf16));
  CHECK(count(ln64k_art.plan, "held in shared") == 4);
  check_ptxas(ln64k_art.kernel.ptx, "sm_90a");
  CHECK(!tk::layernorm_heuristic(65537, DType::bf16, true, true).has("HELD"));
  // f32 LayerNorm and RMSNorm programs of chunks hold them too (their own rules); they compile.
  CHECK(tk::layernorm_heuristic(65536, DType::f32, true).get("HELD") == 2);
  Config rms32 = tk::rmsnorm_heuristic(262144, DType::f32, true);
  CHECK(rms32.get("HELD") == 2);
  auto rms32_art = compile(tk::rmsnorm_row_kernel<float>(), Config(rms32).set("RESIDUAL", 0));
  CHECK(count(rms32_art.plan, "held in shared") == 2);
  check_ptxas(rms32_art.kernel.ptx, "sm_90a");
  Config ln32 = tk::layernorm_config(tk::layernorm_heuristic(262144, DType::f32, true), 262144, DType::f32);
  auto ln32_art = compile(tk::layernorm_row_kernel<float>(), ln32);
  CHECK(count(ln32_art.plan, "held in shared") == 4);
  check_ptxas(ln32_art.kernel.ptx, "sm_90a");
  auto ln_art = compile(tk::layernorm_row_kernel<bfloat16>(),
                        tk::layernorm_config(tk::layernorm_heuristic(65536, DType::bf16, true), 65536, DType::bf16));
  CHECK(count(ln_art.plan, "held in shared") == 4);
  check_ptxas(ln_art.kernel.ptx, "sm_90a");
  auto art = compile(tk::softmax_row_kernel<bfloat16>(), s);
  CHECK(count(art.plan, "held in shared") == (s.has("CHUNKS") ? s.get("CHUNKS") : 1));
  check_ptxas(art.kernel.ptx, "sm_90a");
}
