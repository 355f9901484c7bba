#pragma once
// Exact evaluation of elementwise ops on constants, shared by the folding pass.
// Integers are held sign- or zero-extended to int64 according to their dtype; floats
// as doubles already rounded to their dtype. Every function returns nullopt where the
// result is not defined exactly (division by zero, signed overflow in division,
// out-of-range shifts and float->int casts, approximate math).
#include <cstdint>
#include <optional>

#include "tilefuse/ir/ir.hpp"

namespace tilefuse::ir::detail {

struct Scalar {
  bool is_float = false;
  int64_t i = 0;
  double f = 0;
  static Scalar of_int(int64_t v) { return Scalar{false, v, 0}; }
  static Scalar of_float(double v) { return Scalar{true, 0, v}; }
};

// v wrapped to the bit width of integer dtype d (sign-extended unless unsigned; i1 is 0/1).
int64_t wrap_int(int64_t v, DType d);
// v rounded to nearest-even in float dtype d (exact, no double rounding).
double round_float(double v, DType d);

// The value of a Constant op, normalized to its result dtype.
Scalar constant_value(const Op& c);
// The uniform value of v when it is a Constant or a Splat of a Constant.
std::optional<Scalar> constant_of(const Value* v);

std::optional<Scalar> eval_binary(BinaryOp op, DType d, Scalar a, Scalar b);
std::optional<Scalar> eval_unary(UnaryOp op, DType d, Scalar a, bool approx);
std::optional<bool> eval_compare(CmpPred p, DType d, Scalar a, Scalar b);
std::optional<Scalar> eval_cast(DType from, DType to, Scalar a);
std::optional<Scalar> eval_fma(DType d, Scalar a, Scalar b, Scalar c);

}  // namespace tilefuse::ir::detail
