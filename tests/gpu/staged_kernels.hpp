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


}  // namespace staged
