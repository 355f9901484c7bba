#pragma once
// Builds tile IR with trace-time checks. Every creation method records the current
// source location on the op and raises UserError (naming the op, the shapes/dtypes,
// the source line and a fix) on invalid input. Arithmetic helpers apply numpy-like
// dtype promotion and broadcasting, inserting explicit Cast/Splat/Broadcast ops, so
// the ops themselves always see operands of identical types.
#include <functional>
#include <string>
#include <vector>

#include "tilefuse/ir/ir.hpp"

namespace tilefuse::ir {

class Builder {
 public:
  explicit Builder(Function& f) : f_(f), block_(&f.body) {}

  Function& function() { return f_; }
  Block* block() const { return block_; }
  void set_block(Block* b) { block_ = b; }
  const SourceLoc& loc() const { return loc_; }
  void set_loc(const SourceLoc& l) { loc_ = l; }

  // Kernel signature.
  Value* param(const std::string& name, Type t, bool is_const = false);

  // Indices and constants.
  Value* program_id(int axis);
  Value* num_programs(int axis);
  Value* const_int(int64_t v, Type t);
  Value* const_float(double v, Type t);
  Value* constant(double v, Type t);  // int or float by t.dtype
  Value* arange(int64_t start, int64_t end);

  // Shape manipulation.
  Value* splat(Value* scalar, const Shape& shape);
  Value* broadcast_to(Value* x, const Shape& shape);  // numpy rules; may splat/expand
  Value* expand_dims(Value* x, int axis);
  Value* reshape(Value* x, const Shape& shape);
  Value* trans(Value* x, std::vector<int> perm = {});

  // Element-wise. Operands are promoted and broadcast to a common type first.
  Value* cast(Value* x, DType to);
  Value* binary(BinaryOp op, Value* a, Value* b);
  Value* unary(UnaryOp op, Value* a, bool approx = false);
  Value* compare(CmpPred p, Value* a, Value* b);
  Value* select(Value* cond, Value* a, Value* b);
  Value* fma(Value* a, Value* b, Value* c);
  Value* add_ptr(Value* ptr, Value* offset);
  // A scalar pointer rounded down to a multiple of `bytes` (elements = false), or the
  // number of elements it was rounded down by (elements = true, i32).
  Value* align_ptr(Value* ptr, int64_t bytes, bool elements);

  // Memory.
  Value* load(Value* ptr, Value* mask = nullptr, Value* other = nullptr, Evict e = Evict::Normal,
             Value* readable = nullptr);
  // The block of `block` elements at `coords` of the tensor view (base, dims, strides;
  // outermost first, strides in elements): a block of lower rank covers the view's
  // innermost dimensions and takes one element of the others. Elements outside
  // [0, dims) read 0. Written out as pointers + mask (see Op::view_rank).
  Value* load_view(Value* base, const std::vector<Value*>& dims, const std::vector<Value*>& strides,
                   const std::vector<Value*>& coords, const Shape& block, Evict e = Evict::Normal);
  void store(Value* ptr, Value* value, Value* mask = nullptr, Evict e = Evict::Normal);
  // Writes `value` as the block at `coords` of the tensor view (its shape is the block's;
  // as load_view). Elements outside [0, dims) are not written.
  void store_view(Value* base, const std::vector<Value*>& dims, const std::vector<Value*>& strides,
                  const std::vector<Value*>& coords, Value* value, Evict e = Evict::Normal);
  // acq_rel: ordered program-wide (Op::acq_rel).
  Value* atomic_rmw(AtomicOp op, Value* ptr, Value* value, Value* mask = nullptr, bool acq_rel = false);
  Value* atomic_cas(Value* ptr, Value* cmp, Value* value, bool acq_rel = false);
  void barrier();

  // Reductions, scans, matrix multiply.
  Value* reduce(Value* x, int axis, ReduceKind k);
  using Combine = std::function<Value*(Builder&, Value* lhs, Value* rhs)>;
  Value* reduce_custom(Value* x, int axis, const Combine& combine);
  Value* scan(Value* x, int axis, ReduceKind k = ReduceKind::Sum);
  // Sum/Max/Min of a scalar, or of a tile element by element, over the programs of a
  // thread-block cluster (every program gets the result).
  Value* cluster_reduce(Value* x, ReduceKind k);
  // Several scalars of one dtype combined over the cluster in one exchange by `combine`
  // (lhs values, rhs values) -> combined values; an op with ReduceKind::Custom.
  using MultiCombine =
      std::function<std::vector<Value*>(Builder&, const std::vector<Value*>& lhs, const std::vector<Value*>& rhs)>;
  std::vector<Value*> cluster_reduce_custom(const std::vector<Value*>& xs, const MultiCombine& combine);
  Value* dot(Value* a, Value* b, Value* acc = nullptr, DotPrecision precision = DotPrecision::Exact);

  // Control flow. The body gets the induction variable and the current iteration
  // values and returns the next ones. Iteration values the body returns unchanged
  // are removed from the loop (they are invariant).
  using ForBody = std::function<std::vector<Value*>(Builder&, Value* iv, const std::vector<Value*>& iters)>;
  std::vector<Value*> for_(Value* lo, Value* hi, Value* step, const std::vector<Value*>& inits,
                           const ForBody& body);
  using Branch = std::function<std::vector<Value*>(Builder&)>;
  std::vector<Value*> if_(Value* cond, const Branch& then_branch, const Branch& else_branch = nullptr);

  // Lower-level: append an op (takes ownership) at the insertion point.
  Op* append(std::unique_ptr<Op> op);
  Op* create(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types);

  // The two values brought to one common type (promoted dtype, broadcast shape).
  std::pair<Value*, Value*> unify(Value* a, Value* b, const char* what);
  Shape broadcast_shapes(const Shape& a, const Shape& b, const char* what);

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& fix = "") const;
  // A view block written out: its pointers, bounds mask, and the operands that describe
  // the view (base, dims, strides, coords; see Op::view_rank).
  struct ViewBlock {
    Value *ptr = nullptr, *mask = nullptr;
    std::vector<Value*> description;
  };
  ViewBlock view_block(const char* what, Value* base, const std::vector<Value*>& dims,
                       const std::vector<Value*>& strides, const std::vector<Value*>& coords, const Shape& block);
  // A cluster reduction's operand: a 32/64-bit number, reached by every program equally.
  void check_cluster_operand(const Value* x, const std::string& what, bool tile_ok = false);
  void check_block_shape(const Shape& s, const char* what) const;
  int normalize_axis(int axis, int rank, const char* what) const;

  Function& f_;
  Block* block_;
  SourceLoc loc_;
};

// Replace every use of `from` by `to` inside `b` (recursively).
void replace_uses(Block& b, Value* from, Value* to);

}  // namespace tilefuse::ir
