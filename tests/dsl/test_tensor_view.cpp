// Tensor views on the interpreter against plain C++: a view load reads the block at
// its coordinates, 0 outside [0, dim) on every side (negative coordinates included),
// through any strides; blocks of lower rank take one element of the outer dimensions.
#include "dsl_test_util.hpp"

using namespace tilefuse;
using dsltest::first_mismatch;

namespace {

// The block [r0, r0 + BR) x [c0, c0 + BC) of a [rows, cols] matrix with row stride ld.
std::vector<float> block_of(const std::vector<float>& m, int rows, int cols, int64_t ld, int r0, int c0, int BR,
                            int BC) {
  std::vector<float> out(BR * BC);
  for (int i = 0; i < BR; ++i)
    for (int j = 0; j < BC; ++j) {
      int r = r0 + i, c = c0 + j;
      out[i * BC + j] = r >= 0 && r < rows && c >= 0 && c < cols ? m[r * ld + c] : 0.0f;
    }
  return out;
}

}  // namespace

TEST_CASE("tensor view: 2-D blocks at odd shapes, edges and negative coordinates read 0") {
  auto k = kernel("view2d", {"out", "in", "rows", "cols", "ld", "r0", "c0"},
                  [](Ptr<f32> out, Ptr<const f32> in, I32 rows, I32 cols, I64 ld, I32 r0, I32 c0, Meta<"BR"> BR,
                     Meta<"BC"> BC) {
                    auto v = tensor_view(in, {rows, cols}, {ld, 1});
                    auto t = load(v, {r0, c0}, {BR, BC});
                    store(out + arange(0, BR).col() * static_cast<int>(BC) + arange(0, BC).row(), t);
                  });
  const int rows = 37, cols = 29;
  const int64_t ld = 33;
  auto in = dsltest::rand_f(rows * ld, 7);
  for (auto [r0, c0] : {std::pair{0, 0}, {24, 16}, {-5, 3}, {30, -9}, {-40, 0}, {36, 28}, {40, 0}}) {
    CAPTURE(r0);
    CAPTURE(c0);
    std::vector<float> out(16 * 32, 1e9f);
    k.launch(grid(1), {{"BR", 16}, {"BC", 32}}, out, in, rows, cols, ld, r0, c0);
    CHECK(first_mismatch(out, block_of(in, rows, cols, ld, r0, c0, 16, 32)) == "");
  }
}

TEST_CASE("tensor view: a 3-D view read as 2-D blocks of one batch, column-major strides") {
  // in is [B, N, D] with strides {N*D, D, 1}; a batch coordinate outside [0, B) reads 0.
  auto k = kernel("view3d", {"out", "in", "B", "N", "D", "b", "n0"},
                  [](Ptr<f32> out, Ptr<const f32> in, I32 B, I32 N, I32 D, I32 b, I32 n0, Meta<"BN"> BN,
                     Meta<"BD"> BD) {
                    auto v = tensor_view(in, {B, N, D}, {N * D, D, 1});
                    auto t = load(v, {b, n0, 0}, {BN, BD});
                    store(out + arange(0, BN).col() * static_cast<int>(BD) + arange(0, BD).row(), t);
                  });
  const int B = 3, N = 19, D = 12;
  auto in = dsltest::rand_f(B * N * D, 8);
  for (int b : {0, 2, 3, -1}) {
    CAPTURE(b);
    std::vector<float> out(16 * 16, 1e9f), want(16 * 16, 0.0f);
    k.launch(grid(1), {{"BN", 16}, {"BD", 16}}, out, in, B, N, D, b, 8);
    if (b >= 0 && b < B) {
      std::vector<float> batch(in.begin() + b * N * D, in.begin() + (b + 1) * N * D);
      want = block_of(batch, N, D, D, 8, 0, 16, 16);
    }
    CHECK(first_mismatch(out, want) == "");
  }
  // Column-major [rows, cols] (strides {1, ld}): the block is read transposed in memory.
  auto kt = kernel("view_colmajor", {"out", "in", "rows", "cols", "ld"},
                   [](Ptr<f32> out, Ptr<const f32> in, I32 rows, I32 cols, I64 ld) {
                     auto v = tensor_view(in, {rows, cols}, {1, ld});
                     store(out + arange(0, 8).col() * 8 + arange(0, 8).row(), load(v, {2, 1}, {8, 8}));
                   });
  const int rows = 7, cols = 6;
  auto cm = dsltest::rand_f(cols * 9, 9);
  std::vector<float> out(64, 1e9f), want(64, 0.0f);
  kt.launch(grid(1), {}, out, cm, rows, cols, int64_t{9});
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      if (2 + i < rows && 1 + j < cols) want[i * 8 + j] = cm[(1 + j) * 9 + 2 + i];
  CHECK(first_mismatch(out, want) == "");
}

TEST_CASE("tensor view: the load records its view for the backend") {
  auto k = kernel("view_ir", {"out", "in", "M", "K", "ld"},
                  [](Ptr<f32> out, Ptr<const bf16> in, I32 M, I32 K, I64 ld) {
                    auto t = load(tensor_view(in, {M, K}, {ld, 1}), {program_id(0) * 64, 0}, {64, 32});
                    store(out + arange(0, 64).col() * 32 + arange(0, 32).row(), t.cast<f32>());
                  });
  std::string ir = ir::to_string(*k.trace({}));
  INFO(ir);
  CHECK(ir.find("load.view2") != std::string::npos);
}

TEST_CASE("tensor view: a store writes the block's elements inside the view and nothing else") {
  // A [BR, BC] block read contiguously from `src`, written at (r0, c0) of a [rows, cols]
  // view with row stride ld: the padding columns cols..ld and everything outside the
  // block or the view keep their sentinel.
  auto k = kernel("view_store2d", {"out", "src", "rows", "cols", "ld", "r0", "c0"},
                  [](Ptr<f32> out, Ptr<const f32> src, I32 rows, I32 cols, I64 ld, I32 r0, I32 c0, Meta<"BR"> BR,
                     Meta<"BC"> BC) {
                    auto t = load(src + arange(0, BR).col() * static_cast<int>(BC) + arange(0, BC).row());
                    store(tensor_view(out, {rows, cols}, {ld, 1}), {r0, c0}, t);
                  });
  const int rows = 37, cols = 29, BR = 16, BC = 32;
  const int64_t ld = 33;
  auto src = dsltest::rand_f(BR * BC, 17);
  for (auto [r0, c0] : {std::pair{0, 0}, {24, 16}, {-5, 3}, {30, -9}, {-40, 0}, {36, 28}, {40, 0}}) {
    CAPTURE(r0);
    CAPTURE(c0);
    std::vector<float> out(rows * ld, 1e9f), want = out;
    for (int i = 0; i < BR; ++i)
      for (int j = 0; j < BC; ++j) {
        int r = r0 + i, c = c0 + j;
        if (r >= 0 && r < rows && c >= 0 && c < cols) want[r * ld + c] = src[i * BC + j];
      }
    k.launch(grid(1), {{"BR", BR}, {"BC", BC}}, out, src, rows, cols, ld, r0, c0);
    CHECK(first_mismatch(out, want) == "");
  }
}

TEST_CASE("tensor view: a store into a 3-D view writes one batch's block, a batch outside the view nothing") {
  auto k = kernel("view_store3d", {"out", "src", "B", "N", "D", "b", "n0"},
                  [](Ptr<f32> out, Ptr<const f32> src, I32 B, I32 N, I32 D, I32 b, I32 n0, Meta<"BN"> BN,
                     Meta<"BD"> BD) {
                    auto t = load(src + arange(0, BN).col() * static_cast<int>(BD) + arange(0, BD).row());
                    store(tensor_view(out, {B, N, D}, {N * D, D, 1}), {b, n0, 0}, t);
                  });
  const int B = 3, N = 19, D = 12;
  auto src = dsltest::rand_f(16 * 16, 18);
  for (int b : {0, 2, 3, -1}) {
    CAPTURE(b);
    std::vector<float> out(B * N * D, 1e9f), want = out;
    if (b >= 0 && b < B)
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j)
          if (8 + i < N && j < D) want[(b * N + 8 + i) * D + j] = src[i * 16 + j];
    k.launch(grid(1), {{"BN", 16}, {"BD", 16}}, out, src, B, N, D, b, 8);
    CHECK(first_mismatch(out, want) == "");
  }
}

TEST_CASE("tensor view: the store records its view, and a tile of another dtype is a user error") {
  auto k = kernel("view_store_ir", {"out", "M", "N", "ld"}, [](Ptr<bf16> out, I32 M, I32 N, I64 ld) {
    store(tensor_view(out, {M, N}, {ld, 1}), {program_id(0) * 64, 0}, full<bf16>({64, 32}, 1.5f));
  });
  std::string ir = ir::to_string(*k.trace({}));
  INFO(ir);
  CHECK(ir.find("store.view2") != std::string::npos);
  auto bad = kernel("view_store_dtype", {"out", "M", "N"}, [](Ptr<bf16> out, I32 M, I32 N) {
    store(tensor_view(out, {M, N}, {N, 1}), {0, 0}, zeros<f32>({16, 16}));
  });
  CHECK_THROWS_WITH_AS(bad.trace({}), doctest::Contains("store of a f32 tile to a tensor view of bf16"), UserError);
  CHECK_THROWS_WITH_AS(bad.trace({}), doctest::Contains("Cast the tile first: value.cast<bf16>()"), UserError);
}
