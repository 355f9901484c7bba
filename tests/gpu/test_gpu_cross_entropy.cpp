// The fused cross-entropy on the GPU against the interpreter: each dtype, the one-tile,
// cluster and looped programs, V = 30011, every reduction, in place, and what the GPU
// does with a target outside [0, V) (NaN loss and gradient for that row, no stray
// reads). Label: gpu (skips without a driver).
#include <cmath>

#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using tk::LossReduction;

namespace {

template <class T>
difftest::Tolerance dx_tol(double scale) {  // scale: the gradient's factor (grad_scale / count)
  if constexpr (std::is_same_v<T, float>) return {1e-6 * scale, 1e-5};
  else if constexpr (std::is_same_v<T, half>) return {1e-5 * scale, 2e-3};
  else return {1e-4 * scale, 1.6e-2};
}

template <class TI>
std::vector<TI> targets_for(int64_t M, int64_t V, uint32_t seed, int64_t ignore_index) {
  std::mt19937 g(seed);
  std::vector<TI> t(M);
  for (auto& v : t) v = TI(g() % 20 == 0 ? ignore_index : int64_t(g() % V));  // ~5% ignored
  t[0] = TI(V - 1);
  return t;
}

// Runs cross_entropy on host vectors (interpreter) and device buffers with one config.
template <class T, class TI = int64_t>
void check_gpu(int64_t M, int64_t V, tk::CrossEntropyOptions o, bool in_place, const Config& cfg, uint32_t seed) {
  CAPTURE(M);
  CAPTURE(V);
  std::string config = cfg.str();
  CAPTURE(config);
  CAPTURE(in_place);
  CAPTURE(static_cast<int>(o.reduction));
  int64_t stride = o.logits_stride < 0 ? V : o.logits_stride;
  auto x = ref::random_vec<T>(M * stride, seed, -8.0f, 8.0f);
  auto t = targets_for<TI>(M, V, seed + 1, o.ignore_index);
  std::vector<float> loss(o.reduction == LossReduction::none ? M : 1);
  std::vector<T> dx = in_place ? x : std::vector<T>(x.size(), T(0.5f));
  if (in_place) tk::cross_entropy(loss, dx, dx, t, M, V, o, cfg);
  else tk::cross_entropy(loss, dx, x, t, M, V, o, cfg);
  if (!difftest::have_gpu()) return;
  auto dt = to_device(t);
  auto dxd = to_device(in_place ? x : std::vector<T>(x.size(), T(0.5f)));
  auto xd = to_device(x);
  DeviceBuffer<float> lossd(loss.size());
  if (in_place) tk::cross_entropy(lossd, dxd, dxd, dt, M, V, o, cfg);
  else tk::cross_entropy(lossd, dxd, xd, dt, M, V, o, cfg);
  cuda::synchronize();
  int64_t count = 0;
  for (auto v : t) count += v != o.ignore_index;
  double scale = std::fabs(o.grad_scale) / (o.reduction == LossReduction::mean ? double(count) : 1.0);
  difftest::compare(lossd.to_host(), loss, {1e-5, 1e-5}, 0);
  difftest::compare(dxd.to_host(), dx, dx_tol<T>(scale), 1);
}

}  // namespace

TEST_CASE_TEMPLATE("gpu: cross_entropy, one tile per row and looped", T, float, half, bfloat16) {
  tk::CrossEntropyOptions smooth{.label_smoothing = 0.1f, .z_loss = 1e-4f, .reduction = LossReduction::sum,
                                 .grad_scale = 0.25f};
  check_gpu<T>(37, 1000, {}, false, Config{{"BLOCK", 1024}, num_warps(4)}, 1);
  check_gpu<T>(37, 1000, smooth, true, Config{{"BLOCK", 1024}, num_warps(4)}, 2);
  check_gpu<T>(9, 7, {.reduction = LossReduction::none}, false, Config{{"BLOCK", 8}, num_warps(1)}, 3);
  check_gpu<T>(5, 1, {}, true, Config{{"BLOCK", 1}, num_warps(1)}, 4);
  check_gpu<T>(6, 30011, smooth, false, Config{{"BLOCK", 4096}, num_warps(16)}, 5);  // looped
  check_gpu<T>(6, 30011, {.label_smoothing = 0.2f, .reduction = LossReduction::none}, true,
               Config{{"BLOCK", 2048}, num_warps(8)}, 6);
  check_gpu<T>(5, 5000, {.z_loss = 1e-3f, .logits_stride = 5003}, false, Config{{"BLOCK", 8192}, num_warps(16)}, 7);
}

TEST_CASE("gpu: cross_entropy mean over many rows (many counting and finish programs), int32 targets") {
  check_gpu<bfloat16>(2500, 7, {.label_smoothing = 0.05f}, false, Config{{"BLOCK", 8}, num_warps(1)}, 8);
  // 193 counting programs (256 targets each) and 49 finish programs, calls back to back
  // (each leaves the stream's counters zero for the next).
  int64_t many = 49229;
  for (int round = 0; round < 2; ++round) {
    check_gpu<bfloat16>(many, 7, {.label_smoothing = 0.05f}, false, Config{{"BLOCK", 8}, num_warps(1)}, 11 + round);
    // The count kernel instead of counting programs, and counting programs on clusters.
    check_gpu<bfloat16>(many, 7, {}, true, Config{{"BLOCK", 8}, {"COUNT", 0}, num_warps(1)}, 13 + round);
    if (gpu_has_clusters())
      check_gpu<float>(many, 9, {}, false, Config{{"BLOCK", 4}, {"COUNT", 256}, num_warps(1), cluster(4)}, 15 + round);
    check_gpu<float, int32_t>(many, 9, {.reduction = LossReduction::sum}, true, Config{{"BLOCK", 16}, num_warps(1)},
                              21 + round);
  }
  check_gpu<float, int32_t>(70, 333, {.z_loss = 1e-3f}, true, Config{{"BLOCK", 512}, num_warps(4)}, 9);
  check_gpu<float, int32_t>(70, 333, {.reduction = LossReduction::none}, false, Config{{"BLOCK", 64}, num_warps(2)}, 10);
}

// The finish kernel alone at a BLOCK whose partials take its last program 4 steps.
TEST_CASE("gpu: cross_entropy's finish kernel, the loss over several steps of partials") {
  if (!difftest::have_gpu()) return;
  const int64_t M = 1000, block = 16, programs = (M + block - 1) / block;
  auto losses = ref::random_vec<float>(M, 41);
  for (int64_t reduction : {1, 2}) {
    CAPTURE(reduction);
    Config c{{"BLOCK", block}, {"REDUCTION", reduction}};
    std::vector<int64_t> count_word{(int64_t(4) << 32) + (reduction == 2 ? 900 : 0)};  // 4 arrived, 900 rows
    std::vector<int32_t> done{0};
    auto count_wordd = to_device(count_word);
    auto doned = to_device(done);
    std::vector<float> loss(1, -1.0f), partials(programs, 0.0f);
    tk::cross_entropy_finish_kernel().launch(Grid(programs), c, loss, losses, partials, count_word, done, M);
    auto lossesd = to_device(losses);
    DeviceBuffer<float> lossd(1), partialsd(programs);
    tk::cross_entropy_finish_kernel().launch(Grid(programs), c, lossd, lossesd, partialsd, count_wordd, doned, M);
    cuda::synchronize();
    difftest::compare(lossd.to_host(), loss, {1e-6, 1e-6}, 0);
    CHECK(count_wordd.to_host()[0] == 0);
    CHECK(doned.to_host()[0] == 0);
  }
}

TEST_CASE_TEMPLATE("gpu: cross_entropy rows split over thread-block clusters", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  if (!gpu_has_clusters()) {
    MESSAGE("cluster test skipped: the GPU has no thread-block clusters (needs sm_90)");
    return;
  }
  tk::CrossEntropyOptions smooth{.label_smoothing = 0.1f, .z_loss = 1e-4f};
  check_gpu<T>(7, 30011, smooth, false, Config{{"BLOCK", 8192}, num_warps(8), cluster(4)}, 11);
  check_gpu<T>(7, 30011, {.reduction = LossReduction::none}, true, Config{{"BLOCK", 8192}, num_warps(8), cluster(4)}, 12);
  check_gpu<T>(5, 1000, {.reduction = LossReduction::sum}, true, Config{{"BLOCK", 256}, num_warps(2), cluster(4)}, 13);
  check_gpu<T>(3, 200003, smooth, false, Config{{"BLOCK", 16384}, num_warps(16), cluster(16)}, 14);
  // The heuristic's config for these buffers (a cluster on sm_90).
  check_gpu<T>(4, 30011, {}, true, tk::cross_entropy_heuristic(30011, dtype_v<T>, true), 15);
  // Rows indexed from their aligned start (ALIGN_ROWS), in one program and on a cluster.
  Config aligned{{"BLOCK", 1024}, {"CHUNKS", 5}, {"ALIGN_ROWS", 1}, num_warps(4)};
  check_gpu<T>(6, 4099, smooth, true, aligned, 16);
  check_gpu<T>(6, 16383, {.reduction = LossReduction::none}, false, Config(aligned).set("CHUNKS", 4), 17);
  Config aligned_cluster = aligned;
  aligned_cluster.cluster = 4;
  check_gpu<T>(5, 16383, smooth, false, aligned_cluster, 18);
}

TEST_CASE_TEMPLATE("gpu: cross_entropy with CHUNKS tiles per program, alone and in clusters", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  tk::CrossEntropyOptions smooth{.label_smoothing = 0.1f, .z_loss = 1e-4f};
  check_gpu<T>(9, 5001, smooth, false, Config{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(4)}, 21);
  check_gpu<T>(9, 5001, {.reduction = LossReduction::none}, true, Config{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(8)}, 22);
  if (!gpu_has_clusters()) return;
  check_gpu<T>(5, 151937, smooth, true, Config{{"BLOCK", 2048}, {"CHUNKS", 5}, num_warps(8), cluster(16)}, 23);
  check_gpu<T>(6, 50303, {.reduction = LossReduction::sum}, false,
               Config{{"BLOCK", 1024}, {"CHUNKS", 7}, num_warps(8), cluster(8)}, 24);
  for (int64_t V : {32000, 50304, 128256, 151936})  // the heuristic's configs at the bench widths
    check_gpu<T>(3, V, {}, true, tk::cross_entropy_heuristic(V, dtype_v<T>, true), 25);
  // Chunks kept in shared memory (HELD): in place (the gradient overwrites what the copies
  // read), with smoothing (four readers per chunk), the target picked from a held chunk.
  check_gpu<T>(3, 256000, smooth, true, tk::cross_entropy_heuristic(256000, dtype_v<T>, true), 26);
  check_gpu<T>(4, 131072, {.reduction = LossReduction::sum}, false,
               Config{{"BLOCK", 8192}, {"CHUNKS", 2}, {"HELD", 2}, {"PICK_TARGET", 1}, num_warps(8), cluster(8)}, 27);
  check_gpu<T>(5, 65536, smooth, true,
               Config{{"BLOCK", 4096}, {"CHUNKS", 2}, {"HELD", 1}, {"PICK_TARGET", 0}, num_warps(4), cluster(8)}, 28);
}

TEST_CASE_TEMPLATE("gpu: cross_entropy's target logit picked from the registers (PICK_TARGET) or loaded", T, float,
                   bfloat16) {
  tk::CrossEntropyOptions smooth{.label_smoothing = 0.1f, .z_loss = 1e-4f};
  if (!gpu_has_clusters()) return;
  for (int pick : {1, 0}) {
    CAPTURE(pick);
    // The heuristic's spreads at large vocabularies (64 and 56 values per thread), odd V.
    check_gpu<T>(9, 128257, smooth, true, Config{{"BLOCK", 8192}, {"PICK_TARGET", pick}, num_warps(4), cluster(16)}, 31);
    check_gpu<T>(11, 50305, {.reduction = LossReduction::none}, false,
                 Config{{"BLOCK", 1024}, {"CHUNKS", 7}, {"PICK_TARGET", pick}, num_warps(4), cluster(8)}, 32);
    // Rows off 16 bytes indexed from their aligned start (a column is position - head).
    check_gpu<T>(6, 16383, {.ignore_index = 3, .reduction = LossReduction::sum}, true,
                 Config{{"BLOCK", 4096}, {"ALIGN_ROWS", 1}, {"PICK_TARGET", pick}, num_warps(4), cluster(8)}, 33);
  }
}

TEST_CASE("gpu: a target outside 0..V-1 gives that row NaN loss and gradient, the others are unaffected") {
  if (!difftest::have_gpu()) return;
  int64_t M = 4, V = 100;
  auto x = ref::random_vec<float>(M * V, 21);
  // Row 0's target in the third program of a cluster of 4 x 32 columns (not rank 0).
  std::vector<int64_t> t{70, 100, -100, -7};
  double lse = 0;
  for (int64_t j = 0; j < V; ++j) lse += std::exp(double(x[j]));
  const double want0 = std::log(lse) - x[70];
  auto xd = to_device(x);
  auto td = to_device(t);
  // One program per row, and a cluster of 4 (where the program holding the target stores
  // the loss, and rank 0 that of a row whose target no program holds).
  std::vector<tk::ConfigOverride> configs{std::nullopt};
  if (gpu_has_clusters()) configs.push_back(Config{{"BLOCK", 32}, num_warps(1), cluster(4)});
  for (const auto& cfg : configs) {
    CAPTURE(cfg ? cfg->str() : std::string("heuristic"));
    DeviceBuffer<float> dxd(x.size()), lossd(M), mean(1);
    for (const auto* b : {&dxd, &lossd, &mean}) b->memset(0x3f);  // 0.747: neither 0 nor NaN, so every store shows
    tk::cross_entropy(lossd, dxd, xd, td, M, V, {.reduction = LossReduction::none}, cfg);
    auto loss = lossd.to_host();
    tk::cross_entropy(mean, dxd, xd, td, M, V, {}, cfg);
    auto dx = dxd.to_host();
    CHECK(loss[0] == doctest::Approx(want0).epsilon(1e-4));
    CHECK(std::isnan(loss[1]));
    CHECK(loss[2] == 0.0f);
    CHECK(std::isnan(loss[3]));
    CHECK(std::isnan(mean.to_host()[0]));
    for (int64_t j = 0; j < V; ++j) {
      CHECK(std::isfinite(dx[j]));
      CHECK(std::isnan(dx[V + j]));
      CHECK(dx[2 * V + j] == 0.0f);
    }
  }
}

// Short rows in batches (cross_entropy_row_batches.hpp): ROWS rows per program, the last
// batch partly past the rows; the heuristic's batches at 1-512 columns.
TEST_CASE_TEMPLATE("gpu: cross_entropy of short rows in batches of ROWS per program", T, float, bfloat16) {
  tk::CrossEntropyOptions smooth{.label_smoothing = 0.1f, .z_loss = 1e-4f, .reduction = LossReduction::sum,
                                 .grad_scale = 0.25f};
  check_gpu<T>(37, 300, {}, false, Config{{"BLOCK", 512}, {"ROWS", 4}, num_warps(2)}, 21);
  check_gpu<T>(37, 300, smooth, true, Config{{"BLOCK", 512}, {"ROWS", 2}, num_warps(1)}, 22);
  check_gpu<T>(37, 300, smooth, true, Config{{"BLOCK", 512}, {"ROWS", 2}, {"PICK_TARGET", 1}, num_warps(1)}, 22);
  check_gpu<T>(29, 77, {.ignore_index = -1, .reduction = LossReduction::none}, true,
               Config{{"BLOCK", 128}, {"ROWS", 16}, num_warps(2)}, 23);
  check_gpu<T>(21, 299, {.z_loss = 1e-3f, .logits_stride = 301}, false,
               Config{{"BLOCK", 512}, {"ROWS", 8}, {"COUNT", 0}, num_warps(4)}, 24);  // the count kernel
  for (int64_t V : {1, 33, 256, 512}) {
    Config h = tk::cross_entropy_rows_config(V, dtype_v<T>, true, false);
    if (V * int64_t(sizeof(T)) <= 1024) CHECK(h.has("ROWS"));
    check_gpu<T>(3001, V, {}, V % 2 == 0, h, 25 + uint32_t(V));  // 12 counting programs
  }
}
