// Keys and bucketing, spaces and their pruning reasons, the autotune() front end on
// the CPU: fallbacks for interpreter runs, modes, and the cost of a cache hit.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/kernels/tuned.hpp"

using namespace tilefuse;
using tuning::Key;
using tuning::KeyView;

namespace {

std::string user_error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

// Restores the process-wide mode when a test case ends.
struct ModeGuard {
  explicit ModeGuard(tuning::Mode m) { tuning::set_mode(m); }
  ~ModeGuard() { tuning::set_mode(std::nullopt); }
};

}  // namespace

TEST_CASE("key values bucket to powers of two or stay exact") {
  CHECK(tuning::pow2(1) == 1);
  CHECK(tuning::pow2(3) == 4);
  CHECK(tuning::pow2(4096) == 4096);
  CHECK(tuning::pow2(5000) == 8192);
  CHECK(tuning::exact(5000) == 5000);
  std::mt19937_64 g(7);
  for (int i = 0; i < 1000; ++i) {
    int64_t v = 1 + static_cast<int64_t>(g() % (int64_t(1) << 40));
    int64_t p = tuning::pow2(v);
    CHECK((p & (p - 1)) == 0);
    CHECK(p >= v);
    CHECK(p / 2 < v);
  }
}

TEST_CASE("keys: equality, hashing, dtypes and text") {
  Key a{16384, 4096}, b{16384, 4096}, c{16384, 4097};
  a.add_dtype(DType::bf16).add_dtype(DType::bf16);
  b.add_dtype(DType::bf16).add_dtype(DType::bf16);
  c.add_dtype(DType::bf16).add_dtype(DType::bf16);
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  CHECK_FALSE(a == c);
  CHECK(a.hash() != c.hash());
  Key d{16384, 4096};
  d.add_dtype(DType::f16).add_dtype(DType::bf16);
  CHECK_FALSE(a == d);  // dtypes are part of the key
  Key e{16384, 4096};
  CHECK_FALSE(a == e);
  std::vector<std::string> names{"n_rows", "n_cols"};
  CHECK(a.str(names) == "n_rows=16384 n_cols=4096 dtypes=bf16,bf16");
  CHECK(Key{1, 2, 3}.str(names) == "n_rows=1 n_cols=2 k2=3");
  KeyView kv{names, a};
  CHECK(kv["n_cols"] == 4096);
  CHECK_THROWS_AS(kv["seq_len"], InternalError);
  Key full;
  for (int i = 0; i < Key::kMax; ++i) full.add(i);
  CHECK_THROWS_AS(full.add(9), InternalError);
}

TEST_CASE("spaces: products, ranges, lists") {
  auto s = tuning::Space::product({tuning::pow2_range("BLOCK", 1024, 16384), tuning::values("num_warps", {4, 8, 16}),
                                   tuning::values("num_stages", {1})},
                                  Config{{"RESIDUAL", 0}});
  REQUIRE(s.size() == 15);
  CHECK(s.configs().front() == Config{{"BLOCK", 1024}, {"RESIDUAL", 0}, num_warps(4), num_stages(1)});
  CHECK(s.configs().back() == Config{{"BLOCK", 16384}, {"RESIDUAL", 0}, num_warps(16), num_stages(1)});
  CHECK(user_error_text([] { tuning::pow2_range("BLOCK", 1000, 4096); }).find(
            "pow2_range(\"BLOCK\", 1000, 4096): bounds must be powers of two") == 0);
  CHECK(user_error_text([] { tuning::Space::product({tuning::values("BLOCK", {})}); })
            .find("autotune space axis 'BLOCK' has no values") == 0);
  tuning::Space list({Config{{"BLOCK", 64}}, Config{{"BLOCK", 128}}});
  list.add(Config{{"BLOCK", 64}}).add(Config{{"BLOCK", 256}});
  CHECK(list.size() == 3);
}

TEST_CASE("gallery spaces prune with readable reasons") {
  std::vector<std::string> rows_cols{"n_rows", "n_cols"};
  auto rs = kernels::rowwise_space();
  Key k4096{16384, 4096};
  KeyView kv{rows_cols, k4096};
  CHECK(rs.check(Config{{"BLOCK", 1024}, num_warps(4)}, kv) == "BLOCK 1024 < 4096 columns");
  CHECK(rs.check(Config{{"BLOCK", 8192}, num_warps(4)}, kv) == "BLOCK 8192 > 4096 columns");
  CHECK(rs.check(Config{{"BLOCK", 4096}, num_warps(8)}, kv) == "");
  int kept = 0;
  for (auto& c : rs.configs()) kept += rs.check(c, kv).empty();
  CHECK(kept == 5);  // BLOCK 4096 with 2, 4, 8, 16, 32 warps (1 warp: 128 elements per thread)
  CHECK(rs.check(Config{{"BLOCK", 4096}, num_warps(1)}, kv) == "128 elements per thread (> 64)");
  Key k65536{2048, 65536};
  CHECK(rs.check(Config{{"BLOCK", 1024}, num_warps(4)}, KeyView{rows_cols, k65536}) == "");  // looped
  Key k100{7, 100};
  CHECK(rs.check(Config{{"BLOCK", 1024}, num_warps(4)}, KeyView{rows_cols, k100}) == "");

  // Chunked programs on clusters: the program's share of the row as the fewest chunks.
  // 16385 columns: 4 x 5 x 1024 (the heuristics') and
  // 2 x 5 x 2048 (half the programs) are kept.
  auto cs = kernels::chunked_rowwise_space();
  Key k16385{2048, 16385};
  KeyView odd{rows_cols, k16385};
  Config four{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(4), cluster(4)};
  Config two{{"BLOCK", 2048}, {"CHUNKS", 5}, num_warps(8), cluster(2)};
  for (const Config& c : {four, two, Config(two).set("min_programs_per_sm", 3)}) {
    CAPTURE(c.str());
    CHECK(std::find(cs.configs().begin(), cs.configs().end(), c) != cs.configs().end());
    CHECK(cs.check(c, odd) == "");
  }
  CHECK(cs.check(Config{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(4), cluster(2)}, odd) ==
        "5 x 1024 is not the fewest chunks covering 8193 columns (the row's share per program)");
  CHECK(cs.check(Config{{"BLOCK", 4096}, {"CHUNKS", 5}, num_warps(8), cluster(2)}, odd) ==
        "5 x 4096 is not the fewest chunks covering 8193 columns (the row's share per program)");
  CHECK(cs.check(Config{{"BLOCK", 4096}, {"CHUNKS", 3}, num_warps(8), cluster(2)}, odd) == "");
  CHECK(cs.check(Config{{"BLOCK", 2048}, {"CHUNKS", 5}, num_warps(4), cluster(2)}, odd) ==
        "more than 64 elements per thread");
  CHECK(cs.check(Config{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(4)}, KeyView{rows_cols, Key{8192, 4097}}) == "");

  std::vector<std::string> none;
  Key empty;
  CHECK(kernels::attention_space().check(Config{{"BLOCK_M", 64}, {"BLOCK_N", 64}, num_warps(8)}, KeyView{none, empty}) ==
        "8 warps x 16 rows > BLOCK_M 64");
  // The warp-specialized schedule of the d128 heuristic is in the attention space too.
  auto as = kernels::attention_space();
  Config ws{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"PV_LAG", 1}, {"RESCALE_LATE", 1}, {"TMA_STORE", 0}, {"HEAD_SPLIT", 1},
            num_warps(8), num_stages(2), warp_specialize()};
  CHECK(std::find(as.configs().begin(), as.configs().end(), ws) != as.configs().end());
  std::vector<std::string> att_names{"batch_heads", "seq_len", "head_dim", "causal", "kv_group"};
  CHECK(as.check(ws, KeyView{att_names, Key{128, 4096, 128, 0, 1}}) == "");
  Config ws_persistent = ws;
  ws_persistent.persistent = 1;  // and its persistent form
  CHECK(std::find(as.configs().begin(), as.configs().end(), ws_persistent) != as.configs().end());
  CHECK(kernels::elementwise_space().check(Config{{"BLOCK", 256}, num_warps(16)}, KeyView{none, empty}) ==
        "BLOCK 256 < 512 threads");

  // GEMM: split-K and 16-row tiles only for GEMMs with few output tiles.
  std::vector<std::string> mnk{"M", "N", "K", "b_trans", "act"};
  auto gs = kernels::matmul_space();
  Key decode{16, 4096, 4096, 0, 0}, m64{64, 4096, 4096, 0, 0}, big{4096, 4096, 4096, 0, 0}, short_k{64, 4096, 1024, 0, 0};
  Config rows16{{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"SPLIT_K", 4}, num_warps(4), num_stages(4)};
  Config split8{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"SPLIT_K", 8}, num_warps(4), num_stages(6)};
  for (const Config& c : {rows16, split8}) CHECK(std::find(gs.configs().begin(), gs.configs().end(), c) != gs.configs().end());
  CHECK(gs.check(rows16, KeyView{mnk, decode}) == "");
  CHECK(gs.check(rows16, KeyView{mnk, m64}) == "16-row tiles for more than 16 rows");
  CHECK(gs.check(split8, KeyView{mnk, m64}) == "");
  CHECK(gs.check(split8, KeyView{mnk, big}) == "its 4096 tiles fill the GPU unsplit");
  CHECK(gs.check(split8, KeyView{mnk, short_k}) == "slices of fewer than 4 K blocks");
  // The last wave's tiles split: for GEMMs of many tiles too.
  Config tail4{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, {"SPLIT_K", 4}, {"SPLIT_TAIL", 1}, num_warps(8),
               num_stages(4)};
  CHECK(std::find(gs.configs().begin(), gs.configs().end(), tail4) != gs.configs().end());
  CHECK(gs.check(tail4, KeyView{mnk, big}) == "");
  CHECK(gs.check(tail4, KeyView{mnk, short_k}) == "");
  CHECK(gs.check(Config{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, num_warps(4), num_stages(4)},
                 KeyView{mnk, big}) == "accumulator of 8192 elements per warp > 64x64");
}

TEST_CASE("kernel form: key parameters are checked, outputs are the non-const pointers") {
  auto& k = kernels::softmax_row_kernel<float>();
  auto grid_fn = [](const Config&, auto&&, auto&&, auto rows, auto&&...) { return Grid(rows); };
  CHECK(user_error_text([&] { autotune(k, kernels::rowwise_space(), {{"cols"}}, grid_fn); }) ==
        "autotune key 'cols' is not an integer parameter of kernel 'softmax_f32'. Key on one of: n_rows, n_cols, "
        "out_stride, in_stride");
  auto t = autotune(k, kernels::rowwise_space(), {{"n_rows", tuning::pow2}, {"n_cols"}}, grid_fn);
  auto out = DevicePtr<float>::from_address(1 << 20, 3000), in = DevicePtr<float>::from_address(1 << 21, 3000);
  auto p = t.problem(out, in, int32_t(3), int32_t(1000), int64_t(1000), int64_t(1000));
  CHECK(p.name == "softmax_f32");
  CHECK(p.signature == "(Ptr<f32>, Ptr<const f32>, I32, I32, I64, I64)");
  CHECK(p.key.str(p.key_names) == "n_rows=4 n_cols=1000 dtypes=f32,f32");
  REQUIRE(p.outputs.size() == 1);
  CHECK(p.outputs[0].ptr == out.data());
  CHECK(p.outputs[0].bytes == 3000 * sizeof(float));
  auto spec = p.plan(Config{{"BLOCK", 1024}, num_warps(4)});
  CHECK(spec.kernel == &k);
  CHECK(spec.args.size() == 6);

  // On host buffers the kernel form launches on the interpreter with the fallback.
  ModeGuard mode(tuning::Mode::Cached);
  std::vector<float> x(2 * 1000), y(2 * 1000, -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 17) * 0.25f;
  auto before = tuning::stats();
  t(y, x, int32_t(2), int32_t(1000), int64_t(1000), int64_t(1000));
  CHECK(tuning::stats().tunes == before.tunes);
  for (int r = 0; r < 2; ++r) {
    double s = 0;
    for (int c = 0; c < 1000; ++c) s += y[r * 1000 + c];
    CHECK(s == doctest::Approx(1.0).epsilon(1e-5));
  }
  CHECK(y[16] > y[0]);
}

TEST_CASE("function form: name required, outputs must be buffers, signature from the arguments") {
  auto key_fn = [](auto&&...) { return Key{}; };
  CHECK(user_error_text([&] {
          autotune([](const Config&) {}, tuning::Space({Config{}}), key_fn, TuneOptions{});
        }).find("autotune(function, ...) needs a name") == 0);
  auto t = autotune([](const Config&, auto&, auto&, int64_t) {}, tuning::Space({Config{}}), key_fn,
                    TuneOptions{.name = "f", .outputs = {2}});
  std::vector<float> y(4), x(4);
  CHECK(user_error_text([&] { t.problem(y, x, int64_t(4)); }).find("autotune 'f': output index 2 is not a buffer") == 0);
  auto t2 = autotune([](const Config&, auto&, auto&, int64_t) {}, tuning::Space({Config{}}), key_fn,
                     TuneOptions{.name = "f", .outputs = {0}});
  CHECK(t2.problem(y, x, int64_t(4)).signature == "(f32*, f32*, i64)");
}

TEST_CASE("interpreter runs use the heuristic and never tune") {
  ModeGuard mode(tuning::Mode::Cached);
  int64_t rows = 3, cols = 37;
  std::vector<float> x(rows * cols), y(rows * cols), want(rows * cols);
  std::mt19937 g(3);
  for (auto& v : x) v = std::uniform_real_distribution<float>(-4, 4)(g);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -1e30, s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(x[r * cols + c]));
    for (int64_t c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - m);
    for (int64_t c = 0; c < cols; ++c) want[r * cols + c] = float(std::exp(x[r * cols + c] - m) / s);
  }
  auto before = tuning::stats();
  kernels::tuned_softmax(y, x, rows, cols);
  kernels::tuned_softmax(y, x, rows, cols);
  auto after = tuning::stats();
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(want[i]).epsilon(1e-5));
  CHECK(after.tunes == before.tunes);
  CHECK(after.fallbacks == before.fallbacks + 1);  // once per key
  // The heuristic's config: 37 columns of f32 (256 B tiles) in batches of 8 rows.
  Config h = kernels::softmax_tuner<float>().config_for(y, x, rows, cols);
  CHECK(h == kernels::softmax_rows_config(cols, DType::f32, false, kernels::contiguous_rows_misaligned(cols, DType::f32)));
  CHECK(h.get("ROWS") == 8);
}

TEST_CASE("modes: the knob's values, off, and no GPU") {
  CHECK(tuning::parse_mode("") == tuning::Mode::Cached);
  CHECK(tuning::parse_mode("off") == tuning::Mode::Off);
  CHECK(tuning::parse_mode("always") == tuning::Mode::Always);
  CHECK(user_error_text([] { tuning::parse_mode("sometimes"); }) ==
        "TILEFUSE_AUTOTUNE=sometimes is not a tuning mode. Use off, cached or always");
  auto out = DevicePtr<bfloat16>::from_address(1 << 20, 8 * 4096), in = DevicePtr<bfloat16>::from_address(1 << 24, 8 * 4096);
  auto& t = kernels::softmax_tuner<bfloat16>();
  {
    ModeGuard mode(tuning::Mode::Off);
    CHECK(t.config_for(out, in, int64_t(8), int64_t(4096)) == kernels::softmax_heuristic(4096, DType::bf16));
  }
  if (!gpu_available()) {  // a cache miss without a GPU falls back instead of tuning
    ModeGuard mode(tuning::Mode::Cached);
    auto before = tuning::stats();
    CHECK(t.config_for(out, in, int64_t(8), int64_t(4096)) == kernels::softmax_heuristic(4096, DType::bf16));
    CHECK(tuning::stats().tunes == before.tunes);
  }
}

TEST_CASE("a cache hit adds well under a microsecond to a launch") {
  ModeGuard mode(tuning::Mode::Cached);
  static int64_t sink = 0;
  auto t = autotune([](const Config& c, int64_t n, int64_t m) { sink += c.num_warps + n + m; },
                    tuning::Space({Config{{"BLOCK", 1}}}),
                    [](int64_t n, int64_t m) { return Key{tuning::pow2(n), m}; },
                    TuneOptions{.name = "noop", .key_names = {"n", "m"}});
  Config chosen{{"BLOCK", 7}, num_warps(2)};
  t.remember(chosen, int64_t(1000), int64_t(3));
  CHECK(t.config_for(int64_t(1000), int64_t(3)) == chosen);
  CHECK(t.config_for(int64_t(1000), int64_t(3)).num_warps == 2);
  const int n = 2000000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) t(int64_t(1000 + (i & 15)), int64_t(3));  // same bucket
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
  std::printf("autotune hit path: %.1f ns per call\n", ns);
  CHECK(sink > 0);
  CHECK(ns < 1000);
}

TEST_CASE("repetitions are sized to about 25 ms of measurement, within [5, 200]") {
  tuning::BenchOptions o;
  CHECK(tuning::reps_for(1.0, o) == 25);
  CHECK(tuning::reps_for(0.05, o) == 200);
  CHECK(tuning::reps_for(10.0, o) == 5);
  CHECK(tuning::reps_for(0.0, o) == 200);
  o.target_ms = 50;
  CHECK(tuning::reps_for(0.3, o) == 167);
}
