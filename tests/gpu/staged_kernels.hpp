#pragma once
// Loop kernels whose loads num_stages > 1 stages through shared memory (see
// OpPlan::staged), shared by the GPU differential test and the offline PTX test.
#include <tilefuse/tilefuse.hpp>

namespace staged {

using namespace tilefuse;


// Persistent programs over rows: out = x * sum(x * w) - max(x) per row, the masked
// columns reading -3 (the max sees them, as on the interpreter).
template <class T>
const auto& staged_rows_kernel() {
  static auto k = kernel("staged_rows", {"out", "x", "w", "n_rows", "n_cols"},
      [](Ptr<float> out, Ptr<const T> x, Ptr<const T> w, I32 n_rows, I32 n_cols, Meta<"BLOCK"> BLOCK) {
        auto cols = arange(0, BLOCK);
        auto cmask = cols < n_cols;
        for_range(program_id(0), n_rows, num_programs(0), [&](I32 r) {
          auto off = r.cast<i64>() * n_cols + cols;
          auto xv = load(x + off, cmask, -3.0f, Cache::EvictFirst).template cast<f32>();
          auto wv = load(w + cols, cmask, 0.0f).template cast<f32>();
          store(out + off, xv * sum(xv * wv, 0) - max(xv, 0), cmask);
        });
      });
  return k;
}

// ROWS rows per step as one [ROWS, BLOCK] tile, a step of rows * programs.
template <class T>
const auto& staged_row_tiles_kernel() {
  static auto k = kernel("staged_row_tiles", {"out", "x", "n_rows", "n_cols"},
      [](Ptr<T> out, Ptr<const T> x, I32 n_rows, I32 n_cols, Meta<"BLOCK"> BLOCK, Meta<"ROWS"> ROWS) {
        auto cols = arange(0, BLOCK);
        auto lanes = arange(0, ROWS);
        for_range(program_id(0) * ROWS, n_rows, num_programs(0) * ROWS, [&](I32 first) {
          auto rows = first + lanes;
          auto mask = (rows < n_rows).col() && (cols < n_cols).row();
          auto off = (rows.template cast<i64>() * n_cols).col() + cols.row();
          auto xv = load(x + off, mask, 0.0f).template cast<f32>();
          store(out + off, (xv - (sum(xv, 1) / n_cols).col()).template cast<T>(), mask);
        });
      });
  return k;
}

// Long rows: an inner loop sums each row's chunks, a second one writes them scaled and
// adds the row's contribution to `acc` (load + store of the same buffer in the loop:
// that load is not staged, the others are).
template <class T>
const auto& staged_nested_kernel() {
  static auto k = kernel("staged_nested", {"out", "acc", "x", "n_rows", "n_cols"},
      [](Ptr<T> out, Ptr<float> acc, Ptr<const T> x, I32 n_rows, I32 n_cols, Meta<"BLOCK"> BLOCK) {
        auto cols = arange(0, BLOCK);
        for_range(program_id(0), n_rows, num_programs(0), [&](I32 r) {
          auto base = r.cast<i64>() * n_cols;
          auto s = zeros<f32>({BLOCK});
          for_range(0, n_cols, BLOCK, [&](I32 start) {
            auto c = start + cols;
            s = s + load(x + base + c, c < n_cols, 0.0f, Cache::EvictLast).template cast<f32>();
          });
          auto mean = sum(s, 0) / n_cols;
          for_range(0, n_cols, BLOCK, [&](I32 start) {
            auto c = start + cols;
            auto m = c < n_cols;
            auto v = load(x + base + c, m, 0.0f).template cast<f32>() - mean;
            store(out + base + c, v.template cast<T>(), m);
            store(acc + c, load(acc + c, m, 0.0f) + v * v, m);
          });
        });
      });
  return k;
}


// Persistent programs over rows indexed from their start rounded down to 16 bytes (each
// row's own align_down): the loads are checked per run (a row's first and last runs are
// partly valid) and staged by num_stages > 1 (fill 0). Row r of x starts at element
// `offset` + r * n; x holds `tail` more elements after the last row. y (laid out as x) =
// x * sum(x) + 1 per row, through y's own rounded-down row. READABLE: the load may read
// whole the runs holding the row's first and last elements, inside x; without it those
// runs move element by element. FILL=0: the load without an `other` (load(ptrs, mask),
// reading 0 where masked, as the fill does).
template <class T>
const auto& staged_aligned_rows_kernel() {
  static auto k = kernel("staged_aligned_rows", {"y", "x", "n_rows", "n", "offset", "tail"},
      [](Ptr<T> y, Ptr<const T> x, I32 n_rows, I32 n, I32 offset, I32 tail, Meta<"B"> B,
         Meta<"READABLE", bool, false> READABLE, Meta<"FILL", bool, true> FILL) {
        auto pos = arange(0, B);
        for_range(program_id(0), n_rows, num_programs(0), [&](I32 r) {
          auto first = offset.template cast<i64>() + r.template cast<i64>() * n;
          auto [base, head] = align_down(x + first);
          auto out = align_down(y + first).base;
          auto col = pos - head;
          auto mask = col >= 0 && col < n;
          auto v = zeros<f32>({B});
          if (READABLE) {
            const int64_t run = 16 / int64_t(sizeof(T));
            auto h = head.template cast<i64>();
            auto lo = maximum(((h - first + (run - 1)) / run) * run, 0).template cast<i32>();
            auto end = h + n.template cast<i64>();
            auto after = (n_rows - 1 - r).template cast<i64>() * n + tail.template cast<i64>();
            auto hi = minimum(((end + (run - 1)) / run) * run, ((end + after) / run) * run).template cast<i32>();
            v = load(base + pos, mask, 0.0f, Cache::EvictFirst, pos >= lo && pos < hi).template cast<f32>();
          } else if (FILL) {
            v = load(base + pos, mask, 0.0f, Cache::EvictFirst).template cast<f32>();
          } else {
            v = load(base + pos, mask).template cast<f32>();
          }
          store(out + pos, (v * sum(v, 0) + 1.0f).template cast<T>(), mask);
        });
      });
  return k;
}

}  // namespace staged
