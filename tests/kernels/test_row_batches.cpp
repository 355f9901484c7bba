// Short rows in batches (row_batches.hpp): ROWS rows of one tile per program. The rule,
// the heuristics that take it, and the norms' rows programs on the interpreter against
// plain C++ at odd widths and row counts that leave the last program's batch partly
// past the rows.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <tilefuse/kernels/kernels.hpp>

#include "reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;

TEST_CASE("rows per program: about 2 KB per program, at most 32 rows, one-tile rows only") {
  auto rows = [](int64_t block, DType d) { return tk::rows_per_program(Config{{"BLOCK", block}, num_warps(1)}, d); };
  CHECK(rows(512, DType::bf16) == 2);
  CHECK(rows(256, DType::bf16) == 4);
  CHECK(rows(128, DType::bf16) == 8);
  CHECK(rows(16, DType::bf16) == 32);  // 64 would be 2 KB; capped
  CHECK(rows(1024, DType::bf16) == 1);
  CHECK(rows(256, DType::f32) == 2);
  CHECK(tk::rows_per_program(Config{{"BLOCK", 128}}, DType::bf16, 3) == 2);  // 768 B of three inputs: 2, not 2.7
  CHECK(tk::rows_per_program(Config{{"BLOCK", 8}}, DType::f32, 3) == 16);     // 21 rounded down to a power of two
  CHECK(rows(512, DType::f32) == 1);
  CHECK(tk::rows_per_program(Config{{"BLOCK", 128}, cluster(2)}, DType::bf16) == 1);
  CHECK(tk::rows_per_program(Config{{"BLOCK", 128}, {"CHUNKS", 3}}, DType::bf16) == 1);
}

TEST_CASE("the row heuristics batch short rows") {
  for (bool clusters : {false, true}) {
    CHECK(tk::softmax_rows_config(512, DType::bf16, clusters, false).get("ROWS") == 2);
    CHECK(tk::softmax_rows_config(100, DType::f32, clusters, true).get("ROWS") == 4);  // BLOCK 128
    CHECK(tk::rmsnorm_heuristic(128, DType::bf16, clusters).get("ROWS") == 8);
    CHECK(tk::add_rmsnorm_heuristic(256, DType::f16, clusters, false).get("ROWS") == 4);
    CHECK(tk::layernorm_heuristic(200, DType::f32, clusters).get("ROWS") == 2);
    CHECK(!tk::softmax_rows_config(1024, DType::bf16, clusters, false).has("ROWS"));
    CHECK(!tk::rmsnorm_heuristic(4096, DType::bf16, clusters).has("ROWS"));
    CHECK(!tk::layernorm_heuristic(512, DType::f32, clusters).has("ROWS"));
    CHECK(tk::layernorm_heuristic(500, DType::bf16, clusters).get("ROWS") == 2);
    CHECK(tk::layernorm_heuristic(250, DType::bf16, clusters).get("ROWS") == 4);
    CHECK(tk::layernorm_heuristic(250, DType::f32, clusters).get("ROWS") == 2);
  }
}

namespace {

// (rows, cols) with rows not a multiple of the heuristic's ROWS, widths 1 to 500 (f32
// rows of more than 256 columns are 2 KB or more: not batched).
constexpr std::pair<int64_t, int64_t> kShapes[] = {{37, 1}, {29, 7}, {13, 100}, {11, 250}, {11, 300}, {5, 500}, {3, 64}};
template <class T>
bool batched_width(int64_t cols) {
  return cols * int64_t(sizeof(T)) <= 1024;
}

}  // namespace

TEST_CASE_TEMPLATE("rmsnorm and add_rmsnorm of short rows in batches match plain C++", T, float, bfloat16) {
  for (auto [rows, cols] : kShapes) {
    if (!batched_width<T>(cols)) continue;
    CAPTURE(rows);
    CAPTURE(cols);
    REQUIRE(tk::rmsnorm_heuristic(cols, dtype_v<T>).has("ROWS"));
    auto x = ref::random_vec<T>(rows * cols, 11 + cols), res = ref::random_vec<T>(rows * cols, 12 + cols);
    auto w = ref::random_vec<T>(cols, 13 + cols, 0.5f, 1.5f);
    std::vector<T> y(x.size()), s(x.size());
    std::vector<double> want;
    tk::rmsnorm(y, x, w, rows, cols, 1e-6f);
    ref::rmsnorm(want, ref::to_float(x), ref::to_float(w), rows, cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, ref::rtol<T>()) <= 1.0);

    tk::add_rmsnorm(y, s, x, res, w, rows, cols, 1e-6f);
    std::vector<float> sum(x.size());
    for (size_t i = 0; i < x.size(); ++i) sum[i] = float(T(ref::f(x[i]) + ref::f(res[i])));
    for (size_t i = 0; i < x.size(); ++i) REQUIRE(ref::f(s[i]) == sum[i]);  // the sum rounded to T, exactly
    ref::rmsnorm(want, sum, ref::to_float(w), rows, cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, ref::rtol<T>()) <= 1.0);

    // In place: out is in (each program reads its rows before it writes them).
    auto inplace = x;
    tk::rmsnorm(inplace, inplace, w, rows, cols, 1e-6f);
    ref::rmsnorm(want, ref::to_float(x), ref::to_float(w), rows, cols, 1e-6);
    CHECK(ref::max_rel_err(inplace, want, 1e-5, ref::rtol<T>()) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("layernorm of short rows in batches matches plain C++, with its statistics", T, float, bfloat16) {
  for (auto [rows, cols] : kShapes) {
    if (!batched_width<T>(cols)) continue;
    CAPTURE(rows);
    CAPTURE(cols);
    REQUIRE(tk::layernorm_heuristic(cols, dtype_v<T>).has("ROWS"));
    // A mean far from 0 next to a small spread: the shifted sums keep the variance.
    auto x = ref::random_vec<T>(rows * cols, 21 + cols, 40.0f, 44.0f);
    auto w = ref::random_vec<T>(cols, 22 + cols, 0.5f, 1.5f), b = ref::random_vec<T>(cols, 23 + cols);
    std::vector<T> y(x.size());
    std::vector<float> mean(rows, -1.0f), rstd(rows, -1.0f);
    tk::layernorm(y, mean, rstd, x, w, b, rows, cols, 1e-5f);
    std::vector<double> want;
    ref::layernorm(want, ref::to_float(x), ref::to_float(w), ref::to_float(b), rows, cols, 1e-5);
    // One-column rows normalize to 0 (var 0): the bias, to bf16's absolute rounding.
    CHECK(ref::max_rel_err(y, want, std::is_same_v<T, float> ? 1e-4 : 2e-2, ref::rtol<T>()) <= 1.0);
    auto stats = ref::layernorm_stats(ref::to_float(x), rows, cols, 1e-5);
    CHECK(ref::max_rel_err(mean, stats.mean, 1e-5, 1e-5) <= 1.0);
    CHECK(ref::max_rel_err(rstd, stats.rstd, 1e-5, 2e-3) <= 1.0);

    auto inplace = x;
    tk::layernorm(inplace, inplace, w, b, rows, cols, 1e-5f);
    CHECK(ref::max_rel_err(inplace, want, std::is_same_v<T, float> ? 1e-4 : 2e-2, ref::rtol<T>()) <= 1.0);
  }
}

TEST_CASE("rows configs: any ROWS and warps, rows that need a loop ignore ROWS") {
  int64_t rows = 10, cols = 200;
  auto x = ref::random_vec<float>(rows * cols, 31), w = ref::random_vec<float>(cols, 32, 0.5f, 1.5f);
  auto b = ref::random_vec<float>(cols, 33);
  std::vector<float> y(x.size());
  std::vector<double> want;
  ref::rmsnorm(want, x, w, rows, cols, 1e-6);
  for (auto [block, per, warps] : {std::tuple{256, 1, 1}, std::tuple{256, 16, 4}, std::tuple{64, 4, 2}}) {
    CAPTURE(per);
    tk::rmsnorm(y, x, w, rows, cols, 1e-6f, Config{{"BLOCK", block}, {"ROWS", per}, num_warps(warps)});
    CHECK(ref::max_rel_err(y, want, 1e-5, 1e-5) <= 1.0);
  }
  ref::layernorm(want, x, w, b, rows, cols, 1e-5);
  tk::layernorm(y, x, w, b, rows, cols, 1e-5f, Config{{"BLOCK", 256}, {"ROWS", 8}, num_warps(2)});
  CHECK(ref::max_rel_err(y, want, 1e-4, 1e-4) <= 1.0);
}

TEST_CASE("ROWS with clusters, CHUNKS or not a power of two is a user error naming the config") {
  std::vector<float> x(4 * 100, 1.5f), y(x.size()), w(100, 1.0f), b(100, 0.0f);
  std::string m = ref::error_of([&] { tk::rmsnorm(y, x, w, 4, 100, 1e-6f, Config{{"BLOCK", 128}, {"ROWS", 2}, cluster(2)}); });
  CHECK(m.find("rmsnorm: the config {BLOCK=128 RESIDUAL=0 ROWS=2 num_warps=4 num_stages=1 cluster=2} combines ROWS with "
               "clusters") != std::string::npos);
  CHECK(m.find("not both") != std::string::npos);
  m = ref::error_of([&] { tk::layernorm(y, x, w, b, 4, 100, 1e-5f, Config{{"BLOCK", 64}, {"CHUNKS", 2}, {"ROWS", 2}}); });
  CHECK(m.find("layernorm: the config {BLOCK=64 CHUNKS=2 ROWS=2 num_warps=4 num_stages=1} combines ROWS with CHUNKS") !=
        std::string::npos);
  m = ref::error_of([&] { tk::add_rmsnorm(y, y, x, x, w, 4, 100, 1e-6f, Config{{"BLOCK", 128}, {"ROWS", 0}}); });
  CHECK(m.find("add_rmsnorm: the config {BLOCK=128 RESIDUAL=1 ROWS=0 num_warps=4 num_stages=1} has ROWS = 0, not a "
               "power of two") != std::string::npos);
  CHECK(m.find("1, 2, 4, 8") != std::string::npos);
  m = ref::error_of([&] { tk::softmax(y, x, 4, 100, -1, -1, Config{{"BLOCK", 128}, {"ROWS", 3}}); });
  CHECK(m.find("softmax: the config {BLOCK=128 ROWS=3 num_warps=4 num_stages=1} has ROWS = 3, not a power of two") !=
        std::string::npos);
}
