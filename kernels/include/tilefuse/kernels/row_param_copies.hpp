#pragma once
// Shifted copies of a row parameter (a norm's weight or bias) for row programs that index
// misaligned rows from their 16-byte-aligned start (ALIGN_ROWS, row_chunks.hpp). Such a
// program reads x and writes y at whole 16-byte runs, but the parameter's column p - head
// sits at a different offset within its run for each of the R = 16 / sizeof(T) heads a
// row may have, so it could only be read element by element or realigned per run in
// registers (a dozen selects and shifts per run; both measured slower than the rows'
// gain, bench/NOTES.md). The host writes R copies once per call instead, copy h holding
// the parameter shifted right by h elements, and the program reads copy `head` at its
// own positions: aligned, 16 bytes per access, like the rows.
#include <cstdint>
#include <string>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/stream_scratch.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// Elements per copy: the parameter behind up to R - 1 leading zeros, rounded up to R
// (each copy starts on 16 bytes). R = 16 / element size.
inline int64_t shifted_copy_stride(int64_t cols, int64_t elem_bytes) {
  int64_t r = 16 / elem_bytes;
  return (cols + 2 * r - 2) / r * r;
}
// The same, traced into a row program from its n_cols.
template <class T>
I32 shifted_copy_stride(const I32& n_cols) {
  constexpr int r = 16 / static_cast<int>(sizeof(T));
  return (n_cols + (2 * r - 2)) / r * r;
}

// dst[q, h, p] = src_q[p - h] where 0 <= p - h < n_cols, else 0, for the PARAMS (1 or 2)
// parameters q and their R copies h (each copy_stride elements); program (h * blocks + j,
// q) writes positions [j BLOCK, (j + 1) BLOCK) of copy h of parameter q.
template <class T>
const auto& shifted_copies_kernel() {
  static auto k = kernel(std::string("shifted_copies_") + name(dtype_v<T>),
      {"dst", "src0", "src1", "n_cols", "copy_stride"},
      [](Ptr<T> dst, Ptr<const T> src0, Ptr<const T> src1, I32 n_cols, I32 copy_stride, Meta<"BLOCK"> BLOCK,
         Meta<"PARAMS"> PARAMS) {
        constexpr int r = 16 / static_cast<int>(sizeof(T));
        auto blocks = cdiv(copy_stride, static_cast<int>(BLOCK));
        auto pid = program_id(0);
        auto q = program_id(1);
        auto h = pid / blocks;
        auto p = (pid % blocks) * static_cast<int>(BLOCK) + arange(0, BLOCK);
        auto col = p - h;
        auto in = col >= 0 && col < n_cols;
        auto v = load(src0 + col, in && q == 0, 0.0f);
        if (PARAMS > 1) v = where(q == 0, v, load(src1 + col, in && q == 1, 0.0f));
        auto first = (q * r + h) * copy_stride;
        store(dst + first.template cast<i64>() + p, v, p < copy_stride);
      });
  return k;
}

// with(copies of params...): the R shifted copies of each parameter (cols elements of T;
// one or two parameters, copied in one launch) as buffers of the parameters' kind —
// stream scratch for device buffers, host memory for the interpreter — alive during `with`.
template <class T, class With, class... P>
void with_shifted_copies(int64_t cols, With&& with, const P&... params) {
  constexpr int64_t n_params = sizeof...(P);
  static_assert(n_params == 1 || n_params == 2, "with_shifted_copies: one or two parameters");
  const int64_t block = 1024;
  int64_t stride = shifted_copy_stride(cols, sizeof(T));
  int64_t per_param = 16 / static_cast<int64_t>(sizeof(T)) * stride;
  Config cfg{{"BLOCK", block}, {"PARAMS", n_params}, num_warps(4)};
  Grid grid(16 / static_cast<int64_t>(sizeof(T)) * ((stride + block - 1) / block), n_params);
  const auto& first = std::get<0>(std::tie(params...));
  const auto& last = std::get<n_params - 1>(std::tie(params...));
  auto run = [&](auto& dst, const T* base, auto view) {
    shifted_copies_kernel<T>().launch(grid, cfg, dst, first, last, cols, stride);
    [&]<size_t... I>(std::index_sequence<I...>) {
      with(view(base + I * per_param, per_param)...);
    }(std::make_index_sequence<n_params>());
  };
  if constexpr ((is_device_buffer_v<P> && ...)) {
    detail::StreamScratch<T> scratch(static_cast<size_t>(n_params * per_param));
    auto dst = scratch.get();
    run(dst, dst.data(), [](const T* p, int64_t n) { return DevicePtr<const T>(p, static_cast<size_t>(n)); });
  } else {
    std::vector<T> host(static_cast<size_t>(n_params * per_param));
    run(host, host.data(), [](const T* p, int64_t n) { return std::span<const T>(p, static_cast<size_t>(n)); });
  }
}

// Whether a norm reads its weight (and bias) from shifted copies, and the row programs
// index misaligned rows from their aligned start for it. Measured on H200 (bf16 % of copy,
// plain rows -> copies; bench/NOTES.md "Norm weights from shifted copies"):
// - rows of 16-bit data that start on 2 bytes only (odd widths, or a base off 4 bytes),
//   whose plain accesses move 2 bytes each: RMSNorm 8191x4097 62.5 -> 70.9, 4096x8191
//   55.0 -> 69.2, 2048x16383 55.3 -> 66.5, 512x65537 46.5 -> 61.7; LayerNorm 2048x16385
//   39.3 -> 49.8, 512x65535 33.9 -> 44.0. Rows on 4 or 8 bytes lost (RMSNorm 8189x4098
//   77.9 -> 72.1, LayerNorm 8185x4100 77.3 -> 59.9), as did f32;
// - 2^24 elements or more: the copies' launch costs about 2 us (2048x4097: RMSNorm 44.2 ->
//   45.1, LayerNorm 41.2 -> 38.9; 1024x4097 both lost);
// - 128 rows or more: the R copies are written once and each read by rows / R rows; with
//   few long rows they cost as much as the rows (RMSNorm, split, 8x4194305 48.3 -> 34.0,
//   32x1048577 47.9 -> 41.7; 128x262145 47.3 -> 49.2).
inline bool weight_copies_pay(int64_t rows, int64_t cols, DType dtype, uint64_t address) {
  bool two_byte_rows = byte_size(dtype) == 2 && (cols % 2 == 1 || address % 4 != 0);
  return two_byte_rows && rows * cols >= (int64_t{1} << 24) && rows >= 128;
}

// Sets WEIGHT_COPIES in a norm's config and says whether it is on: only where the program
// indexes its rows from their aligned start (ALIGN_ROWS), and then as the config asks
// (WEIGHT_COPIES=0/1), else where `pays` (weight_copies_pay; without copies each run of the
// parameters is realigned in registers).
inline bool set_weight_copies(Config& c, bool pays) {
  bool on = c.has("ALIGN_ROWS") && c.get("ALIGN_ROWS") != 0 &&
            (c.has("WEIGHT_COPIES") ? c.get("WEIGHT_COPIES") != 0 : pays);
  c.meta.erase("WEIGHT_COPIES");
  if (on) c.set("WEIGHT_COPIES", 1);
  return on;
}

// launch(params...), or launch(copies of params...) where the config reads them from
// shifted copies (set_weight_copies(c, pays), which this calls).
template <class T, class Launch, class... P>
void launch_with_row_params(Config& c, bool pays, int64_t cols, Launch&& launch, const P&... params) {
  if (!set_weight_copies(c, pays)) return launch(params...);
  with_shifted_copies<T>(cols, launch, params...);
}

}  // namespace tilefuse::kernels
