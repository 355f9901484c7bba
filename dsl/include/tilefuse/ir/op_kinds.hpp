#pragma once
// The one list of op kinds of the tile IR, and the sub-codes of the op families.
// Visitors dispatch on OpKind; semantics of each op are documented in ir.hpp.
#include <cstdint>

namespace tilefuse::ir {

#define TILEFUSE_OP_KINDS(X) \
  X(ProgramId)   /* attr axis; -> i32 */                                      \
  X(NumPrograms) /* attr axis; -> i32 */                                      \
  X(Constant)    /* attr ival/fval; -> scalar or tile filled with the value */ \
  X(Arange)      /* attr start,end; -> tile<end-start x i32> */               \
  X(Splat)       /* (scalar) -> tile of result shape */                      \
  X(Broadcast)   /* (tile) -> tile; size-1 dims expanded, same rank */        \
  X(ExpandDims)  /* (x) attr axis; inserts a dim of size 1 */                 \
  X(Reshape)     /* (tile) -> tile with the same numel, row-major order */    \
  X(Trans)       /* (tile) attr perm */                                       \
  X(Binary)      /* (a, b) same type; attr code = BinaryOp */                 \
  X(Unary)       /* (a); attr code = UnaryOp */                               \
  X(Compare)     /* (a, b) same type; attr code = CmpPred; -> i1 */           \
  X(Select)      /* (cond i1, a, b) same shape */                             \
  X(Fma)         /* (a, b, c) float, same type: a*b+c */                      \
  X(Cast)        /* (x) -> dtype of result (bitcast=false) */                 \
  X(AddPtr)      /* (ptr, offset int) same shape; offset in elements */       \
  X(AlignPtr)    /* (ptr scalar) attr ival bytes; code 0: ptr rounded down, 1: i32 elements dropped */ \
  X(Load)        /* (ptr [, mask [, other]]) attr evict */                    \
  X(Store)       /* (ptr, value [, mask]) attr evict; no result */            \
  X(AtomicRMW)   /* (ptr, value [, mask]) attr code = AtomicOp; -> old */     \
  X(AtomicCas)   /* (ptr, cmp, value) -> old */                               \
  X(Reduce)      /* (x) attr axis, code = ReduceKind; Custom has a region */  \
  X(Scan)        /* (x) attr axis, code = ReduceKind (Sum only for now) */    \
  X(ClusterReduce) /* (scalar or tile) code = Sum/Max/Min; combined over the cluster */ \
  X(Dot)         /* (a [M,K], b [K,N], acc [M,N]) -> [M,N] */                  \
  X(For)         /* (lo, hi, step, init...) region(iv, iter...) -> iter... */ \
  X(If)          /* (cond) regions then, else -> results */                   \
  X(Yield)       /* (values...) terminates a region */                       \
  X(Barrier)     /* no operands, no result: the program's threads wait for each other */

enum class OpKind : uint8_t {
#define TF_X(name) name,
  TILEFUSE_OP_KINDS(TF_X)
#undef TF_X
};

enum class BinaryOp : uint8_t {
  Add, Sub, Mul,
  Div,     // float: IEEE division; int: C division (truncates toward zero)
  Rem,     // float: fmod; int: C remainder (sign of dividend)
  Min, Max,
  And, Or, Xor,  // bitwise; logical on i1
  Shl, Shr,      // Shr is arithmetic for signed ints, logical for unsigned
};

enum class UnaryOp : uint8_t {
  Neg, Not,  // Not: bitwise not; logical not on i1
  Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Sin, Cos, Tanh, Erf, Sigmoid,
  Abs, Floor, Ceil,
};

enum class CmpPred : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

enum class ReduceKind : uint8_t {
  Sum, Max, Min,
  Argmax, Argmin,  // -> i32 index of the first extreme element along the axis
  Custom,          // region: (lhs, rhs) -> yield combined
};

// WaitAtLeast: no write; the program waits until the (scalar i32, or i64 when relaxed)
// element is at least the value, and returns what it saw (DSL wait_at_least). Read: no
// write, no wait; every thread reads the (scalar i32 or i64) element at GPU scope, relaxed
// (DSL load_relaxed; the value operand is unused).
enum class AtomicOp : uint8_t { Add, Max, Min, Xchg, WaitAtLeast, Read };

// How a Dot multiplies f32 inputs: Exact (f32 products, the default) or Tf32 (inputs
// rounded to tf32 — 10 mantissa bits, to nearest, ties away — as tensor cores take them).
enum class DotPrecision : uint8_t { Exact, Tf32 };

// Cache eviction policy hint on loads and stores. Shared (loads only): keep the loaded
// tile in shared memory and read it from there at each use instead of holding it in
// registers (a hint; the values are the same).
enum class Evict : uint8_t { Normal, First, Last, Shared };

const char* name(OpKind k);
const char* name(BinaryOp k);
const char* name(UnaryOp k);
const char* name(CmpPred k);
const char* name(ReduceKind k);
const char* name(AtomicOp k);
const char* name(Evict k);

}  // namespace tilefuse::ir
