// The autotuner on a GPU: the pick holds up when re-measured, a second run is a cache
// hit, tuning leaves the caller's buffers as they were, and the tuned softmax is at
// least as fast as the heuristic, whose config is always among those timed. Each case
// prints a skip reason without a driver.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "scratch.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/kernels/tuned.hpp"

using namespace tilefuse;
namespace fs = std::filesystem;

namespace {

// Tuning results and compiled kernels go to a private cache directory.
const bool g_private_cache = tf_test::private_cache_dir();

bool gpu_or_skip() {
  std::string why;
  if (gpu_available(&why)) return true;
  std::printf("[skip] GPU autotuning test skipped: %s\n", why.c_str());
  return false;
}
#define REQUIRE_GPU() \
  if (!gpu_or_skip()) return

template <class T>
std::vector<T> random_host(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-4, 4);
  std::vector<T> v(n);
  for (auto& x : v) x = T(d(g));
  return v;
}

struct ModeGuard {
  explicit ModeGuard(tuning::Mode m) { tuning::set_mode(m); }
  ~ModeGuard() { tuning::set_mode(std::nullopt); }
};

}  // namespace

TEST_CASE("a sweep's pick is within 5% of the best config when all are re-measured") {
  REQUIRE_GPU();
  int64_t rows = 8192, cols = 4096;
  auto x = random_host<bfloat16>(rows * cols, 1), y0 = random_host<bfloat16>(rows * cols, 2);
  auto in = to_device(x), out = to_device(y0);
  auto& t = kernels::softmax_tuner<bfloat16>();
  tuning::TuneSettings st = tuning::default_settings();
  st.mode = tuning::Mode::Always;
  auto r = t.tune(st, out, in, rows, cols);
  // Tuning must not change the caller's output buffer.
  auto after = out.to_host();
  size_t changed = 0;
  for (size_t i = 0; i < after.size(); ++i) changed += after[i].bits != y0[i].bits;
  CHECK(changed == 0);

  tuning::BenchOptions more;
  more.target_ms = 50;
  double best_re = 1e30, pick_re = 0;
  int timed = 0;
  for (auto& tr : r.trials) {
    if (!tr.timed()) continue;
    ++timed;
    double ms = tuning::measure([&] { kernels::softmax(out, in, rows, cols, -1, -1, tr.config); }, more).ms;
    std::printf("  %-40s tuned %.4f ms, re-measured %.4f ms\n", tr.config.str().c_str(), tr.ms, ms);
    best_re = std::min(best_re, ms);
    if (tr.config == r.best) pick_re = ms;
  }
  CHECK(timed >= 2);
  CHECK(pick_re <= 1.05 * best_re);
}

TEST_CASE("the second run is a cache hit, the third a memory hit") {
  REQUIRE_GPU();
  ModeGuard mode(tuning::Mode::Cached);
  int64_t rows = 4096, cols = 2048;
  auto in = to_device(random_host<bfloat16>(rows * cols, 3));
  DeviceBuffer<bfloat16> out(rows * cols);
  auto& t = kernels::softmax_tuner<bfloat16>();
  t.forget();
  auto s0 = tuning::stats();
  Config first = t.config_for(out, in, rows, cols);
  auto s1 = tuning::stats();
  CHECK(s1.tunes == s0.tunes + 1);
  CHECK(s1.configs_timed > s0.configs_timed);
  t.forget();  // as if a new process started
  Config second = t.config_for(out, in, rows, cols);
  auto s2 = tuning::stats();
  CHECK(second == first);
  CHECK(s2.tunes == s1.tunes);
  CHECK(s2.cache_hits == s1.cache_hits + 1);
  CHECK(s2.configs_timed == s1.configs_timed);
  kernels::tuned_softmax(out, in, rows, cols);
  auto s3 = tuning::stats();
  CHECK(s3.cache_hits == s2.cache_hits);
  CHECK(s3.tunes == s2.tunes);
}

TEST_CASE("kernel form: tuned launches compute the right answer") {
  REQUIRE_GPU();
  ModeGuard mode(tuning::Mode::Cached);
  int64_t rows = 300, cols = 1000;
  auto x = random_host<float>(rows * cols, 5);
  auto in = to_device(x);
  DeviceBuffer<float> out(rows * cols);
  auto t = autotune(kernels::softmax_row_kernel<float>(),
                    tuning::Space::product({tuning::values("BLOCK", {1024}), tuning::values("num_warps", {2, 4, 8})}),
                    {{"n_cols"}}, [](const Config&, auto&&, auto&&, int32_t n_rows, auto&&...) { return Grid(n_rows); });
  t(out, in, int32_t(rows), int32_t(cols), int64_t(cols), int64_t(cols));
  auto y = out.to_host();
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double m = -1e30, s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(x[r * cols + c]));
    for (int64_t c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - m);
    for (int64_t c = 0; c < cols; ++c) {
      double want = std::exp(x[r * cols + c] - m) / s;
      worst = std::max(worst, std::fabs(y[r * cols + c] - want) / (1e-7 + 1e-5 * want));
    }
  }
  CHECK(worst <= 1.0);
}

TEST_CASE("tuned softmax 16384x4096 bf16 is at least as fast as the heuristic config") {
  REQUIRE_GPU();
  ModeGuard mode(tuning::Mode::Cached);
  int64_t rows = 16384, cols = 4096;
  auto in = to_device(random_host<bfloat16>(rows * cols, 7));
  DeviceBuffer<bfloat16> out(rows * cols);
  Config tuned = kernels::softmax_tuner<bfloat16>().config_for(out, in, rows, cols);
  Config heur = kernels::softmax_heuristic(cols, DType::bf16);
  // Alternate the two so clock and thermal drift hit both alike; keep each one's best median.
  tuning::BenchOptions b;
  b.target_ms = 50;
  double t_tuned = 1e30, t_heur = 1e30;
  for (int i = 0; i < 3; ++i) {
    t_tuned = std::min(t_tuned, tuning::measure([&] { kernels::tuned_softmax(out, in, rows, cols); }, b).ms);
    t_heur = std::min(t_heur, tuning::measure([&] { kernels::softmax(out, in, rows, cols, -1, -1, heur); }, b).ms);
  }
  double gbs = 2.0 * rows * cols * 2 / (t_tuned * 1e-3) / 1e9;
  std::printf("softmax 16384x4096 bf16: tuned %s %.4f ms (%.0f GB/s), heuristic %s %.4f ms\n", tuned.str().c_str(),
              t_tuned, gbs, heur.str().c_str(), t_heur);
  CHECK(t_tuned <= 1.03 * t_heur);
}

// The heuristic's config is timed beside the space's (here a split-K config, outside the
// GEMM space): tuning never settles on something slower than the untuned launch.
TEST_CASE("the tuner times the heuristic's config too, and picks nothing slower") {
  REQUIRE_GPU();
  int64_t M = 1, N = 4096, K = 4096;
  auto a = to_device(random_host<bfloat16>(M * K, 7)), b = to_device(random_host<bfloat16>(K * N, 8));
  DeviceBuffer<bfloat16> c(M * N);
  auto& t = kernels::matmul_tuner<bfloat16, bfloat16>();
  tuning::TuneSettings st = tuning::default_settings();
  st.mode = tuning::Mode::Always;
  auto r = t.tune(st, c, a, b, M, N, K, kernels::MatmulOptions{});
  const tuning::Trial* h = nullptr;
  for (auto& tr : r.trials)
    if (tr.note == "the heuristic's config") h = &tr;
  REQUIRE(h != nullptr);
  CHECK(h->config.has("SPLIT_K"));
  CHECK(h->timed());
  CHECK(r.best_ms <= h->ms);
}

// Where the heuristic asks ptxas for n programs per SM, n - 1 and n + 1 are timed too
// (or pruned): at the first of these widths where the heuristic has such a cap.
TEST_CASE("the tuner times the heuristic's config at one program per SM fewer and more") {
  REQUIRE_GPU();
  int64_t rows = 2048, cols = 0;
  for (int64_t w : {4099, 32000, 50304, 151936}) {
    bool misaligned = kernels::contiguous_rows_misaligned(w, DType::bf16);
    if (kernels::softmax_rows_config(w, DType::bf16, gpu_has_clusters(), misaligned).min_programs_per_sm > 1) {
      cols = w;
      break;
    }
  }
  REQUIRE_MESSAGE(cols > 0, "no width with a cap on programs per SM in the softmax heuristic");
  CAPTURE(cols);
  auto in = to_device(random_host<bfloat16>(rows * cols, 11));
  DeviceBuffer<bfloat16> out(rows * cols);
  auto& t = kernels::softmax_tuner<bfloat16>();
  tuning::TuneSettings st = tuning::default_settings();
  st.mode = tuning::Mode::Always;
  auto r = t.tune(st, out, in, rows, cols);
  const tuning::Trial* h = nullptr;
  std::vector<const tuning::Trial*> neighbours;
  for (auto& tr : r.trials) {
    if (tr.note == "the heuristic's config") h = &tr;
    if (tr.note.starts_with("the heuristic's config with min_programs_per_sm = ")) neighbours.push_back(&tr);
  }
  REQUIRE(h != nullptr);
  int n = h->config.min_programs_per_sm;
  REQUIRE(n > 1);
  // Each neighbour once, whether the space holds it or the tuner added it.
  REQUIRE(neighbours.size() == 2);
  for (int m : {n - 1, n + 1}) {
    auto want = Config(h->config).set("min_programs_per_sm", m);
    CAPTURE(want.str());
    CHECK(std::count_if(neighbours.begin(), neighbours.end(), [&](auto* tr) { return tr->config == want; }) == 1);
  }
  for (auto* tr : neighbours) {
    CAPTURE(tr->config.str());
    CHECK((tr->timed() || !tr->pruned.empty()));
  }
  // The heuristic's own config: timed, or pruned with the reason (e.g. ptxas spills).
  CAPTURE(h->config.str());
  CAPTURE(h->pruned);
  CHECK((h->timed() || !h->pruned.empty()));
  if (h->timed()) CHECK(r.best_ms <= h->ms);
}
