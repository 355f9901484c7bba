// The split-row schedule (split_rows.hpp) on the interpreter against the plain C++
// references: rows cut into 2-7 chunks of a small BLOCK, odd widths, batches of rows,
// -inf entries and whole -inf chunks for softmax, the residual RMSNorm.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <tilefuse/kernels/kernels.hpp>

#include "reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using ref::rtol;
using ref::error_of;

namespace {

// rows x cols with BLOCK columns per chunk; batch = rows per launch pair (0: all).
struct SplitShape {
  int64_t rows, cols, block, batch;
};
const SplitShape kShapes[] = {{3, 65, 32, 0}, {5, 223, 32, 2}, {2, 449, 64, 0}, {4, 129, 64, 3}};

Config split_config(const SplitShape& s) {
  return Config{{"BLOCK", s.block}, {"SPLIT", 1}, {"BATCH_ROWS", s.batch}, num_warps(1)};
}

}  // namespace

TEST_CASE_TEMPLATE("split-row softmax matches the reference", T, float, half, bfloat16) {
  for (const SplitShape& s : kShapes) {
    CAPTURE(s.cols);
    auto x = ref::random_vec<T>(s.rows * s.cols, 31 + s.cols, -20.0f, 20.0f);
    std::vector<T> y(x.size());
    tk::softmax(y, x, s.rows, s.cols, -1, -1, split_config(s));
    std::vector<double> want;
    ref::softmax(want, ref::to_float(x), s.rows, s.cols);
    CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
  }
}

TEST_CASE("split-row softmax: -inf entries, a whole -inf chunk, strided rows") {
  int64_t rows = 3, cols = 201, stride = 211, block = 32;
  auto x = ref::random_vec<float>(rows * stride, 41, -50.0f, 50.0f);
  for (int64_t c = 0; c < cols; c += 5) x[0 * stride + c] = -INFINITY;
  for (int64_t c = 64; c < 96; ++c) x[1 * stride + c] = -INFINITY;  // chunk 2 of row 1
  for (int64_t c = 0; c < cols; ++c) x[2 * stride + c] = c == cols - 1 ? 3.0f : -INFINITY;  // one finite entry
  std::vector<float> y(rows * stride, 7.0f);
  tk::softmax(y, x, rows, cols, stride, stride, Config{{"BLOCK", block}, {"SPLIT", 1}, num_warps(1)});
  std::vector<float> packed(rows * cols), got(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) packed[r * cols + c] = x[r * stride + c];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) got[r * cols + c] = y[r * stride + c];
  std::vector<double> want;
  ref::softmax(want, packed, rows, cols);
  CHECK(ref::max_rel_err(got, want, 1e-6, 1e-5) <= 1.0);
  CHECK(y[cols] == 7.0f);  // the padding between rows is untouched
  CHECK(got[2 * cols + cols - 1] == 1.0f);
}

TEST_CASE_TEMPLATE("split-row rmsnorm matches the reference", T, float, half, bfloat16) {
  for (const SplitShape& s : kShapes) {
    CAPTURE(s.cols);
    auto x = ref::random_vec<T>(s.rows * s.cols, 51 + s.cols);
    auto w = ref::random_vec<T>(s.cols, 52, 0.5f, 1.5f);
    std::vector<T> y(x.size());
    tk::rmsnorm(y, x, w, s.rows, s.cols, 1e-6f, split_config(s));
    std::vector<double> want;
    ref::rmsnorm(want, ref::to_float(x), ref::to_float(w), s.rows, s.cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("split-row residual rmsnorm writes the rounded sum and the normalized rows", T, float, bfloat16) {
  for (const SplitShape& s : kShapes) {
    CAPTURE(s.cols);
    auto x = ref::random_vec<T>(s.rows * s.cols, 61 + s.cols);
    auto r = ref::random_vec<T>(s.rows * s.cols, 62 + s.cols);
    auto w = ref::random_vec<T>(s.cols, 63, 0.5f, 1.5f);
    std::vector<T> y(x.size()), sum_out(x.size());
    tk::add_rmsnorm(y, sum_out, x, r, w, s.rows, s.cols, 1e-6f, split_config(s));
    std::vector<float> summed(x.size());
    std::vector<double> want_sum(x.size());
    for (size_t i = 0; i < x.size(); ++i) want_sum[i] = summed[i] = float(T(float(x[i]) + float(r[i])));
    CHECK(ref::max_rel_err(sum_out, want_sum, 0, 0) == 0.0);
    std::vector<double> want;
    ref::rmsnorm(want, summed, ref::to_float(w), s.rows, s.cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("split-row layernorm matches the reference, also with a large mean", T, float, half, bfloat16) {
  for (float offset : {0.0f, 100.0f}) {
    for (const SplitShape& s : kShapes) {
      CAPTURE(s.cols);
      CAPTURE(offset);
      auto x = ref::random_vec<T>(s.rows * s.cols, 71 + s.cols, offset - 3.0f, offset + 3.0f);
      auto w = ref::random_vec<T>(s.cols, 72, 0.5f, 1.5f);
      auto b = ref::random_vec<T>(s.cols, 73, -1.0f, 1.0f);
      std::vector<T> y(x.size());
      tk::layernorm(y, x, w, b, s.rows, s.cols, 1e-5f, split_config(s));
      std::vector<double> want;
      ref::layernorm(want, ref::to_float(x), ref::to_float(w), ref::to_float(b), s.rows, s.cols, 1e-5);
      // The inputs are rounded to T before the reference sees them, so the normalized
      // values carry T's rounding of x relative to the row's spread.
      double atol = std::is_same_v<T, float> ? 1e-4 : offset > 0 ? 0.5 : 2e-2;
      CHECK(ref::max_rel_err(y, want, atol, rtol<T>()) <= 1.0);
    }
  }
}

TEST_CASE("split-row configs with a cluster, ROWS or CHUNKS are user errors") {
  std::vector<float> x(2 * 100, 1.5f), y(x.size()), w(100, 1.0f);
  std::string msg = error_of([&] {
    tk::softmax(y, x, 2, 100, -1, -1, Config{{"BLOCK", 32}, {"SPLIT", 1}, num_warps(1), cluster(2)});
  });
  CHECK(msg.find("softmax: the config {") != std::string::npos);
  CHECK(msg.find("combines SPLIT with cluster, ROWS or CHUNKS") != std::string::npos);
  CHECK(msg.find("Use SPLIT=1 with BLOCK (columns per program) and num_warps only") != std::string::npos);
  msg = error_of([&] { tk::rmsnorm(y, x, w, 2, 100, 1e-6f, Config{{"BLOCK", 32}, {"SPLIT", 1}, {"ROWS", 2}}); });
  CHECK(msg.find("rmsnorm: the config {") != std::string::npos);
  CHECK(msg.find("combines SPLIT with cluster, ROWS or CHUNKS") != std::string::npos);
}

TEST_CASE("SPLIT=0 runs the one-program schedules") {
  int64_t rows = 2, cols = 97;
  auto x = ref::random_vec<float>(rows * cols, 81);
  std::vector<float> y(x.size());
  tk::softmax(y, x, rows, cols, -1, -1, Config{{"BLOCK", 32}, {"SPLIT", 0}, num_warps(1)});  // looped
  std::vector<double> want;
  ref::softmax(want, x, rows, cols);
  CHECK(ref::max_rel_err(y, want, 1e-6, 1e-5) <= 1.0);
}

TEST_CASE("split rows in place (out is in): every chunk normalizes with the row's original statistics") {
  // The normalize kernel's programs run one after another on the interpreter: the chunk
  // written first overwrites x[row, 0], which LayerNorm's shift must not be read from.
  int64_t rows = 3, cols = 200;
  Config cfg{{"BLOCK", 32}, {"SPLIT", 1}, num_warps(1)};
  auto x = ref::random_vec<float>(rows * cols, 81, 2.0f, 6.0f);
  auto w = ref::random_vec<float>(cols, 82, 0.5f, 1.5f), b = ref::random_vec<float>(cols, 83);
  std::vector<double> want;
  std::vector<float> y = x;
  tk::layernorm(y, y, w, b, rows, cols, 1e-5f, cfg);
  ref::layernorm(want, x, w, b, rows, cols, 1e-5);
  CHECK(ref::max_rel_err(y, want, 1e-4, 1e-5) <= 1.0);
  y = x;
  tk::rmsnorm(y, y, w, rows, cols, 1e-6f, cfg);
  ref::rmsnorm(want, x, w, rows, cols, 1e-6);
  CHECK(ref::max_rel_err(y, want, 1e-5, 1e-5) <= 1.0);
  y = x;
  tk::softmax(y, y, rows, cols, -1, -1, cfg);
  ref::softmax(want, x, rows, cols);
  CHECK(ref::max_rel_err(y, want, 1e-6, 1e-5) <= 1.0);
}

TEST_CASE("a split config without a positive BLOCK is a user error") {
  std::vector<float> x(2 * 100, 1.0f), y(x.size()), w(100, 1.0f);
  for (int64_t block : {0, -32}) {
    std::string m = error_of([&] { tk::softmax(y, x, 2, 100, -1, -1, Config{{"BLOCK", block}, {"SPLIT", 1}}); });
    CHECK(m.find("softmax: the split config {BLOCK=" + std::to_string(block)) != std::string::npos);
    CHECK(m.find("needs BLOCK >= 1") != std::string::npos);
    CHECK(m.find("Set BLOCK to the columns each program of a row handles") != std::string::npos);
  }
}

// Rows of odd widths are indexed from their 16-byte-aligned starts (ALIGN_ROWS, set by the
// host where the rows need it and it pays; 16-bit rows on 8 bytes, 1004 columns, only when
// asked with ALIGN_ROWS=1); ALIGN_ROWS=0 reads them element by element. All match the
// reference, on rows whose last run ends at the buffer's end.
TEST_CASE_TEMPLATE("split-row softmax from the rows' aligned starts, and with ALIGN_ROWS=0", T, float, bfloat16) {
  for (int64_t cols : {1001, 257, 70, 1004}) {
    for (int align : {-1, 1, 0}) {
      CAPTURE(cols);
      CAPTURE(align);
      int64_t rows = 5;
      auto x = ref::random_vec<T>(rows * cols, 57 + cols, -20.0f, 20.0f);
      std::vector<T> y(x.size());
      Config c{{"BLOCK", 64}, {"SPLIT", 1}, {"BATCH_ROWS", 2}, num_warps(1)};
      if (align >= 0) c.set("ALIGN_ROWS", align);
      tk::softmax(y, x, rows, cols, -1, -1, c);
      std::vector<double> want;
      ref::softmax(want, ref::to_float(x), rows, cols);
      CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
    }
  }
}

TEST_CASE("split-row softmax in place on rows of odd width (indexed from their aligned starts)") {
  int64_t rows = 4, cols = 203;
  auto x = ref::random_vec<bfloat16>(rows * cols, 91, -10.0f, 10.0f);
  std::vector<double> want;
  ref::softmax(want, ref::to_float(x), rows, cols);
  tk::softmax(x, x, rows, cols, -1, -1, Config{{"BLOCK", 64}, {"SPLIT", 1}, num_warps(1)});
  CHECK(ref::max_rel_err(x, want, 1e-6, rtol<bfloat16>()) <= 1.0);
}

// The split RMSNorm (with and without the residual) and LayerNorm index odd rows from
// their aligned starts too; the weight and bias are read realigned at the row's columns,
// or (align 2: WEIGHT_COPIES=1) from their shifted copies.
TEST_CASE_TEMPLATE("split-row norms from the rows' aligned starts, and with ALIGN_ROWS=0", T, float, bfloat16) {
  for (int64_t cols : {1001, 257, 70, 1004}) {
    for (int align : {-1, 1, 2, 0}) {
      CAPTURE(cols);
      CAPTURE(align);
      int64_t rows = 5;
      auto x = ref::random_vec<T>(rows * cols, 67 + cols, 1.0f, 4.0f);
      auto r = ref::random_vec<T>(rows * cols, 68 + cols);
      auto w = ref::random_vec<T>(cols, 69, 0.5f, 1.5f), b = ref::random_vec<T>(cols, 70);
      Config c{{"BLOCK", 64}, {"SPLIT", 1}, {"BATCH_ROWS", 2}, num_warps(1)};
      if (align >= 0) c.set("ALIGN_ROWS", align != 0);
      if (align == 2) c.set("WEIGHT_COPIES", 1);
      std::vector<T> y(x.size()), sum_out(x.size());
      std::vector<double> want;
      tk::rmsnorm(y, x, w, rows, cols, 1e-6f, c);
      ref::rmsnorm(want, ref::to_float(x), ref::to_float(w), rows, cols, 1e-6);
      CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
      tk::add_rmsnorm(y, sum_out, x, r, w, rows, cols, 1e-6f, c);
      std::vector<float> summed(x.size());
      std::vector<double> want_sum(x.size());
      for (size_t i = 0; i < x.size(); ++i) want_sum[i] = summed[i] = float(T(float(x[i]) + float(r[i])));
      CHECK(ref::max_rel_err(sum_out, want_sum, 0, 0) == 0.0);
      ref::rmsnorm(want, summed, ref::to_float(w), rows, cols, 1e-6);
      CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
      tk::layernorm(y, x, w, b, rows, cols, 1e-5f, c);
      ref::layernorm(want, ref::to_float(x), ref::to_float(w), ref::to_float(b), rows, cols, 1e-5);
      CHECK(ref::max_rel_err(y, want, std::is_same_v<T, float> ? 1e-4 : 2e-2, rtol<T>()) <= 1.0);
    }
  }
}

TEST_CASE("split-row norms in place on rows of odd width (indexed from their aligned starts)") {
  int64_t rows = 4, cols = 203;
  Config cfg{{"BLOCK", 64}, {"SPLIT", 1}, num_warps(1)};
  auto x = ref::random_vec<bfloat16>(rows * cols, 93, 1.0f, 5.0f);
  auto w = ref::random_vec<bfloat16>(cols, 94, 0.5f, 1.5f), b = ref::random_vec<bfloat16>(cols, 95);
  std::vector<double> want;
  auto y = x;
  tk::layernorm(y, y, w, b, rows, cols, 1e-5f, cfg);
  ref::layernorm(want, ref::to_float(x), ref::to_float(w), ref::to_float(b), rows, cols, 1e-5);
  CHECK(ref::max_rel_err(y, want, 2e-2, rtol<bfloat16>()) <= 1.0);
  y = x;
  tk::rmsnorm(y, y, w, rows, cols, 1e-6f, cfg);
  ref::rmsnorm(want, ref::to_float(x), ref::to_float(w), rows, cols, 1e-6);
  CHECK(ref::max_rel_err(y, want, 1e-5, rtol<bfloat16>()) <= 1.0);
}

TEST_CASE("where split rows read from their aligned starts by default") {
  // softmax: everywhere but 16-bit rows on 8 bytes; RMSNorm: 16-bit rows off 4 bytes only.
  CHECK(tk::split_softmax_alignment_pays(1048577, DType::bf16));
  CHECK(tk::split_softmax_alignment_pays(1048578, DType::bf16));
  CHECK_FALSE(tk::split_softmax_alignment_pays(1048580, DType::bf16));
  CHECK(tk::split_softmax_alignment_pays(1048577, DType::f32));
  CHECK(tk::split_rmsnorm_alignment_pays(1048577, DType::bf16));
  CHECK(tk::split_rmsnorm_alignment_pays(262145, DType::f16));
  CHECK_FALSE(tk::split_rmsnorm_alignment_pays(1048578, DType::bf16));
  CHECK_FALSE(tk::split_rmsnorm_alignment_pays(1048577, DType::f32));
  // The config's ALIGN_ROWS wins either way; without `align` (rows already aligned) never.
  Config c{{"BLOCK", 64}, {"SPLIT", 1}};
  CHECK(tk::split_aligned_span(c, true, true, 1001, DType::bf16) == 1008);
  CHECK(c.get("ALIGN_ROWS") == 1);
  Config off = Config(c).set("ALIGN_ROWS", 0);
  CHECK(tk::split_aligned_span(off, true, true, 1001, DType::bf16) == 1001);
  CHECK_FALSE(off.has("ALIGN_ROWS"));
  Config ask = Config{{"BLOCK", 64}, {"SPLIT", 1}}.set("ALIGN_ROWS", 1);
  CHECK(tk::split_aligned_span(ask, true, false, 1001, DType::bf16) == 1008);
  Config none{{"BLOCK", 64}, {"SPLIT", 1}};
  CHECK(tk::split_aligned_span(none, false, true, 1001, DType::bf16) == 1001);
}

// ONE_PASS: both phases in one launch, normalize programs waiting (wait_at_least) for their
// row's reduce programs LAG rows earlier; the counters end at zero for the next launch.
TEST_CASE_TEMPLATE("one-pass split softmax matches the reference at any LAG, in place, twice", T, float, bfloat16) {
  for (int64_t cols : {1001, 449, 4096}) {
    for (int64_t lag : {1, 2, 3, 9}) {
      CAPTURE(cols);
      CAPTURE(lag);
      int64_t rows = 7;
      auto x = ref::random_vec<T>(rows * cols, 71 + cols, -20.0f, 20.0f);
      std::vector<double> want;
      ref::softmax(want, ref::to_float(x), rows, cols);
      Config c{{"BLOCK", 128}, {"SPLIT", 1}, {"ONE_PASS", 1}, {"LAG", lag}, num_warps(1)};
      std::vector<T> y(x.size());
      tk::softmax(y, x, rows, cols, -1, -1, c);
      CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
      auto z = x;
      tk::softmax(z, z, rows, cols, -1, -1, c.set("ALIGN_ROWS", 0));
      CHECK(ref::max_rel_err(z, want, 1e-6, rtol<T>()) <= 1.0);
    }
  }
}

TEST_CASE("wait_at_least: a wait on programs that come later is a UserError on the interpreter") {
  static auto k = kernel("wait_for_later", {"counter"}, [](Ptr<i32> counter) {
    auto p = program_id(0);
    if_(p == 0, [&] { wait_at_least(counter, 1); }, [&] { atomic_add(counter, 1, MemOrder::AcqRel); });
  });
  std::vector<int32_t> counter(1, 0);
  std::string msg = error_of([&] { k.launch(grid(2), Config{num_warps(1)}, counter); });
  CHECK(msg.find("program (0, 0, 0) waits for a counter to reach 1, but the programs before it left it at 0") !=
        std::string::npos);
  CHECK(msg.find("may wait only for programs before them") != std::string::npos);
  // The other way round it passes.
  static auto ok = kernel("wait_for_earlier", {"counter", "seen"}, [](Ptr<i32> counter, Ptr<i32> seen) {
    auto p = program_id(0);
    if_(p == 0, [&] { atomic_add(counter, 5, MemOrder::AcqRel); }, [&] { store(seen, wait_at_least(counter, 4)); });
  });
  std::vector<int32_t> c2(1, 0), seen(1, -1);
  ok.launch(grid(2), Config{num_warps(1)}, c2, seen);
  CHECK(seen[0] == 5);
  // Relaxed, on an i64 word packing arrivals (high half) and a total (low half).
  static auto packed = kernel("wait_relaxed_packed", {"word", "seen", "n"}, [](Ptr<i64> word, Ptr<i64> seen, I32 n) {
    auto p = program_id(0);
    if_(p < n, [&] { atomic_add(word, (int64_t(1) << 32) + (p + 10).cast<i64>()); },
        [&] { store(seen + (p - n), wait_at_least(word, n.cast<i64>() << 32, MemOrder::Relaxed) & 0xffffffffLL); });
  });
  std::vector<int64_t> word(1, 0), seen64(2, -1);
  packed.launch(grid(5), Config{num_warps(2)}, word, seen64, 3);
  CHECK(word[0] == (int64_t(3) << 32) + 33);
  CHECK(seen64 == std::vector<int64_t>{33, 33});
  static auto first = kernel("wait_relaxed_for_later", {"word"}, [](Ptr<i64> word) {
    if_(program_id(0) == 0, [&] { wait_at_least(word, int64_t(1) << 32, MemOrder::Relaxed); },
        [&] { atomic_add(word, int64_t(1) << 32); });
  });
  word[0] = 0;
  std::string late = error_of([&] { first.launch(grid(2), Config{num_warps(1)}, word); });
  CHECK(late.find("program (0, 0, 0) waits for a counter to reach " + std::to_string(int64_t(1) << 32)) !=
        std::string::npos);
}
