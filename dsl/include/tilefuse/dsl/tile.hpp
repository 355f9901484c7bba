#pragma once
// Typed handles of traced values. Tile<T, R> names one IR value whose element type T
// and rank R are part of the C++ type (R = 0: a scalar), so mistakes the C++ compiler
// can see are compile errors. Every operation appends exactly one IR node (plus the
// casts/broadcasts promotion needs) at the user's source line.
#include <limits>
#include <source_location>
#include <type_traits>

#include "tilefuse/dsl/element.hpp"
#include "tilefuse/dsl/trace.hpp"

namespace tilefuse {

template <class T, int R>
class Tile;

template <class T>
struct is_tile : std::false_type {};
template <class T, int R>
struct is_tile<Tile<T, R>> : std::true_type {};
template <class T>
inline constexpr bool is_tile_v = is_tile<std::remove_cvref_t<T>>::value;

// A trace-time constant (meta-parameter) is usable wherever a C++ integer is.
template <class T>
concept MetaLike = requires(const T& t) { { t.meta_value() } -> std::convertible_to<int64_t>; };

// A C++ number used directly in DSL arithmetic ("weakly typed", like Python scalars in Triton).
template <class T>
concept Literal = std::is_arithmetic_v<std::remove_cvref_t<T>> || MetaLike<std::remove_cvref_t<T>>;

namespace detail {

// Carries the operator's call site: constructed implicitly from a handle, its
// defaulted source_location is the location of the operator expression.
template <class H>
struct Here {
  const H& h;
  std::source_location loc;
  Here(const H& handle, std::source_location l = std::source_location::current()) : h(handle), loc(l) {}
};

template <class T>
ir::Type type_for(const ir::Shape& s) {
  if constexpr (is_ptr_elem_v<T>) return ir::Type{dtype_v<T>, true, s};
  else return ir::Type{dtype_v<T>, false, s};
}

// The element type a literal takes next to a tile of element type E.
template <class E, class L>
using literal_elem_t = std::conditional_t<
    is_ptr_elem_v<E>, int32_t,
    std::conditional_t<std::is_floating_point_v<std::remove_cvref_t<L>> && !is_float(dtype_v<E>), float, E>>;

template <class E, class L>
ir::Value* literal(ir::Builder& b, const L& v) {
  using T = literal_elem_t<E, L>;
  if constexpr (MetaLike<L>) {
    return b.constant(static_cast<double>(v.meta_value()), type_for<T>({}));
  } else if constexpr (std::is_integral_v<L> && !is_float(dtype_v<T>)) {
    return b.const_int(static_cast<int64_t>(v), type_for<T>({}));
  } else {
    return b.constant(static_cast<double>(v), type_for<T>({}));
  }
}

template <ir::BinaryOp OP, class T, int R, class B>
auto binary_op(const Tile<T, R>& a, const B& b, const std::source_location& loc);
template <ir::BinaryOp OP, class L, class T, int R>
auto binary_op_rev(const L& a, const Tile<T, R>& b, const std::source_location& loc);
template <class T, int R, class B>
auto compare_op(ir::CmpPred p, const Tile<T, R>& a, const B& b, const std::source_location& loc);
template <class L, class T, int R>
auto compare_op_rev(ir::CmpPred p, const L& a, const Tile<T, R>& b, const std::source_location& loc);

}  // namespace detail

template <class T, int R>
class Tile : public detail::HandleBase {
  static_assert(R >= 0, "rank must be >= 0");

 public:
  using element_type = T;
  static constexpr int rank = R;

  Tile() = default;
  explicit Tile(ir::Value* v) : detail::HandleBase(v) {
    TF_ASSERT(v && v->type.rank() == R && v->type.dtype == dtype_v<T> && v->type.is_ptr == is_ptr_elem_v<T>,
              "handle type does not match value " + (v ? v->type.str() : std::string("null")));
  }

  const ir::Shape& shape() const { return value->type.shape; }
  int64_t dim(int i) const { return value->type.shape.at(i); }

  // x.cast<f32>(): explicit dtype conversion.
  template <class U>
  Tile<U, R> cast(std::source_location loc = std::source_location::current()) const {
    static_assert(!is_ptr_elem_v<T> && !is_ptr_elem_v<U>, "cast: pointers cannot be cast; offset them with +");
    return Tile<U, R>(detail::builder("cast", loc).cast(value, dtype_v<U>));
  }
  // x.col() is x[:, None]; x.row() is x[None, :].
  Tile<T, R + 1> col(std::source_location loc = std::source_location::current()) const {
    return Tile<T, R + 1>(detail::builder("col", loc).expand_dims(value, R));
  }
  Tile<T, R + 1> row(std::source_location loc = std::source_location::current()) const {
    return Tile<T, R + 1>(detail::builder("row", loc).expand_dims(value, 0));
  }

  // ---- arithmetic, comparison and bitwise operators (hidden friends) ----
#define TF_BINARY(sym, opcode)                                          \
  template <class B>                                                    \
  friend auto operator sym(detail::Here<Tile> a, const B& b) {          \
    return detail::binary_op<ir::BinaryOp::opcode>(a.h, b, a.loc);      \
  }                                                                     \
  template <class B>                                                    \
    requires Literal<B>                                                 \
  friend auto operator sym(const B& a, detail::Here<Tile> b) {          \
    return detail::binary_op_rev<ir::BinaryOp::opcode>(a, b.h, b.loc);  \
  }
  TF_BINARY(+, Add)
  TF_BINARY(-, Sub)
  TF_BINARY(*, Mul)
  TF_BINARY(/, Div)
  TF_BINARY(%, Rem)
  TF_BINARY(&, And)
  TF_BINARY(|, Or)
  TF_BINARY(^, Xor)
  TF_BINARY(<<, Shl)
  TF_BINARY(>>, Shr)
#undef TF_BINARY

#define TF_COMPARE(sym, pred)                                            \
  template <class B>                                                     \
  friend auto operator sym(detail::Here<Tile> a, const B& b) {           \
    return detail::compare_op(ir::CmpPred::pred, a.h, b, a.loc);         \
  }                                                                      \
  template <class B>                                                     \
    requires Literal<B>                                                  \
  friend auto operator sym(const B& a, detail::Here<Tile> b) {           \
    return detail::compare_op_rev(ir::CmpPred::pred, a, b.h, b.loc);     \
  }
  TF_COMPARE(==, Eq)
  TF_COMPARE(!=, Ne)
  TF_COMPARE(<, Lt)
  TF_COMPARE(<=, Le)
  TF_COMPARE(>, Gt)
  TF_COMPARE(>=, Ge)
#undef TF_COMPARE

  // Logical and/or on bool tiles.
  template <class B>
  friend auto operator&&(detail::Here<Tile> a, const B& b) {
    static_assert(std::is_same_v<T, bool>, "&&: operands must be bool tiles (comparison results)");
    return detail::binary_op<ir::BinaryOp::And>(a.h, b, a.loc);
  }
  template <class B>
  friend auto operator||(detail::Here<Tile> a, const B& b) {
    static_assert(std::is_same_v<T, bool>, "||: operands must be bool tiles (comparison results)");
    return detail::binary_op<ir::BinaryOp::Or>(a.h, b, a.loc);
  }
  friend auto operator-(detail::Here<Tile> a) {
    static_assert(!is_ptr_elem_v<T> && !std::is_same_v<T, bool>, "unary -: not defined on pointers or bools");
    return Tile<arith_t<T>, R>(detail::builder("neg", a.loc).unary(ir::UnaryOp::Neg, a.h.value));
  }
  friend Tile operator!(detail::Here<Tile> a) {
    static_assert(std::is_same_v<T, bool>, "!: logical not needs a bool tile; use ~ for bitwise not");
    return Tile(detail::builder("not", a.loc).unary(ir::UnaryOp::Not, a.h.value));
  }
  friend Tile operator~(detail::Here<Tile> a) {
    static_assert(!is_float(dtype_v<T>) && !is_ptr_elem_v<T>, "~: bitwise not needs an integer tile");
    return Tile(detail::builder("not", a.loc).unary(ir::UnaryOp::Not, a.h.value));
  }
};

// Scalars are rank-0 tiles. Kernel parameters use these names.
using I1 = Tile<bool, 0>;
using I8 = Tile<int8_t, 0>;
using I16 = Tile<int16_t, 0>;
using I32 = Tile<int32_t, 0>;
using I64 = Tile<int64_t, 0>;
using U32 = Tile<uint32_t, 0>;
using F32 = Tile<float, 0>;
using F64 = Tile<double, 0>;
template <class T>
using Scalar = Tile<T, 0>;
// A global-memory pointer parameter; Ptr<const T> is read-only.
template <class T>
using Ptr = Tile<PtrTo<T>, 0>;

inline constexpr float inf = std::numeric_limits<float>::infinity();

namespace detail {

// Element and rank of an operand (tile or literal) next to a tile of element E.
template <class E, class B>
struct operand_info {
  using elem = literal_elem_t<E, B>;
  static constexpr int rank = 0;
};
template <class E, class T, int R>
struct operand_info<E, Tile<T, R>> {
  using elem = T;
  static constexpr int rank = R;
};

template <class E, class B>
ir::Value* operand_value(ir::Builder& b, const B& x) {
  if constexpr (is_tile_v<B>) return x.value;
  else return literal<E>(b, x);
}

constexpr bool is_bitwise(ir::BinaryOp op) {
  return op == ir::BinaryOp::And || op == ir::BinaryOp::Or || op == ir::BinaryOp::Xor ||
         op == ir::BinaryOp::Shl || op == ir::BinaryOp::Shr;
}

// Result element of `a OP b` for non-pointer elements A and B (bool arithmetic gives i32).
template <ir::BinaryOp OP, class A, class B>
using arith_result_t =
    std::conditional_t<std::is_same_v<promote_t<A, B>, bool> && !is_bitwise(OP) && OP != ir::BinaryOp::Min &&
                           OP != ir::BinaryOp::Max,
                       int32_t, arith_t<promote_t<A, B>>>;

template <ir::BinaryOp OP, class T, int R, class B>
auto binary_op(const Tile<T, R>& a, const B& b, const std::source_location& loc) {
  static_assert(is_tile_v<B> || Literal<B>, "DSL arithmetic needs tiles, scalars or C++ numbers");
  using BI = operand_info<T, std::remove_cvref_t<B>>;
  using BE = typename BI::elem;
  constexpr int RR = R > BI::rank ? R : BI::rank;
  ir::Builder& bld = builder(ir::name(OP), loc);
  if constexpr (is_ptr_elem_v<T> || is_ptr_elem_v<BE>) {
    static_assert(!(is_ptr_elem_v<T> && is_ptr_elem_v<BE>),
                  "pointer + pointer is not defined: add an integer offset to a pointer");
    static_assert(is_ptr_elem_v<T>, "offset + pointer: write pointer + offset");
    static_assert(std::is_integral_v<BE> && !std::is_same_v<BE, bool> &&
                      !std::is_floating_point_v<std::remove_cvref_t<B>>,
                  "a pointer offset must be an integer tile or scalar");
    static_assert(OP == ir::BinaryOp::Add || OP == ir::BinaryOp::Sub,
                  "only pointer + offset and pointer - offset are defined on pointers");
    ir::Value* off = operand_value<T>(bld, b);
    if constexpr (OP == ir::BinaryOp::Sub) off = bld.unary(ir::UnaryOp::Neg, off);
    return Tile<T, RR>(bld.add_ptr(a.value, off));
  } else {
    static_assert(!is_bitwise(OP) || (!is_float(dtype_v<T>) && !is_float(dtype_v<BE>)),
                  "bitwise operators (& | ^ << >>) need integer or bool operands; cast first");
    return Tile<arith_result_t<OP, T, BE>, RR>(bld.binary(OP, a.value, operand_value<T>(bld, b)));
  }
}

template <ir::BinaryOp OP, class L, class T, int R>
auto binary_op_rev(const L& a, const Tile<T, R>& b, const std::source_location& loc) {
  static_assert(!is_ptr_elem_v<T>, "number op pointer: put the pointer first (pointer + offset)");
  using LE = literal_elem_t<T, L>;
  static_assert(!is_bitwise(OP) || (!is_float(dtype_v<T>) && !is_float(dtype_v<LE>)),
                "bitwise operators (& | ^ << >>) need integer or bool operands; cast first");
  ir::Builder& bld = builder(ir::name(OP), loc);
  return Tile<arith_result_t<OP, LE, T>, R>(bld.binary(OP, literal<T>(bld, a), b.value));
}

template <class T, int R, class B>
auto compare_op(ir::CmpPred p, const Tile<T, R>& a, const B& b, const std::source_location& loc) {
  static_assert(is_tile_v<B> || Literal<B>, "comparisons need tiles, scalars or C++ numbers");
  static_assert(!is_ptr_elem_v<T>, "comparing pointers is not supported; compare offsets instead");
  using BI = operand_info<T, std::remove_cvref_t<B>>;
  constexpr int RR = R > BI::rank ? R : BI::rank;
  ir::Builder& bld = builder(ir::name(p), loc);
  return Tile<bool, RR>(bld.compare(p, a.value, operand_value<T>(bld, b)));
}

template <class L, class T, int R>
auto compare_op_rev(ir::CmpPred p, const L& a, const Tile<T, R>& b, const std::source_location& loc) {
  static_assert(!is_ptr_elem_v<T>, "comparing pointers is not supported; compare offsets instead");
  ir::Builder& bld = builder(ir::name(p), loc);
  return Tile<bool, R>(bld.compare(p, literal<T>(bld, a), b.value));
}

}  // namespace detail
}  // namespace tilefuse
