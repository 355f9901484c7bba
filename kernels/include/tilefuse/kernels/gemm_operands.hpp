#pragma once
// GEMM operands in rows whose starts are not 16-byte aligned (odd K, or B [K, N] with
// odd N, or a base off 16 bytes): no tensor map can describe them, so the GEMM would
// move them 1-2 bytes per access (a third of its speed or less, bench/NOTES.md). A GEMM
// that reads such an operand many times first copies it into rows of a 16-byte-multiple
// stride in stream-ordered scratch — read once, written once — and runs on the copy. The
// views still say K (or N) columns, so the copy's padding is never read.
#include <cstdint>
#include <optional>
#include <string>

#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/ir/knobs.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/launch_stream.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// dst[r, c] = src[r, c] for a [rows, cols] matrix, rows of ld_src and ld_dst elements;
// programs own [BLOCK_R, BLOCK_C] tiles in row-major tile order.
template <class T>
const auto& copy_rows_kernel() {
  static auto k = kernel(std::string("copy_rows_") + name(dtype_v<T>), {"dst", "src", "rows", "cols", "ld_dst", "ld_src"},
      [](Ptr<T> dst, Ptr<const T> src, I32 rows, I32 cols, I64 ld_dst, I64 ld_src, Meta<"BLOCK_R"> BLOCK_R,
         Meta<"BLOCK_C"> BLOCK_C) {
        auto tiles_c = cdiv(cols, static_cast<int>(BLOCK_C));
        auto pid = program_id(0);
        auto r = (pid / tiles_c) * static_cast<int>(BLOCK_R) + arange(0, BLOCK_R);
        auto c = (pid % tiles_c) * static_cast<int>(BLOCK_C) + arange(0, BLOCK_C);
        auto ok = (r < rows).col() && (c < cols).row();
        auto row = r.col().template cast<i64>();
        store(dst + row * ld_dst + c.row(), load(src + row * ld_src + c.row(), ok), ok);
      });
  return k;
}

inline Config copy_rows_config() { return Config{{"BLOCK_R", 16}, {"BLOCK_C", 256}, num_warps(4)}; }

namespace detail {

// Device memory from the launch stream's pool for the duration of one host call: work
// queued on the stream before the destructor's free may use it.
template <class T>
class StreamScratch {
 public:
  explicit StreamScratch(size_t n)
      : stream_(static_cast<CUstream>(current_launch_stream())),
        ptr_(static_cast<T*>(cuda::mem_alloc_async(n * sizeof(T), stream_))), n_(n) {}
  ~StreamScratch() { cuda::mem_free_async(ptr_, stream_); }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  DevicePtr<T> get() const { return DevicePtr<T>(ptr_, n_); }

 private:
  CUstream stream_;
  T* ptr_;
  size_t n_;
};

// TILEFUSE_GEMM_COPY: 0 never copies operands, 1 copies every misaligned one, unset
// decides by reuse (copy_pays).
inline int gemm_copy_mode() {
  std::string v = knob("TILEFUSE_GEMM_COPY");
  return v == "0" ? 0 : v == "1" ? 1 : -1;
}

// Whether a misaligned operand (rows of `ld` elements at `address`) is copied: when the
// GEMM reads it from at least two 128-wide tiles of its other side (`reuse` = N for A,
// M for B) and is big enough (2^28 multiply-adds) that one more launch does not matter.
inline bool copy_pays(uint64_t address, int64_t ld, int elem_bytes, int64_t reuse, int64_t macs) {
  bool misaligned = (ld * elem_bytes) % 16 != 0 || address % 16 != 0;
  if (!misaligned) return false;
  int mode = gemm_copy_mode();
  if (mode >= 0) return mode == 1;
  return reuse >= 256 && macs >= (int64_t{1} << 28);
}

// An operand as the GEMM reads it: the caller's buffer, or a copy in aligned rows.
template <class T>
struct GemmOperand {
  DevicePtr<const T> ptr;
  int64_t ld;
  std::optional<StreamScratch<T>> copy;
};

template <class T, class Buf>
void align_operand(GemmOperand<T>& op, const Buf& buf, int64_t rows, int64_t cols, int64_t reuse, int64_t macs) {
  op.ptr = DevicePtr<const T>(buf.data(), buf.size());
  if (!copy_pays(op.ptr.address(), op.ld, sizeof(T), reuse, macs)) return;
  int64_t per = 16 / static_cast<int64_t>(sizeof(T));
  int64_t ld = (cols + per - 1) / per * per;
  op.copy.emplace(static_cast<size_t>(rows * ld));
  Config cfg = copy_rows_config();
  int64_t tiles = ((rows + cfg.get("BLOCK_R") - 1) / cfg.get("BLOCK_R")) * ((cols + cfg.get("BLOCK_C") - 1) / cfg.get("BLOCK_C"));
  copy_rows_kernel<T>().launch(grid(tiles), cfg, op.copy->get(), op.ptr, rows, cols, ld, op.ld);
  op.ptr = DevicePtr<const T>(op.copy->get().data(), op.copy->get().size());
  op.ld = ld;
}

// Runs run(a, b, lda, ldb) on A [M, K] and B ([K, N], or [N, K] with b_trans), with
// misaligned operands copied first where that pays (device buffers on a GPU whose GEMMs
// use TMA; elsewhere the operands as given).
template <class TA, class TB, class A, class B, class Run>
void with_aligned_operands(const A& a, const B& b, int64_t M, int64_t N, int64_t K, bool b_trans, Run&& run) {
  int64_t lda = K, ldb = b_trans ? K : N;
  if constexpr (is_device_buffer_v<A> && is_device_buffer_v<B>) {
    if (warpgroup_mma_usable<A>()) {
      int64_t macs = M * N * K;
      GemmOperand<TA> oa{{}, lda, std::nullopt};
      GemmOperand<TB> ob{{}, ldb, std::nullopt};
      align_operand(oa, a, M, K, N, macs);
      align_operand(ob, b, b_trans ? N : K, b_trans ? K : N, M, macs);
      if (oa.copy || ob.copy) return run(oa.ptr, ob.ptr, oa.ld, ob.ld);
    }
  }
  run(a, b, lda, ldb);
}

}  // namespace detail
}  // namespace tilefuse::kernels
