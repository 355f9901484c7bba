// Pruning before timing, without a GPU: the space's predicates, thread limits, and
// what compiling each config (in parallel, for sm_90a) says about shared memory,
// spills and compile errors.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "scratch.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/kernels/tuned.hpp"

using namespace tilefuse;
namespace fs = std::filesystem;

namespace {

// Compiled kernels land in a private cache directory, not the user's.
const bool g_private_cache = tf_test::private_cache_dir();

const tuning::Trial& trial(const std::vector<tuning::Trial>& ts, const Config& c) {
  for (auto& t : ts)
    if (t.config == c) return t;
  FAIL("no trial for " << c.str());
  return ts.front();
}

struct SoftmaxArgs {
  int64_t rows = 8192, cols = 4096;
  DevicePtr<bfloat16> out = DevicePtr<bfloat16>::from_address(uint64_t(1) << 32, size_t(8192) * 4096);
  DevicePtr<bfloat16> in = DevicePtr<bfloat16>::from_address(uint64_t(1) << 34, size_t(8192) * 4096);
};

}  // namespace

TEST_CASE("offline plan: predicates first, then what the compiled kernels need") {
  SoftmaxArgs a;
  auto& t = kernels::softmax_tuner<bfloat16>();
  auto p = t.problem(a.out, a.in, a.rows, a.cols);
  tuning::OfflineOptions o;
  o.spills = [](const nvptx::CompiledKernel& k, int* regs) {
    *regs = 40;
    return k.num_warps == 4 ? 96 : 0;  // pretend the 4-warp version spills
  };
  auto trials = tuning::plan_offline(p, t.space(), o);
  REQUIRE(trials.size() == t.space().size());
  CHECK(trial(trials, Config{{"BLOCK", 1024}, num_warps(4)}).pruned == "BLOCK 1024 < 4096 columns");
  CHECK(trial(trials, Config{{"BLOCK", 16384}, num_warps(8)}).pruned == "BLOCK 16384 > 4096 columns");
  CHECK(trial(trials, Config{{"BLOCK", 4096}, num_warps(4)}).pruned == "spills 96 bytes");
  for (int w : {8, 16, 32}) {
    auto& tr = trial(trials, Config{{"BLOCK", 4096}, num_warps(w)});
    CAPTURE(w);
    CHECK(tr.pruned == "");
    CHECK(tr.shared_bytes >= 0);
    CHECK(tr.shared_bytes <= tuning::default_shared_limit(o.target));
    CHECK(tr.registers == 40);
  }
}

TEST_CASE("offline plan: when every config spills, the spilling ones are kept with a note") {
  SoftmaxArgs a;
  auto& t = kernels::softmax_tuner<bfloat16>();
  auto p = t.problem(a.out, a.in, a.rows, a.cols);
  tuning::OfflineOptions o;
  o.spills = [](const nvptx::CompiledKernel& k, int*) { return 8 * k.num_warps; };
  auto trials = tuning::plan_offline(p, t.space(), o);
  auto& kept = trial(trials, Config{{"BLOCK", 4096}, num_warps(16)});
  CHECK(kept.pruned == "");
  CHECK(kept.note == "spills 128 bytes");
  CHECK(trial(trials, Config{{"BLOCK", 1024}, num_warps(4)}).pruned == "BLOCK 1024 < 4096 columns");
}

TEST_CASE("offline plan: shared memory over the limit is pruned with both sizes") {
  SoftmaxArgs a;
  auto& t = kernels::softmax_tuner<bfloat16>();
  auto p = t.problem(a.out, a.in, a.rows, a.cols);
  tuning::OfflineOptions o;
  auto free_run = tuning::plan_offline(p, t.space(), o);
  int smem = trial(free_run, Config{{"BLOCK", 4096}, num_warps(16)}).shared_bytes;
  REQUIRE(smem > 0);  // 16 warps combine their partial row max and sum through shared memory
  o.shared_limit = smem - 1;
  auto trials = tuning::plan_offline(p, t.space(), o);
  CHECK(trial(trials, Config{{"BLOCK", 4096}, num_warps(16)}).pruned ==
        "shared memory " + std::to_string(smem) + " bytes > " + std::to_string(smem - 1) + " bytes per block");
  CHECK(tuning::default_shared_limit(nvptx::parse_target("sm_90a")) == 227 * 1024);
  CHECK(tuning::default_shared_limit(nvptx::parse_target("sm_80")) == 163 * 1024);
}

TEST_CASE("offline plan: thread limits and compile errors") {
  SoftmaxArgs a;
  auto& t = kernels::softmax_tuner<bfloat16>();
  auto p = t.problem(a.out, a.in, a.rows, a.cols);
  tuning::Space wide({Config{{"BLOCK", 4096}, num_warps(64)}});
  auto trials = tuning::plan_offline(p, wide, tuning::OfflineOptions{});
  CHECK(trials.at(0).pruned == "num_warps 64: 2048 threads > 1024 per block");

  p.plan = [](const Config& c) -> tuning::Specialization {
    if (c.get("BLOCK") == 2048) throw UserError("BLOCK 2048 is unlucky\nsecond line");
    return {};
  };
  tuning::Space one({Config{{"BLOCK", 2048}, num_warps(4)}});
  CHECK(tuning::plan_offline(p, one, tuning::OfflineOptions{}).at(0).pruned ==
        "compile error: BLOCK 2048 is unlucky");
}

TEST_CASE("offline plan: parallel compilation gives the serial answer") {
  tuning::OfflineOptions serial, parallel;
  serial.threads = 1;
  parallel.threads = 4;
  int64_t rows = 2048, cols = 65536;
  auto out = DevicePtr<float>::from_address(uint64_t(1) << 32, size_t(rows) * cols);
  auto in = DevicePtr<float>::from_address(uint64_t(1) << 36, size_t(rows) * cols);
  auto& t = kernels::softmax_tuner<float>();
  auto p = t.problem(out, in, rows, cols);
  tuning::Space s({Config{{"BLOCK", 1024}, num_warps(4)}, Config{{"BLOCK", 2048}, num_warps(8)},
                   Config{{"BLOCK", 4096}, num_warps(8)}, Config{{"BLOCK", 8192}, num_warps(16)}});
  auto a = tuning::plan_offline(p, s, serial), b = tuning::plan_offline(p, s, parallel);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(a[i].config.str());
    CHECK(a[i].pruned == b[i].pruned);
    CHECK(a[i].shared_bytes == b[i].shared_bytes);
    CHECK(a[i].pruned == "");
  }
}

TEST_CASE("the tuner also times the heuristic's config at one program per SM fewer and more") {
  using tuning::heuristic_candidates;
  Config h{{"BLOCK", 4096}, num_warps(4), min_programs_per_sm(6)};
  auto c = heuristic_candidates(h);
  REQUIRE(c.size() == 3);
  CHECK(c[0] == h);
  CHECK(c[1].min_programs_per_sm == 5);
  CHECK(c[2].min_programs_per_sm == 7);
  CHECK(c[2].get("BLOCK") == 4096);
  CHECK(c[2].num_warps == 4);
  // No cap asked: the heuristic's config alone; at the ends of 1..32, one neighbour.
  CHECK(heuristic_candidates(Config{{"BLOCK", 4096}}).size() == 1);
  CHECK(heuristic_candidates(Config(h).set("min_programs_per_sm", 1)).size() == 2);
  CHECK(heuristic_candidates(Config(h).set("min_programs_per_sm", 32)).back().min_programs_per_sm == 31);

  // Through a gallery tuner: cross-entropy's 16-bit rows of an odd width in one program ask
  // for a cap (row_programs_per_sm).
  int64_t M = 1024, V = 4099;
  auto logits = DevicePtr<bfloat16>::from_address(uint64_t(1) << 32, size_t(M) * V);
  auto dlogits = DevicePtr<bfloat16>::from_address(uint64_t(1) << 34, size_t(M) * V);
  auto targets = DevicePtr<int64_t>::from_address(uint64_t(1) << 36, size_t(M));
  auto loss = DevicePtr<float>::from_address(uint64_t(1) << 37, 1);
  auto& t = kernels::cross_entropy_tuner<bfloat16>();
  auto p = t.problem(loss, dlogits, logits, targets, M, V, kernels::CrossEntropyOptions{});
  REQUIRE(!p.extra.empty());
  int n = p.extra.front().min_programs_per_sm;
  REQUIRE(n > 1);
  REQUIRE(p.extra.size() == 3);
  CHECK(p.extra[1] == Config(p.extra.front()).set("min_programs_per_sm", n - 1));
  CHECK(p.extra[2] == Config(p.extra.front()).set("min_programs_per_sm", n + 1));
}
