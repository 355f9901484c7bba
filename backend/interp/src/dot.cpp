// dot(a [M, K], b [K, N], acc [M, N]) = acc + sum_k a[m, k] * b[k, n]: inputs f16, bf16, f8
// or f32 (precision tf32: f32 inputs first rounded to tf32 like cvt.rna.tf32.f32), each
// product rounded to f32, the sum over k accumulated in double and the result rounded
// once to f32.
#include <cstdint>
#include <cstring>

#include "exec.hpp"

namespace tilefuse::interp::detail {

namespace {
// f32 -> tf32 (10 explicit mantissa bits), to nearest with ties away from zero, as
// cvt.rna.tf32.f32 rounds; infinities and NaN pass through.
float round_to_tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & ~0x1fffu;
  std::memcpy(&x, &u, 4);
  return x;
}
}  // namespace

void exec_dot(Exec& ex, const ir::Op& op) {
  const ir::Type& ta = op.operand(0)->type;
  const ir::Type& tb = op.operand(1)->type;
  const ir::Type& tr = op.result()->type;
  TF_ASSERT(ta.rank() == 2 && tb.rank() == 2 && tr.rank() == 2 && ta.shape[1] == tb.shape[0] &&
                tr.shape[0] == ta.shape[0] && tr.shape[1] == tb.shape[1] && op.operand(2)->type == tr,
            "malformed dot");
  const int64_t M = ta.shape[0], K = ta.shape[1], N = tb.shape[1];
  const Slot& a = ex.at(op.operand(0));
  const Slot& b = ex.at(op.operand(1));
  const Slot& acc = ex.at(op.operand(2));
  Slot& out = ex.at(op.result());

  // Inputs are exactly representable as float; convert once for a float inner loop.
  ex.scratch_a.assign(a.f.begin(), a.f.end());
  ex.scratch_b.assign(b.f.begin(), b.f.end());
  if (op.precision() == ir::DotPrecision::Tf32) {
    for (auto& x : ex.scratch_a) x = round_to_tf32(x);
    for (auto& x : ex.scratch_b) x = round_to_tf32(x);
  }
  ex.scratch_f.assign(static_cast<size_t>(M * N), 0.0);
  const float* fa = ex.scratch_a.data();
  const float* fb = ex.scratch_b.data();
  double* c = ex.scratch_f.data();
  for (int64_t m = 0; m < M; ++m) {
    double* crow = c + m * N;
    for (int64_t k = 0; k < K; ++k) {
      const float amk = fa[m * K + k];
      const float* brow = fb + k * N;
      for (int64_t n = 0; n < N; ++n) crow[n] += static_cast<double>(amk * brow[n]);
    }
  }
  out.f.resize(M * N);
  for (int64_t j = 0; j < M * N; ++j) out.f[j] = static_cast<float>(acc.f[j] + c[j]);
}

}  // namespace tilefuse::interp::detail
