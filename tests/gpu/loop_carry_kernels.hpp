#pragma once
// 16-bit tiles carried around a loop, which the GPU compiler keeps as packed pairs (one
// 32-bit register each): shared by the GPU differential test (test_gpu_ops.cpp) and the
// offline PTX test (tests/gallery_ptx/test_loop_carry_ptx.cpp).
#include "tilefuse/tilefuse.hpp"

namespace loop_carry {

using namespace tilefuse;

// `last` is carried as loaded (no rounding to pair up), `run` as an f32 -> 16-bit
// rounding, `lag` as the previous iteration's `run`, starting from a constant; all three
// are stored after the loop, BLOCK elements each.
template <class T>
const auto& carry16_kernel() {
  static auto k = kernel(std::string("carry16_") + name(dtype_v<T>), {"out", "x", "n"},
      [](Ptr<T> out, Ptr<const T> x, I32 n, Meta<"BLOCK"> BLOCK) {
        auto o = arange(0, BLOCK);
        auto last = zeros<T>({BLOCK});
        auto run = full<T>({BLOCK}, 0.5f);
        auto lag = full<T>({BLOCK}, -1.0f);
        for_range(0, n, BLOCK, [&](I32 s) {
          auto v = load(x + s + o, s + o < n, 0.0f);
          lag = run;
          run = (run.template cast<f32>() * 0.75f + v.template cast<f32>()).template cast<T>();
          last = where(s + o < n, v, last);
        });
        store(out + o, last);
        store(out + BLOCK + o, run);
        store(out + 2 * BLOCK + o, lag);
      });
  return k;
}

}  // namespace loop_carry
