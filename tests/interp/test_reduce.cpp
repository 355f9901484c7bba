// Reductions (sum, max, min, argmax, argmin, custom), cumsum and dot against plain
// C++ references.
#include <functional>
#include <limits>

#include "interp_test_util.hpp"

using namespace tf_test;
using ir::BinaryOp;
using ir::ReduceKind;

namespace {

constexpr int64_t R = 37, C = 45, B = 64;  // a [R, C] matrix in [B, B] tiles

// Reduces a row-major [R, C] matrix along `axis` (1: per row, 0: per column), one
// program per row/column, masked lanes filled with `other`.
HostArray reduce2d(HostArray& in, int axis, double other,
                   const std::function<Value*(Kernel&, Value*, int)>& red, DType out_dtype) {
  Kernel k("reduce2d");
  Value* out = k.ptr("out", out_dtype);
  Value* ip = k.ptr("in", in.dtype, true);
  Value* pid = k.b.program_id(0);
  Value* lanes = k.b.arange(0, B);
  // Tile [1, B] of row pid (axis 1) or [B, 1] of column pid (axis 0).
  Value* one = k.b.splat(pid, {1});
  Value* rows = axis == 1 ? k.b.expand_dims(one, 1) : k.b.expand_dims(lanes, 1);
  Value* cols = axis == 1 ? k.b.expand_dims(lanes, 0) : k.b.expand_dims(one, 0);
  Value* mask = k.b.binary(BinaryOp::And, k.lt(rows, k.i32(R)), k.lt(cols, k.i32(C)));
  Value* x = k.b.load(k.at_ptr(ip, k.add(k.mul(rows, k.i32(C)), cols)), mask,
                      k.b.constant(other, Type::scalar(in.dtype)));
  Value* r = red(k, x, axis);  // shape [1]
  k.b.store(k.at_ptr(out, one), r);
  HostArray o(out_dtype, axis == 1 ? R : C);
  k.run(Grid(o.n), {o.arg(), in.arg()});
  return o;
}

double at(const HostArray& a, int64_t r, int64_t c) { return a.get(r * C + c); }

}  // namespace

TEST_CASE("interp: sum/max/min/argmax/argmin along both axes of a masked 2-D tile") {
  const double inf = std::numeric_limits<double>::infinity();
  for (DType d : {DType::f32, DType::bf16, DType::i32}) {
    HostArray in = d == DType::i32 ? random_array(d, R * C, -3, 3) : random_array(d, R * C);  // ints: many ties
    for (int axis : {0, 1}) {
      CAPTURE(name(d));
      CAPTURE(axis);
      const double lo = d == DType::i32 ? INT32_MIN : -inf, hi = d == DType::i32 ? INT32_MAX : inf;
      auto red = [](ReduceKind rk) {
        return [rk](Kernel& k, Value* x, int ax) { return k.b.reduce(x, ax, rk); };
      };
      HostArray sum = reduce2d(in, axis, 0, red(ReduceKind::Sum), d);
      HostArray mx = reduce2d(in, axis, lo, red(ReduceKind::Max), d);
      HostArray mn = reduce2d(in, axis, hi, red(ReduceKind::Min), d);
      HostArray amx = reduce2d(in, axis, lo, red(ReduceKind::Argmax), DType::i32);
      HostArray amn = reduce2d(in, axis, hi, red(ReduceKind::Argmin), DType::i32);
      const int64_t outer = axis == 1 ? R : C, len = axis == 1 ? C : R;
      for (int64_t o = 0; o < outer; ++o) {
        double s = 0, best_max = -inf, best_min = inf, abs_sum = 0;
        int64_t imax = -1, imin = -1;
        for (int64_t j = 0; j < len; ++j) {
          double v = axis == 1 ? at(in, o, j) : at(in, j, o);
          s += v;
          abs_sum += std::fabs(v);
          if (imax < 0 || v > best_max) { best_max = v; imax = j; }
          if (imin < 0 || v < best_min) { best_min = v; imin = j; }
        }
        if (d == DType::i32) REQUIRE(sum.get(o) == s);
        else REQUIRE(std::fabs(sum.get(o) - s) <= (d == DType::bf16 ? 1e-2 : 1e-6) * abs_sum);
        REQUIRE(mx.get(o) == best_max);
        REQUIRE(mn.get(o) == best_min);
        REQUIRE(amx.geti(o) == imax);  // the first index of the extreme
        REQUIRE(amn.geti(o) == imin);
      }
    }
  }
}

TEST_CASE("interp: max/min/argmax propagate NaN") {
  HostArray in = random_array(DType::f32, R * C);
  in.set(5 * C + 7, std::nan(""));
  in.set(5 * C + 9, std::nan(""));
  auto red = [](ReduceKind rk) { return [rk](Kernel& k, Value* x, int ax) { return k.b.reduce(x, ax, rk); }; };
  HostArray mx = reduce2d(in, 1, -INFINITY, red(ReduceKind::Max), DType::f32);
  HostArray mn = reduce2d(in, 1, INFINITY, red(ReduceKind::Min), DType::f32);
  HostArray amx = reduce2d(in, 1, -INFINITY, red(ReduceKind::Argmax), DType::i32);
  HostArray amn = reduce2d(in, 1, INFINITY, red(ReduceKind::Argmin), DType::i32);
  CHECK(std::isnan(mx.get(5)));
  CHECK(std::isnan(mn.get(5)));
  CHECK(amx.geti(5) == 7);
  CHECK(amn.geti(5) == 7);
  CHECK(!std::isnan(mx.get(4)));
}

TEST_CASE("interp: custom reduce is a left fold in index order") {
  HostArray in = full_range_ints(DType::i32, R * C);
  // combine(l, r) = 3 l + r is not commutative: the result is sum_k 3^(n-1-k) x_k.
  auto poly = [](Kernel& k, Value* x, int ax) {
    return k.b.reduce_custom(x, ax, [](ir::Builder& b, Value* l, Value* r) {
      return b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, l, b.const_int(3, Type::scalar(DType::i32))), r);
    });
  };
  auto first = [](Kernel& k, Value* x, int ax) {
    return k.b.reduce_custom(x, ax, [](ir::Builder&, Value* l, Value*) { return l; });
  };
  auto last = [](Kernel& k, Value* x, int ax) {
    return k.b.reduce_custom(x, ax, [](ir::Builder&, Value*, Value* r) { return r; });
  };
  for (int axis : {0, 1}) {
    HostArray p = reduce2d(in, axis, 0, poly, DType::i32);
    HostArray f = reduce2d(in, axis, 0, first, DType::i32);
    HostArray l = reduce2d(in, axis, 7, last, DType::i32);
    const int64_t outer = axis == 1 ? R : C, len = axis == 1 ? C : R;
    for (int64_t o = 0; o < outer; ++o) {
      uint32_t acc = 0;
      for (int64_t j = 0; j < B; ++j) {  // masked lanes hold 0 and fold in too
        uint32_t v = j < len ? static_cast<uint32_t>(axis == 1 ? at(in, o, j) : at(in, j, o)) : 0;
        acc = j == 0 ? v : acc * 3u + v;
      }
      CHECK(p.geti(o) == static_cast<int32_t>(acc));
      CHECK(f.geti(o) == (axis == 1 ? at(in, o, 0) : at(in, 0, o)));
      CHECK(l.geti(o) == 7);  // the last lane is masked, filled with 7
    }
  }
  // A float combine: the element of largest magnitude, first on ties.
  HostArray fin = random_array(DType::f32, R * C);
  HostArray big = reduce2d(fin, 1, 0, [](Kernel& k, Value* x, int ax) {
    return k.b.reduce_custom(x, ax, [](ir::Builder& b, Value* l, Value* r) {
      Value* keep = b.compare(ir::CmpPred::Ge, b.unary(ir::UnaryOp::Abs, l), b.unary(ir::UnaryOp::Abs, r));
      return b.select(keep, l, r);
    });
  }, DType::f32);
  for (int64_t o = 0; o < R; ++o) {
    double best = 0;
    for (int64_t j = 0; j < C; ++j)
      if (std::fabs(at(fin, o, j)) > std::fabs(best)) best = at(fin, o, j);
    CHECK(big.get(o) == best);
  }
}

TEST_CASE("interp: reduce over the middle axis of a rank-3 tile") {
  Kernel k("mid");
  Value* out = k.ptr("out", DType::i64);
  Value* in = k.ptr("in", DType::i64, true);
  Value* x = k.b.reshape(k.b.load(k.at_ptr(in, k.b.arange(0, 64))), {2, 4, 8});
  Value* s = k.b.reduce(x, 1, ReduceKind::Sum);  // [2, 8]
  k.b.store(k.at_ptr(out, k.b.arange(0, 16)), k.b.reshape(s, {16}));
  HostArray a = random_array(DType::i64, 64, -1000000, 1000000), o(DType::i64, 16);
  k.run(Grid(1), {o.arg(), a.arg()});
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 8; ++c) {
      int64_t want = 0;
      for (int j = 0; j < 4; ++j) want += a.geti((i * 4 + j) * 8 + c);
      CHECK(o.geti(i * 8 + c) == want);
    }
}

TEST_CASE("interp: cumsum along each axis (f32 and wrapping i32)") {
  for (DType d : {DType::f32, DType::i32}) {
    for (int axis : {0, 1}) {
      CAPTURE(name(d));
      CAPTURE(axis);
      HostArray in = d == DType::f32 ? random_array(d, 16 * 32) : full_range_ints(d, 16 * 32);
      Kernel k("cumsum");
      Value* out = k.ptr("out", d);
      Value* ip = k.ptr("in", d, true);
      Value* offs = k.b.reshape(k.b.arange(0, 16 * 32), {16, 32});
      Value* s = k.b.scan(k.b.load(k.at_ptr(ip, offs)), axis);
      k.b.store(k.at_ptr(out, offs), s);
      HostArray o(d, 16 * 32);
      k.run(Grid(1), {o.arg(), in.arg()});
      for (int64_t outer = 0; outer < (axis == 0 ? 32 : 16); ++outer) {
        double acc = 0, abs_acc = 0;
        uint32_t iacc = 0;
        for (int64_t j = 0; j < (axis == 0 ? 16 : 32); ++j) {
          int64_t idx = axis == 0 ? j * 32 + outer : outer * 32 + j;
          acc += in.get(idx);
          abs_acc += std::fabs(in.get(idx));
          iacc += static_cast<uint32_t>(in.geti(idx));
          if (d == DType::f32) REQUIRE(std::fabs(o.get(idx) - acc) <= 1e-6 * abs_acc);
          else REQUIRE(o.geti(idx) == static_cast<int32_t>(iacc));
        }
      }
    }
  }
}

TEST_CASE("interp: dot matches a triple loop (f16, bf16, f32 inputs, f32 accumulator)") {
  const int64_t M = 70, N = 45, K = 29, BM = 32, BN = 64, BK = 32;  // everything masked
  for (DType d : {DType::f16, DType::bf16, DType::f32}) {
    CAPTURE(name(d));
    Kernel k("matmul");
    Value* cp = k.ptr("c", DType::f32);
    Value* ap = k.ptr("a", d, true);
    Value* bp = k.ptr("b", d, true);
    Value* rows = k.b.expand_dims(k.add(k.mul(k.b.program_id(0), k.i32(BM)), k.b.arange(0, BM)), 1);  // [BM, 1]
    Value* cols = k.b.expand_dims(k.b.arange(0, BN), 0);                                            // [1, BN]
    Value* kk = k.b.arange(0, BK);
    Value* ka = k.b.expand_dims(kk, 0), *kb = k.b.expand_dims(kk, 1);
    Value* zero = k.b.const_float(0, Type::scalar(d));
    Value* a = k.b.load(k.at_ptr(ap, k.add(k.mul(rows, k.i32(K)), ka)),
                        k.b.binary(BinaryOp::And, k.lt(rows, k.i32(M)), k.lt(ka, k.i32(K))), zero);
    Value* b = k.b.load(k.at_ptr(bp, k.add(k.mul(kb, k.i32(N)), cols)),
                        k.b.binary(BinaryOp::And, k.lt(kb, k.i32(K)), k.lt(cols, k.i32(N))), zero);
    Value* cmask = k.b.binary(BinaryOp::And, k.lt(rows, k.i32(M)), k.lt(cols, k.i32(N)));
    Value* cptr = k.at_ptr(cp, k.add(k.mul(rows, k.i32(N)), cols));
    Value* acc = k.b.load(cptr, cmask, k.b.const_float(0, Type::scalar(DType::f32)));
    k.b.store(cptr, k.b.dot(a, b, acc), cmask);
    HostArray A = random_array(d, M * K), Bm = random_array(d, K * N), Cm = random_array(DType::f32, M * N);
    HostArray C0 = Cm;
    k.run(Grid(cdiv(M, BM)), {Cm.arg(), A.arg(), Bm.arg()});
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double want = C0.get(i * N + j), mag = std::fabs(want);
        for (int64_t q = 0; q < K; ++q) {
          float p = static_cast<float>(A.get(i * K + q)) * static_cast<float>(Bm.get(q * N + j));
          want += p;
          mag += std::fabs(p);
        }
        REQUIRE(std::fabs(Cm.get(i * N + j) - want) <= 1e-6 * mag);
      }
  }
}
