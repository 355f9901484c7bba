// Reductions (sum, max, min, argmax, argmin, custom combine) and scans (cumsum) along
// one axis. A tile is viewed as [outer, n, inner] around the axis; loops run over the
// contiguous inner dimension so they vectorize.
#include <cmath>

#include "exec.hpp"
#include "numeric.hpp"

namespace tilefuse::interp::detail {
namespace {

struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
  AxisView(const ir::Shape& s, int axis) {
    for (int d = 0; d < static_cast<int>(s.size()); ++d) {
      if (d < axis) outer *= s[d];
      else if (d == axis) n = s[d];
      else inner *= s[d];
    }
  }
  int64_t at(int64_t o, int64_t k, int64_t j) const { return (o * n + k) * inner + j; }
};

// NaN propagates: once the accumulator is NaN it stays; a NaN element takes over.
inline bool better_max(double v, double best) { return !std::isnan(best) && (std::isnan(v) || v > best); }
inline bool better_min(double v, double best) { return !std::isnan(best) && (std::isnan(v) || v < best); }

void reduce_float(ir::ReduceKind rk, DType d, const AxisView& av, const double* x, Slot& out, Exec& ex) {
  const int64_t m = av.outer * av.inner;
  const bool arg = rk == ir::ReduceKind::Argmax || rk == ir::ReduceKind::Argmin;
  double* acc = nullptr;
  if (arg) {
    out.i.resize(m);
    ex.scratch_f.resize(m);
    acc = ex.scratch_f.data();
  } else {
    out.f.resize(m);
    acc = out.f.data();
  }
  for (int64_t o = 0; o < av.outer; ++o) {
    double* a = acc + o * av.inner;
    const double* x0 = x + av.at(o, 0, 0);
    for (int64_t j = 0; j < av.inner; ++j) a[j] = x0[j];
    int64_t* idx = arg ? out.i.data() + o * av.inner : nullptr;
    if (arg)
      for (int64_t j = 0; j < av.inner; ++j) idx[j] = 0;
    for (int64_t k = 1; k < av.n; ++k) {
      const double* xk = x + av.at(o, k, 0);
      switch (rk) {
        case ir::ReduceKind::Sum:  // accumulated in double, rounded once at the end
          for (int64_t j = 0; j < av.inner; ++j) a[j] += xk[j];
          break;
        case ir::ReduceKind::Max:
          for (int64_t j = 0; j < av.inner; ++j) if (better_max(xk[j], a[j])) a[j] = xk[j];
          break;
        case ir::ReduceKind::Min:
          for (int64_t j = 0; j < av.inner; ++j) if (better_min(xk[j], a[j])) a[j] = xk[j];
          break;
        case ir::ReduceKind::Argmax:
          for (int64_t j = 0; j < av.inner; ++j) if (better_max(xk[j], a[j])) { a[j] = xk[j]; idx[j] = k; }
          break;
        case ir::ReduceKind::Argmin:
          for (int64_t j = 0; j < av.inner; ++j) if (better_min(xk[j], a[j])) { a[j] = xk[j]; idx[j] = k; }
          break;
        case ir::ReduceKind::Custom: internal_error("custom reduce in reduce_float");
      }
    }
  }
  if (rk == ir::ReduceKind::Sum)
    for (int64_t j = 0; j < m; ++j) acc[j] = round_to(acc[j], d);
}

void reduce_int(ir::ReduceKind rk, DType d, const AxisView& av, const int64_t* x, Slot& out, Exec& ex) {
  const int64_t m = av.outer * av.inner;
  const bool arg = rk == ir::ReduceKind::Argmax || rk == ir::ReduceKind::Argmin;
  out.i.resize(m);
  if (arg) ex.scratch_i.resize(m);  // argmax/argmin keep the best values apart
  int64_t* acc = arg ? ex.scratch_i.data() : out.i.data();
  for (int64_t o = 0; o < av.outer; ++o) {
    int64_t* a = acc + o * av.inner;
    int64_t* idx = arg ? out.i.data() + o * av.inner : nullptr;
    const int64_t* x0 = x + av.at(o, 0, 0);
    for (int64_t j = 0; j < av.inner; ++j) a[j] = x0[j];
    if (arg) for (int64_t j = 0; j < av.inner; ++j) idx[j] = 0;
    for (int64_t k = 1; k < av.n; ++k) {
      const int64_t* xk = x + av.at(o, k, 0);
      switch (rk) {
        case ir::ReduceKind::Sum:
          for (int64_t j = 0; j < av.inner; ++j) a[j] = static_cast<int64_t>(uint64_t(a[j]) + uint64_t(xk[j]));
          break;
        case ir::ReduceKind::Max: for (int64_t j = 0; j < av.inner; ++j) a[j] = xk[j] > a[j] ? xk[j] : a[j]; break;
        case ir::ReduceKind::Min: for (int64_t j = 0; j < av.inner; ++j) a[j] = xk[j] < a[j] ? xk[j] : a[j]; break;
        case ir::ReduceKind::Argmax:
          for (int64_t j = 0; j < av.inner; ++j) if (xk[j] > a[j]) { a[j] = xk[j]; idx[j] = k; }
          break;
        case ir::ReduceKind::Argmin:
          for (int64_t j = 0; j < av.inner; ++j) if (xk[j] < a[j]) { a[j] = xk[j]; idx[j] = k; }
          break;
        case ir::ReduceKind::Custom: internal_error("custom reduce in reduce_int");
      }
    }
  }
  if (rk == ir::ReduceKind::Sum)
    for (int64_t j = 0; j < m; ++j) acc[j] = wrap_int(acc[j], d);
}

// Left fold in index order: acc = combine(acc, x[k]) running the region per pair.
void reduce_custom(Exec& ex, const ir::Op& op, const AxisView& av, Kind kind) {
  const ir::Block& body = *op.region(0);
  const ir::Op* yield = body.terminator();
  TF_ASSERT(body.args.size() == 2 && yield && yield->kind == ir::OpKind::Yield && yield->num_operands() == 1,
            "malformed custom reduce region");
  const Slot& x = ex.at(op.operand(0));
  Slot& out = ex.at(op.result());
  Slot& lhs = ex.at(body.args[0]);
  Slot& rhs = ex.at(body.args[1]);
  const ir::Value* r = yield->operand(0);
  resize(out, kind, av.outer * av.inner);
  for (int64_t o = 0; o < av.outer; ++o)
    for (int64_t j = 0; j < av.inner; ++j) {
      set_scalar(lhs, x, av.at(o, 0, j), kind);
      for (int64_t k = 1; k < av.n; ++k) {
        set_scalar(rhs, x, av.at(o, k, j), kind);
        exec_block(ex, body);
        if (r != body.args[0]) set_scalar(lhs, ex.at(r), 0, kind);
      }
      // ex.at(r) may be the rhs argument; lhs always holds the fold so far.
      if (kind == Kind::Float) out.f[o * av.inner + j] = lhs.f[0];
      else out.i[o * av.inner + j] = lhs.i[0];
    }
}

void scan_sum(const ir::Op& op, const AxisView& av, const Slot& x, Slot& out, DType d) {
  const int64_t total = av.outer * av.n * av.inner;
  if (is_float(d)) {  // running sum in double, each output rounded to the dtype
    out.f.resize(total);
    for (int64_t o = 0; o < av.outer; ++o)
      for (int64_t j = 0; j < av.inner; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < av.n; ++k) {
          acc += x.f[av.at(o, k, j)];
          out.f[av.at(o, k, j)] = round_to(acc, d);
        }
      }
  } else {
    out.i.resize(total);
    for (int64_t o = 0; o < av.outer; ++o)
      for (int64_t j = 0; j < av.inner; ++j) {
        uint64_t acc = 0;
        for (int64_t k = 0; k < av.n; ++k) {
          acc += uint64_t(x.i[av.at(o, k, j)]);
          out.i[av.at(o, k, j)] = wrap_int(static_cast<int64_t>(acc), d);
        }
      }
  }
}

}  // namespace

void exec_reduce(Exec& ex, const ir::Op& op) {
  const ir::Type& in = op.operand(0)->type;
  TF_ASSERT(in.is_tile() && !in.is_ptr && op.axis >= 0 && op.axis < in.rank(), "malformed reduce");
  AxisView av(in.shape, op.axis);
  const Slot& x = ex.at(op.operand(0));
  Slot& out = ex.at(op.result());
  if (op.kind == ir::OpKind::Scan) {
    TF_ASSERT(op.red() == ir::ReduceKind::Sum, "scan supports only sum");
    return scan_sum(op, av, x, out, in.dtype);
  }
  TF_ASSERT(op.result()->type.numel() == av.outer * av.inner, "reduce result has the wrong size");
  if (op.red() == ir::ReduceKind::Custom) return reduce_custom(ex, op, av, kind_of(in));
  if (is_float(in.dtype)) reduce_float(op.red(), in.dtype, av, x.f.data(), out, ex);
  else reduce_int(op.red(), in.dtype, av, x.i.data(), out, ex);
}

}  // namespace tilefuse::interp::detail
