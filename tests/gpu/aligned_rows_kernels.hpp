#pragma once
// Rows indexed from their start rounded down to 16 bytes (align_down): every access of
// a row is an aligned run whose mask the compiler tests at run time, whatever the width.
// Shared by the interpreter test (tests/dsl/test_aligned_rows.cpp) and the GPU
// differential test (tests/gpu/test_gpu_aligned_rows.cpp), with plain C++ references.
#include <cstdint>
#include <vector>

#include <tilefuse/tilefuse.hpp>

namespace aligned_rows {

using namespace tilefuse;

// Row r of x [rows, n] (row stride `stride`): y = x * 2 + column, written through the
// output's own rounded-down row; sums[r] = the row's sum plus the `other` fill (-1) of
// every masked position, so runs with nothing valid, partly valid and whole all count;
// heads[r] = the elements x's row start dropped (what align_down says). READABLE: the
// load declares readable the whole runs of 16 bytes around the row inside x (so the
// compiler reads the partly masked ones whole and masks them in registers).
template <class T>
const auto& scale_rows_kernel() {
  static auto k = kernel("aligned_scale_rows", {"y", "sums", "heads", "x", "n", "stride"},
      [](Ptr<T> y, Ptr<f32> sums, Ptr<i32> heads, Ptr<const T> x, I32 n, I64 stride, Meta<"B"> B,
         Meta<"READABLE", bool, false> READABLE) {
        auto r = program_id(0);
        auto [base, head] = align_down(x + r * stride);
        auto out = align_down(y + r * stride).base;
        auto pos = arange(0, B);
        auto col = pos - head;
        auto mask = col >= 0 && col < n;
        auto v = zeros<f32>({B});
        if (READABLE) {
          // Positions of x from the run holding x's first element to the end of the run
          // holding the row's last or x's last, whichever comes first.
          const int64_t run = 16 / int64_t(sizeof(T));
          auto rows = num_programs(0);
          auto h = head.template cast<i64>();
          auto first = maximum(((h - r * stride + (run - 1)) / run) * run, 0).template cast<i32>();
          auto end = h + n.template cast<i64>();
          auto last = minimum(((end + (run - 1)) / run) * run, ((end + (rows - 1 - r) * stride) / run) * run);
          v = load(base + pos, mask, -1.0f, Cache::Normal, pos >= first && pos < last.template cast<i32>())
                  .template cast<f32>();
        } else {
          v = load(base + pos, mask, -1.0f).template cast<f32>();
        }
        store(out + pos, (v * 2.0f + col.template cast<f32>()).template cast<T>(), mask);
        store(sums + r, sum(v, 0));
        store(heads + r, head);
      });
  return k;
}

// Positions the kernel needs per row: the row and the head it may drop.
template <class T>
int64_t positions_for(int64_t n) {
  int64_t need = n + 16 / int64_t(sizeof(T)) - 1, b = 1;
  while (b < need) b *= 2;
  return b;
}

// The elements a row of x (at its real address) drops when rounded down to 16 bytes.
template <class T>
int32_t head_of(const T* p) {
  return static_cast<int32_t>((reinterpret_cast<uintptr_t>(p) % 16) / sizeof(T));
}

}  // namespace aligned_rows
