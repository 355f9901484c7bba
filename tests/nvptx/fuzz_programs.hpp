#pragma once
// Random tile programs for differential testing of the GPU compiler: each seed builds a
// kernel from the ops that stress layouts and tensor cores together — masked loads of
// 16-bit tiles, dots (chained, transposed operands, accumulators carried through a
// loop with a runtime trip count, pipelined with num_stages), reductions along either
// axis broadcast back, casts, elementwise math — and stores every result. The same
// program runs on the interpreter (the oracle) and on the GPU; without a GPU it must
// still compile and assemble with ptxas (test_fuzz.cpp, and tilefuse-fuzz for more seeds).
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "gpu_diff.hpp"
#include "ir_kernels.hpp"

namespace tftest {

struct FuzzCase {
  std::unique_ptr<ir::Function> f;
  std::vector<Arg> args;
  std::string summary;  // what the generator chose, for failure messages
};

// Buffers: out (f32), then x, y, z (16-bit) of kArena elements each, then the loop's
// trip count and the number of valid rows (masks).
inline FuzzCase random_program(uint32_t seed) {
  constexpr int64_t kArena = 128 * 128 * 4;
  std::mt19937 rng(seed);
  auto pick = [&](std::initializer_list<int64_t> xs) {
    std::vector<int64_t> v(xs);
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  auto coin = [&](double p = 0.5) { return std::bernoulli_distribution(p)(rng); };
  FuzzCase c;
  DType dt = coin() ? DType::f16 : DType::bf16;
  int64_t M = pick({16, 32, 64, 128}), N = pick({16, 32, 64}), K = pick({16, 32, 64});
  int warps = static_cast<int>(std::min<int64_t>(pick({1, 2, 4, 8}), M / 16 * 2));
  int stages = static_cast<int>(pick({1, 1, 2, 3, 4}));
  c.f = new_kernel("fuzz" + std::to_string(seed), std::max(1, warps));
  c.f->num_stages = stages;
  Builder b(*c.f);
  auto i32 = [&](int64_t v) { return b.const_int(v, Type::scalar(DType::i32)); };
  auto f32 = [&](double v) { return b.const_float(v, Type::scalar(DType::f32)); };
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* x = b.param("x", Type::pointer(dt), true);
  Value* y = b.param("y", Type::pointer(dt), true);
  Value* z = b.param("z", Type::pointer(dt), true);
  Value* trips = b.param("trips", Type::scalar(DType::i32));
  Value* rows_ok = b.param("rows_ok", Type::scalar(DType::i32));
  // A [r, cols] tile of p at element offset `base` (+ row * cols + col), rows >= rows_ok
  // masked to 0; transposed: the [cols, r] tile read as its transpose.
  auto tile = [&](Value* p, int64_t r, int64_t cols, Value* base, bool trans_view) {
    Value* ri = b.expand_dims(b.arange(0, r), 1);
    Value* ci = b.expand_dims(b.arange(0, cols), 0);
    Value* off = trans_view ? b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, ci, i32(r)), ri)
                            : b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, ri, i32(cols)), ci);
    Value* mask = b.broadcast_to(b.compare(ir::CmpPred::Lt, ri, rows_ok), {r, cols});
    return b.load(b.add_ptr(b.add_ptr(p, base), off), mask, b.const_float(0, Type::tile(dt, {r, cols})));
  };
  std::string& s = c.summary;
  s = std::string(name(dt)) + " M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) +
      " warps=" + std::to_string(c.f->num_warps) + " stages=" + std::to_string(stages);

  // The loop's operands as blocks of tensor views [trips, rows_ok, cols] (the same
  // elements: TMA copies on sm_90a, maybe warp-specialized), drawn from a second
  // generator so that each seed's program is otherwise the one it always was.
  std::mt19937 view_rng(seed ^ 0x9e3779b9u);
  bool views = std::bernoulli_distribution(0.5)(view_rng);
  c.f->warp_specialize = views && std::bernoulli_distribution(0.4)(view_rng);
  auto view_tile = [&](Value* p, int64_t r, int64_t cols, Value* i) {
    return b.load_view(p, {trips, rows_ok, i32(cols)}, {i32(r * cols), i32(cols), i32(1)}, {i, i32(0), i32(0)},
                       {r, cols});
  };
  if (views) s += c.f->warp_specialize ? " views(ws)" : " views";

  // 1. A loop accumulating dot(x_i, y_i) over `trips` iterations (0 allowed).
  bool b_trans = coin(0.3);
  Value* acc0 = b.const_float(0, Type::tile(DType::f32, {M, N}));
  auto res = b.for_(i32(0), trips, i32(1), {acc0}, [&](Builder&, Value* i, const std::vector<Value*>& it) {
    Value* a = views ? view_tile(x, M, K, i) : tile(x, M, K, b.binary(BinaryOp::Mul, i, i32(M * K)), false);
    bool col_major = b_trans ? false : coin(0.3);
    Value* bt = b_trans ? b.trans(views ? view_tile(y, N, K, i) : tile(y, N, K, b.binary(BinaryOp::Mul, i, i32(N * K)), false))
                        : views && !col_major ? view_tile(y, K, N, i)
                                              : tile(y, K, N, b.binary(BinaryOp::Mul, i, i32(K * N)), col_major);
    Value* acc = b.dot(a, bt, it[0]);
    if (coin(0.3)) acc = b.binary(BinaryOp::Mul, acc, f32(0.75));
    return std::vector<Value*>{acc};
  });
  Value* t = res[0];
  s += b_trans ? " loop(dot, B^T)" : " loop(dot)";

  // 2. A few random post-ops on the [M, N] f32 tile.
  int n_ops = static_cast<int>(pick({1, 2, 3, 4}));
  for (int k = 0; k < n_ops; ++k) {
    switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
      case 0: {  // row (or column) reduction broadcast back
        int axis = coin() ? 1 : 0;
        auto kind = coin() ? ir::ReduceKind::Max : ir::ReduceKind::Sum;
        Value* r = b.expand_dims(b.reduce(t, axis, kind), axis);
        t = b.binary(BinaryOp::Sub, t, b.broadcast_to(b.binary(BinaryOp::Mul, r, f32(0.5)), {M, N}));
        s += axis ? " rowreduce" : " colreduce";
        break;
      }
      case 1: {  // softmax-like: exp2 of (x - row max), bounded
        Value* m = b.expand_dims(b.reduce(t, 1, ir::ReduceKind::Max), 1);
        t = b.unary(ir::UnaryOp::Exp2, b.binary(BinaryOp::Sub, t, b.broadcast_to(m, {M, N})));
        s += " exp2(x-max)";
        break;
      }
      case 2: {  // chained dot: cast to 16 bits, times a [N, P] tile of z (FlashAttention's P.V)
        int64_t P = pick({16, 32, 64});
        Value* p16 = b.cast(b.binary(BinaryOp::Mul, t, f32(0.125)), dt);
        Value* zt = tile(z, N, P, i32(0), coin(0.3));
        Value* d = b.dot(p16, zt);
        // Back to [M, N]: reduce over P and broadcast along N.
        Value* r = b.expand_dims(b.reduce(d, 1, ir::ReduceKind::Sum), 1);
        t = b.binary(BinaryOp::Add, t, b.broadcast_to(r, {M, N}));
        s += " chained-dot(P=" + std::to_string(P) + ")";
        break;
      }
      case 3: {  // round trip through the 16-bit type
        t = b.cast(b.cast(t, dt), DType::f32);
        s += " cast";
        break;
      }
      default: {  // transpose twice through a square view when possible, else scale
        if (M == N) {
          t = b.binary(BinaryOp::Add, t, b.trans(t));
          s += " t+t^T";
        } else {
          t = b.binary(BinaryOp::Max, t, b.binary(BinaryOp::Mul, t, f32(-0.5)));
          s += " max";
        }
        break;
      }
    }
  }
  Value* ri = b.expand_dims(b.arange(0, M), 1);
  Value* ci = b.expand_dims(b.arange(0, N), 0);
  b.store(b.add_ptr(out, b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, ri, i32(N)), ci)), t);
  specialize16(*c.f);
  c.f->params[4].divisibility = 1;  // trips and rows_ok: arbitrary
  c.f->params[5].divisibility = 1;
  c.args.push_back(buffer(DType::f32, M * N, 0, 0));
  for (uint32_t k = 0; k < 3; ++k) c.args.push_back(buffer(dt, kArena, -1, 1, seed * 3 + k + 1));
  int64_t trip = pick({0, 1, 2, 3, 5});
  c.args.push_back(Arg::scalar_int(trip));
  c.args.push_back(Arg::scalar_int(std::uniform_int_distribution<int64_t>(1, 128)(rng)));
  s += " trips=" + std::to_string(trip);
  return c;
}

// Tolerance for fuzz programs: dots of up to 128 products of numbers in [-1, 1]
// accumulated in another order than the interpreter's, 16-bit roundings in between.
inline Tol fuzz_tol() { return Tol{2e-2, 2e-2}; }

}  // namespace tftest
