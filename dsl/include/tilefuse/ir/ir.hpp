#pragma once
// The tile IR: SSA values of scalar and tile types, ops with attributes and regions,
// blocks and functions. Semantics per op kind are listed in op_kinds.hpp; the
// broadcasting/promotion rules live in the Builder (builder.hpp), not here.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tilefuse/ir/errors.hpp"
#include "tilefuse/ir/op_kinds.hpp"
#include "tilefuse/ir/type.hpp"

namespace tilefuse::ir {

struct Op;
struct Block;

struct Value {
  int id = 0;              // unique within its function
  Type type;
  Op* def = nullptr;       // defining op; null for block arguments
  Block* block = nullptr;  // owning block for block arguments
  int index = 0;           // result index (def != null) or argument index
};

struct Block {
  std::vector<Value*> args;
  std::vector<std::unique_ptr<Op>> ops;
  Op* parent = nullptr;  // the op owning this region; null for a function body

  Op* terminator() const { return ops.empty() ? nullptr : ops.back().get(); }
};

struct Op {
  OpKind kind;
  std::vector<Value*> operands;
  std::vector<Value*> results;
  std::vector<std::unique_ptr<Block>> regions;
  Block* parent = nullptr;
  SourceLoc loc;

  // Attributes (which ones are meaningful depends on kind; see op_kinds.hpp).
  int axis = 0;                   // ProgramId, NumPrograms, ExpandDims, Reduce, Scan
  int64_t start = 0, end = 0;     // Arange
  int64_t ival = 0;               // Constant of integer type (also i1); AlignPtr: bytes
  double fval = 0;                // Constant of float type
  uint8_t code = 0;               // BinaryOp / UnaryOp / CmpPred / ReduceKind / AtomicOp
  std::vector<int> perm;          // Trans
  Evict evict = Evict::Normal;    // Load, Store
  bool approx = false;            // Unary math: hardware approximation allowed
  // AtomicRMW, AtomicCas: ordered program-wide (DSL MemOrder::AcqRel): every memory access
  // of the program before the atomic happens before it, at GPU scope, and every access
  // after it sees what happened before the write it read from.
  bool acq_rel = false;
  // Load of a block of a tensor view (tilefuse::load(view, ...)): the load is written out
  // as pointers + bounds mask + 0 like any other, and operands 3.. describe the view for
  // backends that copy such blocks whole (TMA): base, dims[R], strides[R] (elements,
  // outermost first) and the block's first coordinates[R]. 0: a plain load.
  int view_rank = 0;

  explicit Op(OpKind k) : kind(k) {}
  Value* result(int i = 0) const { return results.at(i); }
  Value* operand(int i) const { return operands.at(i); }
  int num_operands() const { return static_cast<int>(operands.size()); }
  Block* region(int i) const { return regions.at(i).get(); }

  BinaryOp bin() const { return static_cast<BinaryOp>(code); }
  UnaryOp un() const { return static_cast<UnaryOp>(code); }
  CmpPred cmp() const { return static_cast<CmpPred>(code); }
  ReduceKind red() const { return static_cast<ReduceKind>(code); }
  DotPrecision precision() const { return static_cast<DotPrecision>(code); }
  AtomicOp atomic() const { return static_cast<AtomicOp>(code); }

  // Load: (ptr [, mask [, other [, readable]]]); Store/AtomicRMW: (ptr, value [, mask]).
  // `readable` (a plain load's 4th operand): lanes whose memory may be read although the
  // mask drops them (e.g. the neighbouring rows' elements in a run of 16 bytes); the
  // value is still `other` there. A backend may then read whole runs and select.
  Value* mask() const;
  Value* other() const;
  Value* readable() const;
  // A view load's description (view_rank > 0): base pointer, dims[d], strides[d], coords[d].
  Value* view_base() const { return operands.at(3); }
  Value* view_dim(int d) const { return operands.at(4 + d); }
  Value* view_stride(int d) const { return operands.at(4 + view_rank + d); }
  Value* view_coord(int d) const { return operands.at(4 + 2 * view_rank + d); }
};

// A kernel parameter: a global pointer or a scalar.
struct Param {
  std::string name;
  Value* value = nullptr;
  bool is_const = false;  // Ptr<const T>: the kernel only reads through it
  // Specialization facts the compile key carries: for pointers the known byte
  // alignment, for integers a known divisor of the value (1 = nothing known).
  int64_t divisibility = 1;
};

// One specialization of a traced kernel: the body plus the meta-parameter values
// and launch settings it was traced for.
// The most values one custom cluster reduction (ClusterReduce, ReduceKind::Custom) combines.
inline constexpr size_t kMaxClusterValues = 8;
// A cluster reduction of a tile (element by element; every program gets the whole
// result), as opposed to one of scalars.
inline bool cluster_reduces_tile(const Op& op) {
  return op.kind == OpKind::ClusterReduce && op.operand(0)->type.is_tile();
}

// The largest cluster: up to 16 programs the GPU's thread-block clusters, more exchange
// through global memory (the DSL's kMaxClusterPrograms).
inline constexpr int kMaxClusterSize = 1024;

struct Function {
  std::string name;
  std::vector<Param> params;
  std::map<std::string, int64_t> meta;  // meta-parameters bound at trace time
  int num_warps = 4;
  int num_stages = 1;
  // Programs per thread-block cluster along x (1: no clusters). Programs
  // c*cluster_size .. (c+1)*cluster_size-1 run together and meet in ClusterReduce.
  int cluster_size = 1;  // a power of two up to kMaxClusterSize
  // A producer warpgroup issues the pipelined loops' bulk tensor copies (sm_90a, where
  // they qualify; see backend/nvptx/src/tma_plan.cpp).
  bool warp_specialize = false;
  bool persistent = false;  // programs loop over the grid (Config::persistent)
  int min_programs_per_sm = 0;  // Config::min_programs_per_sm (0: the compiler's choice)
  Block body;

  Function() = default;
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  Value* new_value(Type t);
  int num_values() const { return static_cast<int>(values_.size()); }

 private:
  std::vector<std::unique_ptr<Value>> values_;
};

// Visit every op in a block, recursively into regions, in program order.
void walk(const Block& b, const std::function<void(Op&)>& fn);
// Number of ops (recursively) in a function body.
int count_ops(const Function& f);

// Deep copy of a function (fresh values, same structure).
std::unique_ptr<Function> clone(const Function& f);

}  // namespace tilefuse::ir
