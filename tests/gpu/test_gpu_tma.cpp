// GEMM whose tensor-view operands move by TMA on sm_90a (16-byte-multiple row strides),
// against the interpreter: odd M, N, K inside padded rows whose padding holds NaN (a copy
// reading past a view's edge would show), both B layouts, the tilings the heuristic and
// the tuner use, and an empty view (K = 0). Label: gpu (skips without a driver).
#include <cmath>
#include <limits>

#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using difftest::gpu_matches_interp;

namespace {

// A [rows, cols] matrix in rows of `ld` elements, the padding NaN.
template <class T>
std::vector<T> padded(int rows, int cols, int ld, uint32_t seed) {
  auto v = ref::random_vec<T>(size_t(rows) * ld, seed, -1, 1);
  for (int r = 0; r < rows; ++r)
    for (int c = cols; c < ld; ++c) v[size_t(r) * ld + c] = T(std::numeric_limits<float>::quiet_NaN());
  return v;
}

int round_up8(int v) { return (v + 7) / 8 * 8; }

}  // namespace

TEST_CASE_TEMPLATE("gpu: TMA-fed GEMM at odd shapes inside padded rows, both B layouts", T, half, bfloat16) {
  for (auto [m, n, k, bm, bn, bk, warps, stages] :
       {std::tuple{200, 129, 100, 128, 256, 64, 8, 4}, std::tuple{77, 300, 190, 64, 128, 64, 4, 3},
        std::tuple{130, 70, 33, 128, 128, 32, 4, 2}, std::tuple{64, 64, 512, 64, 64, 64, 4, 5}}) {
    for (bool trans : {false, true}) {
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      CAPTURE(trans);
      int lda = round_up8(k) + 8, ldb = trans ? round_up8(k) + 16 : round_up8(n) + 8;
      auto a = padded<T>(m, k, lda, 41);
      auto b = trans ? padded<T>(n, k, ldb, 42) : padded<T>(k, n, ldb, 42);
      auto bias = ref::random_vec<T>(n, 43, -1, 1);
      std::vector<float> c(size_t(m) * n);
      Config cfg{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"B_TRANS", trans}, {"BIAS", 1},
                 {"ACT", 2}, num_warps(warps), num_stages(stages)};
      int64_t tiles = int64_t((m + bm - 1) / bm) * ((n + bn - 1) / bn);
      gpu_matches_interp(tk::matmul_kernel<T, float>(), Grid(tiles), cfg, {1e-3, 1e-3}, c, a, b, bias, c, m, n, k,
                         int64_t(lda), int64_t(ldb), int64_t(n), 1.0f);
    }
  }
}

TEST_CASE("gpu: TMA views with a dimension of 0 read zeros (K = 0 gives the epilogue of 0)") {
  int m = 77, n = 96;
  auto a = ref::random_vec<half>(size_t(m) * 64, 51, -1, 1), b = ref::random_vec<half>(size_t(64) * n, 52, -1, 1);
  auto bias = ref::random_vec<half>(n, 53, -1, 1);
  std::vector<float> c(size_t(m) * n, 5.0f);
  Config cfg{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"BIAS", 1}, num_warps(4), num_stages(3)};
  gpu_matches_interp(tk::matmul_kernel<half, float>(), Grid(2 * 2), cfg, {1e-6, 1e-6}, c, a, b, bias, c, m, n, 0,
                     int64_t(64), int64_t(n), int64_t(n), 1.0f);
}
