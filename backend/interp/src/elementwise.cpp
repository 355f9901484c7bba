// Element-wise ops: binary arithmetic/bitwise, unary math, compare, select, fma.
// The Builder gives every operand the same type, so each op is one loop over the tile.
#include <cmath>

#include "exec.hpp"
#include "float_kernels.hpp"

namespace tilefuse::interp::detail {
namespace {

using ir::BinaryOp;
using ir::UnaryOp;

void float_binary(BinaryOp opc, DType d, const double* a, const double* b, double* o, int64_t n) {
  switch (opc) {
    case BinaryOp::Add: return map_float(d, a, b, o, n, [](auto x, auto y) { return x + y; });
    case BinaryOp::Sub: return map_float(d, a, b, o, n, [](auto x, auto y) { return x - y; });
    case BinaryOp::Mul: return map_float(d, a, b, o, n, [](auto x, auto y) { return x * y; });
    case BinaryOp::Div: return map_float(d, a, b, o, n, [](auto x, auto y) { return x / y; });
    case BinaryOp::Rem: return map_float(d, a, b, o, n, [](auto x, auto y) { return std::fmod(x, y); });
    case BinaryOp::Min: return map_float(d, a, b, o, n, [](auto x, auto y) { return min_nan(x, y); });
    case BinaryOp::Max: return map_float(d, a, b, o, n, [](auto x, auto y) { return max_nan(x, y); });
    default: internal_error(std::string("bitwise op ") + ir::name(opc) + " on floats");
  }
}

template <class Fn>
void map_int(DType d, const int64_t* a, const int64_t* b, int64_t* o, int64_t n, Fn fn) {
  for (int64_t k = 0; k < n; ++k) o[k] = wrap_int(fn(a[k], b[k]), d);
}

inline int64_t wadd(int64_t x, int64_t y) { return static_cast<int64_t>(uint64_t(x) + uint64_t(y)); }
inline int64_t wsub(int64_t x, int64_t y) { return static_cast<int64_t>(uint64_t(x) - uint64_t(y)); }
inline int64_t wmul(int64_t x, int64_t y) { return static_cast<int64_t>(uint64_t(x) * uint64_t(y)); }

void int_binary(Exec& ex, const ir::Op& op, DType d, const int64_t* a, const int64_t* b, int64_t* o, int64_t n) {
  BinaryOp opc = op.bin();
  const int64_t width = bit_width(d);
  switch (opc) {
    case BinaryOp::Add: return map_int(d, a, b, o, n, wadd);
    case BinaryOp::Sub: return map_int(d, a, b, o, n, wsub);
    case BinaryOp::Mul: return map_int(d, a, b, o, n, wmul);
    case BinaryOp::Div:
    case BinaryOp::Rem:
      for (int64_t k = 0; k < n; ++k) {
        if (b[k] == 0)
          ex.fail(op, std::string("integer ") + (opc == BinaryOp::Div ? "division" : "remainder") +
                          " by zero (" + std::to_string(a[k]) + (opc == BinaryOp::Div ? " / " : " % ") + "0, element " +
                          std::to_string(k) + " of a " + name(d) + " tile)",
                  "Make sure the divisor is never zero, e.g. divide by where(d == 0, 1, d); masked-off lanes of a "
                  "load read 0 unless it is given an 'other' value (e.g. other = 1)");
        if (b[k] == -1)  // avoids the INT64_MIN / -1 trap; wraps like the hardware
          o[k] = opc == BinaryOp::Div ? wrap_int(wsub(0, a[k]), d) : 0;
        else
          o[k] = opc == BinaryOp::Div ? wrap_int(a[k] / b[k], d) : a[k] % b[k];
      }
      return;
    case BinaryOp::Min: return map_int(d, a, b, o, n, [](int64_t x, int64_t y) { return x < y ? x : y; });
    case BinaryOp::Max: return map_int(d, a, b, o, n, [](int64_t x, int64_t y) { return x > y ? x : y; });
    case BinaryOp::And: return map_int(d, a, b, o, n, [](int64_t x, int64_t y) { return x & y; });
    case BinaryOp::Or: return map_int(d, a, b, o, n, [](int64_t x, int64_t y) { return x | y; });
    case BinaryOp::Xor: return map_int(d, a, b, o, n, [](int64_t x, int64_t y) { return x ^ y; });
    case BinaryOp::Shl:
      return map_int(d, a, b, o, n, [width](int64_t x, int64_t s) {
        return s < 0 || s >= width ? 0 : static_cast<int64_t>(uint64_t(x) << s);
      });
    case BinaryOp::Shr:
      if (is_unsigned(d))  // values are zero-extended: a logical shift of the int64
        return map_int(d, a, b, o, n, [width](int64_t x, int64_t s) {
          return s < 0 || s >= width ? 0 : static_cast<int64_t>(uint64_t(x) >> s);
        });
      return map_int(d, a, b, o, n, [width](int64_t x, int64_t s) {
        return s < 0 || s >= width ? (x < 0 ? -1 : 0) : (x >> s);
      });
  }
}

void float_unary(UnaryOp opc, DType d, const double* a, double* o, int64_t n) {
  switch (opc) {
    case UnaryOp::Neg: return map_float(d, a, o, n, [](auto x) { return -x; });
    case UnaryOp::Exp: return map_float(d, a, o, n, [](auto x) { return std::exp(x); });
    case UnaryOp::Exp2: return map_float(d, a, o, n, [](auto x) { return std::exp2(x); });
    case UnaryOp::Log: return map_float(d, a, o, n, [](auto x) { return std::log(x); });
    case UnaryOp::Log2: return map_float(d, a, o, n, [](auto x) { return std::log2(x); });
    case UnaryOp::Sqrt: return map_float(d, a, o, n, [](auto x) { return std::sqrt(x); });
    case UnaryOp::Rsqrt:
      return map_float(d, a, o, n, [](auto x) { return decltype(x)(1) / std::sqrt(x); });
    case UnaryOp::Sin: return map_float(d, a, o, n, [](auto x) { return std::sin(x); });
    case UnaryOp::Cos: return map_float(d, a, o, n, [](auto x) { return std::cos(x); });
    case UnaryOp::Tanh: return map_float(d, a, o, n, [](auto x) { return std::tanh(x); });
    case UnaryOp::Erf: return map_float(d, a, o, n, [](auto x) { return std::erf(x); });
    case UnaryOp::Sigmoid:
      return map_float(d, a, o, n, [](auto x) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); });
    case UnaryOp::Abs: return map_float(d, a, o, n, [](auto x) { return std::fabs(x); });
    case UnaryOp::Floor: return map_float(d, a, o, n, [](auto x) { return std::floor(x); });
    case UnaryOp::Ceil: return map_float(d, a, o, n, [](auto x) { return std::ceil(x); });
    case UnaryOp::Not: internal_error("bitwise not on floats");
  }
}

void int_unary(UnaryOp opc, DType d, const int64_t* a, int64_t* o, int64_t n) {
  switch (opc) {
    case UnaryOp::Neg:
      for (int64_t k = 0; k < n; ++k) o[k] = wrap_int(wsub(0, a[k]), d);
      return;
    case UnaryOp::Not:
      for (int64_t k = 0; k < n; ++k) o[k] = wrap_int(~a[k], d);
      return;
    case UnaryOp::Abs:
      for (int64_t k = 0; k < n; ++k) o[k] = a[k] < 0 ? wrap_int(wsub(0, a[k]), d) : a[k];
      return;
    default: internal_error(std::string("math op ") + ir::name(opc) + " on integers");
  }
}

template <class T>
void compare(ir::CmpPred p, const T* a, const T* b, int64_t* o, int64_t n) {
  switch (p) {  // on NaN every predicate but Ne is false, as in C
    case ir::CmpPred::Eq: for (int64_t k = 0; k < n; ++k) o[k] = a[k] == b[k]; return;
    case ir::CmpPred::Ne: for (int64_t k = 0; k < n; ++k) o[k] = a[k] != b[k]; return;
    case ir::CmpPred::Lt: for (int64_t k = 0; k < n; ++k) o[k] = a[k] < b[k]; return;
    case ir::CmpPred::Le: for (int64_t k = 0; k < n; ++k) o[k] = a[k] <= b[k]; return;
    case ir::CmpPred::Gt: for (int64_t k = 0; k < n; ++k) o[k] = a[k] > b[k]; return;
    case ir::CmpPred::Ge: for (int64_t k = 0; k < n; ++k) o[k] = a[k] >= b[k]; return;
  }
}

template <class T>
void select(const int64_t* c, const T* a, const T* b, T* o, int64_t n) {
  for (int64_t k = 0; k < n; ++k) o[k] = c[k] ? a[k] : b[k];
}

void check_sizes(const Exec& ex, const ir::Op& op, int64_t n) {
  for (const ir::Value* v : op.operands)
    TF_ASSERT(v->type.numel() == n, std::string(ir::name(op.kind)) + " operand shape differs from the result");
}

}  // namespace

void exec_elementwise(Exec& ex, const ir::Op& op) {
  using ir::OpKind;
  const ir::Value* res = op.result();
  const int64_t n = res->type.numel();
  check_sizes(ex, op, n);
  Slot& out = ex.at(res);
  switch (op.kind) {
    case OpKind::Binary: {
      const Slot& a = ex.at(op.operand(0));
      const Slot& b = ex.at(op.operand(1));
      DType d = op.operand(0)->type.dtype;
      if (is_float(d)) {
        out.f.resize(n);
        float_binary(op.bin(), d, a.f.data(), b.f.data(), out.f.data(), n);
      } else {
        out.i.resize(n);
        int_binary(ex, op, d, a.i.data(), b.i.data(), out.i.data(), n);
      }
      return;
    }
    case OpKind::Unary: {
      const Slot& a = ex.at(op.operand(0));
      DType d = op.operand(0)->type.dtype;
      if (is_float(d)) {
        out.f.resize(n);
        float_unary(op.un(), d, a.f.data(), out.f.data(), n);
      } else {
        out.i.resize(n);
        int_unary(op.un(), d, a.i.data(), out.i.data(), n);
      }
      return;
    }
    case OpKind::Compare: {
      const Slot& a = ex.at(op.operand(0));
      const Slot& b = ex.at(op.operand(1));
      out.i.resize(n);
      if (kind_of(op.operand(0)->type) == Kind::Float)
        compare(op.cmp(), a.f.data(), b.f.data(), out.i.data(), n);
      else
        compare(op.cmp(), a.i.data(), b.i.data(), out.i.data(), n);
      return;
    }
    case OpKind::Select: {
      const int64_t* c = ex.at(op.operand(0)).i.data();
      const Slot& a = ex.at(op.operand(1));
      const Slot& b = ex.at(op.operand(2));
      Kind k = kind_of(res->type);
      resize(out, k, n);
      if (k == Kind::Float) {
        select(c, a.f.data(), b.f.data(), out.f.data(), n);
      } else {
        select(c, a.i.data(), b.i.data(), out.i.data(), n);
        if (k == Kind::Ptr) select(c, a.buf.data(), b.buf.data(), out.buf.data(), n);
      }
      return;
    }
    case OpKind::Fma: {
      DType d = res->type.dtype;
      TF_ASSERT(is_float(d), "fma on integers");
      out.f.resize(n);
      map_float(d, ex.at(op.operand(0)).f.data(), ex.at(op.operand(1)).f.data(), ex.at(op.operand(2)).f.data(),
                out.f.data(), n, [](auto x, auto y, auto z) { return std::fma(x, y, z); });
      return;
    }
    default: internal_error(std::string("exec_elementwise: unexpected op ") + ir::name(op.kind));
  }
}

}  // namespace tilefuse::interp::detail
