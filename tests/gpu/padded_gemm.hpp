#pragma once
// GEMM against the interpreter on operands stored in rows of 16-byte-multiple strides
// whose padding holds NaN (a copy reading past a view's edge would show): the TMA and
// persistent-program GPU tests share it.
#include <limits>
#include <tuple>
#include <vector>

#include <tilefuse/kernels/kernels.hpp>

#include "differential.hpp"
#include "../kernels/reference.hpp"

namespace padded_gemm {

// A [rows, cols] matrix in rows of `ld` elements, the padding NaN.
template <class T>
std::vector<T> padded(int rows, int cols, int ld, uint32_t seed) {
  auto v = ref::random_vec<T>(size_t(rows) * ld, seed, -1, 1);
  for (int r = 0; r < rows; ++r)
    for (int c = cols; c < ld; ++c) v[size_t(r) * ld + c] = T(std::numeric_limits<float>::quiet_NaN());
  return v;
}

inline int round_up8(int v) { return (v + 7) / 8 * 8; }

// M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, warps, stages.
using Case = std::tuple<int, int, int, int, int, int, int, int>;

// Each case with B row-major and transposed, bias + tanh-GELU, plus the config items `extra`.
template <class T>
void check(const std::vector<Case>& cases, const std::vector<tilefuse::ConfigItem>& extra, uint32_t seed) {
  using namespace tilefuse;
  for (auto [m, n, k, bm, bn, bk, warps, stages] : cases) {
    for (bool trans : {false, true}) {
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      CAPTURE(trans);
      int lda = round_up8(k) + 8, ldb = trans ? round_up8(k) + 16 : round_up8(n) + 8;
      auto a = padded<T>(m, k, lda, seed);
      auto b = trans ? padded<T>(n, k, ldb, seed + 1) : padded<T>(k, n, ldb, seed + 1);
      auto bias = ref::random_vec<T>(n, seed + 2, -1, 1);
      std::vector<float> c(size_t(m) * n);
      Config cfg{{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"B_TRANS", trans}, {"BIAS", 1},
                 {"ACT", 2}, num_warps(warps), num_stages(stages)};
      for (const auto& item : extra) cfg.set(item.name, item.value);
      int64_t tiles = int64_t((m + bm - 1) / bm) * ((n + bn - 1) / bn);
      difftest::gpu_matches_interp(kernels::matmul_kernel<T, float>(), Grid(tiles), cfg, {1e-3, 1e-3}, c, a, b, bias,
                                   c, m, n, k, int64_t(lda), int64_t(ldb), int64_t(n), 1.0f);
    }
  }
}

}  // namespace padded_gemm
