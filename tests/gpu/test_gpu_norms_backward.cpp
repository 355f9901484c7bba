// RMSNorm / LayerNorm backward on the GPU against the interpreter: each program (row,
// looped, partials reduction) through gpu_matches_interp, then the host functions on
// device buffers against the same calls on host vectors. Label: gpu (skips without a driver).
#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using difftest::gpu_matches_interp;

namespace {

template <class T>
difftest::Tolerance tol() {
  if constexpr (std::is_same_v<T, float>) return {1e-5, 1e-5};
  else if constexpr (std::is_same_v<T, half>) return {1e-3, 2e-3};
  else return {1e-2, 1.6e-2};
}

// Each row's mean and rstd as the forward saves them (f32).
template <class T>
void row_stats(const std::vector<T>& x, int rows, int cols, std::vector<float>& mean, std::vector<float>& rstd) {
  ref::RowStats s = ref::layernorm_stats(ref::to_float(x), rows, cols, 1e-5);
  mean.assign(s.mean.begin(), s.mean.end());
  rstd.assign(s.rstd.begin(), s.rstd.end());
}

struct Case {
  int rows, cols, block, warps, programs, rows_per_step, prefetch = 0;
};
// One tile (odd widths, programs not dividing the rows) and looped rows, one or several
// rows per step (row counts not a multiple of ROWS).
constexpr Case kCases[] = {{7, 1, 16, 1, 3, 1},       {37, 7, 16, 1, 5, 1},     {29, 300, 512, 2, 4, 1},
                           {9, 4099, 8192, 16, 4, 1}, {11, 4099, 1024, 4, 3, 1}, {5, 20000, 4096, 8, 2, 1},
                           {37, 7, 16, 1, 5, 8},      {29, 300, 512, 4, 3, 4},  {11, 1000, 1024, 8, 2, 4},
                           {11, 4099, 1024, 8, 3, 2}, {5, 20000, 4096, 16, 2, 2},
                           {37, 7, 16, 1, 5, 2, 1},   {29, 300, 512, 4, 3, 4, 1}, {9, 4099, 8192, 16, 4, 1, 1}};

}  // namespace

TEST_CASE_TEMPLATE("gpu: rmsnorm backward programs (with and without residual)", T, float, half, bfloat16) {
  for (const Case& c : kCases) {
    for (int residual : {0, 1}) {
      CAPTURE(c.cols);
      CAPTURE(residual);
      auto x = ref::random_vec<T>(c.rows * c.cols, 1), dy = ref::random_vec<T>(c.rows * c.cols, 2);
      auto dres = ref::random_vec<T>(c.rows * c.cols, 3);
      auto w = ref::random_vec<T>(c.cols, 4, 0.5, 1.5);
      std::vector<T> dx(x.size());
      std::vector<float> partials(c.programs * c.cols);
      Config cfg{{"BLOCK", c.block}, {"RESIDUAL", residual}, {"ROWS", c.rows_per_step}, num_warps(c.warps)};
      if (c.prefetch) cfg.set("PREFETCH", 1);
      auto run = [&](const auto& k) {
        gpu_matches_interp(k, Grid(c.programs), cfg, tol<T>(), dx, partials, dy, x, w, dres, c.rows, c.cols,
                           int64_t(c.cols), 1e-6f);
      };
      if (c.block < c.cols) run(tk::rmsnorm_bwd_looped_kernel<T>());
      else run(tk::rmsnorm_bwd_row_kernel<T>());
    }
  }
}

TEST_CASE_TEMPLATE("gpu: layernorm backward programs", T, float, half, bfloat16) {
  for (const Case& c : kCases) {
    CAPTURE(c.cols);
    auto x = ref::random_vec<T>(c.rows * c.cols, 5, 1, 5), dy = ref::random_vec<T>(c.rows * c.cols, 6);
    auto w = ref::random_vec<T>(c.cols, 7, 0.5, 1.5);
    std::vector<T> dx(x.size());
    std::vector<float> partials(2 * c.programs * c.cols), mean, rstd;
    row_stats(x, c.rows, c.cols, mean, rstd);
    for (int saved : {0, 1}) {  // statistics recomputed, or the forward's
      CAPTURE(saved);
      Config cfg{{"BLOCK", c.block}, {"ROWS", c.rows_per_step}, {"SAVED", saved}, num_warps(c.warps)};
      if (c.prefetch) cfg.set("PREFETCH", 1);
      // One column: dx = rstd * (g - g/1) is 0 up to an ulp of g times rstd = 1/sqrt(eps),
      // and the GPU's division rounds differently from the interpreter's.
      auto t = tol<T>();
      if (c.cols == 1) t.atol = 1e-4;
      auto run = [&](const auto& k) {
        gpu_matches_interp(k, Grid(c.programs), cfg, t, dx, partials, dy, x, w, mean, rstd, c.rows, c.cols,
                           int64_t(c.cols), 1e-5f);
      };
      if (c.block < c.cols) run(tk::layernorm_bwd_looped_kernel<T>());
      else run(tk::layernorm_bwd_row_kernel<T>());
    }
  }
}

TEST_CASE_TEMPLATE("gpu: norm backward persistent cluster programs", T, float, bfloat16) {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  // 4 x 4096 columns for 16000 (the last program partly masked), 16 x 1024 for 9000,
  // 4 x 3 chunks of 2048 for 16387 (CHUNKS), 2 x (8192 + a tail of 8) for 16387 and 4 x
  // (2 x 2048 + 64) for 16500, one program of 4096 + 8 for 4099 (TAIL); clusters looping
  // over several rows each, rows not a multiple of the clusters.
  for (auto [rows, cols, block, chunks, cl, clusters, tail] :
       {std::tuple{9, 16000, 4096, 1, 4, 4, 0}, std::tuple{5, 9000, 1024, 1, 16, 2, 0},
        std::tuple{23, 2048, 512, 1, 4, 7, 0}, std::tuple{11, 16387, 2048, 3, 4, 3, 0},
        std::tuple{11, 16387, 8192, 1, 2, 3, 8}, std::tuple{7, 16500, 2048, 2, 4, 2, 64},
        std::tuple{29, 4099, 4096, 1, 1, 12, 8}}) {
    CAPTURE(cols);
    CAPTURE(tail);
    auto x = ref::random_vec<T>(rows * cols, 16, 1, 4), dy = ref::random_vec<T>(rows * cols, 17);
    auto dres = ref::random_vec<T>(rows * cols, 18);
    auto w = ref::random_vec<T>(cols, 19, 0.5, 1.5);
    std::vector<T> dx(x.size());
    std::vector<float> partials(2 * clusters * cols), mean, rstd;
    row_stats(x, rows, cols, mean, rstd);
    for (int stages : {1, 2}) {
      CAPTURE(stages);
      for (int residual : {0, 1}) {
        Config cfg{{"BLOCK", block}, {"CHUNKS", chunks}, {"TAIL", tail}, {"RESIDUAL", residual}, num_warps(8),
                   num_stages(stages), cluster(cl)};
        gpu_matches_interp(tk::rmsnorm_bwd_cluster_kernel<T>(), Grid(clusters * cl), cfg, tol<T>(), dx, partials, dy,
                           x, w, dres, rows, cols, int64_t(cols), 1e-6f);
      }
      for (auto [saved, ahead] : {std::pair{0, 1}, std::pair{1, 1}, std::pair{1, 0}}) {
        Config cfg{{"BLOCK", block}, {"CHUNKS", chunks}, {"TAIL", tail}, {"SAVED", saved}, {"STATS_AHEAD", ahead},
                   num_warps(8), num_stages(stages), cluster(cl)};
        gpu_matches_interp(tk::layernorm_bwd_cluster_kernel<T>(), Grid(clusters * cl), cfg, tol<T>(), dx, partials,
                           dy, x, w, mean, rstd, rows, cols, int64_t(cols), 1e-5f);
      }
    }
  }
}

TEST_CASE_TEMPLATE("gpu: norm backward partials reduction", T, float, bfloat16) {
  // Parts in one step, in several steps (600 > 256) and a partial last step.
  for (auto [parts, cols, bias] : {std::tuple{1, 1, 1}, std::tuple{37, 300, 0}, std::tuple{264, 4099, 1},
                                   std::tuple{600, 77, 1}}) {
    CAPTURE(parts);
    CAPTURE(cols);
    auto partials = ref::random_vec<float>(2 * parts * cols, 8);
    std::vector<T> dw(cols), db(cols);
    Config cfg = tk::norm_partials_config(parts).set("BIAS", bias);
    gpu_matches_interp(tk::norm_partials_reduce_kernel<T>(), tk::norm_partials_grid(cfg, cols), cfg, tol<T>(), dw, db,
                       partials, parts, cols);
  }
}

TEST_CASE_TEMPLATE("gpu: norm backward host functions on device buffers match the interpreter", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  for (auto [rows, cols] : {std::pair{1000, 300}, std::pair{77, 4099}, std::pair{40, 20000}}) {
    CAPTURE(cols);
    auto x = ref::random_vec<T>(rows * cols, 9, 1, 4), dy = ref::random_vec<T>(rows * cols, 10);
    auto dres = ref::random_vec<T>(rows * cols, 11);
    auto w = ref::random_vec<T>(cols, 12, 0.5, 1.5);
    std::vector<T> dx(x.size()), dw(cols), db(cols);
    auto gx = to_device(x), gdy = to_device(dy), gres = to_device(dres), gw = to_device(w);
    DeviceBuffer<T> gdx(x.size()), gdw(cols), gdb(cols);
    // The programs differ (SM count), so dW is summed in another order: compare with a tolerance.
    auto t = tol<T>();
    t.atol *= 10;
    auto same = [&] {
      difftest::compare(gdx.to_host(), dx, t, 0);
      difftest::compare(gdw.to_host(), dw, t, 1);
    };
    tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols);
    tk::rmsnorm_backward(gdx, gdw, gdy, gx, gw, rows, cols);
    same();
    tk::add_rmsnorm_backward(dx, dw, dy, dres, x, w, rows, cols);
    tk::add_rmsnorm_backward(gdx, gdw, gdy, gres, gx, gw, rows, cols);
    same();
    tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols);
    tk::layernorm_backward(gdx, gdw, gdb, gdy, gx, gw, rows, cols);
    same();
    difftest::compare(gdb.to_host(), db, t, 2);
    // A training step's pair: the forward saving mean and rstd, the backward from them.
    auto b = ref::random_vec<T>(cols, 13);
    auto gb = to_device(b);
    std::vector<T> y(x.size());
    std::vector<float> mean(rows), rstd(rows);
    DeviceBuffer<T> gy(x.size());
    DeviceBuffer<float> gmean(rows), grstd(rows);
    tk::layernorm(y, mean, rstd, x, w, b, rows, cols);
    tk::layernorm(gy, gmean, grstd, gx, gw, gb, rows, cols);
    difftest::compare(gy.to_host(), y, tol<T>(), 3);
    difftest::compare(gmean.to_host(), mean, tol<float>(), 4);
    difftest::compare(grstd.to_host(), rstd, tol<float>(), 5);
    tk::layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, rows, cols);
    tk::layernorm_backward(gdx, gdw, gdb, gdy, gx, gw, gmean, grstd, rows, cols);
    same();
    difftest::compare(gdb.to_host(), db, t, 6);
  }
}

TEST_CASE_TEMPLATE("gpu: norm backward cluster programs on odd 16-bit rows, from their aligned starts or not (host functions)",
                   T, bfloat16, half) {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  // Odd widths split over clusters; with ALIGN_ROWS=1 (opt-in) the clusters a multiple of
  // 8 (16383's cluster of 2 does not cover its aligned span: indexed plainly).
  using K = tk::NormBackwardKind;
  for (auto [rows, cols] : {std::pair{37, 16387}, std::pair{21, 16383}, std::pair{50, 9001}, std::pair{40, 4099}}) {
    for (int align : {0, 1}) {
      CAPTURE(cols);
      CAPTURE(align);
      auto cfg = [&](K kind) -> tk::ConfigOverride {
        if (!align) return std::nullopt;
        return tk::norm_backward_heuristic(cols, dtype_v<T>, kind, true).set("ALIGN_ROWS", 1);
      };
      auto x = ref::random_vec<T>(rows * cols, 29, 1, 4), dy = ref::random_vec<T>(rows * cols, 30);
      auto dres = ref::random_vec<T>(rows * cols, 31);
      auto w = ref::random_vec<T>(cols, 32, 0.5, 1.5);
      std::vector<T> dx(x.size()), dw(cols), db(cols);
      auto gx = to_device(x), gdy = to_device(dy), gres = to_device(dres), gw = to_device(w);
      DeviceBuffer<T> gdx(x.size()), gdw(cols), gdb(cols);
      auto t = tol<T>();
      t.atol *= 10;  // dW summed over other clusters than the interpreter's
      auto same = [&](int id) {
        difftest::compare(gdx.to_host(), dx, t, id);
        difftest::compare(gdw.to_host(), dw, t, id + 1);
      };
      tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols, 1e-6f, cfg(K::rms));
      tk::rmsnorm_backward(gdx, gdw, gdy, gx, gw, rows, cols, 1e-6f, cfg(K::rms));
      same(0);
      tk::add_rmsnorm_backward(dx, dw, dy, dres, x, w, rows, cols, 1e-6f, cfg(K::rms_residual));
      tk::add_rmsnorm_backward(gdx, gdw, gdy, gres, gx, gw, rows, cols, 1e-6f, cfg(K::rms_residual));
      same(2);
      std::vector<float> mean, rstd;
      row_stats(x, rows, cols, mean, rstd);
      auto gmean = to_device(mean), grstd = to_device(rstd);
      tk::layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, rows, cols, cfg(K::layer_saved));
      tk::layernorm_backward(gdx, gdw, gdb, gdy, gx, gw, gmean, grstd, rows, cols, cfg(K::layer_saved));
      same(4);
      difftest::compare(gdb.to_host(), db, t, 6);
      tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols, 1e-5f, cfg(K::layer));
      tk::layernorm_backward(gdx, gdw, gdb, gdy, gx, gw, rows, cols, 1e-5f, cfg(K::layer));
      same(7);
      difftest::compare(gdb.to_host(), db, t, 9);
    }
  }
}

// Persistent clusters are no more than the GPU holds at once (within_resident): the
// kernel's resident_clusters is known on a GPU with clusters and within what its SMs can
// hold; the host functions at a width taking 16-program clusters match the interpreter.
TEST_CASE("gpu: norm backward persistent clusters sized by the clusters resident at once") {
  if (!difftest::have_gpu() || !gpu_has_clusters()) return;
  using T = bfloat16;
  int64_t rows = 40, cols = 131072;
  Config c = tk::norm_backward_heuristic(cols, DType::bf16, tk::NormBackwardKind::rms, true);
  REQUIRE(c.cluster == 16);
  c.meta.erase("PROGRAMS_PER_SM");
  c.meta.erase("ROWS");
  c.set("RESIDUAL", 0);
  auto x = ref::random_vec<T>(rows * cols, 21, 1, 4), dy = ref::random_vec<T>(rows * cols, 22);
  auto w = ref::random_vec<T>(cols, 23, 0.5, 1.5);
  auto gx = to_device(x), gdy = to_device(dy), gw = to_device(w);
  DeviceBuffer<T> gdx(x.size()), gdw(cols), gdb(cols);
  DeviceBuffer<float> partials(2 * 64 * cols);
  int64_t resident = tk::rmsnorm_bwd_cluster_kernel<T>().resident_clusters(c, gdx, partials, gdy, gx, gw, gx,
                                                                             int32_t(rows), int32_t(cols), cols, 1e-6f);
  int64_t sms = cuda::device_info().sm_count;
  CHECK(resident > 0);
  CHECK(resident <= 2048 / (32 * c.num_warps) * sms / 16);  // threads per SM at most 2048
  // Host buffers: unknown (0), the interpreter runs whatever grid it is given.
  std::vector<T> dx(x.size()), dw(cols), db(cols);
  std::vector<float> hp(2 * 64 * cols);
  CHECK(tk::rmsnorm_bwd_cluster_kernel<T>().resident_clusters(c, dx, hp, dy, x, w, x, int32_t(rows), int32_t(cols),
                                                              cols, 1e-6f) == 0);
  auto t = tol<T>();
  t.atol *= 10;
  tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols);
  tk::rmsnorm_backward(gdx, gdw, gdy, gx, gw, rows, cols);
  difftest::compare(gdx.to_host(), dx, t, 0);
  difftest::compare(gdw.to_host(), dw, t, 1);
  tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols);
  tk::layernorm_backward(gdx, gdw, gdb, gdy, gx, gw, rows, cols);
  difftest::compare(gdx.to_host(), dx, t, 2);
  difftest::compare(gdw.to_host(), dw, t, 3);
  difftest::compare(gdb.to_host(), db, t, 4);
}

// Rows of every alignment remainder indexed from their 16-byte-aligned start
// (ALIGN_ROWS): more rows than programs, so each program takes several rows of one
// offset (the host rounds the programs to the offsets' period), residual or not; device
// buffers against the interpreter on host vectors with the same config.
TEST_CASE_TEMPLATE("gpu: norm backward with rows from their aligned start, every alignment remainder", T, float,
                   half, bfloat16) {
  if (!difftest::have_gpu()) return;
  for (int cols : {1029, 4097, 4098, 4100, 4103, 6007}) {
    for (int residual : {0, 1}) {
      CAPTURE(cols);
      CAPTURE(residual);
      int rows = 300;
      int block = cols + 7 <= 2048 ? 2048 : 8192;
      Config cfg{{"BLOCK", block}, {"ALIGN_ROWS", 1}, {"PROGRAMS_PER_SM", 1}, {"PREFETCH", cols % 2}, num_warps(8)};
      auto x = ref::random_vec<T>(rows * cols, 21, 1, 4), dy = ref::random_vec<T>(rows * cols, 22);
      auto dres = ref::random_vec<T>(rows * cols, 23);
      auto w = ref::random_vec<T>(cols, 24, 0.5, 1.5);
      std::vector<T> dx(x.size()), dw(cols);
      auto gx = to_device(x), gdy = to_device(dy), gres = to_device(dres), gw = to_device(w);
      DeviceBuffer<T> gdx(x.size()), gdw(cols);
      if (residual) {
        tk::add_rmsnorm_backward(dx, dw, dy, dres, x, w, rows, cols, 1e-6f, cfg);
        tk::add_rmsnorm_backward(gdx, gdw, gdy, gres, gx, gw, rows, cols, 1e-6f, cfg);
      } else {
        tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols, 1e-6f, cfg);
        tk::rmsnorm_backward(gdx, gdw, gdy, gx, gw, rows, cols, 1e-6f, cfg);
      }
      auto t = tol<T>();
      t.atol *= 10;  // dW summed over other programs (the SM count) in another order
      difftest::compare(gdx.to_host(), dx, tol<T>(), 0);
      difftest::compare(gdw.to_host(), dw, t, 1);
      if (residual) continue;
      // LayerNorm, statistics recomputed, then from the forward's (saved on each side).
      auto b = ref::random_vec<T>(cols, 25);
      auto gb = to_device(b);
      std::vector<T> db(cols), y(x.size());
      std::vector<float> mean(rows), rstd(rows);
      DeviceBuffer<T> gdb(cols), gy(x.size());
      DeviceBuffer<float> gmean(rows), grstd(rows);
      tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols, 1e-5f, cfg);
      tk::layernorm_backward(gdx, gdw, gdb, gdy, gx, gw, rows, cols, 1e-5f, cfg);
      difftest::compare(gdx.to_host(), dx, tol<T>(), 0);
      difftest::compare(gdw.to_host(), dw, t, 1);
      difftest::compare(gdb.to_host(), db, t, 2);
      tk::layernorm(y, mean, rstd, x, w, b, rows, cols);
      tk::layernorm(gy, gmean, grstd, gx, gw, gb, rows, cols);
      tk::layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, rows, cols, cfg);
      tk::layernorm_backward(gdx, gdw, gdb, gdy, gx, gw, gmean, grstd, rows, cols, cfg);
      difftest::compare(gdx.to_host(), dx, tol<T>(), 0);
      difftest::compare(gdw.to_host(), dw, t, 1);
      difftest::compare(gdb.to_host(), db, t, 2);
    }
  }
}

// The partials scratch is cached per device and stream and only grows: calls with a
// large, a small and a different large shape reuse it and stay correct.
TEST_CASE("gpu: norm backward scratch is reused across calls with different shapes") {
  using T = bfloat16;
  if (!difftest::have_gpu()) return;
  size_t before = 0;
  for (auto [rows, cols] : {std::pair{500, 1000}, std::pair{50, 37}, std::pair{21, 20000}, std::pair{97, 5000}}) {
    CAPTURE(cols);
    auto x = ref::random_vec<T>(rows * cols, 13, 1, 4), dy = ref::random_vec<T>(rows * cols, 14);
    auto w = ref::random_vec<T>(cols, 15, 0.5, 1.5);
    std::vector<T> dx(x.size()), dw(cols), db(cols);
    auto gx = to_device(x), gdy = to_device(dy), gw = to_device(w);
    DeviceBuffer<T> gdx(x.size()), gdw(cols), gdb(cols);
    auto t = tol<T>();
    t.atol *= 10;
    tk::layernorm_backward(dx, dw, db, dy, x, w, rows, cols);
    tk::layernorm_backward(gdx, gdw, gdb, gdy, gx, gw, rows, cols);
    difftest::compare(gdx.to_host(), dx, t, 0);
    difftest::compare(gdw.to_host(), dw, t, 1);
    difftest::compare(gdb.to_host(), db, t, 2);
    size_t now = tk::norm_scratch_capacity();
    CHECK(now >= before);  // never shrinks
    CHECK(now > 0);
    before = now;
    // The same call again reuses the buffer as it is.
    tk::rmsnorm_backward(gdx, gdw, gdy, gx, gw, rows, cols);
    tk::rmsnorm_backward(dx, dw, dy, x, w, rows, cols);
    difftest::compare(gdw.to_host(), dw, t, 3);
    CHECK(tk::norm_scratch_capacity() == now);
  }
}
