#pragma once
// Tile-IR kernels built directly with ir::Builder for the GPU-compiler tests: the
// shapes of the gallery kernels (softmax, RMSNorm, FlashAttention) and one kernel per
// op family.
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "tilefuse/ir/builder.hpp"

namespace tftest {

using namespace tilefuse;
using ir::BinaryOp;
using ir::Builder;
using ir::Type;
using ir::Value;

inline std::unique_ptr<ir::Function> new_kernel(const std::string& name, int num_warps) {
  auto f = std::make_unique<ir::Function>();
  f->name = name;
  f->num_warps = num_warps;
  return f;
}

// Marks every pointer 16-byte aligned and every integer parameter divisible by 16.
inline void specialize16(ir::Function& f) {
  for (auto& p : f.params)
    if (p.value->type.is_ptr || is_int(p.value->type.dtype)) p.divisibility = 16;
}

// One row per program: out[row, :] = softmax(in[row, :]) over n_cols <= block columns.
inline std::unique_ptr<ir::Function> softmax(DType in_dt, DType out_dt, int64_t block, int warps, bool aligned = true) {
  auto f = new_kernel("softmax", warps);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(out_dt));
  Value* in = b.param("in", Type::pointer(in_dt), true);
  Value* n = b.param("n_cols", Type::scalar(DType::i32));
  Value* stride = b.param("stride", Type::scalar(DType::i64));
  Value* row = b.program_id(0);
  Value* cols = b.arange(0, block);
  Value* mask = b.compare(ir::CmpPred::Lt, cols, n);
  Value* off = b.binary(BinaryOp::Mul, row, stride);
  Value* src = b.add_ptr(b.add_ptr(in, off), cols);
  Value* x = b.cast(b.load(src, mask, b.const_float(-INFINITY, Type::scalar(in_dt))), DType::f32);
  Value* m = b.reduce(x, 0, ir::ReduceKind::Max);
  Value* e = b.unary(ir::UnaryOp::Exp, b.binary(BinaryOp::Sub, x, m));
  Value* s = b.reduce(e, 0, ir::ReduceKind::Sum);
  Value* y = b.cast(b.binary(BinaryOp::Div, e, s), out_dt);
  b.store(b.add_ptr(b.add_ptr(out, off), cols), y, mask);
  if (aligned) specialize16(*f);
  return f;
}

// out[row] = x[row] * rsqrt(mean(x[row]^2) + eps) * w
inline std::unique_ptr<ir::Function> rmsnorm(DType dt, int64_t block, int warps) {
  auto f = new_kernel("rmsnorm", warps);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(dt));
  Value* in = b.param("in", Type::pointer(dt), true);
  Value* w = b.param("w", Type::pointer(dt), true);
  Value* n = b.param("n_cols", Type::scalar(DType::i32));
  Value* stride = b.param("stride", Type::scalar(DType::i32));
  Value* eps = b.param("eps", Type::scalar(DType::f32));
  Value* row = b.program_id(0);
  Value* cols = b.arange(0, block);
  Value* mask = b.compare(ir::CmpPred::Lt, cols, n);
  Value* off = b.binary(BinaryOp::Mul, row, stride);
  Value* zero = b.const_float(0.0, Type::scalar(dt));
  Value* x = b.cast(b.load(b.add_ptr(b.add_ptr(in, off), cols), mask, zero), DType::f32);
  Value* ss = b.reduce(b.binary(BinaryOp::Mul, x, x), 0, ir::ReduceKind::Sum);
  Value* ms = b.binary(BinaryOp::Div, ss, b.cast(n, DType::f32));
  Value* r = b.unary(ir::UnaryOp::Rsqrt, b.binary(BinaryOp::Add, ms, eps));
  Value* wv = b.cast(b.load(b.add_ptr(w, cols), mask, zero), DType::f32);
  Value* y = b.binary(BinaryOp::Mul, b.binary(BinaryOp::Mul, x, r), wv);
  b.store(b.add_ptr(b.add_ptr(out, off), cols), b.cast(y, dt), mask);
  specialize16(*f);
  return f;
}

// FlashAttention forward for one [bm, d] block of queries: loop over keys in blocks of
// bn with the online softmax; two dots, row max/sum, loop-carried acc, m_i, l_i.
inline std::unique_ptr<ir::Function> attention(int64_t bm, int64_t bn, int64_t d, int warps, DType dt = DType::f16) {
  auto f = new_kernel("attention", warps);
  Builder b(*f);
  Value* O = b.param("o", Type::pointer(dt));
  Value* Q = b.param("q", Type::pointer(dt), true);
  Value* K = b.param("k", Type::pointer(dt), true);
  Value* V = b.param("v", Type::pointer(dt), true);
  Value* stride = b.param("stride", Type::scalar(DType::i32));
  Value* n_ctx = b.param("n_ctx", Type::scalar(DType::i32));
  Value* scale = b.param("qk_scale", Type::scalar(DType::f32));
  Value* pid = b.program_id(0);
  Value* offs_m = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, pid, b.const_int(bm, Type::scalar(DType::i32))),
                           b.arange(0, bm));
  Value* offs_n = b.arange(0, bn);
  Value* offs_d = b.arange(0, d);
  auto col = [&](Value* v) { return b.expand_dims(v, 1); };
  auto row = [&](Value* v) { return b.expand_dims(v, 0); };
  Value* q_off = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, col(offs_m), stride), row(offs_d));
  Value* q = b.load(b.add_ptr(Q, q_off));
  Value* m_i = b.const_float(-INFINITY, Type::tile(DType::f32, {bm}));
  Value* l_i = b.const_float(1.0, Type::tile(DType::f32, {bm}));
  Value* acc = b.const_float(0.0, Type::tile(DType::f32, {bm, d}));
  Value* zero = b.const_int(0, Type::scalar(DType::i32));
  Value* step = b.const_int(bn, Type::scalar(DType::i32));
  auto res = b.for_(zero, n_ctx, step, {acc, m_i, l_i}, [&](Builder& b, Value* start, const std::vector<Value*>& it) {
    Value* kn = b.binary(BinaryOp::Add, offs_n, start);
    Value* k_off = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, row(kn), stride), col(offs_d));  // [d, bn]
    Value* k = b.load(b.add_ptr(K, k_off));
    Value* qk = b.dot(q, k);
    Value* m_ij = b.binary(BinaryOp::Max, it[1], b.binary(BinaryOp::Mul, b.reduce(qk, 1, ir::ReduceKind::Max), scale));
    Value* p = b.unary(ir::UnaryOp::Exp2, b.binary(BinaryOp::Sub, b.binary(BinaryOp::Mul, qk, scale), col(m_ij)), true);
    Value* alpha = b.unary(ir::UnaryOp::Exp2, b.binary(BinaryOp::Sub, it[1], m_ij), true);
    Value* l = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, it[2], alpha), b.reduce(p, 1, ir::ReduceKind::Sum));
    Value* v_off = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, col(kn), stride), row(offs_d));  // [bn, d]
    Value* v = b.load(b.add_ptr(V, v_off));
    Value* a = b.dot(b.cast(p, dt), v, b.binary(BinaryOp::Mul, it[0], col(alpha)));
    return std::vector<Value*>{a, m_ij, l};
  });
  Value* o = b.binary(BinaryOp::Div, res[0], col(res[2]));
  b.store(b.add_ptr(O, q_off), b.cast(o, dt));
  specialize16(*f);
  return f;
}

}  // namespace tftest
