#pragma once
// The DSL's named operations: indices, constructors, shape ops, math, memory,
// reductions, scans and dot. Each takes the caller's source location as a defaulted
// last argument, so trace-time errors name the user's line.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <source_location>
#include <utility>
#include <vector>

#include "tilefuse/dsl/tile.hpp"

namespace tilefuse {

using loc_t = std::source_location;
#define TF_HERE loc_t loc = loc_t::current()

namespace detail {
template <class T>
int64_t as_int(const T& v) {
  if constexpr (MetaLike<T>) return v.meta_value();
  else return static_cast<int64_t>(v);
}
template <size_t R>
ir::Shape to_shape(const int64_t (&dims)[R]) {
  return ir::Shape(dims, dims + R);
}
// A tile or a C++ number, as an IR value next to element type E.
template <class E, class X>
ir::Value* value_of(ir::Builder& b, const X& x) {
  if constexpr (is_tile_v<X>) return x.value;
  else return literal<E>(b, x);
}
template <class X, class E>
struct elem_or { using type = E; };
template <class T, int R, class E>
struct elem_or<Tile<T, R>, E> { using type = T; };
template <class X>
constexpr int rank_of() {
  if constexpr (is_tile_v<X>) return std::remove_cvref_t<X>::rank;
  else return 0;
}
}  // namespace detail

// ---- program indices ----
inline I32 program_id(int axis, TF_HERE) { return I32(detail::builder("program_id", loc).program_id(axis)); }
inline I32 num_programs(int axis, TF_HERE) { return I32(detail::builder("num_programs", loc).num_programs(axis)); }

// arange(start, end): the integers [start, end) as a 1-D i32 tile; end - start must be a power of two.
template <class A, class B>
  requires Literal<A> && Literal<B>
Tile<int32_t, 1> arange(const A& start, const B& end, TF_HERE) {
  return Tile<int32_t, 1>(detail::builder("arange", loc).arange(detail::as_int(start), detail::as_int(end)));
}

// ---- constructors ----
template <class T, size_t R>
Tile<T, static_cast<int>(R)> full(const int64_t (&shape)[R], double value, TF_HERE) {
  return Tile<T, static_cast<int>(R)>(
      detail::builder("full", loc).constant(value, detail::type_for<T>(detail::to_shape(shape))));
}
template <class T, size_t R>
Tile<T, static_cast<int>(R)> zeros(const int64_t (&shape)[R], TF_HERE) {
  return full<T>(shape, 0.0, loc);
}
// A scalar constant of element type T.
template <class T>
Scalar<T> scalar(double value, TF_HERE) {
  return Scalar<T>(detail::builder("scalar", loc).constant(value, detail::type_for<T>({})));
}

// ---- shape manipulation ----
template <class T, int R>
Tile<T, R + 1> expand_dims(const Tile<T, R>& x, int axis, TF_HERE) {
  return Tile<T, R + 1>(detail::builder("expand_dims", loc).expand_dims(x.value, axis));
}
template <int R2, class T, int R>
Tile<T, R2> reshape(const Tile<T, R>& x, const int64_t (&shape)[R2], TF_HERE) {
  return Tile<T, R2>(detail::builder("reshape", loc).reshape(x.value, detail::to_shape(shape)));
}
template <class T, int R>
Tile<T, R> trans(const Tile<T, R>& x, TF_HERE) {
  static_assert(R >= 2, "trans needs a tile of rank 2 or more");
  return Tile<T, R>(detail::builder("trans", loc).trans(x.value));
}
template <class T, int R, size_t R2>
Tile<T, static_cast<int>(R2)> broadcast_to(const Tile<T, R>& x, const int64_t (&shape)[R2], TF_HERE) {
  static_assert(static_cast<int>(R2) >= R, "broadcast_to cannot lower the rank");
  return Tile<T, static_cast<int>(R2)>(detail::builder("broadcast_to", loc).broadcast_to(x.value, detail::to_shape(shape)));
}
template <class U, class T, int R>
Tile<U, R> cast(const Tile<T, R>& x, TF_HERE) {
  return x.template cast<U>(loc);
}

// ---- element-wise math ----
#define TF_UNARY_MATH(fn, opcode, approx_flag)                                                      \
  template <class T, int R>                                                                         \
  auto fn(const Tile<T, R>& x, TF_HERE) {                                                           \
    static_assert(!is_ptr_elem_v<T>, #fn ": not defined on pointers");                               \
    using RT = std::conditional_t<is_float(dtype_v<T>), arith_t<T>, float>;                          \
    return Tile<RT, R>(detail::builder(#fn, loc).unary(ir::UnaryOp::opcode, x.value, approx_flag)); \
  }
TF_UNARY_MATH(exp, Exp, false)
TF_UNARY_MATH(exp2, Exp2, false)
TF_UNARY_MATH(log, Log, false)
TF_UNARY_MATH(log2, Log2, false)
TF_UNARY_MATH(sqrt, Sqrt, false)
TF_UNARY_MATH(rsqrt, Rsqrt, false)
TF_UNARY_MATH(sin, Sin, false)
TF_UNARY_MATH(cos, Cos, false)
TF_UNARY_MATH(tanh, Tanh, false)
TF_UNARY_MATH(erf, Erf, false)
TF_UNARY_MATH(sigmoid, Sigmoid, false)
TF_UNARY_MATH(floor, Floor, false)
TF_UNARY_MATH(ceil, Ceil, false)
// Hardware approximations (ex2.approx, rsqrt.approx, tanh.approx: relative error below
// 2^-10.9, as fine as a 16-bit result), much faster.
TF_UNARY_MATH(fast_tanh, Tanh, true)
TF_UNARY_MATH(fast_exp, Exp, true)
TF_UNARY_MATH(fast_exp2, Exp2, true)
TF_UNARY_MATH(fast_rsqrt, Rsqrt, true)
TF_UNARY_MATH(fast_sigmoid, Sigmoid, true)
#undef TF_UNARY_MATH

template <class T, int R>
Tile<arith_t<T>, R> abs(const Tile<T, R>& x, TF_HERE) {
  static_assert(!is_ptr_elem_v<T>, "abs: not defined on pointers");
  return Tile<arith_t<T>, R>(detail::builder("abs", loc).unary(ir::UnaryOp::Abs, x.value));
}

// minimum/maximum: element-wise, with promotion and broadcasting.
#define TF_BINARY_FN(fn, opcode)                                                                         \
  template <class A, class B>                                                                            \
    requires(is_tile_v<A> || is_tile_v<B>)                                                               \
  auto fn(const A& a, const B& b, TF_HERE) {                                                             \
    using AE = typename detail::elem_or<std::remove_cvref_t<A>, typename detail::elem_or<std::remove_cvref_t<B>, float>::type>::type; \
    using BE = typename detail::elem_or<std::remove_cvref_t<B>, AE>::type;                               \
    constexpr int RR = detail::rank_of<A>() > detail::rank_of<B>() ? detail::rank_of<A>() : detail::rank_of<B>(); \
    ir::Builder& bld = detail::builder(#fn, loc);                                                        \
    return Tile<arith_t<promote_t<AE, BE>>, RR>(bld.binary(ir::BinaryOp::opcode, detail::value_of<AE>(bld, a),    \
                                                  detail::value_of<BE>(bld, b)));                        \
  }
TF_BINARY_FN(minimum, Min)
TF_BINARY_FN(maximum, Max)
#undef TF_BINARY_FN

// fma(a, b, c) = a * b + c with one rounding.
template <class A, class B, class C>
  requires is_tile_v<A>
auto fma(const A& a, const B& b, const C& c, TF_HERE) {
  using E = typename std::remove_cvref_t<A>::element_type;
  using BE = typename detail::elem_or<std::remove_cvref_t<B>, E>::type;
  using CE = typename detail::elem_or<std::remove_cvref_t<C>, E>::type;
  using P = promote_t<promote_t<E, BE>, CE>;
  using RE = std::conditional_t<is_float(dtype_v<P>), arith_t<P>, float>;
  constexpr int RR = std::max({detail::rank_of<A>(), detail::rank_of<B>(), detail::rank_of<C>()});
  ir::Builder& bld = detail::builder("fma", loc);
  return Tile<RE, RR>(bld.fma(a.value, detail::value_of<E>(bld, b), detail::value_of<E>(bld, c)));
}

// where(cond, a, b): a where cond is true, else b (broadcasting all three). Two C++
// numbers take i32 (integers) or f32 (floats).
template <int RC, class A, class B>
auto where(const Tile<bool, RC>& cond, const A& a, const B& b, TF_HERE) {
  using Default = std::conditional_t<std::is_floating_point_v<A> || std::is_floating_point_v<B>, float, int32_t>;
  using AE = typename detail::elem_or<std::remove_cvref_t<A>,
                                      typename detail::elem_or<std::remove_cvref_t<B>, Default>::type>::type;
  using BE = typename detail::elem_or<std::remove_cvref_t<B>, AE>::type;
  constexpr int RR = std::max({RC, detail::rank_of<A>(), detail::rank_of<B>()});
  ir::Builder& bld = detail::builder("where", loc);
  using RE = std::conditional_t<is_ptr_elem_v<AE>, AE, promote_t<AE, BE>>;
  return Tile<RE, RR>(bld.select(cond.value, detail::value_of<AE>(bld, a), detail::value_of<BE>(bld, b)));
}

// cdiv(a, b) = ceil(a / b) for positive integers.
template <class A, class B>
auto cdiv(const A& a, const B& b, TF_HERE) {
  if constexpr (!is_tile_v<A> && !is_tile_v<B>) {
    return (detail::as_int(a) + detail::as_int(b) - 1) / detail::as_int(b);
  } else {
    static_assert(is_tile_v<A>, "cdiv: put the tile first or use plain integers");
    return detail::binary_op<ir::BinaryOp::Div>(
        detail::binary_op<ir::BinaryOp::Sub>(detail::binary_op<ir::BinaryOp::Add>(a, b, loc), 1, loc), b, loc);
  }
}

// ---- memory ----
// Cache hints. KeepInShared (loads only): the tile is copied into shared memory and read
// back there at each use, so a long-lived tile holds no registers between its uses (e.g.
// a row read before a reduction and again after it). The GPU compiler honours it for
// loads of the kernel's top level whose runs move as aligned 4-16 byte pieces; elsewhere
// the load is a plain one (TILEFUSE_DEBUG says why). The values are the same either way.
enum class Cache { Normal, EvictFirst, EvictLast, KeepInShared };
namespace detail {
inline ir::Evict to_evict(Cache c) {
  switch (c) {
    case Cache::EvictFirst: return ir::Evict::First;
    case Cache::EvictLast: return ir::Evict::Last;
    case Cache::KeepInShared: return ir::Evict::Shared;
    default: return ir::Evict::Normal;
  }
}
}  // namespace detail

// load(ptrs [, mask [, other]]): masked-off lanes read `other` (0 when absent) and never touch memory.
template <class T, int R>
Tile<std::remove_const_t<T>, R> load(const Tile<PtrTo<T>, R>& ptrs, TF_HERE) {
  return Tile<std::remove_const_t<T>, R>(detail::builder("load", loc).load(ptrs.value));
}
template <class T, int R, int RM>
Tile<std::remove_const_t<T>, R> load(const Tile<PtrTo<T>, R>& ptrs, const Tile<bool, RM>& mask, TF_HERE) {
  static_assert(RM <= R, "load: the mask has a higher rank than the pointer tile");
  return Tile<std::remove_const_t<T>, R>(detail::builder("load", loc).load(ptrs.value, mask.value));
}
template <class T, int R, int RM, class O>
Tile<std::remove_const_t<T>, R> load(const Tile<PtrTo<T>, R>& ptrs, const Tile<bool, RM>& mask, const O& other,
                                     Cache cache = Cache::Normal, TF_HERE) {
  static_assert(RM <= R, "load: the mask has a higher rank than the pointer tile");
  using E = std::remove_const_t<T>;
  ir::Builder& b = detail::builder("load", loc);
  ir::Value* o = detail::value_of<E>(b, other);
  return Tile<E, R>(b.load(ptrs.value, mask.value, o, detail::to_evict(cache)));
}
// load(ptrs, mask, other, cache, readable): as above; lanes where `readable` holds may
// also be read where the mask drops them (their memory is valid to read, e.g. the
// neighbouring rows' elements in a run of 16 bytes), though their value stays `other`.
// A run of 16 bytes whose lanes are all readable then moves whole and is masked in
// registers, not element by element. The interpreter checks that readable lanes lie
// inside their buffer.
template <class T, int R, int RM, class O, int RR>
Tile<std::remove_const_t<T>, R> load(const Tile<PtrTo<T>, R>& ptrs, const Tile<bool, RM>& mask, const O& other,
                                     Cache cache, const Tile<bool, RR>& readable, TF_HERE) {
  static_assert(RM <= R && RR <= R, "load: the mask or readable has a higher rank than the pointer tile");
  using E = std::remove_const_t<T>;
  ir::Builder& b = detail::builder("load", loc);
  ir::Value* o = detail::value_of<E>(b, other);
  return Tile<E, R>(b.load(ptrs.value, mask.value, o, detail::to_evict(cache), readable.value));
}

template <class T, int R, class V>
void store(const Tile<PtrTo<T>, R>& ptrs, const V& value, TF_HERE) {
  static_assert(!std::is_const_v<T>, "store: this pointer is Ptr<const T>, which is read-only");
  static_assert(is_tile_v<V>, "store: the value must be a tile or scalar handle");
  static_assert(std::is_same_v<typename V::element_type, T>,
                "store: the value's dtype differs from the pointee type; convert it first with .cast<T>()");
  static_assert(V::rank <= R, "store: the value has a higher rank than the pointer tile");
  detail::builder("store", loc).store(ptrs.value, value.value);
}
template <class T, int R, class V, int RM>
void store(const Tile<PtrTo<T>, R>& ptrs, const V& value, const Tile<bool, RM>& mask, Cache cache = Cache::Normal,
           TF_HERE) {
  static_assert(!std::is_const_v<T>, "store: this pointer is Ptr<const T>, which is read-only");
  static_assert(is_tile_v<V>, "store: the value must be a tile or scalar handle");
  static_assert(std::is_same_v<typename V::element_type, T>,
                "store: the value's dtype differs from the pointee type; convert it first with .cast<T>()");
  static_assert(V::rank <= R && RM <= R, "store: the value or mask has a higher rank than the pointer tile");
  detail::builder("store", loc).store(ptrs.value, value.value, mask.value, detail::to_evict(cache));
}

// Atomics return the previous values. MemOrder::Relaxed (the default) orders nothing
// but the atomic itself. MemOrder::AcqRel orders it with the whole program's memory
// accesses at GPU scope: what the program wrote before it is visible to any program
// that then reads the value it wrote (with AcqRel), and what the program reads after it
// sees what such a program wrote before its own atomic. E.g. the last of several
// programs to count themselves in (atomic_add(counter, 1, MemOrder::AcqRel) returning
// n - 1) may read the results the others stored before counting.
enum class MemOrder { Relaxed, AcqRel };
#define TF_ATOMIC(fn, opcode)                                                                       \
  template <class T, int R, class V>                                                                \
  Tile<T, R> fn(const Tile<PtrTo<T>, R>& ptrs, const V& value, MemOrder order, TF_HERE) {           \
    static_assert(!std::is_const_v<T>, #fn ": this pointer is Ptr<const T>, which is read-only");   \
    ir::Builder& b = detail::builder(#fn, loc);                                                     \
    return Tile<T, R>(b.atomic_rmw(ir::AtomicOp::opcode, ptrs.value, detail::value_of<T>(b, value), nullptr, \
                                   order == MemOrder::AcqRel));                                    \
  }                                                                                                 \
  template <class T, int R, class V>                                                                \
  Tile<T, R> fn(const Tile<PtrTo<T>, R>& ptrs, const V& value, TF_HERE) {                           \
    return fn(ptrs, value, MemOrder::Relaxed, loc);                                                 \
  }                                                                                                 \
  template <class T, int R, class V, int RM>                                                        \
  Tile<T, R> fn(const Tile<PtrTo<T>, R>& ptrs, const V& value, const Tile<bool, RM>& mask, MemOrder order, \
                TF_HERE) {                                                                          \
    static_assert(!std::is_const_v<T>, #fn ": this pointer is Ptr<const T>, which is read-only");   \
    ir::Builder& b = detail::builder(#fn, loc);                                                     \
    return Tile<T, R>(b.atomic_rmw(ir::AtomicOp::opcode, ptrs.value, detail::value_of<T>(b, value), mask.value, \
                                   order == MemOrder::AcqRel));                                    \
  }                                                                                                 \
  template <class T, int R, class V, int RM>                                                        \
  Tile<T, R> fn(const Tile<PtrTo<T>, R>& ptrs, const V& value, const Tile<bool, RM>& mask, TF_HERE) { \
    return fn(ptrs, value, mask, MemOrder::Relaxed, loc);                                           \
  }
TF_ATOMIC(atomic_add, Add)
TF_ATOMIC(atomic_max, Max)
TF_ATOMIC(atomic_min, Min)
TF_ATOMIC(atomic_xchg, Xchg)
#undef TF_ATOMIC

// wait_at_least(counter, v): the program waits until *counter (i32 or i64) >= v, then
// reads what the programs that raised it (atomic_add(counter, .., MemOrder::AcqRel)) wrote
// before; returns the value it saw. A program may wait only for programs with lower ids
// (x fastest, then y, z): the GPU starts thread blocks in that order and those never wait
// for it, so the wait ends; the interpreter runs programs in that order and reports any
// other wait as a UserError. For one-pass schedules whose later programs consume earlier
// ones' results.
// wait_at_least(counter, v, MemOrder::Relaxed): each warp polls the counter by itself, with
// no barrier and no fence, so it orders nothing but the counter's own value: pack what the
// wait is for into it (e.g. arrivals in the high half of an i64 and a total in the low half,
// both added by one relaxed atomic_add). It costs one load where the counter is already
// there, which can then overlap the program's earlier loads. Warps may see different values
// (each at least v) while the counter still grows.
template <class T, class V>
Tile<T, 0> wait_at_least(const Tile<PtrTo<T>, 0>& counter, const V& v, MemOrder order, TF_HERE) {
  static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>, "wait_at_least: the counter is i32 or i64");
  ir::Builder& b = detail::builder("wait_at_least", loc);
  return Tile<T, 0>(b.atomic_rmw(ir::AtomicOp::WaitAtLeast, counter.value, detail::value_of<T>(b, v), nullptr,
                                 order == MemOrder::AcqRel));
}
template <class T, class V>
Tile<T, 0> wait_at_least(const Tile<PtrTo<T>, 0>& counter, const V& v, TF_HERE) {
  return wait_at_least(counter, v, MemOrder::AcqRel, loc);
}

// barrier(): the program's threads wait for each other here; every load and store the
// program issued before it is done, for all of them, before any access after it. The
// interpreter runs a program in order, the GPU runs its elements on many threads: a
// store over elements that an earlier store of the same program wrote (a fix-up of a few
// elements, e.g. one column of a tile just stored) needs a barrier between the two, or
// the GPU's result depends on which thread comes last. Costs a CTA barrier (bar.sync).
inline void barrier(TF_HERE) { detail::builder("barrier", loc).barrier(); }

// load_relaxed(counter): *counter (i32 or i64) read at GPU scope without ordering anything
// else (ld.relaxed.gpu: never a stale L1 line), for a counter that other programs raise
// while this one runs. Issued early it costs no wait; a relaxed wait_at_least where the
// value is needed then polls only where it fell short.
template <class T>
Tile<T, 0> load_relaxed(const Tile<PtrTo<T>, 0>& counter, TF_HERE) {
  static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>, "load_relaxed: the counter is i32 or i64");
  ir::Builder& b = detail::builder("load_relaxed", loc);
  return Tile<T, 0>(b.atomic_rmw(ir::AtomicOp::Read, counter.value, detail::value_of<T>(b, 0), nullptr, false));
}

template <class T, int R, class C, class V>
Tile<T, R> atomic_cas(const Tile<PtrTo<T>, R>& ptrs, const C& cmp, const V& value, MemOrder order, TF_HERE) {
  static_assert(!std::is_const_v<T>, "atomic_cas: this pointer is Ptr<const T>, which is read-only");
  ir::Builder& b = detail::builder("atomic_cas", loc);
  return Tile<T, R>(b.atomic_cas(ptrs.value, detail::value_of<T>(b, cmp), detail::value_of<T>(b, value),
                                 order == MemOrder::AcqRel));
}
template <class T, int R, class C, class V>
Tile<T, R> atomic_cas(const Tile<PtrTo<T>, R>& ptrs, const C& cmp, const V& value, TF_HERE) {
  return atomic_cas(ptrs, cmp, value, MemOrder::Relaxed, loc);
}

// ---- reductions and scans ----
#define TF_REDUCE(fn, kind, ...)                                                      \
  template <class T, int R>                                                           \
  auto fn(const Tile<T, R>& x, int axis, TF_HERE) {                                   \
    static_assert(R >= 1, #fn ": needs a tile, not a scalar");                        \
    static_assert(!is_ptr_elem_v<T>, #fn ": not defined on pointer tiles");           \
    using E = __VA_ARGS__;                                                            \
    return Tile<E, R - 1>(detail::builder(#fn, loc).reduce(x.value, axis, ir::ReduceKind::kind)); \
  }
TF_REDUCE(sum, Sum, std::conditional_t<std::is_same_v<T, bool>, int32_t, arith_t<T>>)
TF_REDUCE(max, Max, arith_t<T>)
TF_REDUCE(min, Min, arith_t<T>)
TF_REDUCE(argmax, Argmax, int32_t)
TF_REDUCE(argmin, Argmin, int32_t)
#undef TF_REDUCE

// reduce(x, axis, combine): a user-supplied associative combine of two scalars.
template <class T, int R, class F>
Tile<T, R - 1> reduce(const Tile<T, R>& x, int axis, F&& combine, TF_HERE) {
  static_assert(R >= 1, "reduce: needs a tile, not a scalar");
  static_assert(std::is_invocable_v<F, Scalar<T>, Scalar<T>>, "reduce: combine must take two Scalar<T> values");
  ir::Builder& b = detail::builder("reduce", loc);
  return Tile<T, R - 1>(b.reduce_custom(x.value, axis, [&](ir::Builder&, ir::Value* l, ir::Value* r) {
    Scalar<T> ls(l), rs(r);
    auto out = combine(ls, rs);
    static_assert(is_tile_v<decltype(out)>, "reduce: combine must return a DSL scalar");
    return out.value;
  }));
}

template <class T, int R>
auto cumsum(const Tile<T, R>& x, int axis, TF_HERE) {
  static_assert(R >= 1, "cumsum: needs a tile, not a scalar");
  using E = std::conditional_t<std::is_same_v<T, bool>, int32_t, arith_t<T>>;
  return Tile<E, R>(detail::builder("cumsum", loc).scan(x.value, axis, ir::ReduceKind::Sum));
}

// ---- rows that do not start on a 16-byte boundary ----
// A pointer rounded down to a multiple of `bytes` (a power of two up to 128), and the
// number of elements it dropped. A row of 16-bit data whose width is not a multiple of
// 8 starts anywhere in a 16-byte chunk; indexed from its rounded-down start, every
// access is aligned and moves whole 16-byte vectors, the dropped head and the tail
// masked off (the compiler tests such masks per run at run time):
//   auto [base, head] = align_down(x + row * stride);
//   auto pos = arange(0, BLOCK);                      // from the aligned start
//   auto col = pos - head;                            // the row's column
//   auto v = load(base + pos, col >= 0 && col < n_cols);
// The tile then needs BLOCK >= n_cols + 16 / sizeof(T) - 1 positions. Another row (an
// output) indexed the same way must start at the same offset within its chunk.
template <class E>
struct AlignedDown {
  Tile<PtrTo<E>, 0> base;  // the rounded-down pointer (known to be `bytes`-aligned)
  I32 head;                // elements between it and the original pointer
};
template <class E>
AlignedDown<E> align_down(const Tile<PtrTo<E>, 0>& p, int64_t bytes = 16, TF_HERE) {
  ir::Builder& b = detail::builder("align_down", loc);
  return {Tile<PtrTo<E>, 0>(b.align_ptr(p.value, bytes, false)), I32(b.align_ptr(p.value, bytes, true))};
}

// ---- clusters (launch Config with cluster(c)) ----
// Programs c*C .. c*C + C-1 along grid x (C = the cluster size) form cluster c: they
// run at the same time and combine one number (or tile) each with cluster_sum/max/min,
// e.g. one long row split over the programs of a cluster, read from memory once. On
// sm_90+ clusters of up to 16 programs are the GPU's thread-block clusters; larger ones
// (up to kMaxClusterPrograms) and any cluster before sm_90 exchange numbers through
// global memory (tiles only in thread-block clusters).
inline int cluster_size(TF_HERE) { return detail::builder("cluster_size", loc).function().cluster_size; }
// This program's index within its cluster (program_id(0) % C).
inline I32 cluster_rank(TF_HERE) {
  ir::Builder& b = detail::builder("cluster_rank", loc);
  ir::Value* pid = b.program_id(0);
  return I32(b.binary(ir::BinaryOp::And, pid, b.const_int(b.function().cluster_size - 1, pid->type)));
}
// The index of this program's cluster (program_id(0) / C).
inline I32 cluster_id(TF_HERE) {
  ir::Builder& b = detail::builder("cluster_id", loc);
  ir::Value* pid = b.program_id(0);
  int shift = std::countr_zero(static_cast<unsigned>(b.function().cluster_size));
  return I32(b.binary(ir::BinaryOp::Shr, pid, b.const_int(shift, pid->type)));
}
// On a tile (rank >= 1), element by element: every program of the cluster gets the
// whole combined tile, e.g. the partial sums of one GEMM tile over slices of K computed by
// the programs of a cluster (added in rank order, so every program gets the same bits).
#define TF_CLUSTER_REDUCE(fn, kind)                                                                       \
  template <class T, int R>                                                                               \
  Tile<T, R> fn(const Tile<T, R>& x, TF_HERE) {                                                           \
    static_assert(!is_ptr_elem_v<T> && !std::is_same_v<T, bool>, #fn ": needs numbers");                  \
    return Tile<T, R>(detail::builder(#fn, loc).cluster_reduce(x.value, ir::ReduceKind::kind));          \
  }
TF_CLUSTER_REDUCE(cluster_sum, Sum)
TF_CLUSTER_REDUCE(cluster_max, Max)
TF_CLUSTER_REDUCE(cluster_min, Min)
#undef TF_CLUSTER_REDUCE

// cluster_reduce(values, combine): 1 to 8 numbers of one dtype per program combined over
// the cluster in one exchange. combine(a, b) takes two partial results as
// std::array<Scalar<T>, N> and returns the combined one; it should be associative and
// commutative (up to rounding): programs are combined as a tree of rank pairs, the
// lower rank on the left, so every program gets the same bits. E.g. a row's max and
// its sum of exponentials in one exchange instead of two (online softmax):
//   auto [m, s] = cluster_reduce(std::array{m_mine, s_mine}, [](auto a, auto b) {
//     auto m = maximum(a[0], b[0]);
//     return std::array{m, a[1] * fast_exp(a[0] - m) + b[1] * fast_exp(b[0] - m)};
//   });
template <class T, size_t N, class F>
std::array<Tile<T, 0>, N> cluster_reduce(const std::array<Tile<T, 0>, N>& x, F combine, TF_HERE) {
  static_assert(N >= 1 && N <= ir::kMaxClusterValues, "cluster_reduce: combines 1 to 8 values per program");
  static_assert(!is_ptr_elem_v<T> && !std::is_same_v<T, bool>, "cluster_reduce: needs numbers");
  static_assert(std::is_invocable_v<F, std::array<Tile<T, 0>, N>, std::array<Tile<T, 0>, N>>,
                "cluster_reduce: combine must take two std::array<Scalar<T>, N>");
  std::vector<ir::Value*> in;
  for (const auto& v : x) in.push_back(v.value);
  auto wrap = [](const std::vector<ir::Value*>& vs) {
    return [&]<size_t... I>(std::index_sequence<I...>) { return std::array<Tile<T, 0>, N>{Tile<T, 0>(vs[I])...}; }(
        std::make_index_sequence<N>{});
  };
  auto out = detail::builder("cluster_reduce", loc).cluster_reduce_custom(
      in, [&](ir::Builder&, const std::vector<ir::Value*>& l, const std::vector<ir::Value*>& r) {
        auto c = combine(wrap(l), wrap(r));
        static_assert(std::is_same_v<decltype(c), std::array<Tile<T, 0>, N>>,
                      "cluster_reduce: combine must return std::array<Scalar<T>, N>");
        std::vector<ir::Value*> vs;
        for (const auto& v : c) vs.push_back(v.value);
        return vs;
      });
  return wrap(out);
}

// ---- matrix multiply ----
// dot(a [M, K], b [K, N] [, acc [M, N] f32] [, precision]) -> [M, N] f32; f16/bf16/f32
// inputs. f16/bf16 run on tensor cores on the GPU. f32 inputs multiply exactly (f32 FMAs)
// unless Precision::tf32 is given: then each input is rounded to tf32 (10 mantissa bits,
// relative error <= 2^-11 per input, so ~1e-3 per product) and the GPU uses tf32 tensor
// cores; the interpreter rounds the same way, so both agree to f32 summation order.
enum class Precision { exact, tf32 };
namespace detail {
inline ir::DotPrecision to_ir(Precision p) { return p == Precision::tf32 ? ir::DotPrecision::Tf32 : ir::DotPrecision::Exact; }
}  // namespace detail
template <class A, int RA, class B, int RB>
Tile<float, 2> dot(const Tile<A, RA>& a, const Tile<B, RB>& b, TF_HERE) {
  static_assert(RA == 2 && RB == 2, "dot: both operands must be rank-2 tiles ([M, K] and [K, N])");
  return Tile<float, 2>(detail::builder("dot", loc).dot(a.value, b.value));
}
template <class A, int RA, class B, int RB>
Tile<float, 2> dot(const Tile<A, RA>& a, const Tile<B, RB>& b, const Tile<float, 2>& acc, TF_HERE) {
  static_assert(RA == 2 && RB == 2, "dot: both operands must be rank-2 tiles ([M, K] and [K, N])");
  return Tile<float, 2>(detail::builder("dot", loc).dot(a.value, b.value, acc.value));
}
template <class A, int RA, class B, int RB>
Tile<float, 2> dot(const Tile<A, RA>& a, const Tile<B, RB>& b, Precision p, TF_HERE) {
  static_assert(RA == 2 && RB == 2, "dot: both operands must be rank-2 tiles ([M, K] and [K, N])");
  return Tile<float, 2>(detail::builder("dot", loc).dot(a.value, b.value, nullptr, detail::to_ir(p)));
}
template <class A, int RA, class B, int RB>
Tile<float, 2> dot(const Tile<A, RA>& a, const Tile<B, RB>& b, const Tile<float, 2>& acc, Precision p, TF_HERE) {
  static_assert(RA == 2 && RB == 2, "dot: both operands must be rank-2 tiles ([M, K] and [K, N])");
  return Tile<float, 2>(detail::builder("dot", loc).dot(a.value, b.value, acc.value, detail::to_ir(p)));
}

}  // namespace tilefuse
