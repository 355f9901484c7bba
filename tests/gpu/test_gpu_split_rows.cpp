// The split-row schedule (split_rows.hpp) on the GPU: the host functions on device
// buffers against the double-precision references, at rows of >= 1M columns (which the
// heuristic must split) and odd widths with explicit split configs; batches of rows and
// repeated calls give bit-identical results (the partials combine in a fixed order).
#include <cmath>
#include <string>

#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;

namespace {

template <class T>
difftest::Tolerance tol() {
  if constexpr (std::is_same_v<T, float>) return {1e-9, 2e-4};
  else return {1e-9, 1.6e-2};
}

template <class T>
std::vector<double> as_double(const std::vector<T>& v) {
  std::vector<double> d(v.size());
  for (size_t i = 0; i < v.size(); ++i) d[i] = static_cast<float>(v[i]);
  return d;
}

struct Case {
  int64_t rows, cols;
  tk::ConfigOverride cfg;  // empty: the heuristic (which must split these rows)
};
std::vector<Case> cases() {
  return {{3, 1048577, {}},
          {5, 70001, Config{{"BLOCK", 4096}, {"SPLIT", 1}, {"BATCH_ROWS", 2}, num_warps(4)}},
          {2, 131073, Config{{"BLOCK", 16384}, {"SPLIT", 1}, num_warps(16)}},
          {7, 9999, Config{{"BLOCK", 1024}, {"SPLIT", 1}, {"BATCH_ROWS", 0}, num_warps(2)}},
          {4, 65538, Config{{"BLOCK", 2048}, {"SPLIT", 1}, {"ALIGN_ROWS", 0}, num_warps(4)}},  // element by element
          {3, 262150, Config{{"BLOCK", 4096}, {"SPLIT", 1}, {"ALIGN_ROWS", 1}, num_warps(4)}}};  // asked
}

std::string label(const Case& c) { return std::to_string(c.rows) + "x" + std::to_string(c.cols) + (c.cfg ? " " + c.cfg->str() : ""); }

}  // namespace

TEST_CASE("gpu: the heuristic splits rows longer than a cluster covers") {
  if (!difftest::have_gpu()) return;
  for (auto dt : {DType::f32, DType::bf16}) {
    Config h = tk::with_split_rows<DeviceBuffer<float>>(tk::softmax_heuristic(1048577, dt, gpu_has_clusters()), 3,
                                                         1048577, dt);
    CHECK(tk::row_uses_split(h));
  }
  // Rows of 262144 on clusters of 16 programs: 4 programs per SM or more keep the cluster
  // (the row read once), fewer split; f32 LayerNorm's held chunks alike, its programs in
  // registers only from as many rows as SMs.
  int64_t sms = cuda::device_info().sm_count;
  if (gpu_has_clusters()) {
    Config many = tk::with_split_rows<DeviceBuffer<float>>(tk::softmax_heuristic(262144, DType::bf16, true),
                                                            4 * sms / 16, 262144, DType::bf16);
    CHECK((!tk::row_uses_split(many) && many.cluster == 8));  // 8 held programs of 64 KB: 2 per SM
    CHECK(tk::row_uses_split(tk::with_split_rows<DeviceBuffer<float>>(tk::softmax_heuristic(262144, DType::bf16, true),
                                                                      4 * sms / 16 - 1, 262144, DType::bf16)));
    // 4 held programs of 64 KB (131072 columns): from 2 programs per SM too.
    Config four = tk::with_split_rows<DeviceBuffer<float>>(tk::softmax_heuristic(131072, DType::bf16, true),
                                                            2 * sms / 4, 131072, DType::bf16);
    CHECK((!tk::row_uses_split(four) && four.cluster == 4));
    CHECK(tk::row_uses_split(tk::with_split_rows<DeviceBuffer<float>>(tk::softmax_heuristic(131072, DType::bf16, true),
                                                                      2 * sms / 4 - 1, 131072, DType::bf16)));
    Config ln16 = tk::layernorm_rows_heuristic<DeviceBuffer<float>>(2 * sms / 4, 131072, DType::bf16, true, false);
    CHECK((!tk::row_uses_split(ln16) && ln16.cluster == 4 && ln16.get("HELD") == 4));
    CHECK(tk::row_uses_split(
        tk::layernorm_rows_heuristic<DeviceBuffer<float>>(2 * sms / 4 - 1, 131072, DType::bf16, true, false)));
    // Programs of 32 KB on 8 (RMSNorm at 131072) still split while rows are fewer than SMs.
    CHECK(tk::row_uses_split(tk::with_split_rows<DeviceBuffer<float>>(tk::rmsnorm_heuristic(131072, DType::bf16, true),
                                                                      sms - 1, 131072, DType::bf16)));
    Config ln = tk::layernorm_rows_heuristic<DeviceBuffer<float>>(4 * sms / 16, 262144, DType::f32, true, false);
    CHECK((!tk::row_uses_split(ln) && ln.get("HELD") == 4));
    CHECK(tk::row_uses_split(
        tk::layernorm_rows_heuristic<DeviceBuffer<float>>(4 * sms / 16 - 1, 262144, DType::f32, true, false)));
    // f32 programs in registers (200000 columns: chunks of 2048) split while rows are fewer than SMs.
    CHECK(tk::row_uses_split(
        tk::layernorm_rows_heuristic<DeviceBuffer<float>>(sms - 1, 200000, DType::f32, true, false)));
  }
  // Many short rows keep the one-program schedules.
  Config h = tk::with_split_rows<DeviceBuffer<float>>(tk::softmax_heuristic(4096, DType::bf16, gpu_has_clusters()),
                                                       4096, 4096, DType::bf16);
  CHECK(!tk::row_uses_split(h));
}

TEST_CASE_TEMPLATE("gpu: split-row softmax matches the reference", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  for (const Case& c : cases()) {
    CAPTURE(label(c));
    auto x = ref::random_vec<T>(c.rows * c.cols, 101 + c.cols, -30.0f, 30.0f);
    for (int64_t i = 0; i < c.cols; i += 7) x[i] = T(-INFINITY);  // -inf entries in row 0
    auto gx = to_device(x);
    DeviceBuffer<T> gy(x.size());
    tk::softmax(gy, gx, c.rows, c.cols, -1, -1, c.cfg);
    std::vector<double> want;
    ref::softmax(want, ref::to_float(x), c.rows, c.cols);
    auto got = gy.to_host();
    difftest::compare(got, std::vector<T>(want.begin(), want.end()), tol<T>(), 0);
    tk::softmax(gy, gx, c.rows, c.cols, -1, -1, c.cfg);  // again, on the cached scratch
    CHECK(gy.to_host() == got);
  }
}

// ONE_PASS: one launch whose normalize programs wait for their row's reduce programs;
// counters back at zero (the second run matches bit for bit), in place too.
TEST_CASE_TEMPLATE("gpu: one-pass split-row softmax matches the reference, twice, in place", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  for (auto [rows, cols, cfg] :
       {std::tuple{3, 1048577, Config{{"BLOCK", 4096}, {"SPLIT", 1}, {"ONE_PASS", 1}, num_warps(4)}},
        std::tuple{40, 70001, Config{{"BLOCK", 4096}, {"SPLIT", 1}, {"ONE_PASS", 1}, {"LAG", 1}, num_warps(4)}},
        std::tuple{9, 262150, Config{{"BLOCK", 2048}, {"SPLIT", 1}, {"ONE_PASS", 1}, {"LAG", 3}, {"ALIGN_ROWS", 0},
                                    num_warps(4)}}}) {
    CAPTURE(cols);
    auto x = ref::random_vec<T>(int64_t(rows) * cols, 111 + cols, -30.0f, 30.0f);
    auto gx = to_device(x);
    DeviceBuffer<T> gy(x.size());
    tk::softmax(gy, gx, rows, cols, -1, -1, cfg);
    std::vector<double> want;
    ref::softmax(want, ref::to_float(x), rows, cols);
    auto got = gy.to_host();
    difftest::compare(got, std::vector<T>(want.begin(), want.end()), tol<T>(), 0);
    tk::softmax(gy, gx, rows, cols, -1, -1, cfg);
    CHECK(gy.to_host() == got);
    tk::softmax(gx, gx, rows, cols, -1, -1, cfg);
    CHECK(gx.to_host() == got);
  }
}

TEST_CASE_TEMPLATE("gpu: split-row rmsnorm with and without residual matches the reference", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  for (const Case& c : cases()) {
    CAPTURE(label(c));
    auto x = ref::random_vec<T>(c.rows * c.cols, 201 + c.cols);
    auto r = ref::random_vec<T>(c.rows * c.cols, 202 + c.cols);
    auto w = ref::random_vec<T>(c.cols, 203, 0.5f, 1.5f);
    auto gx = to_device(x), gr = to_device(r), gw = to_device(w);
    DeviceBuffer<T> gy(x.size()), gs(x.size());
    tk::rmsnorm(gy, gx, gw, c.rows, c.cols, 1e-6f, c.cfg);
    std::vector<double> want;
    ref::rmsnorm(want, ref::to_float(x), ref::to_float(w), c.rows, c.cols, 1e-6);
    difftest::compare(gy.to_host(), std::vector<T>(want.begin(), want.end()), tol<T>(), 0);

    tk::add_rmsnorm(gy, gs, gx, gr, gw, c.rows, c.cols, 1e-6f, c.cfg);
    std::vector<float> summed(x.size());
    for (size_t i = 0; i < x.size(); ++i) summed[i] = float(T(float(x[i]) + float(r[i])));
    CHECK(as_double(gs.to_host()) == std::vector<double>(summed.begin(), summed.end()));
    ref::rmsnorm(want, summed, ref::to_float(w), c.rows, c.cols, 1e-6);
    difftest::compare(gy.to_host(), std::vector<T>(want.begin(), want.end()), tol<T>(), 1);
  }
}

TEST_CASE_TEMPLATE("gpu: split-row layernorm matches the reference", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  for (const Case& c : cases()) {
    CAPTURE(label(c));
    auto x = ref::random_vec<T>(c.rows * c.cols, 301 + c.cols, 2.0f, 8.0f);  // mean 5 >> spread
    auto w = ref::random_vec<T>(c.cols, 302, 0.5f, 1.5f);
    auto b = ref::random_vec<T>(c.cols, 303, -1.0f, 1.0f);
    auto gx = to_device(x), gw = to_device(w), gb = to_device(b);
    DeviceBuffer<T> gy(x.size());
    tk::layernorm(gy, gx, gw, gb, c.rows, c.cols, 1e-5f, c.cfg);
    std::vector<double> want;
    ref::layernorm(want, ref::to_float(x), ref::to_float(w), ref::to_float(b), c.rows, c.cols, 1e-5);
    difftest::Tolerance t = tol<T>();
    t.atol = std::is_same_v<T, float> ? 1e-4 : 2e-2;
    difftest::compare(gy.to_host(), std::vector<T>(want.begin(), want.end()), t, 0);
    // With the row statistics saved: the same output, and each row's mean and rstd.
    DeviceBuffer<float> gmean(c.rows), grstd(c.rows);
    tk::layernorm(gy, gmean, grstd, gx, gw, gb, c.rows, c.cols, 1e-5f, c.cfg);
    difftest::compare(gy.to_host(), std::vector<T>(want.begin(), want.end()), t, 1);
    ref::RowStats s = ref::layernorm_stats(ref::to_float(x), c.rows, c.cols, 1e-5);
    std::vector<float> mean_want(s.mean.begin(), s.mean.end()), rstd_want(s.rstd.begin(), s.rstd.end());
    difftest::compare(gmean.to_host(), mean_want, difftest::Tolerance{1e-5, 1e-5}, 2);
    difftest::compare(grstd.to_host(), rstd_want, difftest::Tolerance{1e-5, 1e-4}, 3);
  }
}

TEST_CASE("gpu: split-row results do not depend on the row batches") {
  if (!difftest::have_gpu()) return;
  int64_t rows = 9, cols = 100003;
  auto x = ref::random_vec<bfloat16>(rows * cols, 401);
  auto w = ref::random_vec<bfloat16>(cols, 402, 0.5f, 1.5f), b = ref::random_vec<bfloat16>(cols, 403);
  auto gx = to_device(x), gw = to_device(w), gb = to_device(b);
  DeviceBuffer<bfloat16> g1(x.size()), g2(x.size());
  Config one = Config{{"BLOCK", 8192}, {"SPLIT", 1}, {"BATCH_ROWS", 1}, num_warps(8)};
  Config all = Config(one).set("BATCH_ROWS", 0);
  tk::softmax(g1, gx, rows, cols, -1, -1, one);
  tk::softmax(g2, gx, rows, cols, -1, -1, all);
  CHECK(g1.to_host() == g2.to_host());
  tk::layernorm(g1, gx, gw, gb, rows, cols, 1e-5f, one);
  tk::layernorm(g2, gx, gw, gb, rows, cols, 1e-5f, all);
  CHECK(g1.to_host() == g2.to_host());
}
