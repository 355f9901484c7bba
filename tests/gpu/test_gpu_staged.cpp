// Loads staged through shared memory (num_stages > 1 on loops without dots): each
// thread's copies run S - 1 iterations ahead by cp.async and are read back into its
// registers. Against the interpreter: persistent row loops (1-D rows and [ROWS, BLOCK]
// tiles), nested loops with a read-modify-write of a buffer the loop also stores (not
// staged), masked loads whose `other` is not zero, trip counts below the stages, 4-, 8-
// and 16-byte runs, 2 to 4 stages; checked loads of rows indexed from their aligned
// start, at every alignment. Label: gpu (skips without a driver).
#include <tilefuse/tilefuse.hpp>

#include "differential.hpp"
#include "staged_kernels.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
using difftest::gpu_matches_interp;

using namespace staged;

TEST_CASE_TEMPLATE("gpu: staged loads in persistent row loops match the interpreter", T, float, bfloat16, half) {
  difftest::Tolerance tol = std::is_same_v<T, float> ? difftest::Tolerance{1e-5, 1e-5} : difftest::Tolerance{1e-3, 2e-2};
  struct Case { int rows, cols, block, warps, programs; };
  // 16-byte runs (cols % 8 == 0 for 16-bit), 4-byte runs (cols % 2 == 0, or f32 at odd
  // widths), rows fewer than programs x stages, one row per program.
  for (auto c : {Case{37, 1000, 1024, 4, 5}, Case{23, 998, 1024, 8, 3}, Case{11, 4096, 4096, 8, 4},
                 Case{5, 517, 512, 2, 7}, Case{3, 64, 64, 1, 3}}) {
    if (!std::is_same_v<T, float> && c.cols % 2) continue;  // 2-byte runs are not staged
    for (int stages : {1, 2, 3, 4}) {
      CAPTURE(c.cols);
      CAPTURE(stages);
      auto x = ref::random_vec<T>(size_t(c.rows) * c.cols, 7 + c.cols, -2, 2);
      auto w = ref::random_vec<T>(c.cols, 8, 0.5, 1.5);
      std::vector<float> out(x.size());
      gpu_matches_interp(staged_rows_kernel<T>(), Grid(c.programs),
                         Config{{"BLOCK", c.block}, num_warps(c.warps), num_stages(stages)}, tol, out, x, w, c.rows,
                         c.cols);
    }
  }
}

TEST_CASE_TEMPLATE("gpu: staged [ROWS, BLOCK] tiles and nested loops match the interpreter", T, float, bfloat16) {
  difftest::Tolerance tol = std::is_same_v<T, float> ? difftest::Tolerance{1e-5, 1e-5} : difftest::Tolerance{1e-3, 2e-2};
  for (int stages : {2, 3, 4}) {
    CAPTURE(stages);
    for (auto [rows, cols, block, rpp] : {std::tuple{29, 300, 256, 4}, std::tuple{9, 1024, 1024, 2}}) {
      CAPTURE(cols);
      auto x = ref::random_vec<T>(size_t(rows) * cols, 11 + cols, -2, 2);
      std::vector<T> out(x.size());
      gpu_matches_interp(staged_row_tiles_kernel<T>(), Grid(3),
                         Config{{"BLOCK", block}, {"ROWS", rpp}, num_warps(4), num_stages(stages)}, tol, out, x, rows,
                         cols);
    }
    for (auto [rows, cols, block] : {std::tuple{13, 5000, 512}, std::tuple{4, 1026, 256}, std::tuple{6, 96, 128}}) {
      CAPTURE(cols);
      auto x = ref::random_vec<T>(size_t(rows) * cols, 13 + cols, -2, 2);
      std::vector<T> out(x.size());
      std::vector<float> acc = ref::random_vec<float>(size_t(cols), 14, 0, 1);
      // One program: the read-modify-write of acc is then the same on both sides.
      gpu_matches_interp(staged_nested_kernel<T>(), Grid(1), Config{{"BLOCK", block}, num_warps(4), num_stages(stages)},
                         tol, out, acc, x, rows, cols);
    }
  }
}

TEST_CASE_TEMPLATE("gpu: staged checked loads (rows from their aligned start) match the interpreter", T, float,
                   bfloat16, half) {
  difftest::Tolerance tol = std::is_same_v<T, float> ? difftest::Tolerance{1e-5, 1e-5} : difftest::Tolerance{1e-3, 2e-2};
  const int run = 16 / int(sizeof(T));
  const int rows = 13;
  // Widths at several remainders modulo the run, rows starting off 16 bytes (offset),
  // the last row's last run inside x or not (tail); partly valid runs read whole
  // (READABLE) or element by element; 1 to 3 stages.
  for (int n : {1001, 1002, 1004, 1008}) {
    for (int offset : {0, 3}) {
      for (int tail : {0, 5}) {
        for (int readable : {0, 1}) {
          for (int stages : {1, 2, 3}) {
            CAPTURE(n);
            CAPTURE(offset);
            CAPTURE(tail);
            CAPTURE(readable);
            CAPTURE(stages);
            size_t size = size_t(offset) + size_t(rows) * n + tail;
            auto x = ref::random_vec<T>(size, 31 + n + offset, -1, 1);
            auto y = ref::random_vec<T>(size, 32 + n, -1, 1);  // masked positions keep these
            int b = 1;
            while (b < n + run - 1) b *= 2;
            gpu_matches_interp(staged::staged_aligned_rows_kernel<T>(), Grid(4),
                               Config{{"B", b}, {"READABLE", readable}, num_warps(4), num_stages(stages)}, tol, y, x,
                               rows, n, offset, tail);
            if (readable || tail) continue;
            // The load without an `other`; and one warp (4 runs per thread of 16-bit data:
            // the warp-uniform finishing).
            gpu_matches_interp(staged::staged_aligned_rows_kernel<T>(), Grid(4),
                               Config{{"B", b}, {"FILL", 0}, num_warps(4), num_stages(stages)}, tol, y, x, rows, n,
                               offset, tail);
            gpu_matches_interp(staged::staged_aligned_rows_kernel<T>(), Grid(4),
                               Config{{"B", b}, num_warps(1), num_stages(stages)}, tol, y, x, rows, n, offset, tail);
          }
        }
      }
    }
  }
}
