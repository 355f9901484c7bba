// The fused cross-entropy (loss + dlogits) on the interpreter against a plain C++
// double reference: each dtype, odd V, ignored rows, label smoothing, z-loss, every
// reduction, in place and separate gradients, the looped and cluster programs, and the
// text of every argument check.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <tilefuse/kernels/kernels.hpp>

#include "reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using ref::rtol;
using ref::error_of;
using tk::LossReduction;

namespace {

struct CeWant {
  std::vector<double> loss;  // [M] for none, [1] otherwise
  std::vector<double> dx;    // [M, stride]: padding 0
};

// x: [M, stride] floats (the logits as rounded to T).
CeWant ce_reference(const std::vector<float>& x, const std::vector<int64_t>& targets, int64_t M, int64_t V,
                    int64_t stride, const tk::CrossEntropyOptions& o) {
  double eps = o.label_smoothing, z = o.z_loss;
  std::vector<double> rows(M, 0.0), lse(M, 0.0);
  int64_t count = 0;
  for (int64_t r = 0; r < M; ++r) {
    if (targets[r] == o.ignore_index) continue;
    ++count;
    double m = -std::numeric_limits<double>::infinity(), s = 0, sx = 0;
    for (int64_t j = 0; j < V; ++j) m = std::max(m, double(x[r * stride + j]));
    for (int64_t j = 0; j < V; ++j) s += std::exp(x[r * stride + j] - m), sx += x[r * stride + j];
    lse[r] = m + std::log(s);
    rows[r] = (1 - eps) * (lse[r] - x[r * stride + targets[r]]) + eps * (lse[r] - sx / V) + z * lse[r] * lse[r];
  }
  CeWant w;
  double factor = o.grad_scale;
  if (o.reduction == LossReduction::none) {
    w.loss = rows;
  } else {
    double total = 0;
    for (double v : rows) total += v;
    if (o.reduction == LossReduction::mean) {
      total = count ? total / count : std::numeric_limits<double>::quiet_NaN();
      factor /= double(count);
    }
    w.loss = {total};
  }
  w.dx.assign(M * stride, 0.0);
  for (int64_t r = 0; r < M; ++r) {
    if (targets[r] == o.ignore_index) continue;
    for (int64_t j = 0; j < V; ++j) {
      double p = std::exp(x[r * stride + j] - lse[r]);
      w.dx[r * stride + j] = factor * ((1 + 2 * z * lse[r]) * p - (1 - eps) * (j == targets[r]) - eps / V);
    }
  }
  return w;
}

std::vector<int64_t> random_targets(int64_t M, int64_t V, uint32_t seed, int64_t ignore_index) {
  std::mt19937 g(seed);
  std::vector<int64_t> t(M);
  for (int64_t r = 0; r < M; ++r) t[r] = (r % 3 == 1) ? ignore_index : int64_t(g() % V);
  t[M - 1] = V - 1;  // the last column is a target
  return t;
}

// Runs cross_entropy on random logits [M, stride] and checks loss and dlogits.
template <class T>
void check_case(int64_t M, int64_t V, tk::CrossEntropyOptions o, bool in_place, tk::ConfigOverride cfg = {}) {
  int64_t stride = o.logits_stride < 0 ? V : o.logits_stride;
  CAPTURE(M);
  CAPTURE(V);
  CAPTURE(stride);
  CAPTURE(in_place);
  CAPTURE(static_cast<int>(o.reduction));
  auto x = ref::random_vec<T>(M * stride, 7 + V, -4.0f, 4.0f);
  auto targets = random_targets(M, V, 3 + V, o.ignore_index);
  auto want = ce_reference(ref::to_float(x), targets, M, V, stride, o);
  std::vector<float> loss(o.reduction == LossReduction::none ? M : 1, 5.0f);
  std::vector<T> dx;
  if (in_place) {
    dx = x;
    tk::cross_entropy(loss, dx, dx, targets, M, V, o, cfg);
  } else {
    dx.assign(x.size(), T(9.0f));
    tk::cross_entropy(loss, dx, x, targets, M, V, o, cfg);
  }
  double scale = std::fabs(o.grad_scale) / (o.reduction == LossReduction::mean ? 1.0 : double(M));
  CHECK(ref::max_rel_err(loss, want.loss, 1e-4, 1e-4) <= 1.0);
  std::vector<T> got(M * stride);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t j = 0; j < V; ++j) got[r * stride + j] = dx[r * stride + j];
  CHECK(ref::max_rel_err(got, want.dx, 1e-6 * scale + 1e-7, rtol<T>()) <= 1.0);
  if (stride > V && !in_place) CHECK(float(dx[V]) == 9.0f);  // padding untouched
}

}  // namespace

TEST_CASE_TEMPLATE("cross_entropy matches the reference at odd V", T, float, half, bfloat16) {
  for (int64_t V : {1, 7, 300, 4099}) {
    check_case<T>(5, V, {}, false);
    check_case<T>(5, V, {.label_smoothing = 0.1f, .z_loss = 1e-3f, .reduction = LossReduction::sum, .grad_scale = 0.5f},
                  true);
    check_case<T>(4, V, {.ignore_index = -1, .label_smoothing = 0.2f, .z_loss = 1e-2f, .reduction = LossReduction::none},
                  false);
  }
}

TEST_CASE_TEMPLATE("cross_entropy: the looped program for rows longer than one tile", T, float, bfloat16) {
  Config small{{"BLOCK", 64}, num_warps(2)};
  check_case<T>(3, 333, {.label_smoothing = 0.1f, .z_loss = 1e-3f}, false, small);
  check_case<T>(4, 333, {.reduction = LossReduction::none, .grad_scale = 2.0f}, true, small);
  check_case<T>(3, 200, {.label_smoothing = 0.3f, .reduction = LossReduction::sum}, true, small);
}

TEST_CASE("cross_entropy: one row per cluster of programs, strided rows") {
  check_case<float>(3, 500, {.label_smoothing = 0.1f, .z_loss = 1e-3f}, false,
                    Config{{"BLOCK", 128}, num_warps(2), cluster(4)});
  check_case<bfloat16>(4, 500, {.reduction = LossReduction::none}, true, Config{{"BLOCK", 64}, num_warps(1), cluster(8)});
  check_case<float>(3, 45, {.reduction = LossReduction::none, .logits_stride = 51, .dlogits_stride = 51}, false);
  check_case<half>(3, 45, {.z_loss = 1e-2f, .logits_stride = 50}, true);
}

TEST_CASE("cross_entropy: int32 targets, and a separate dlogits stride") {
  int64_t M = 3, V = 77;
  auto x = ref::random_vec<float>(M * V, 41);
  auto t64 = random_targets(M, V, 42, -100);
  std::vector<int32_t> t32(t64.begin(), t64.end());
  tk::CrossEntropyOptions o{.label_smoothing = 0.05f, .reduction = LossReduction::none, .dlogits_stride = 80};
  std::vector<float> loss(M), dx(M * 80, 3.0f);
  tk::cross_entropy(loss, dx, x, t32, M, V, o);
  auto want = ce_reference(x, t64, M, V, V, o);
  CHECK(ref::max_rel_err(loss, want.loss, 1e-5, 1e-5) <= 1.0);
  std::vector<float> got(M * V);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t j = 0; j < V; ++j) got[r * V + j] = dx[r * 80 + j];
  CHECK(ref::max_rel_err(got, want.dx, 1e-7, 1e-5) <= 1.0);
  CHECK(dx[V] == 3.0f);
}

// A mean's count runs in the row kernel's first programs (COUNT targets each) or in the
// count kernel before it (COUNT = 0: the heuristic's choice on clusters and for looped
// rows), the loss sum in the finish kernel's (BLOCK rows each, then the last program adds
// their partials): rows over many of each, with a third of them ignored.
TEST_CASE("cross_entropy: the count and the sum of many rows") {
  int64_t block = tk::cross_entropy_finish_config().get("BLOCK");
  for (int64_t M : {block + 1, 2 * block + 333}) {
    check_case<float>(M, 5, {}, false);
    check_case<float>(M, 7, {.label_smoothing = 0.1f, .reduction = LossReduction::sum}, true);
  }
  int64_t M = 2 * block + 5;
  check_case<float>(M, 5, {}, false, Config{{"BLOCK", 8}, {"COUNT", 0}, num_warps(1)});  // the count kernel
  check_case<float>(M, 9, {}, false, Config{{"BLOCK", 4}, num_warps(1), cluster(4)});    // the count kernel
  check_case<float>(M, 9, {}, false, Config{{"BLOCK", 4}, {"COUNT", 256}, num_warps(1), cluster(4)});  // 3 clusters
  check_case<float>(700, 9, {}, true, Config{{"BLOCK", 4}, num_warps(2)});  // looped: the count kernel
  check_case<float>(700, 9, {}, true, Config{{"BLOCK", 4}, {"COUNT", 64}, num_warps(2)});  // looped, 11 counting
}

TEST_CASE("cross_entropy: where a mean counts its targets") {
  auto counts = [](Config c, int64_t V) { return tk::cross_entropy_config(c, V, {}).get("COUNT"); };
  CHECK(counts(Config{{"BLOCK", 1024}, num_warps(1)}, 1000) == 256);  // one-program rows: 8 per thread
  CHECK(counts(Config{{"BLOCK", 1024}, num_warps(4)}, 1000) == 1024);
  CHECK(counts(Config{{"BLOCK", 4096}, num_warps(4), cluster(8)}, 32000) == 0);  // clusters: the count kernel
  CHECK(counts(Config{{"BLOCK", 4096}, num_warps(16)}, 300000) == 0);             // looped: the count kernel
  CHECK(counts(Config{{"BLOCK", 1024}, {"COUNT", 0}, num_warps(1)}, 1000) == 0);  // the config's choice
  CHECK(tk::cross_entropy_config(Config{{"BLOCK", 1024}, num_warps(1)}, 1000, {.reduction = LossReduction::sum})
            .get("COUNT") == 0);
}

// The finish kernel alone, at a BLOCK whose partials take the last program several
// steps: the loss summed (and divided by the count for a mean), the counters left zero.
TEST_CASE("cross_entropy: the finish kernel's loss over several steps of partials") {
  const int64_t M = 1000, block = 16, programs = (M + block - 1) / block;
  auto losses = ref::random_vec<float>(M, 31);
  for (int64_t reduction : {1, 2}) {
    CAPTURE(reduction);
    std::vector<float> loss(1, -1.0f), partials(programs, 0.0f);
    // The count word as the counting programs leave it: 5 arrived, 250 rows (for a mean).
    std::vector<int64_t> count_word{(int64_t(5) << 32) + (reduction == 2 ? 250 : 0)};
    std::vector<int32_t> done{0};
    tk::cross_entropy_finish_kernel().launch(Grid(programs), Config{{"BLOCK", block}, {"REDUCTION", reduction}}, loss,
                                             losses, partials, count_word, done, M);
    double total = 0;
    for (float v : losses) total += v;
    if (reduction == 2) total /= 250;
    CHECK(loss[0] == doctest::Approx(total).epsilon(1e-5));
    CHECK(count_word[0] == 0);
    CHECK(done[0] == 0);
  }
}

TEST_CASE("cross_entropy: a mean over no rows is NaN with zero gradients") {
  int64_t M = 3, V = 10;
  auto x = ref::random_vec<float>(M * V, 5);
  std::vector<int64_t> t(M, -100);
  std::vector<float> loss(1, 0.0f), dx(M * V, 1.0f);
  tk::cross_entropy(loss, dx, x, t, M, V);
  CHECK(std::isnan(loss[0]));
  for (float v : dx) CHECK(v == 0.0f);
  loss[0] = 4.0f;  // sum over no rows: 0
  tk::cross_entropy(loss, dx, x, t, M, V, {.reduction = LossReduction::sum});
  CHECK(loss[0] == 0.0f);
}

namespace {
void expect_parts(const std::string& msg, std::initializer_list<std::string> parts) {
  INFO("message: ", msg);
  for (const std::string& p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, ("missing: " + p));
}
}  // namespace

TEST_CASE("cross_entropy: argument errors name the argument") {
  int64_t M = 4, V = 7;
  auto x = ref::random_vec<float>(M * V, 1);
  std::vector<float> dx(M * V), loss(1), losses(M);
  std::vector<int64_t> t{0, -100, 7, 2};
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, t, M, V); }),
               {"cross_entropy: targets[2] (the target of row 2) is 7, outside the V = 7 classes [0, 7) and not "
                "ignore_index (-100)",
                "Pass class indices in [0, V), or ignore_index for rows without a target"});
  t[2] = -5;
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, t, M, V); }), {"targets[2]", "is -5, outside"});
  t[2] = 1;
  std::vector<half> dx16(M * V);
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx16, x, t, M, V); }),
               {"cross_entropy: dlogits has dtype f16 but logits has f32", "Pass dlogits in the logits' dtype"});
  std::vector<half> loss16(1);
  expect_parts(error_of([&] { tk::cross_entropy(loss16, dx, x, t, M, V); }),
               {"cross_entropy: loss has dtype f16, expected f32", "[M] with reduction none, [1] with sum or mean"});
  std::vector<float> tf(M);
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, tf, M, V); }),
               {"cross_entropy: targets has dtype f32, expected i64 (or i32)"});
  std::vector<double> x64(M * V), dx64(M * V);
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx64, x64, t, M, V); }),
               {"cross_entropy: logits has dtype f64, expected f32, f16 or bf16"});
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, t, M, V + 1); }),
               {"cross_entropy: logits has 28 elements, but [M, V] with its row stride needs 32", "Pass a larger logits"});
  std::vector<float> dx_short(M * V - 1);
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx_short, x, t, M, V); }),
               {"cross_entropy: dlogits has 27 elements, but [M, V] with its row stride needs 28"});
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, t, M + 1, V - 2); }),
               {"cross_entropy: targets has 4 elements, but one target per row needs 5"});
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, t, M, V, {.reduction = LossReduction::none}); }),
               {"cross_entropy: loss has 1 elements, but reduction none (one loss per row) needs 4"});
  expect_parts(error_of([&] { tk::cross_entropy(losses, dx, x, t, M, V, {.label_smoothing = 1.0f}); }),
               {"cross_entropy: label_smoothing is 1.000000, outside [0, 1)"});
  expect_parts(error_of([&] { tk::cross_entropy(losses, dx, x, t, M, V, {.z_loss = -1.0f}); }),
               {"cross_entropy: z_loss is -1.000000, expected >= 0"});
  expect_parts(error_of([&] { tk::cross_entropy(loss, x, x, t, M, 5, {.logits_stride = 7, .dlogits_stride = 6}); }),
               {"cross_entropy: dlogits is the logits buffer (in place) but dlogits_stride 6 differs from logits_stride 7"});
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, t, M, V, {.logits_stride = 5}); }),
               {"cross_entropy: the row strides (logits_stride 5, dlogits_stride 5) must be at least V = 7"});
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, t, 0, V); }),
               {"cross_entropy: M and V must be in [1, 2^31), got M = 0, V = 7"});
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, t, M, V, {}, Config{{"BLOCK", 2}, num_warps(1), cluster(2)}); }),
               {"cross_entropy: the config", "covers 4 columns per row ((BLOCK x CHUNKS + TAIL) x cluster), but rows have 7"});
  expect_parts(error_of([&] { tk::cross_entropy(loss, dx, x, t, M, V, {}, Config{{"BLOCK", 8}, {"COUNT", -1}}); }),
               {"cross_entropy: the config's COUNT is -1, expected >= 0", "or 0 for the count kernel"});
}

TEST_CASE_TEMPLATE("cross_entropy: CHUNKS tiles per program, alone and in clusters, at odd V", T, float, bfloat16) {
  // One program of 5 x 64 columns over V = 301; a cluster of 4 programs of 3 x 32 columns
  // over V = 373 (the last program partly masked); targets in every chunk and program.
  check_case<T>(6, 301, {.label_smoothing = 0.1f, .z_loss = 1e-3f}, false, Config{{"BLOCK", 64}, {"CHUNKS", 5}, num_warps(2)});
  check_case<T>(5, 301, {.reduction = LossReduction::none}, true, Config{{"BLOCK", 64}, {"CHUNKS", 5}, num_warps(1)});
  check_case<T>(6, 373, {.reduction = LossReduction::sum, .grad_scale = 0.5f}, true,
                Config{{"BLOCK", 32}, {"CHUNKS", 3}, num_warps(1), cluster(4)});
  check_case<T>(5, 373, {.ignore_index = 7, .label_smoothing = 0.2f}, false,
                Config{{"BLOCK", 32}, {"CHUNKS", 3}, num_warps(1), cluster(4)});
  // Rows indexed from their 16-byte-aligned start (on by the rule above at odd V on
  // clusters of 16-bit logits; forced here in one program and with a strided row).
  check_case<T>(5, 301, {.label_smoothing = 0.1f, .z_loss = 1e-3f}, true,
                Config{{"BLOCK", 64}, {"CHUNKS", 5}, {"ALIGN_ROWS", 1}, num_warps(2)});
  check_case<T>(5, 301, {.reduction = LossReduction::none, .logits_stride = 305, .dlogits_stride = 305}, false,
                Config{{"BLOCK", 64}, {"CHUNKS", 5}, {"ALIGN_ROWS", 1}, num_warps(1)});
}

TEST_CASE_TEMPLATE("cross_entropy: the target logit picked from the registers (PICK_TARGET) or loaded", T, float,
                   bfloat16) {
  // Clusters whose target lands in every program and chunk (and in none: ignored rows),
  // in place (the pick reads the logit before any store), with smoothing and z-loss,
  // and rows indexed from their aligned start, where a column is position - head.
  for (int pick : {1, 0}) {
    CAPTURE(pick);
    check_case<T>(9, 373, {.label_smoothing = 0.1f, .z_loss = 1e-3f}, true,
                  Config{{"BLOCK", 32}, {"CHUNKS", 3}, {"PICK_TARGET", pick}, num_warps(1), cluster(4)});
    check_case<T>(7, 500, {.reduction = LossReduction::none}, false,
                  Config{{"BLOCK", 64}, {"PICK_TARGET", pick}, num_warps(1), cluster(8)});
    check_case<T>(6, 301, {.ignore_index = 7, .reduction = LossReduction::sum}, true,
                  Config{{"BLOCK", 64}, {"CHUNKS", 5}, {"ALIGN_ROWS", 1}, {"PICK_TARGET", pick}, num_warps(2)});
  }
}

TEST_CASE("cross_entropy: PICK_TARGET follows the values per thread unless the config sets it") {
  tk::CrossEntropyOptions o;
  auto pick = [&](const Config& c, int64_t V) {
    Config k = tk::cross_entropy_config(c, V, o);
    return k.has("PICK_TARGET") ? int(k.get("PICK_TARGET")) : -1;
  };
  // 64 values per thread (8192 columns on 4 warps) and 56 (7 x 1024): picked; 32 and 40: loaded.
  CHECK(pick(Config{{"BLOCK", 8192}, num_warps(4), cluster(16)}, 128256) == 1);
  CHECK(pick(Config{{"BLOCK", 1024}, {"CHUNKS", 7}, num_warps(4), cluster(8)}, 50304) == 1);
  CHECK(pick(Config{{"BLOCK", 4096}, num_warps(4), cluster(8)}, 32000) == 0);
  CHECK(pick(Config{{"BLOCK", 2048}, {"CHUNKS", 5}, num_warps(8), cluster(16)}, 151936) == 0);
  CHECK(pick(Config{{"BLOCK", 4096}, {"PICK_TARGET", 1}, num_warps(4), cluster(8)}, 32000) == 1);  // the config's own
  CHECK(pick(Config{{"BLOCK", 4096}, {"PICK_TARGET", 1}, num_warps(16)}, 50000) == -1);  // looped rows: no pick
  // Rows indexed from their aligned start: loaded (the pick's compares take the head).
  CHECK(pick(Config{{"BLOCK", 8192}, {"ALIGN_ROWS", 1}, num_warps(4), cluster(16)}, 128257) == 0);
}

TEST_CASE("cross_entropy: the heuristic covers rows with few masked columns") {
  // 151936 = 16 programs x 5 chunks x 2048 (not 16 x 16384); 50304 in 57344, not 65536.
  Config c = tk::cross_entropy_heuristic(151936, DType::bf16, true);
  CHECK(c.cluster == 16);
  CHECK(tk::row_cover(c) == 163840);
  CHECK(c.num_warps == 8);  // 40 values per thread, not 80
  CHECK(tk::row_cover(tk::cross_entropy_heuristic(50304, DType::bf16, true)) == 57344);
  CHECK(tk::row_cover(tk::cross_entropy_heuristic(32000, DType::f32, true)) == 32768);
  CHECK(tk::row_cover(tk::cross_entropy_heuristic(5000, DType::bf16, true)) == 5120);
  CHECK(tk::row_uses_loop(tk::cross_entropy_heuristic(50304, DType::bf16, false), 50304));
  for (int64_t V : {5000, 9000, 50304, 151936, 262144})
    for (DType d : {DType::f32, DType::bf16}) {
      Config h = tk::cross_entropy_heuristic(V, d, true);
      CAPTURE(V);
      CHECK(tk::row_cover(h) >= V);
      CHECK(h.num_warps * 32 * (16 / byte_size(d)) / 2 <= h.get("BLOCK"));  // at least 8 bytes per thread per chunk
      if (byte_size(d) == 2) CHECK(tk::row_cover(h) / h.cluster / (32 * h.num_warps) <= 64);  // values per thread
    }
  // The heuristic's cluster config for a small row, as the interpreter runs it.
  check_case<float>(3, 9000, {.label_smoothing = 0.1f}, true, tk::cross_entropy_heuristic(9000, DType::f32, true));
}

// Short rows in batches (cross_entropy_row_batches.hpp): ROWS rows per program, the last
// batch partly past the rows, with every option; the heuristic's choice.
TEST_CASE_TEMPLATE("cross_entropy: short rows in batches of ROWS per program", T, float, bfloat16) {
  CHECK(tk::cross_entropy_rows_config(512, DType::bf16, true, false).get("ROWS") == 2);
  CHECK(tk::cross_entropy_rows_config(100, DType::f32, true, true).get("ROWS") == 4);
  CHECK(!tk::cross_entropy_rows_config(1000, DType::bf16, true, false).has("ROWS"));
  for (auto [block, rows, warps] : {std::tuple{512, 4, 2}, std::tuple{512, 2, 1}, std::tuple{1024, 8, 4}}) {
    CAPTURE(rows);
    Config c{{"BLOCK", block}, {"ROWS", rows}, num_warps(warps)};
    check_case<T>(37, 300, {}, false, c);
    check_case<T>(37, 300, {.label_smoothing = 0.1f, .z_loss = 1e-3f, .reduction = LossReduction::sum}, true, c);
    check_case<T>(21, 300, {.ignore_index = -1, .label_smoothing = 0.2f, .reduction = LossReduction::none}, true, c);
    check_case<T>(21, 299, {.z_loss = 1e-2f, .grad_scale = 3.0f, .logits_stride = 310}, false, c);
    check_case<T>(37, 300, {}, true, Config(c).set("COUNT", 0));  // the count kernel
    // The target logits picked from the registers (PICK_TARGET=1) rather than gathered
    // from memory, with the one-hot term in the tile (no barrier, no second store).
    check_case<T>(37, 300, {.label_smoothing = 0.1f, .z_loss = 1e-3f}, true, Config(c).set("PICK_TARGET", 1));
    check_case<T>(21, 300, {.ignore_index = -1, .reduction = LossReduction::none}, false, Config(c).set("PICK_TARGET", 1));
  }
  int64_t block = tk::cross_entropy_finish_config().get("BLOCK");
  check_case<T>(2 * block + 7, 33, {}, true);  // the heuristic: 16 rows per program, 3 counting programs
  check_case<T>(1, 1, {.label_smoothing = 0.1f}, false);
}
