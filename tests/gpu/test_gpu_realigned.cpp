// Contiguous loads and stores whose start is not known to be 16-byte aligned (rows of
// odd width, runtime offsets), in each way the compiler can move them (knob
// TILEFUSE_UNALIGNED: coalesced elements by default, or realigned 16-byte chunks,
// or the narrow accesses of the widest related layout). Differential tests
// against the interpreter at every alignment remainder, with masked tails, masks that
// change inside a run, rows of different alignment inside one tile, replicated
// layouts and loops; every output buffer starts from random contents, so an element
// written that should not be (a neighbour's, the padding's) fails the comparison too.
// Label: gpu (skips without a driver).
#include <random>

#include "differential.hpp"

using namespace tilefuse;
using difftest::gpu_matches_interp;

namespace {

template <class T>
std::vector<T> rnd(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-100, 100);
  std::vector<T> v(n);
  for (auto& x : v) x = T(d(g));
  return v;
}

// out[r * os + oo + c] = in[r * is + io + c] - 1 for c < n; one row per program.
template <class T, int Mode>
const auto& shifted_rows() {
  static auto k = kernel("shifted_rows", {"out", "in", "n", "is", "io", "os", "oo"},
      [](Ptr<T> out, Ptr<const T> in, I32 n, I64 is, I64 io, I64 os, I64 oo, Meta<"BLOCK"> BLOCK) {
        auto row = program_id(0);
        auto c = arange(0, BLOCK);
        auto m = c < n;
        auto x = load(in + row * is + io + c, m, 7);
        store(out + row * os + oo + c, (x - 1).template cast<T>(), m);
      });
  return k;
}

// Runs body.operator()<M>() once per way of moving unaligned runs (M = 0, 1, 2) with the
// knob set. Launches find compiled kernels by kernel object and config, not by knob, so
// each mode's kernels are distinct objects (templates on M) and compile afresh.
constexpr const char* kModes[] = {"scalar", "realign", "narrow"};
template <class F>
void in_every_mode(F&& body) {
  auto one = [&]<int M>() {
    CAPTURE(kModes[M]);
    setenv("TILEFUSE_UNALIGNED", kModes[M], 1);
    body.template operator()<M>();
  };
  one.template operator()<0>();
  one.template operator()<1>();
  one.template operator()<2>();
  unsetenv("TILEFUSE_UNALIGNED");
}

}  // namespace

TEST_CASE_TEMPLATE("gpu: rows at every alignment remainder", T, bfloat16, float, int8_t, double) {
  in_every_mode([&]<int M>() {
    constexpr int64_t per_chunk = 16 / sizeof(T);
    for (int64_t n : {int64_t(1), per_chunk - 1, per_chunk + 1, int64_t(1000), int64_t(4099)}) {
      for (int64_t io = 0; io < per_chunk; io += (per_chunk > 4 ? 3 : 1)) {
        int64_t oo = (io * 5 + 1) % per_chunk, rows = 5;
        int64_t is = n + io + 3, os = n + oo + 1;  // strides of any remainder: each row's alignment differs
        CAPTURE(n);
        CAPTURE(io);
        auto in = rnd<T>(rows * is + io + n, 1 + io);
        auto out = rnd<T>(rows * os + oo + n, 2 + io);
        int64_t block = 16;
        while (block < n) block *= 2;
        gpu_matches_interp(shifted_rows<T, M>(), Grid(rows), {{"BLOCK", block}, num_warps(block >= 1024 ? 4 : 1)}, {0, 0},
                           out, in, int32_t(n), is, io, os, oo);
      }
    }
  });
}

TEST_CASE("gpu: a tile smaller than the threads (replicated layout) at odd offsets") {
  in_every_mode([&]<int M>() {
    for (int64_t io : {0, 1, 5}) {
      auto in = rnd<bfloat16>(3 * 101 + 64, 3);
      auto out = rnd<bfloat16>(3 * 99 + 64, 4);
      gpu_matches_interp(shifted_rows<bfloat16, M>(), Grid(3), {{"BLOCK", 64}, num_warps(4)}, {0, 0}, out, in,
                         int32_t(61), int64_t(101), io, int64_t(99), io + 2);
    }
  });
}

TEST_CASE("gpu: masks that change inside a run, with other values") {
  in_every_mode([&]<int M>() {
    static auto k = kernel("holes", {"out", "in", "n", "off"},
        [](Ptr<bf16> out, Ptr<const bf16> in, I32 n, I64 off, Meta<"BLOCK"> BLOCK) {
          auto c = program_id(0) * BLOCK + arange(0, BLOCK);
          auto m = (c < n) && (c % 3 != 1);
          auto x = load(in + off + c, m, -5.0f);
          store(out + off + c, (x + x).cast<bf16>(), (c < n) && (c % 5 != 2));
        });
    for (int64_t off : {0, 3, 7}) {
      auto in = rnd<bfloat16>(2000 + off, 5), out = rnd<bfloat16>(2000 + off, 6);
      gpu_matches_interp(k, Grid(4), {{"BLOCK", 512}, num_warps(2)}, {0, 0}, out, in, int32_t(1999), off);
    }
  });
}

TEST_CASE("gpu: several rows of different alignment in one 2-D tile") {
  in_every_mode([&]<int M>() {
    static auto k = kernel("rows2d", {"out", "in", "n_rows", "n", "stride"},
        [](Ptr<f16> out, Ptr<const f16> in, I32 n_rows, I32 n, I64 stride, Meta<"BLOCK"> BLOCK, Meta<"ROWS"> ROWS) {
          auto r = program_id(0) * ROWS + arange(0, ROWS);
          auto c = arange(0, BLOCK);
          auto m = (r < n_rows).col() && (c < n).row();
          auto offs = r.cast<i64>().col() * stride + c.row();
          auto x = load(in + offs, m, 0.0f).cast<f32>();
          auto y = x - max(x, 1).col();
          store(out + offs, y.cast<f16>(), m);
        });
    for (auto [n, stride] : {std::pair{77, 79}, std::pair{100, 101}, std::pair{9, 13}}) {
      int rows = 37;
      auto in = rnd<half>(rows * stride, 7), out = rnd<half>(rows * stride, 8);
      int64_t block = 16;
      while (block < n) block *= 2;
      gpu_matches_interp(k, Grid((rows + 3) / 4), {{"BLOCK", block}, {"ROWS", 4}, num_warps(2)}, {1e-3, 1e-3}, out, in,
                         rows, n, int64_t(stride));
    }
  });
}

TEST_CASE("gpu: a loop over a row at a runtime offset") {
  in_every_mode([&]<int M>() {
    static auto k = kernel("row_loop", {"out", "in", "n", "off"},
        [](Ptr<f32> out, Ptr<const bf16> in, I32 n, I64 off, Meta<"BLOCK"> BLOCK) {
          auto c = arange(0, BLOCK);
          auto acc = zeros<f32>({BLOCK});
          for_range(0, n, BLOCK, [&](I32 start) {
            auto m = start + c < n;
            acc = acc + load(in + off + start + c, m, 0.0f).cast<f32>();
          });
          store(out + program_id(0), sum(acc, 0));
        });
    for (int64_t off : {1, 6}) {
      auto in = rnd<bfloat16>(5000 + off, 9);
      std::vector<float> out(1);
      gpu_matches_interp(k, Grid(1), {{"BLOCK", 1024}, num_warps(4)}, {1e-2, 1e-5}, out, in, int32_t(4999), off);
    }
  });
}
