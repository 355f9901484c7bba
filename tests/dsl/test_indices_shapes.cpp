// Program indices, constructors, broadcasting and shape ops, each run on the
// interpreter and compared with plain C++ on random inputs at odd sizes.
#include "dsl_test_util.hpp"

using namespace tilefuse;
using dsltest::first_mismatch;

TEST_CASE("program_id and num_programs on 2-D and 3-D grids") {
  auto k = kernel("pid3", {"out"}, [](Ptr<i32> out) {
    auto x = program_id(0), y = program_id(1), z = program_id(2);
    auto nx = num_programs(0), ny = num_programs(1), nz = num_programs(2);
    auto base = out + ((z * ny + y) * nx + x) * 6;
    store(base, x);
    store(base + 1, y);
    store(base + 2, z);
    store(base + 3, nx);
    store(base + 4, ny);
    store(base + 5, nz);
  });
  struct G { int64_t x, y, z; };
  for (G g : {G{3, 5, 2}, G{7, 3, 1}, G{1, 1, 5}}) {
    CAPTURE(g.x);
    CAPTURE(g.y);
    CAPTURE(g.z);
    std::vector<int32_t> out(g.x * g.y * g.z * 6, -1);
    k.launch(grid(g.x, g.y, g.z), {num_warps(1)}, out);
    std::vector<int32_t> want;
    for (int64_t z = 0; z < g.z; ++z)
      for (int64_t y = 0; y < g.y; ++y)
        for (int64_t x = 0; x < g.x; ++x)
          for (int64_t v : {x, y, z, g.x, g.y, g.z}) want.push_back(static_cast<int32_t>(v));
    CHECK(first_mismatch(out, want) == "");
  }
}

TEST_CASE("arange with a meta-parameter end and a non-zero start") {
  auto k = kernel("arange", {"out", "start"}, [](Ptr<i32> out, I32 start, Meta<"B"> B) {
    auto r = arange(0, B);
    store(out + r, r + start);
    store(out + B + r, arange(5, 5 + B));
  });
  for (int64_t b : {1, 2, 16, 128}) {
    std::vector<int32_t> out(2 * b, -1);
    k.launch(grid(1), {{"B", b}}, out, -37);
    std::vector<int32_t> want;
    for (int64_t i = 0; i < b; ++i) want.push_back(static_cast<int32_t>(i - 37));
    for (int64_t i = 0; i < b; ++i) want.push_back(static_cast<int32_t>(5 + i));
    CHECK(first_mismatch(out, want) == "");
  }
}

TEST_CASE("full and zeros build constant tiles of each dtype") {
  auto k = kernel("full", {"out", "out64", "in", "n"},
                  [](Ptr<f32> out, Ptr<i64> out64, Ptr<const f32> in, I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto x = load(in + offs, m);
                    store(out + offs, x * full<f32>({B}, 2.5) + zeros<f32>({B}), m);
                    auto idx = arange(0, 4).col() * 8 + arange(0, 8).row();
                    auto c = full<i64>({4, 8}, -3) + zeros<i64>({4, 8});
                    static_assert(std::is_same_v<decltype(c), Tile<i64, 2>>);
                    store(out64 + program_id(0) * 32 + idx, c);
                  });
  int n = 45;
  auto in = dsltest::rand_f(n, 1);
  std::vector<float> out(n, 99.0f);
  std::vector<int64_t> out64(3 * 32, 7);
  k.launch(grid(3), {{"B", 16}}, out, out64, in, n);
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = in[i] * 2.5f + 0.0f;
  CHECK(first_mismatch(out, want) == "");
  CHECK(first_mismatch(out64, std::vector<int64_t>(3 * 32, -3)) == "");
}

TEST_CASE("broadcasting: scalar with tile, [N,1] x [1,M], broadcast_to") {
  // out[r, c] = a[r] * b[c] + s over a 2-D grid of [16, 8] blocks with masked edges.
  auto k = kernel("outer", {"out", "out2", "a", "b", "s", "n", "m"},
                  [](Ptr<f32> out, Ptr<f32> out2, Ptr<const f32> a, Ptr<const f32> b, F32 s, I32 n, I32 m,
                     Meta<"BM"> BM, Meta<"BN"> BN) {
                    auto rows = program_id(0) * BM + arange(0, BM);
                    auto cols = program_id(1) * BN + arange(0, BN);
                    auto rm = rows < n;
                    auto cm = cols < m;
                    auto av = load(a + rows, rm, 0.0f);
                    auto bv = load(b + cols, cm, 0.0f);
                    auto prod = av.col() * bv.row() + s;
                    static_assert(std::is_same_v<decltype(prod), Tile<f32, 2>>);
                    auto mask = rm.col() && cm.row();
                    auto offs = rows.col() * m + cols.row();
                    store(out + offs, prod, mask);
                    // broadcast_to makes the stretch explicit; the scalar splats.
                    auto bb = broadcast_to(bv.row(), {BM, BN});
                    store(out2 + offs, bb - s * 2.0f, mask);
                  });
  int n = 37, m = 23;
  auto a = dsltest::rand_f(n, 2);
  auto b = dsltest::rand_f(m, 3);
  float s = 0.75f;
  std::vector<float> out(n * m, 1e9f), out2(n * m, 1e9f);
  k.launch(grid(3, 3), {{"BM", 16}, {"BN", 8}}, out, out2, a, b, s, n, m);
  std::vector<float> want(n * m), want2(n * m);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < m; ++c) {
      want[r * m + c] = a[r] * b[c] + s;
      want2[r * m + c] = b[c] - s * 2.0f;
    }
  CHECK(first_mismatch(out, want, 1e-6) == "");
  CHECK(first_mismatch(out2, want2) == "");
}

TEST_CASE("expand_dims, .col() and .row()") {
  auto k = kernel("expand", {"out", "in"}, [](Ptr<f32> out, Ptr<const f32> in, Meta<"B"> B) {
    auto i = arange(0, B);
    auto x = load(in + i);
    auto c1 = x.col();              // [B, 1]
    auto c2 = expand_dims(x, 1);    // [B, 1]
    auto r1 = x.row();              // [1, B]
    auto r2 = expand_dims(x, 0);    // [1, B]
    auto r3 = expand_dims(x, -2);   // [1, B] (negative axes count from the end)
    CHECK(c1.shape() == ir::Shape{B, 1});
    CHECK(r1.shape() == ir::Shape{1, B});
    CHECK(r3.shape() == ir::Shape{1, B});
    auto z = arange(0, 1);
    // [B, 1] stored down a column, [1, B] along a row of a [B, B] matrix.
    store(out + i.col() * B + z.row(), c1);
    store(out + i.col() * B + (z + 1).row(), c2 * 2.0f);
    store(out + B * B + z.col() * B + i.row(), r1);
    store(out + B * B + (z + 1).col() * B + i.row(), r2 * 3.0f);
    store(out + B * B + (z + 2).col() * B + i.row(), r3 - 1.0f);
  });
  int64_t B = 8;
  auto in = dsltest::rand_f(B, 4);
  std::vector<float> out(2 * B * B, 0.5f);
  k.launch(grid(1), {{"B", B}}, out, in);
  std::vector<float> want(2 * B * B, 0.5f);
  for (int64_t i = 0; i < B; ++i) {
    want[i * B + 0] = in[i];
    want[i * B + 1] = in[i] * 2.0f;
    want[B * B + 0 * B + i] = in[i];
    want[B * B + 1 * B + i] = in[i] * 3.0f;
    want[B * B + 2 * B + i] = in[i] - 1.0f;
  }
  CHECK(first_mismatch(out, want) == "");
}

TEST_CASE("reshape keeps row-major order") {
  auto k = kernel("reshape", {"out", "in"}, [](Ptr<f32> out, Ptr<const f32> in) {
    auto offs = arange(0, 4).col() * 8 + arange(0, 8).row();  // [4, 8]
    auto x = load(in + offs);
    auto flat = reshape(x, {32});
    static_assert(std::is_same_v<decltype(flat), Tile<f32, 1>>);
    store(out + arange(0, 32), flat * 2.0f);
    auto t = reshape(flat, {8, 4});
    store(out + 32 + arange(0, 8).col() * 4 + arange(0, 4).row(), t);
    auto t3 = reshape(x, {2, 4, 4});
    auto o3 = (arange(0, 2).col() * 16 + arange(0, 4).row() * 4).col() + reshape(arange(0, 4), {1, 1, 4});
    store(out + 64 + o3, t3 + 1.0f);
  });
  auto in = dsltest::rand_f(32, 5);
  std::vector<float> out(96, 0.0f);
  k.launch(grid(1), {}, out, in);
  std::vector<float> want(96);
  for (int i = 0; i < 32; ++i) {
    want[i] = in[i] * 2.0f;
    want[32 + i] = in[i];
    want[64 + i] = in[i] + 1.0f;
  }
  CHECK(first_mismatch(out, want) == "");
}

TEST_CASE("trans of an odd-sized masked block") {
  // out (n x m) = transpose of in (m x n), in [16, 8] blocks over a 2-D grid.
  auto k = kernel("trans", {"out", "in", "m", "n"},
                  [](Ptr<f32> out, Ptr<const f32> in, I32 m, I32 n, Meta<"BM"> BM, Meta<"BN"> BN) {
                    auto r = program_id(0) * BM + arange(0, BM);
                    auto c = program_id(1) * BN + arange(0, BN);
                    auto mask = (r < m).col() && (c < n).row();
                    auto x = load(in + r.col() * n + c.row(), mask, -1.0f);  // [BM, BN]
                    auto t = trans(x);                                        // [BN, BM]
                    CHECK(t.shape() == ir::Shape{BN, BM});
                    store(out + c.col() * m + r.row(), t, trans(mask));
                  });
  int m = 19, n = 13;
  auto in = dsltest::rand_f(m * n, 6);
  std::vector<float> out(n * m, 0.0f);
  k.launch(grid(2, 2), {{"BM", 16}, {"BN", 8}}, out, in, m, n);
  std::vector<float> want(n * m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) want[j * m + i] = in[i * n + j];
  CHECK(first_mismatch(out, want) == "");
}
