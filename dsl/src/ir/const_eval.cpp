#include "const_eval.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "tilefuse/ir/float8.hpp"
#include "tilefuse/ir/half.hpp"

namespace tilefuse::ir::detail {

int64_t wrap_int(int64_t v, DType d) {
  int bits = bit_width(d);
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (!is_unsigned(d) && (u >> (bits - 1))) u |= ~mask;
  return static_cast<int64_t>(u);
}

namespace {

// v rounded to float with round-to-odd: rounding that to a format with at most 22
// significand bits again gives the correctly rounded result (no double rounding).
float to_float_odd(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(v) || std::isinf(f) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u |= 1u;
  std::memcpy(&f, &u, 4);
  return f;
}

int64_t int_min(DType d) { return is_unsigned(d) ? 0 : wrap_int(int64_t(1) << (bit_width(d) - 1), d); }
// Largest value of an integer dtype narrower than 64 bits.
int64_t int_max(DType d) {
  int bits = bit_width(d);
  return is_unsigned(d) ? (int64_t(1) << bits) - 1 : (int64_t(1) << (bits - 1)) - 1;
}

bool same_float(double a, double b) { return a == b && std::signbit(a) == std::signbit(b); }

}  // namespace

double round_float(double v, DType d) {
  switch (d) {
    case DType::f64: return v;
    case DType::f32: return static_cast<float>(v);
    case DType::f16: return static_cast<float>(half(to_float_odd(v)));
    case DType::bf16: return static_cast<float>(bfloat16(to_float_odd(v)));
    case DType::f8e4m3: return static_cast<float>(float8_e4m3(to_float_odd(v)));
    case DType::f8e5m2: return static_cast<float>(float8_e5m2(to_float_odd(v)));
    default: return v;
  }
}

Scalar constant_value(const Op& c) {
  DType d = c.result()->type.dtype;
  if (is_float(d)) return Scalar::of_float(round_float(c.fval, d));
  if (d == DType::i1) return Scalar::of_int(c.ival != 0);
  return Scalar::of_int(wrap_int(c.ival, d));
}

std::optional<Scalar> constant_of(const Value* v) {
  const Op* d = v->def;
  if (d && d->kind == OpKind::Splat) d = d->operand(0)->def;
  if (!d || d->kind != OpKind::Constant || d->results.size() != 1) return std::nullopt;
  return constant_value(*d);
}

// Evaluates fn at the precision of d: f64 in double, narrower formats in float (exact
// for +, -, *, /, sqrt, whose float results round correctly to f16/bf16) and rounds.
template <class Fn>
static double at_precision(DType d, double a, double b, Fn fn) {
  if (d == DType::f64) return fn(a, b);
  return round_float(static_cast<double>(fn(static_cast<float>(a), static_cast<float>(b))), d);
}

std::optional<Scalar> eval_binary(BinaryOp op, DType d, Scalar a, Scalar b) {
  if (is_float(d)) {
    double x = a.f, y = b.f;
    switch (op) {
      case BinaryOp::Add: return Scalar::of_float(at_precision(d, x, y, [](auto p, auto q) { return p + q; }));
      case BinaryOp::Sub: return Scalar::of_float(at_precision(d, x, y, [](auto p, auto q) { return p - q; }));
      case BinaryOp::Mul: return Scalar::of_float(at_precision(d, x, y, [](auto p, auto q) { return p * q; }));
      case BinaryOp::Div: return Scalar::of_float(at_precision(d, x, y, [](auto p, auto q) { return p / q; }));
      case BinaryOp::Rem: return Scalar::of_float(round_float(std::fmod(x, y), d));  // fmod is exact
      case BinaryOp::Min:
      case BinaryOp::Max:
        // NaN handling and the order of signed zeros differ between targets: leave them.
        if (std::isnan(x) || std::isnan(y) || (x == y && !same_float(x, y))) return std::nullopt;
        return Scalar::of_float(op == BinaryOp::Min ? std::fmin(x, y) : std::fmax(x, y));
      default: return std::nullopt;  // bitwise ops on floats are invalid
    }
  }
  int64_t x = a.i, y = b.i;
  uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  int bits = bit_width(d);
  auto out = [&](uint64_t v) { return Scalar::of_int(wrap_int(static_cast<int64_t>(v), d)); };
  switch (op) {
    case BinaryOp::Add: return out(ux + uy);
    case BinaryOp::Sub: return out(ux - uy);
    case BinaryOp::Mul: return out(ux * uy);
    case BinaryOp::Div:
    case BinaryOp::Rem:
      if (y == 0) return std::nullopt;
      if (!is_unsigned(d) && y == -1 && x == int_min(d)) return std::nullopt;  // overflows
      return out(static_cast<uint64_t>(op == BinaryOp::Div ? x / y : x % y));
    case BinaryOp::Min: return Scalar::of_int(x < y ? x : y);  // normalized values compare right
    case BinaryOp::Max: return Scalar::of_int(x > y ? x : y);
    case BinaryOp::And: return out(ux & uy);
    case BinaryOp::Or: return out(ux | uy);
    case BinaryOp::Xor: return out(ux ^ uy);
    case BinaryOp::Shl:
      if (y < 0 || y >= bits) return std::nullopt;
      return out(ux << y);
    case BinaryOp::Shr:
      if (y < 0 || y >= bits) return std::nullopt;
      return out(static_cast<uint64_t>(x >> y));  // arithmetic for signed, logical for zero-extended
  }
  return std::nullopt;
}

std::optional<Scalar> eval_unary(UnaryOp op, DType d, Scalar a, bool approx) {
  if (!is_float(d)) {
    switch (op) {
      case UnaryOp::Neg: return Scalar::of_int(wrap_int(static_cast<int64_t>(0 - static_cast<uint64_t>(a.i)), d));
      case UnaryOp::Not: return Scalar::of_int(wrap_int(~a.i, d));
      case UnaryOp::Abs:
        return Scalar::of_int(a.i < 0 ? wrap_int(static_cast<int64_t>(0 - static_cast<uint64_t>(a.i)), d) : a.i);
      default: return std::nullopt;  // math on integers is invalid
    }
  }
  double x = a.f;
  auto r = [&](double v) { return Scalar::of_float(round_float(v, d)); };
  switch (op) {
    case UnaryOp::Neg: return Scalar::of_float(-x);
    case UnaryOp::Abs: return Scalar::of_float(std::fabs(x));
    case UnaryOp::Floor: return Scalar::of_float(std::floor(x));
    case UnaryOp::Ceil: return Scalar::of_float(std::ceil(x));
    case UnaryOp::Not: return std::nullopt;
    default: break;
  }
  if (approx) return std::nullopt;  // the hardware approximation is not reproducible here
  switch (op) {
    case UnaryOp::Sqrt:
      return Scalar::of_float(d == DType::f64 ? std::sqrt(x) : round_float(std::sqrt(static_cast<float>(x)), d));
    case UnaryOp::Rsqrt: return r(1.0 / std::sqrt(x));
    case UnaryOp::Exp: return r(std::exp(x));
    case UnaryOp::Exp2: return r(std::exp2(x));
    case UnaryOp::Log: return r(std::log(x));
    case UnaryOp::Log2: return r(std::log2(x));
    case UnaryOp::Sin: return r(std::sin(x));
    case UnaryOp::Cos: return r(std::cos(x));
    case UnaryOp::Tanh: return r(std::tanh(x));
    case UnaryOp::Erf: return r(std::erf(x));
    case UnaryOp::Sigmoid: return r(1.0 / (1.0 + std::exp(-x)));
    default: return std::nullopt;
  }
}

std::optional<bool> eval_compare(CmpPred p, DType d, Scalar a, Scalar b) {
  auto cmp = [p](auto x, auto y) {
    switch (p) {
      case CmpPred::Eq: return x == y;
      case CmpPred::Ne: return x != y;  // true when either is NaN, like C
      case CmpPred::Lt: return x < y;
      case CmpPred::Le: return x <= y;
      case CmpPred::Gt: return x > y;
      case CmpPred::Ge: return x >= y;
    }
    return false;
  };
  return is_float(d) ? cmp(a.f, b.f) : cmp(a.i, b.i);
}

std::optional<Scalar> eval_cast(DType from, DType to, Scalar a) {
  if (to == DType::i1) return Scalar::of_int(is_float(from) ? a.f != 0 : a.i != 0);  // nonzero is true
  if (!is_float(from)) {
    if (!is_float(to)) return Scalar::of_int(wrap_int(a.i, to));
    if (to == DType::f32) return Scalar::of_float(static_cast<float>(a.i));
    if (to == DType::f64) return Scalar::of_float(static_cast<double>(a.i));
    if (a.i >= (int64_t(1) << 53) || a.i <= -(int64_t(1) << 53)) return std::nullopt;
    return Scalar::of_float(round_float(static_cast<double>(a.i), to));
  }
  if (is_float(to)) return Scalar::of_float(round_float(a.f, to));
  // float -> integer truncates toward zero; NaN and out-of-range values are undefined.
  if (std::isnan(a.f)) return std::nullopt;
  double t = std::trunc(a.f);
  if (bit_width(to) == 64) {
    if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0)) return std::nullopt;
    return Scalar::of_int(static_cast<int64_t>(t));
  }
  if (!(t >= static_cast<double>(int_min(to)) && t <= static_cast<double>(int_max(to)))) return std::nullopt;
  return Scalar::of_int(static_cast<int64_t>(t));
}

std::optional<Scalar> eval_fma(DType d, Scalar a, Scalar b, Scalar c) {
  if (d == DType::f64) return Scalar::of_float(std::fma(a.f, b.f, c.f));
  if (d == DType::f32)
    return Scalar::of_float(std::fma(static_cast<float>(a.f), static_cast<float>(b.f), static_cast<float>(c.f)));
  return std::nullopt;  // f16/bf16 fma would need a wider exact intermediate
}

}  // namespace tilefuse::ir::detail
