#pragma once
// Short rows in batches: ROWS rows of one BLOCK tile per program, as a [ROWS, BLOCK]
// tile (the rows programs of softmax and its backward, the norms, cross-entropy, SwiGLU). One program per row
// moves BLOCK x element size bytes; for rows of 1 KB or less that is too little per
// program: an SM holds at most 32 programs, so 32 KB or less are in flight per SM.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

// Rows per program for a one-program, one-tile row config: about 2 KB per program of the
// `inputs` rows it reads (softmax backward: dy and y), a power of two (a tile dimension),
// at most 32 rows (a [1024, 1] tile of 1-column rows took 135-199 registers).
// Measured on H200 (softmax, % of copy, one row -> ROWS rows per program of one warp,
// bench/NOTES.md "Short rows in batches"): bf16 262144x128 19.6 -> 86.9 (8), 131072x256
// 38.1 -> 86.8 (4), 65536x512 72.1 -> 87.0 (2), 262144x512 77.6 -> 95.9 (2); f32 262144x128
// 39.1 -> 90.8 (4), 131072x256 75.9 -> 91.7 (2). Rows of 2 KB (bf16 1024, f32 512) lost 1-5
// points with 2 rows, and 4 KB per program lost up to 6 at 128-256 columns.
inline int64_t rows_per_program(const Config& c, DType dtype, int64_t inputs = 1) {
  if (c.cluster != 1 || (c.has("CHUNKS") && c.get("CHUNKS") > 1) || c.has("SPLIT")) return 1;
  int64_t bytes = c.get("BLOCK") * byte_size(dtype) * inputs;
  return bytes < 2048 ? static_cast<int64_t>(std::bit_floor(uint64_t(std::min<int64_t>(2048 / bytes, 32)))) : 1;
}
// (A cap of programs per SM set for the one-row program does not carry over.)
inline void batch_short_rows(Config& c, DType dtype, int64_t inputs = 1) {
  if (int64_t rows = rows_per_program(c, dtype, inputs); rows > 1) {
    c.set("ROWS", rows);
    c.min_programs_per_sm = 0;
  }
}

// ROWS (1 where unset) as a tile dimension: a power of two, or a UserError naming the
// config and `kernel`, the host function.
inline int64_t checked_rows(const Config& c, const char* kernel) {
  int64_t rows = c.has("ROWS") ? c.get("ROWS") : 1;
  if (rows < 1 || (rows & (rows - 1)) != 0)
    user_error(std::string(kernel) + ": the config {" + c.str() + "} has ROWS = " + std::to_string(rows) +
                   ", not a power of two",
               SourceLoc{}, "Set ROWS to the rows each program takes: 1, 2, 4, 8, ... (a tile dimension)");
  return rows;
}

// Whether a config runs the rows program (it sets ROWS and covers the row with one tile):
// checks what ROWS cannot combine with, naming the config, and drops the row programs'
// meta-parameters (rows in batches are [ROWS, BLOCK] tiles from the rows' own starts).
// `kernel`: the host function's name, for the messages.
inline bool uses_row_batches(Config& c, int64_t cols, const char* kernel) {
  if (!c.has("ROWS")) return false;
  checked_rows(c, kernel);
  if (c.cluster != 1)
    user_error(std::string(kernel) + ": the config {" + c.str() + "} combines ROWS with clusters", SourceLoc{},
               "Use ROWS (several short rows per program) or cluster(c) (one long row per cluster), not both");
  if (c.has("CHUNKS") && c.get("CHUNKS") != 1)
    user_error(std::string(kernel) + ": the config {" + c.str() + "} combines ROWS with CHUNKS", SourceLoc{},
               "Use ROWS (several short rows per program) or CHUNKS (one row as several tiles), not both");
  if (row_uses_loop(c, cols)) {
    c.meta.erase("ROWS");
    return false;
  }
  for (const char* m : {"ALIGN_ROWS", "HELD", "CHUNKS", "TAIL", "WEIGHT_COPIES", "RELOAD", "SHIFTED"}) c.meta.erase(m);
  return true;
}

namespace detail {
// The rows of program_id(0)'s batch: their indices, which of them exist, their first
// elements' offsets (i64), the columns, and the [ROWS, BLOCK] mask; at(p): the
// [ROWS, BLOCK] pointers into p (a column of row pointers plus the columns, as the
// softmax rows program).
struct RowBatch {
  Tile<int32_t, 1> rows;
  Tile<bool, 1> in_rows;
  Tile<int64_t, 1> first;
  Tile<int32_t, 1> cols;
  Tile<bool, 1> in_cols;
  Tile<bool, 2> mask;
  template <class P>
  auto at(const P& p) const {
    return p + first.col() + cols.row();
  }
  // A per-column parameter (weight, bias) as a [1, BLOCK] f32 tile, to broadcast over the
  // rows. (The compiler reads it in the rows' runs where its alignment allows: no
  // conversion through shared memory on rows of odd width.)
  template <class T>
  auto load_param(const Ptr<const T>& p) const {
    return load(p + cols.row(), in_cols.row(), 0.0f).template cast<f32>();
  }
};
inline RowBatch row_batch(const I32& n_rows, const I32& n_cols, const I64& stride, int64_t rows, int64_t block) {
  auto r = program_id(0) * rows + arange(0, rows);
  auto cols = arange(0, block);
  auto first = r.cast<i64>() * stride;
  return {r, r < n_rows, first, cols, cols < n_cols, (r < n_rows).col() && (cols < n_cols).row()};
}
}  // namespace detail

// The grid of a rows program: one program per ROWS rows, after `first` others (e.g.
// cross-entropy's counting programs).
inline Grid row_batch_grid(const Config& c, int64_t rows, int64_t first = 0) {
  int64_t per = c.get("ROWS");
  return grid(first + (rows + per - 1) / per);
}

}  // namespace tilefuse::kernels
