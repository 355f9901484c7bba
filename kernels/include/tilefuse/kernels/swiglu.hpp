#pragma once
// SwiGLU, the gated MLP activation: y = silu(a) * b with silu(a) = a * sigmoid(a), f32
// math; and its backward with upstream dy: da = dy * b * s * (1 + a * (1 - s)),
// db = dy * silu(a), s = sigmoid(a) (recomputed from a, nothing saved).
//
// Two layouts of the inputs, one tile program each way: a and b as two [M, N] tensors
// (row stride N, no offset), or packed as one [M, 2N] tensor whose rows hold a (gate)
// then b (up): both pointers are that tensor, the row stride is 2N and b starts N
// elements in. The backward writes da/db in the layout it reads a/b.
//
// Memory-bound: a flat grid of programs, each BLOCK columns of one row, so accesses are
// contiguous and, when N is a multiple of 8 (16-bit) or 4 (f32), 128-bit wide. Loads
// carry no cache hint: with L1::evict_first they ran 3-6 points of copy bandwidth slower
// (H200 bf16, forward 16384x4096 94.4 -> 97.5%, 16384x5000 92.3 -> 98.4%; bench/NOTES.md).
// sigmoid is fast_sigmoid(a) = 1 / (1 + 2^(-a * log2(e))): on the GPU ex2.approx and
// div.approx, relative error about 2^-21 + |a| * 2^-24 (below 1e-6 for |a| < 10), far
// under 16-bit rounding and within a few f32 ulps; the interpreter computes it exactly.
// Large |a| saturate correctly: the power overflows to inf and s to 0, or underflows to
// 0 and s to 1.
#include <algorithm>
#include <climits>
#include <string>

#include "tilefuse/kernels/buffer_checks.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/row_batches.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// Program p covers columns [k * BLOCK, (k + 1) * BLOCK) of row r, p = r * blocks + k:
// its row, columns, mask, input offsets and the gate and up values in f32.
template <class T>
struct SwigluBlock {
  I64 row;
  Tile<int32_t, 1> cols;
  Tile<bool, 1> mask;
  Tile<int64_t, 1> in;
  Tile<float, 1> av, bv;
  SwigluBlock(const Ptr<const T>& a, const Ptr<const T>& b, const I32& n_cols, const I64& ab_stride,
              const I64& b_offset, int64_t block)
      : row((program_id(0) / cdiv(n_cols, block)).template cast<i64>()),
        cols((program_id(0) % cdiv(n_cols, block)) * block + arange(0, block)),
        mask(cols < n_cols),
        in(row * ab_stride + cols),
        av(load(a + in, mask, 0.0f).template cast<f32>()),
        bv(load(b + b_offset + in, mask, 0.0f).template cast<f32>()) {}
};

// With ROWS > 1, program p covers those columns of rows [q * ROWS, (q + 1) * ROWS),
// p = q * blocks + k, as one [ROWS, BLOCK] tile (short rows: row_batches.hpp). at(p, s):
// the tile's pointers into p for rows s elements apart.
template <class T>
struct SwigluRows {
  Tile<int64_t, 1> rows;
  Tile<int32_t, 1> cols;
  Tile<bool, 2> mask;
  Tile<float, 2> av, bv;
  template <class P>
  auto at(const P& p, const I64& stride) const {
    return p + (rows * stride).col() + cols.row();
  }
  SwigluRows(const Ptr<const T>& a, const Ptr<const T>& b, const I32& n_rows, const I32& n_cols, const I64& ab_stride,
             const I64& b_offset, int64_t block, int64_t per)
      : rows(((program_id(0) / cdiv(n_cols, block)) * per + arange(0, per)).template cast<i64>()),
        cols((program_id(0) % cdiv(n_cols, block)) * block + arange(0, block)),
        mask((rows < n_rows.template cast<i64>()).col() && (cols < n_cols).row()),
        av(load(at(a, ab_stride), mask, 0.0f).template cast<f32>()),
        bv(load(at(b + b_offset, ab_stride), mask, 0.0f).template cast<f32>()) {}
};

// The forward: y = silu(a) * b.
template <class T>
const auto& swiglu_kernel() {
  static auto k = kernel(std::string("swiglu_") + name(dtype_v<T>),
      {"y", "a", "b", "n_rows", "n_cols", "ab_stride", "b_offset"},
      [](Ptr<T> y, Ptr<const T> a, Ptr<const T> b, I32 n_rows, I32 n_cols, I64 ab_stride, I64 b_offset,
         Meta<"BLOCK"> BLOCK, Meta<"ROWS", int64_t, 1> ROWS) {
        if (ROWS > 1) {
          SwigluRows<T> p(a, b, n_rows, n_cols, ab_stride, b_offset, BLOCK, ROWS);
          store(p.at(y, n_cols.template cast<i64>()), (p.av * fast_sigmoid(p.av) * p.bv).template cast<T>(), p.mask);
          return;
        }
        SwigluBlock<T> p(a, b, n_cols, ab_stride, b_offset, BLOCK);
        auto [row, cols, mask, in, av, bv] = p;
        auto silu = av * fast_sigmoid(av);
        store(y + row * n_cols + cols, (silu * bv).template cast<T>(), mask);
      });
  return k;
}

// The backward, same grid; da/db share a row stride and db sits db_offset elements in.
template <class T>
const auto& swiglu_backward_kernel() {
  static auto k = kernel(std::string("swiglu_bwd_") + name(dtype_v<T>),
      {"da", "db", "dy", "a", "b", "n_rows", "n_cols", "ab_stride", "b_offset"},
      [](Ptr<T> da, Ptr<T> db, Ptr<const T> dy, Ptr<const T> a, Ptr<const T> b, I32 n_rows, I32 n_cols,
         I64 ab_stride, I64 b_offset, Meta<"BLOCK"> BLOCK, Meta<"ROWS", int64_t, 1> ROWS) {
        if (ROWS > 1) {
          SwigluRows<T> p(a, b, n_rows, n_cols, ab_stride, b_offset, BLOCK, ROWS);
          auto g = load(p.at(dy, n_cols.template cast<i64>()), p.mask, 0.0f).template cast<f32>();
          auto s = fast_sigmoid(p.av);
          auto gs = g * s;
          store(p.at(da, ab_stride), (gs * p.bv * (1.0f + p.av * (1.0f - s))).template cast<T>(), p.mask);
          store(p.at(db + b_offset, ab_stride), (gs * p.av).template cast<T>(), p.mask);
          return;
        }
        SwigluBlock<T> p(a, b, n_cols, ab_stride, b_offset, BLOCK);
        auto [row, cols, mask, in, av, bv] = p;
        auto g = load(dy + row * n_cols + cols, mask, 0.0f).template cast<f32>();
        auto s = fast_sigmoid(av);
        auto gs = g * s;
        store(da + in, (gs * bv * (1.0f + av * (1.0f - s))).template cast<T>(), mask);
        store(db + b_offset + in, (gs * av).template cast<T>(), mask);
      });
  return k;
}

// Up to 512 columns of a row per program, 16 elements per thread in the forward and 8 in
// the backward (two tensors more in flight). Measured on H200, bf16 (tilefuse-tune, loads
// then with evict_first; not swept again without it):
// 16384x4096 forward 512/1 warp 3.93 TB/s vs 2048/8 warps 3.68; 16384x5000 forward 3.77
// vs 3.04 (small blocks waste less of the last one of a row); backward 512/2 warps 4.01
// vs 3.98.
// Rows of fewer than 512 columns: ROWS rows per program, about 2 KB of the inputs (a and b;
// with dy in the backward) per program (row_batches.hpp; H200 bf16, one row per program:
// N = 128 29.3% of copy, 256 57.1%, 512 89.9%).
inline Config swiglu_heuristic(int64_t n_cols, DType dtype = DType::bf16, bool backward = false) {
  int64_t block = std::min<int64_t>(next_pow2(n_cols), 512);
  int warps = static_cast<int>(std::max<int64_t>(1, block / (backward ? 256 : 512)));
  Config c{{"BLOCK", block}, num_warps(warps)};
  batch_short_rows(c, dtype, backward ? 3 : 2);
  return c;
}
inline Grid swiglu_grid(const Config& c, int64_t rows, int64_t cols) {
  int64_t per = checked_rows(c, "swiglu");
  int64_t programs = (rows + per - 1) / per * ((cols + c.get("BLOCK") - 1) / c.get("BLOCK"));
  if (programs > INT32_MAX)
    user_error("swiglu: " + std::to_string(programs) + " programs of BLOCK " + std::to_string(c.get("BLOCK")) +
                   " columns exceed the grid's 2^31 - 1",
               SourceLoc{}, "Raise BLOCK or split the rows over several calls");
  return Grid(programs);
}

namespace detail {
// The inputs: a and b [M, N] each, or (packed) ab [M, 2N] passed as both; T is the
// dtype of argument `ref`.
template <class T, class A, class B>
void check_swiglu_inputs(const char* fn, const A& a, const B& b, int64_t M, int64_t N, bool packed, const char* ref) {
  check_matrix_dims(fn, M, N);
  if (packed) {
    check_buffer_dtype<T>(fn, "ab", a, ref);
    check_buffer_size(fn, "ab", a, M, 2 * N, "M x 2N");
  } else {
    check_buffer_dtype<T>(fn, "a", a, ref);
    check_buffer_dtype<T>(fn, "b", b, ref);
    check_buffer_size(fn, "a", a, M, N, "M x N");
    check_buffer_size(fn, "b", b, M, N, "M x N");
  }
}
}  // namespace detail

// y [M, N] = silu(a) * b for a, b [M, N].
template <class Y, class A, class B>
void swiglu(Y&& y, const A& a, const B& b, int64_t M, int64_t N, ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Y>;
  detail::check_swiglu_inputs<T>("swiglu", a, b, M, N, false, "y");
  check_buffer_size("swiglu", "y", y, M, N, "M x N");
  Config c = cfg ? *cfg : swiglu_heuristic(N, dtype_v<T>);
  swiglu_kernel<T>().launch(swiglu_grid(c, M, N), c, y, a, b, M, N, N, int64_t(0));
}

// y [M, N] = silu(gate) * up, where each row of ab [M, 2N] is [gate (N), up (N)].
template <class Y, class AB>
void swiglu_packed(Y&& y, const AB& ab, int64_t M, int64_t N, ConfigOverride cfg = {}) {
  using T = buffer_elem_t<Y>;
  detail::check_swiglu_inputs<T>("swiglu_packed", ab, ab, M, N, true, "y");
  check_buffer_size("swiglu_packed", "y", y, M, N, "M x N");
  Config c = cfg ? *cfg : swiglu_heuristic(N, dtype_v<T>);
  swiglu_kernel<T>().launch(swiglu_grid(c, M, N), c, y, ab, ab, M, N, 2 * N, N);
}

// da, db [M, N] from dy [M, N] and the forward's inputs a, b [M, N].
template <class DA, class DB, class DY, class A, class B>
void swiglu_backward(DA&& da, DB&& db, const DY& dy, const A& a, const B& b, int64_t M, int64_t N,
                     ConfigOverride cfg = {}) {
  using T = buffer_elem_t<DA>;
  const char* fn = "swiglu_backward";
  detail::check_swiglu_inputs<T>(fn, a, b, M, N, false, "da");
  check_buffer_dtype<T>(fn, "db", db, "da");
  check_buffer_dtype<T>(fn, "dy", dy, "da");
  check_buffer_size(fn, "dy", dy, M, N, "M x N");
  check_buffer_size(fn, "da", da, M, N, "M x N");
  check_buffer_size(fn, "db", db, M, N, "M x N");
  Config c = cfg ? *cfg : swiglu_heuristic(N, dtype_v<T>, true);
  swiglu_backward_kernel<T>().launch(swiglu_grid(c, M, N), c, da, db, dy, a, b, M, N, N, int64_t(0));
}

// dab [M, 2N] (rows [dgate, dup]) from dy [M, N] and the packed input ab [M, 2N].
template <class DAB, class DY, class AB>
void swiglu_backward_packed(DAB&& dab, const DY& dy, const AB& ab, int64_t M, int64_t N, ConfigOverride cfg = {}) {
  using T = buffer_elem_t<DAB>;
  const char* fn = "swiglu_backward_packed";
  detail::check_swiglu_inputs<T>(fn, ab, ab, M, N, true, "dab");
  check_buffer_dtype<T>(fn, "dy", dy, "dab");
  check_buffer_size(fn, "dy", dy, M, N, "M x N");
  check_buffer_size(fn, "dab", dab, M, 2 * N, "M x 2N");
  Config c = cfg ? *cfg : swiglu_heuristic(N, dtype_v<T>, true);
  swiglu_backward_kernel<T>().launch(swiglu_grid(c, M, N), c, dab, dab, dy, ab, ab, M, N, 2 * N, N);
}

}  // namespace tilefuse::kernels
