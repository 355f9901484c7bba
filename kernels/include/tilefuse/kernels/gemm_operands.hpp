#pragma once
// GEMM operands in rows whose starts are not 16-byte aligned (odd K, or B [K, N] with
// odd N, or a base off 16 bytes): no tensor map can describe them, so the GEMM would
// move them 1-2 bytes per access (a third of its speed or less, bench/NOTES.md). A GEMM
// that reads such an operand many times first copies it into rows of a 128-byte-multiple
// stride in stream-ordered scratch — read once, written once — and runs on the copy. The
// views still say K (or N) columns, so the copy's padding is never read. Rows an odd
// multiple of 16 bytes apart are copied too where the GEMM is long enough
// (sector_copy_pays): TMA moves them, but each box row costs an extra sector.
// 8-bit B given as [K, N]: Hopper's 8-bit MMAs read B only K-major, so the GEMM would
// transpose every tile it loads in its main loop (~110 TFLOP/s against ~1300); the host
// function transposes B once into [N, K] scratch instead.
#include <cstdint>
#include <optional>
#include <string>

#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/ir/knobs.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/kernels/stream_scratch.hpp"
#include "tilefuse/launch_stream.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

namespace detail {

// The rows and columns of this program's [block_r, block_c] tile of a matrix of `cols`
// columns, the tiles numbered row by row.
struct MatrixTile {
  Tile<int32_t, 1> r, c;
};
inline MatrixTile matrix_tile(const I32& cols, int64_t block_r, int64_t block_c) {
  auto tiles_c = cdiv(cols, static_cast<int>(block_c));
  auto pid = program_id(0);
  return {(pid / tiles_c) * static_cast<int>(block_r) + arange(0, block_r),
          (pid % tiles_c) * static_cast<int>(block_c) + arange(0, block_c)};
}

}  // namespace detail

// dst[r, c] = src[r, c] for a [rows, cols] matrix, rows of ld_src and ld_dst elements;
// programs own [BLOCK_R, BLOCK_C] tiles in row-major tile order.
template <class T>
const auto& copy_rows_kernel() {
  static auto k = kernel(std::string("copy_rows_") + name(dtype_v<T>), {"dst", "src", "rows", "cols", "ld_dst", "ld_src"},
      [](Ptr<T> dst, Ptr<const T> src, I32 rows, I32 cols, I64 ld_dst, I64 ld_src, Meta<"BLOCK_R"> BLOCK_R,
         Meta<"BLOCK_C"> BLOCK_C) {
        auto [r, c] = detail::matrix_tile(cols, BLOCK_R, BLOCK_C);
        auto ok = (r < rows).col() && (c < cols).row();
        auto row = r.col().template cast<i64>();
        store(dst + row * ld_dst + c.row(), load(src + row * ld_src + c.row(), ok), ok);
      });
  return k;
}

inline Config copy_rows_config() { return Config{{"BLOCK_R", 16}, {"BLOCK_C", 256}, num_warps(4)}; }

// dst[c, r] = src[r, c]: the [rows, cols] matrix src (rows of ld_src elements) into the
// [cols, rows] matrix dst (rows of ld_dst); programs own [BLOCK_R, BLOCK_C] tiles of src.
template <class T>
const auto& transpose_kernel() {
  static auto k = kernel(std::string("transpose_") + name(dtype_v<T>), {"dst", "src", "rows", "cols", "ld_dst", "ld_src"},
      [](Ptr<T> dst, Ptr<const T> src, I32 rows, I32 cols, I64 ld_dst, I64 ld_src, Meta<"BLOCK_R"> BLOCK_R,
         Meta<"BLOCK_C"> BLOCK_C) {
        auto [r, c] = detail::matrix_tile(cols, BLOCK_R, BLOCK_C);
        auto tile = load(src + r.col().template cast<i64>() * ld_src + c.row(), (r < rows).col() && (c < cols).row());
        store(dst + c.col().template cast<i64>() * ld_dst + r.row(), trans(tile), (c < cols).col() && (r < rows).row());
      });
  return k;
}

// Tiles of 32 bytes' worth of src rows by 256 bytes of columns: each program writes runs
// of 32 bytes (whole sectors) into dst's rows. Measured on H200 in the 8-bit GEMM (bench/NOTES.md): 16-byte
// runs (half sectors) or 64- to 128-byte ones were slower.
template <class T>
Config transpose_config() {
  int64_t size = static_cast<int64_t>(sizeof(T));
  return Config{{"BLOCK_R", 32 / size}, {"BLOCK_C", 256 / size}, num_warps(4)};
}

namespace detail {

// TILEFUSE_GEMM_COPY: 0 never copies or transposes operands, 1 copies every misaligned
// one, unset decides by size (copy_pays).
inline int gemm_copy_mode() {
  std::string v = knob("TILEFUSE_GEMM_COPY");
  return v == "0" ? 0 : v == "1" ? 1 : -1;
}

// Whether a misaligned operand (rows of `ld` elements at `address`) is copied: unless
// the GEMM is so small (under 2^25 multiply-adds) that one more launch is most of its
// time. Measured on H200 (bench/NOTES.md): from 384x384x383 up the copy pays, however
// few tiles reuse the operand (1024x128x1023: 60 -> 16 us); 256x256x255 breaks even.
inline bool copy_pays(uint64_t address, int64_t ld, int elem_bytes, int64_t macs) {
  bool misaligned = (ld * elem_bytes) % 16 != 0 || address % 16 != 0;
  if (!misaligned) return false;
  int mode = gemm_copy_mode();
  if (mode >= 0) return mode == 1;
  return macs >= (int64_t{1} << 25);
}

// Whether a B whose rows are 16-byte aligned but an odd multiple of 16 bytes apart (N, or
// K with B [N, K], of 8 mod 16 16-bit elements: 1000, 3000, 5000, ...) is copied into rows
// of a 128-byte-multiple stride first. Each 128-byte row of its TMA boxes then spans five
// 32-byte sectors instead of four, and B's 256 box rows per K block slow a GEMM of more
// than one wave of 128x256 tiles, whose copies run near L2's bandwidth, by 15-25%:
// H200, bench/NOTES.md, with B copied (the copy's time included): 8192x5000x4096 594 ->
// 474 us, 4096x3000x8192 341 -> 288, 2000x3000x4000 105 -> 94, 3000^3 130 -> 112. The
// copy is one pass over B and the GEMM reads it M / 128 times: it lost at 1024 rows
// (1024x5000x8192 175 -> 184 us, H100) and on one wave (4096x1000x4096 70 -> 72). A's
// 128 box rows cost less than its copy even at 16384 columns (4096x16384x3000 533 -> 536
// us, 4096x4096x3000 138 -> 150), so A is copied only when forced.
inline bool sector_copy_pays(int64_t ld, int elem_bytes, int64_t reuse, int64_t tiles, int64_t sms, bool is_b) {
  if ((ld * elem_bytes) % 32 != 16) return false;
  int mode = gemm_copy_mode();
  if (mode >= 0) return mode == 1;
  return is_b && reuse >= 1536 && tiles > sms;
}

// Whether an 8-bit B [K, N] is transposed before the GEMM: always, unless
// TILEFUSE_GEMM_COPY=0 (the in-kernel K-major copies measured 2-10x slower at every
// size, 256^3 included).
inline bool transpose_pays() { return gemm_copy_mode() != 0; }

// An operand as the GEMM reads it: the caller's buffer, or a copy in aligned rows.
template <class T>
struct GemmOperand {
  DevicePtr<const T> ptr;
  int64_t ld;
  std::optional<StreamScratch<T>> copy;
};

// Launches copy_rows_kernel or transpose_kernel over the [BLOCK_R, BLOCK_C] tiles of a
// [rows, cols] source.
template <class Kernel, class Dst, class Src>
void launch_over_tiles(const Kernel& kernel, const Config& cfg, Dst&& dst, const Src& src, int64_t rows, int64_t cols,
                       int64_t ld_dst, int64_t ld_src) {
  int64_t tiles = ((rows + cfg.get("BLOCK_R") - 1) / cfg.get("BLOCK_R")) * ((cols + cfg.get("BLOCK_C") - 1) / cfg.get("BLOCK_C"));
  kernel.launch(grid(tiles), cfg, dst, src, rows, cols, ld_dst, ld_src);
}

// Replaces op's [rows, cols] matrix by `kernel`'s output ([rows, cols] from copy_rows,
// [cols, rows] from transpose) in scratch rows of a `row_bytes`-multiple stride.
template <class T, class Kernel>
void into_aligned_rows(GemmOperand<T>& op, const Kernel& kernel, const Config& cfg, int64_t rows, int64_t cols,
                       bool transposed, int64_t row_bytes = 16) {
  int64_t per = row_bytes / static_cast<int64_t>(sizeof(T));
  int64_t out_rows = transposed ? cols : rows, out_cols = transposed ? rows : cols;
  int64_t ld = (out_cols + per - 1) / per * per;
  op.copy.emplace(static_cast<size_t>(out_rows * ld));
  launch_over_tiles(kernel, cfg, op.copy->get(), op.ptr, rows, cols, ld, op.ld);
  op.ptr = DevicePtr<const T>(op.copy->get().data(), op.copy->get().size());
  op.ld = ld;
}

// Runs run(a, b, lda, ldb, b_trans) on A [M, K] and B ([K, N], or [N, K] with b_trans),
// with misaligned operands copied first where that pays, and an 8-bit B [K, N]
// transposed (device buffers on a GPU whose GEMMs use wgmma; elsewhere the operands as
// given). `tiles`: the GEMM's output tiles. Copies get rows of a 128-byte-multiple stride
// (whole cache lines: a 16-byte multiple could again be an odd one, sector_copy_pays).
template <class TA, class TB, class A, class B, class Run>
void with_aligned_operands(const A& a, const B& b, int64_t M, int64_t N, int64_t K, bool b_trans, int64_t tiles,
                           Run&& run) {
  int64_t lda = K, ldb = b_trans ? K : N;
  if constexpr (is_device_buffer_v<A> && is_device_buffer_v<B>) {
    if (warpgroup_mma_usable<A>()) {
      int64_t macs = M * N * K, sms = gpu_sm_count();
      GemmOperand<TA> oa{DevicePtr<const TA>(a.data(), a.size()), lda, std::nullopt};
      GemmOperand<TB> ob{DevicePtr<const TB>(b.data(), b.size()), ldb, std::nullopt};
      bool copy_a = copy_pays(oa.ptr.address(), lda, sizeof(TA), macs) ||
                    sector_copy_pays(lda, sizeof(TA), N, tiles, sms, false);
      bool copy_b = copy_pays(ob.ptr.address(), ldb, sizeof(TB), macs) ||
                    sector_copy_pays(ldb, sizeof(TB), M, tiles, sms, true);
      if (copy_a) into_aligned_rows(oa, copy_rows_kernel<TA>(), copy_rows_config(), M, K, false, 128);
      if (is_float8(dtype_v<TB>) && !b_trans && transpose_pays()) {
        into_aligned_rows(ob, transpose_kernel<TB>(), transpose_config<TB>(), K, N, true, 128);
        b_trans = true;
      } else if (copy_b) {
        into_aligned_rows(ob, copy_rows_kernel<TB>(), copy_rows_config(), b_trans ? N : K, b_trans ? K : N, false, 128);
      }
      if (oa.copy || ob.copy) return run(oa.ptr, ob.ptr, oa.ld, ob.ld, b_trans);
    }
  }
  run(a, b, lda, ldb, b_trans);
}

}  // namespace detail
}  // namespace tilefuse::kernels
