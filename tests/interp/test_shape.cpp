// Index and shape ops: program_id, num_programs, constants, arange, splat, broadcast,
// expand_dims, reshape, trans, and 2-D masked tiles.
#include "interp_test_util.hpp"

using namespace tf_test;
using ir::BinaryOp;

TEST_CASE("interp: program_id and num_programs over a 3-D grid, x fastest") {
  Kernel k("ids");
  Value* out = k.ptr("out", DType::i32);
  Value* order = k.ptr("order", DType::i32);
  Value* counter = k.ptr("counter", DType::i32);
  Value* px = k.b.program_id(0), *py = k.b.program_id(1), *pz = k.b.program_id(2);
  Value* nx = k.b.num_programs(0), *ny = k.b.num_programs(1), *nz = k.b.num_programs(2);
  Value* lin = k.add(k.mul(k.add(k.mul(pz, ny), py), nx), px);
  Value* v = k.add(k.add(px, k.mul(py, k.i32(10))), k.mul(pz, k.i32(100)));
  v = k.add(v, k.mul(k.add(k.add(nx, k.mul(ny, k.i32(10))), k.mul(nz, k.i32(100))), k.i32(1000)));
  k.b.store(k.at_ptr(out, lin), v);
  // The n-th program to run records its linear id: execution order is x, then y, then z.
  Value* nth = k.b.atomic_rmw(ir::AtomicOp::Add, counter, k.i32(1));
  k.b.store(k.at_ptr(order, nth), lin);
  HostArray o(DType::i32, 24), ord(DType::i32, 24), cnt(DType::i32, 1);
  k.run(Grid(3, 4, 2), {o.arg(), ord.arg(), cnt.arg()});
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 3; ++x) CHECK(o.geti((z * 4 + y) * 3 + x) == x + 10 * y + 100 * z + 1000 * 243);
  for (int i = 0; i < 24; ++i) CHECK(ord.geti(i) == i);
  CHECK(cnt.geti(0) == 24);
}

TEST_CASE("interp: constants, arange and splat") {
  Kernel k("consts");
  Value* oi = k.ptr("oi", DType::i32);
  Value* of = k.ptr("of", DType::f32);
  Value* ob = k.ptr("ob", DType::bf16);
  Value* o8 = k.ptr("o8", DType::i8);
  Value* s = k.scalar("s", DType::f32);
  Value* r = k.b.arange(0, 8);
  k.b.store(k.at_ptr(oi, r), k.b.arange(5, 13));
  k.b.store(k.at_ptr(of, r), k.b.const_float(2.5, Type::tile(DType::f32, {8})));
  k.b.store(k.at_ptr(of, k.add(r, k.i32(8))), k.b.splat(s, {8}));
  k.b.store(k.at_ptr(ob, r), k.b.const_float(0.1, Type::tile(DType::bf16, {8})));
  k.b.store(k.at_ptr(o8, r), k.b.const_int(300, Type::tile(DType::i8, {8})));
  HostArray ai(DType::i32, 8), af(DType::f32, 16), ab(DType::bf16, 8), a8(DType::i8, 8);
  k.run(Grid(1), {ai.arg(), af.arg(), ab.arg(), a8.arg(), ArgValue::real(-1.75, DType::f32)});
  for (int i = 0; i < 8; ++i) {
    CHECK(ai.geti(i) == 5 + i);
    CHECK(af.get(i) == 2.5);
    CHECK(af.get(8 + i) == -1.75);
    CHECK(ab.get(i) == static_cast<float>(bfloat16(0.1f)));
    CHECK(a8.geti(i) == 44);  // 300 wraps to i8
  }
}

namespace {

// [rows] -> [rows, 1] and [cols] -> [1, cols] offsets for 2-D tiles.
struct Tile2D {
  Value* rows;
  Value* cols;
};
Tile2D tile2d(Kernel& k, int64_t bm, int64_t bn) {
  Value* r = k.add(k.mul(k.b.program_id(0), k.i32(bm)), k.b.arange(0, bm));
  Value* c = k.add(k.mul(k.b.program_id(1), k.i32(bn)), k.b.arange(0, bn));
  return {k.b.expand_dims(r, 1), k.b.expand_dims(c, 0)};
}

}  // namespace

TEST_CASE("interp: transposed copy with 2-D masks on odd sizes") {
  const int64_t R = 37, C = 53, BM = 16, BN = 32;
  Kernel k("transpose");
  Value* out = k.ptr("out", DType::f32);
  Value* in = k.ptr("in", DType::f32, true);
  Tile2D t = tile2d(k, BM, BN);
  Value* mask = k.b.binary(BinaryOp::And, k.lt(t.rows, k.i32(R)), k.lt(t.cols, k.i32(C)));
  Value* x = k.b.load(k.at_ptr(in, k.add(k.mul(t.rows, k.i32(C)), t.cols)), mask);
  Value* xt = k.b.trans(x);  // [BN, BM]
  Value* rt = k.b.trans(k.b.broadcast_to(t.rows, {BM, BN}));
  Value* ct = k.b.trans(k.b.broadcast_to(t.cols, {BM, BN}));
  k.b.store(k.at_ptr(out, k.add(k.mul(ct, k.i32(R)), rt)), xt, k.b.trans(mask));
  HostArray a = random_array(DType::f32, R * C), o(DType::f32, C * R);
  k.run(Grid(cdiv(R, BM), cdiv(C, BN)), {o.arg(), a.arg()});
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) REQUIRE(o.get(c * R + r) == a.get(r * C + c));
}

TEST_CASE("interp: broadcast of [1, N] and [M, 1], reshape is row-major") {
  const int64_t M = 4, N = 8;
  Kernel k("bcast");
  Value* out = k.ptr("out", DType::f32);
  Value* in = k.ptr("in", DType::f32, true);
  Value* row = k.b.load(k.at_ptr(in, k.b.arange(0, N)));             // [N]
  Value* col = k.b.load(k.at_ptr(in, k.add(k.b.arange(0, M), k.i32(N))));  // [M]
  Value* a = k.b.broadcast_to(k.b.expand_dims(row, 0), {M, N});
  Value* b = k.b.broadcast_to(k.b.expand_dims(col, 1), {M, N});
  Value* s = k.b.binary(BinaryOp::Sub, a, k.b.const_float(0, Type::scalar(DType::f32)));
  Value* flat = k.b.reshape(k.b.binary(BinaryOp::Mul, s, b), {M * N});
  k.b.store(k.at_ptr(out, k.b.arange(0, M * N)), flat);
  Value* r2 = k.b.reshape(k.b.reshape(flat, {N, M}), {M * N});  // a round trip keeps the order
  k.b.store(k.at_ptr(out, k.add(k.b.arange(0, M * N), k.i32(M * N))), r2);
  HostArray x = random_array(DType::f32, N + M), o(DType::f32, 2 * M * N);
  k.run(Grid(1), {o.arg(), x.arg()});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float want = static_cast<float>(x.get(j)) * static_cast<float>(x.get(N + i));
      CHECK(o.get(i * N + j) == want);
      CHECK(o.get(M * N + i * N + j) == want);
    }
}

TEST_CASE("interp: trans of a rank-3 tile with a permutation") {
  Kernel k("trans3");
  Value* out = k.ptr("out", DType::i64);
  Value* in = k.ptr("in", DType::i64, true);
  Value* x = k.b.reshape(k.b.load(k.at_ptr(in, k.b.arange(0, 64))), {2, 4, 8});
  Value* t = k.b.trans(x, {2, 0, 1});  // [8, 2, 4]: t[c, a, b] = x[a, b, c]
  k.b.store(k.at_ptr(out, k.b.arange(0, 64)), k.b.reshape(t, {64}));
  HostArray a = full_range_ints(DType::i64, 64), o(DType::i64, 64);
  k.run(Grid(1), {o.arg(), a.arg()});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int c = 0; c < 8; ++c) CHECK(o.geti((c * 2 + i) * 4 + j) == a.geti((i * 4 + j) * 8 + c));
}
