#pragma once
// Shared pieces of the RMSNorm and LayerNorm backward kernels: the persistent-program
// heuristic, the per-program partial sums of dW/dB and the kernel that reduces them,
// and the host-side argument checks.
//
// dW = sum over rows of a per-row term. Each persistent program walks rows pid, pid + P,
// ... and keeps its share in f32 (registers for one-tile rows, its own row of the
// partials buffer for looped rows); a second kernel adds the P partial rows per column
// in a fixed order, so dW is deterministic and needs no atomics.
#include <cstdint>
#include <string>
#include <vector>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/kernels/common.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

template <class Buffer>
constexpr bool is_device_buffer_v = requires(const std::remove_cvref_t<Buffer>& b) { b.arg(); };

// f32 scratch of the same kind as `Buffer`: device memory for device buffers, a host
// vector for the interpreter.
template <class Buffer>
auto norm_backward_scratch(size_t n) {
  if constexpr (is_device_buffer_v<Buffer>) return DeviceBuffer<float>(n);
  else return std::vector<float>(n);
}

// Persistent programs for `rows` rows: PROGRAMS_PER_SM per SM on the GPU, PROGRAMS_PER_SM
// in all on the interpreter, never more than the rows.
template <class Buffer>
int64_t norm_backward_programs(const Config& c, int64_t rows) {
  int64_t per_sm = c.has("PROGRAMS_PER_SM") ? c.get("PROGRAMS_PER_SM") : 1;
  int64_t sms = 1;
  if constexpr (is_device_buffer_v<Buffer>) sms = cuda::device_info().sm_count;
  return std::max<int64_t>(1, std::min(rows, per_sm * sms));
}

// The backward keeps more of the row live than the forward (x, dy, the weight and the
// dW accumulators, plus dB for LayerNorm), so about 16 elements per thread and one tile
// up to 8K columns; longer rows loop over 4K-column chunks. Programs per SM fill about
// 32 warps per SM (measured nowhere yet: a starting point the tuner refines).
inline Config norm_backward_heuristic(int64_t n_cols, DType dtype) {
  int64_t block = next_pow2(n_cols);
  int64_t max_tile = dtype == DType::f64 ? 4096 : 8192;
  if (block > max_tile) block = max_tile / 2;
  int warps = static_cast<int>(std::clamp<int64_t>(block / (32 * 16), 1, 16));
  int64_t per_sm = std::clamp<int64_t>(32 / warps, 1, 16);
  if (block < next_pow2(n_cols)) per_sm = 2;  // looped: each program's partial row is re-read per row
  return Config{{"BLOCK", block}, {"PROGRAMS_PER_SM", per_sm}, num_warps(warps)};
}

// Config of the reduction of the partials: BLOCK columns x PARTS partial rows per step.
inline Config norm_partials_config() { return Config{{"BLOCK", 64}, {"PARTS", 32}, num_warps(4)}; }

// dw[c] = sum_p partials[p, c]; with BIAS also db[c] = sum_p partials[n_parts + p, c].
template <class T>
const auto& norm_partials_reduce_kernel() {
  static auto k = kernel(std::string("norm_bwd_reduce_") + name(dtype_v<T>),
      {"dw", "db", "partials", "n_parts", "n_cols"},
      [](Ptr<T> dw, Ptr<T> db, Ptr<const float> partials, I32 n_parts, I32 n_cols, Meta<"BLOCK"> BLOCK,
         Meta<"PARTS"> PARTS, Meta<"BIAS", bool> BIAS) {
        auto cols = program_id(0) * BLOCK + arange(0, BLOCK);
        auto cmask = cols < n_cols;
        auto parts = arange(0, PARTS);
        auto column_sum = [&](I64 first_row) {
          auto acc = zeros<f32>({PARTS, BLOCK});
          for_range(0, n_parts, PARTS, [&](I32 p0) {
            auto p = p0 + parts;
            auto offs = (first_row + p.template cast<i64>()).col() * n_cols + cols.row();
            acc = acc + load(partials + offs, (p < n_parts).col() && cmask.row(), 0.0f);
          });
          return sum(acc, 0);
        };
        store(dw + cols, column_sum(scalar<i64>(0)).template cast<T>(), cmask);
        if (BIAS) store(db + cols, column_sum(n_parts.template cast<i64>()).template cast<T>(), cmask);
      });
  return k;
}

template <class DW, class DB, class P>
void reduce_norm_partials(DW& dw, DB& db, const P& partials, int64_t n_parts, int64_t cols, bool bias) {
  Config c = norm_partials_config().set("BIAS", bias);
  norm_partials_reduce_kernel<buffer_elem_t<DW>>().launch(Grid((cols + c.get("BLOCK") - 1) / c.get("BLOCK")), c, dw, db,
                                                          partials, n_parts, cols);
}

// A buffer argument must hold at least `need` elements.
template <class B>
void check_norm_arg(const char* fn, const char* arg, const B& b, int64_t need, const char* shape) {
  if (static_cast<int64_t>(b.size()) < need)
    user_error(std::string(fn) + ": " + arg + " has " + std::to_string(b.size()) + " elements, but " + shape +
                   " needs " + std::to_string(need),
               SourceLoc{}, std::string("Pass ") + arg + " with at least " + shape + " elements");
}

inline void check_norm_shape(const char* fn, int64_t rows, int64_t cols) {
  if (rows < 1 || cols < 1)
    user_error(std::string(fn) + ": rows and cols must be positive, got " + std::to_string(rows) + " x " +
                   std::to_string(cols),
               SourceLoc{}, "Pass the shape [rows, cols] of x");
}

}  // namespace tilefuse::kernels
