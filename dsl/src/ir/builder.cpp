#include "tilefuse/ir/builder.hpp"

#include <algorithm>
#include <numeric>

#include "tilefuse/ir/cluster_uniform.hpp"

namespace tilefuse::ir {

void Builder::fail(const std::string& what, const std::string& fix) const { user_error(what, loc_, fix); }

void Builder::check_block_shape(const Shape& s, const char* what) const {
  for (auto d : s)
    if (!is_pow2(d))
      fail(std::string("block shape ") + shape_str(s) + " in " + what + " is not a power of two",
           "Tile dimensions must be powers of two: round the block size up (e.g. to " +
               std::to_string(d <= 0 ? 1 : int64_t(1) << (64 - __builtin_clzll(uint64_t(d)) - (is_pow2(d) ? 1 : 0))) +
               ") and mask the tail");
}

int Builder::normalize_axis(int axis, int rank, const char* what) const {
  int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    fail(std::string(what) + ": axis " + std::to_string(axis) + " is out of range (" + std::to_string(rank) +
             " axes)",
         "Use an axis in [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "]");
  return a;
}

// Whether a tile of shape `from` broadcasts (numpy rules) to exactly `to`.
static bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

Op* Builder::append(std::unique_ptr<Op> op) {
  op->parent = block_;
  op->loc = loc_;
  block_->ops.push_back(std::move(op));
  return block_->ops.back().get();
}

Op* Builder::create(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types) {
  auto op = std::make_unique<Op>(k);
  op->operands = std::move(operands);
  for (size_t i = 0; i < result_types.size(); ++i) {
    Value* v = f_.new_value(result_types[i]);
    v->def = op.get();
    v->index = static_cast<int>(i);
    op->results.push_back(v);
  }
  return append(std::move(op));
}

Value* Builder::param(const std::string& name, Type t, bool is_const) {
  Value* v = f_.new_value(std::move(t));
  v->block = &f_.body;
  v->index = static_cast<int>(f_.body.args.size());
  f_.body.args.push_back(v);
  f_.params.push_back(Param{name, v, is_const});
  return v;
}

Value* Builder::program_id(int axis) {
  if (axis < 0 || axis > 2) fail("program_id axis " + std::to_string(axis) + " is out of range", "Use 0, 1 or 2");
  Op* op = create(OpKind::ProgramId, {}, {Type::scalar(DType::i32)});
  op->axis = axis;
  return op->result();
}

Value* Builder::num_programs(int axis) {
  if (axis < 0 || axis > 2) fail("num_programs axis " + std::to_string(axis) + " is out of range", "Use 0, 1 or 2");
  Op* op = create(OpKind::NumPrograms, {}, {Type::scalar(DType::i32)});
  op->axis = axis;
  return op->result();
}

Value* Builder::const_int(int64_t v, Type t) {
  if (t.is_ptr || is_float(t.dtype)) internal_error("const_int with non-integer type " + t.str());
  check_block_shape(t.shape, "a constant tile");
  Op* op = create(OpKind::Constant, {}, {t});
  op->ival = t.dtype == DType::i1 ? (v != 0) : v;
  return op->result();
}

Value* Builder::const_float(double v, Type t) {
  if (t.is_ptr || !is_float(t.dtype)) internal_error("const_float with non-float type " + t.str());
  check_block_shape(t.shape, "a constant tile");
  Op* op = create(OpKind::Constant, {}, {t});
  op->fval = v;
  return op->result();
}

Value* Builder::constant(double v, Type t) {
  return is_float(t.dtype) ? const_float(v, std::move(t)) : const_int(static_cast<int64_t>(v), std::move(t));
}

Value* Builder::arange(int64_t start, int64_t end) {
  if (end <= start)
    fail("arange(" + std::to_string(start) + ", " + std::to_string(end) + ") is empty",
         "The end must be greater than the start");
  check_block_shape({end - start}, "arange");
  Op* op = create(OpKind::Arange, {}, {Type::tile(DType::i32, {end - start})});
  op->start = start;
  op->end = end;
  return op->result();
}

Value* Builder::splat(Value* s, const Shape& shape) {
  if (!s->type.is_scalar()) internal_error("splat of a tile");
  if (shape.empty()) return s;
  check_block_shape(shape, "a broadcast");
  return create(OpKind::Splat, {s}, {s->type.with_shape(shape)})->result();
}

Shape Builder::broadcast_shapes(const Shape& a, const Shape& b, const char* what) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1)
      fail(std::string("shape mismatch in ") + what + ": " + shape_str(a) + " vs " + shape_str(b),
           "Operands must have equal shapes or broadcast by numpy rules (a dimension of 1 stretches); "
           "use .col()/.row()/expand_dims to add dimensions");
    out[i] = std::max(da, db);
  }
  return out;
}

Value* Builder::broadcast_to(Value* x, const Shape& shape) {
  if (x->type.shape == shape) return x;
  if (x->type.is_scalar()) return splat(x, shape);
  if (x->type.rank() > static_cast<int>(shape.size()))
    fail("cannot broadcast a tile of shape " + shape_str(x->type.shape) + " to " + shape_str(shape),
         "The target shape must have at least the tile's rank");
  Value* v = x;
  while (v->type.rank() < static_cast<int>(shape.size())) v = expand_dims(v, 0);
  for (int i = 0; i < v->type.rank(); ++i)
    if (v->type.shape[i] != shape[i] && v->type.shape[i] != 1)
      fail("cannot broadcast a tile of shape " + shape_str(x->type.shape) + " to " + shape_str(shape),
           "Only dimensions of size 1 can be broadcast");
  if (v->type.shape == shape) return v;
  return create(OpKind::Broadcast, {v}, {v->type.with_shape(shape)})->result();
}

Value* Builder::expand_dims(Value* x, int axis) {
  int r = x->type.rank();
  int a = normalize_axis(axis, r + 1, ("expand_dims of " + x->type.str() + " (the result has " +
                                      std::to_string(r + 1) + " axes)").c_str());
  Shape s = x->type.shape;
  s.insert(s.begin() + a, 1);
  Op* op = create(OpKind::ExpandDims, {x}, {x->type.with_shape(s)});
  op->axis = a;
  return op->result();
}

Value* Builder::reshape(Value* x, const Shape& shape) {
  Type t = x->type.with_shape(shape);
  if (t.numel() != x->type.numel())
    fail("reshape from " + shape_str(x->type.shape) + " to " + shape_str(shape) + " changes the number of elements",
         "The new shape must have " + std::to_string(x->type.numel()) + " elements");
  check_block_shape(shape, "reshape");
  if (shape == x->type.shape) return x;
  return create(OpKind::Reshape, {x}, {t})->result();
}

Value* Builder::trans(Value* x, std::vector<int> perm) {
  int r = x->type.rank();
  if (r < 2) fail("trans of a tile of rank " + std::to_string(r), "trans needs a tile of rank 2 or more");
  if (perm.empty()) {
    perm.resize(r);
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[r - 1], perm[r - 2]);
  }
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < r; ++i)
    if (static_cast<int>(sorted.size()) != r || sorted[i] != i)
      fail("trans permutation is not a permutation of the " + std::to_string(r) + " axes",
           "Pass each axis exactly once");
  Shape s(r);
  for (int i = 0; i < r; ++i) s[i] = x->type.shape[perm[i]];
  Op* op = create(OpKind::Trans, {x}, {x->type.with_shape(s)});
  op->perm = perm;
  return op->result();
}

Value* Builder::cast(Value* x, DType to) {
  if (x->type.is_ptr) fail("cast of a pointer " + x->type.str(), "Offset pointers with +, do not cast them");
  if (x->type.dtype == to) return x;
  return create(OpKind::Cast, {x}, {x->type.with_dtype(to)})->result();
}

std::pair<Value*, Value*> Builder::unify(Value* a, Value* b, const char* what) {
  if (a->type.is_ptr || b->type.is_ptr)
    fail(std::string(what) + " of " + a->type.str() + " and " + b->type.str() + " involves a pointer",
         "Only + with an integer offset is defined on pointers");
  DType d = promote(a->type.dtype, b->type.dtype);
  // 8-bit floats are a storage format: arithmetic on them happens in f32.
  if (is_float8(d) && std::string(what) != "where") d = DType::f32;
  Shape s = broadcast_shapes(a->type.shape, b->type.shape, what);
  return {broadcast_to(cast(a, d), s), broadcast_to(cast(b, d), s)};
}

Value* Builder::binary(BinaryOp opc, Value* a, Value* b) {
  auto [x, y] = unify(a, b, name(opc));
  DType d = x->type.dtype;
  bool bitwise = opc == BinaryOp::And || opc == BinaryOp::Or || opc == BinaryOp::Xor ||
                 opc == BinaryOp::Shl || opc == BinaryOp::Shr;
  if (bitwise && is_float(d))
    fail(std::string(name(opc)) + " is a bitwise op but its operands are " + name(d),
         "Bitwise ops need integer or bool operands; cast first");
  if (d == DType::i1 && !bitwise && opc != BinaryOp::Min && opc != BinaryOp::Max) {
    x = cast(x, DType::i32);
    y = cast(y, DType::i32);
  }
  Op* op = create(OpKind::Binary, {x, y}, {x->type});
  op->code = static_cast<uint8_t>(opc);
  return op->result();
}

Value* Builder::unary(UnaryOp opc, Value* a, bool approx) {
  if (a->type.is_ptr) fail(std::string(name(opc)) + " of a pointer " + a->type.str(), "Load the values first");
  Value* x = a;
  bool math = opc != UnaryOp::Neg && opc != UnaryOp::Not && opc != UnaryOp::Abs;
  if ((math && !is_float(x->type.dtype)) || is_float8(x->type.dtype)) x = cast(x, DType::f32);
  if (opc == UnaryOp::Not && is_float(x->type.dtype))
    fail(std::string("not of a float tile ") + x->type.str(), "Use a comparison or cast to an integer first");
  if (opc == UnaryOp::Neg && x->type.dtype == DType::i1) x = cast(x, DType::i32);
  Op* op = create(OpKind::Unary, {x}, {x->type});
  op->code = static_cast<uint8_t>(opc);
  op->approx = approx;
  return op->result();
}

Value* Builder::compare(CmpPred p, Value* a, Value* b) {
  auto [x, y] = unify(a, b, name(p));
  Op* op = create(OpKind::Compare, {x, y}, {x->type.with_dtype(DType::i1)});
  op->code = static_cast<uint8_t>(p);
  return op->result();
}

Value* Builder::select(Value* cond, Value* a, Value* b) {
  if (cond->type.is_ptr || cond->type.dtype != DType::i1)
    fail("where condition has type " + cond->type.str() + ", not a bool",
         "Pass a comparison result (e.g. cols < n) as the condition");
  if (a->type.is_ptr || b->type.is_ptr) {
    if (a->type.element() != b->type.element())
      fail("where of different pointer types " + a->type.str() + " and " + b->type.str(),
           "Both values must be pointers to the same element type (or both non-pointers)");
    Shape s = broadcast_shapes(cond->type.shape, broadcast_shapes(a->type.shape, b->type.shape, "where"), "where");
    return create(OpKind::Select, {broadcast_to(cond, s), broadcast_to(a, s), broadcast_to(b, s)},
                  {a->type.with_shape(s)})->result();
  }
  auto [x, y] = unify(a, b, "where");
  Shape s = broadcast_shapes(cond->type.shape, x->type.shape, "where");
  x = broadcast_to(x, s);
  y = broadcast_to(y, s);
  return create(OpKind::Select, {broadcast_to(cond, s), x, y}, {x->type})->result();
}

Value* Builder::fma(Value* a, Value* b, Value* c) {
  auto [x, y] = unify(a, b, "fma");
  auto [xy, z] = unify(x, c, "fma");
  if (!is_float(z->type.dtype)) {
    z = cast(z, DType::f32);
    xy = cast(xy, DType::f32);
  }
  x = broadcast_to(cast(x, z->type.dtype), z->type.shape);
  y = broadcast_to(cast(y, z->type.dtype), z->type.shape);
  return create(OpKind::Fma, {x, y, z}, {z->type})->result();
}

Value* Builder::add_ptr(Value* ptr, Value* offset) {
  if (!ptr->type.is_ptr) internal_error("add_ptr on a non-pointer");
  if (offset->type.is_ptr)
    fail("pointer + pointer (" + ptr->type.str() + " + " + offset->type.str() + ")",
         "Add an integer offset to a pointer; subtracting pointers is not supported");
  if (!is_int(offset->type.dtype) || offset->type.dtype == DType::i1)
    fail("pointer offset has type " + offset->type.str() + ", not an integer", "Cast the offset to i32 or i64");
  Shape s = broadcast_shapes(ptr->type.shape, offset->type.shape, "pointer offset");
  return create(OpKind::AddPtr, {broadcast_to(ptr, s), broadcast_to(offset, s)}, {ptr->type.with_shape(s)})->result();
}

Value* Builder::align_ptr(Value* ptr, int64_t bytes, bool elements) {
  if (!ptr->type.is_ptr || !ptr->type.is_scalar())
    fail("align_down of " + ptr->type.str() + ", which is not a scalar pointer",
         "Round a row's start pointer (e.g. x + row * stride) before adding the column offsets");
  int64_t es = byte_size(ptr->type.dtype);
  if (bytes < es || bytes > 128 || (bytes & (bytes - 1)))
    fail("align_down to " + std::to_string(bytes) + " bytes for " + ptr->type.str() + " pointers",
         "Use a power of two between the element size (" + std::to_string(es) + " bytes) and 128");
  Op* op = create(OpKind::AlignPtr, {ptr}, {elements ? Type::scalar(DType::i32) : ptr->type});
  op->ival = bytes;
  op->code = elements ? 1 : 0;
  return op->result();
}

Value* Builder::load(Value* ptr, Value* mask, Value* other, Evict e, Value* readable) {
  if (!ptr->type.is_ptr) fail("load from " + ptr->type.str() + ", which is not a pointer", "Pass pointer + offsets");
  std::vector<Value*> ops{ptr};
  if (other && !mask) fail("load has an 'other' value but no mask", "Pass a mask; 'other' fills masked-off lanes");
  if (readable && !mask) fail("load has a 'readable' mask but no mask", "Pass the mask of the lanes whose values count");
  // A bool tile over the pointer tile's lanes (mask, readable), broadcast to its shape.
  auto lanes = [&](Value* m, const std::string& what, const char* example, const char* fix) {
    if (m->type.is_ptr || m->type.dtype != DType::i1)
      fail("load " + what + " has type " + m->type.str() + ", not bool", example);
    if (!broadcasts_to(m->type.shape, ptr->type.shape))
      fail("load " + what + " shape " + shape_str(m->type.shape) + " does not match the pointer tile shape " +
               shape_str(ptr->type.shape),
           fix);
    return broadcast_to(m, ptr->type.shape);
  };
  if (mask) {
    ops.push_back(lanes(mask, "mask", "Pass a comparison such as cols < n",
                        "The mask must have the pointer tile's shape (or broadcast to it)"));
    if (other) {
      if (other->type.is_ptr) fail("load 'other' is a pointer " + other->type.str(), "Pass the value masked-off lanes read");
      if (!broadcasts_to(other->type.shape, ptr->type.shape))
        fail("load 'other' shape " + shape_str(other->type.shape) + " does not match the pointer tile shape " +
                 shape_str(ptr->type.shape),
             "Pass a scalar or a tile of the pointer tile's shape (or one that broadcasts to it)");
      ops.push_back(broadcast_to(cast(other, ptr->type.dtype), ptr->type.shape));
    }
  }
  if (readable) {
    Value* r = lanes(readable, "'readable'", "Pass a comparison such as pos < end",
                     "The readable mask must have the pointer tile's shape (or broadcast to it)");
    if (!other) ops.push_back(constant(0, Type::tile(ptr->type.dtype, ptr->type.shape)));
    ops.push_back(r);
  }
  Op* op = create(OpKind::Load, ops, {Type{ptr->type.dtype, false, ptr->type.shape}});
  op->evict = e;
  return op->result();
}

Builder::ViewBlock Builder::view_block(const char* what, Value* base, const std::vector<Value*>& dims,
                                      const std::vector<Value*>& strides, const std::vector<Value*>& coords,
                                      const Shape& block) {
  const size_t rank = dims.size(), brank = block.size();
  const std::string w(what);
  if (!base->type.is_ptr || !base->type.is_scalar())
    fail(w + ": tensor view base " + base->type.str() + " is not a pointer argument", "Pass the tensor's Ptr<T>");
  if (rank < 1 || rank > 5)
    fail(w + ": tensor view of rank " + std::to_string(rank), "Views have 1 to 5 dimensions");
  if (strides.size() != rank || coords.size() != rank)
    fail(w + ": tensor view of rank " + std::to_string(rank) + " given " + std::to_string(strides.size()) +
             " strides and " + std::to_string(coords.size()) + " coordinates",
         "Give one stride per dimension and one coordinate per dimension");
  for (const auto* list : {&dims, &strides, &coords})
    for (Value* v : *list)
      if (!v->type.is_scalar() || v->type.is_ptr || !is_int(v->type.dtype) || v->type.dtype == DType::i1)
        fail(w + ": tensor view dimension, stride or coordinate of type " + v->type.str(),
             "Pass integer scalars (kernel arguments, constants or index expressions)");
  if (brank < 1 || brank > rank)
    fail(w + ": block " + shape_str(block) + " for a tensor view of rank " + std::to_string(rank),
         "Give 1 to " + std::to_string(rank) + " block sizes; they cover the view's innermost dimensions");
  for (int64_t s : block)
    if (s < 1 || !is_pow2(s))
      fail(w + ": block " + shape_str(block) + " has a size that is not a power of two",
           "Use power-of-two block sizes (mask with a smaller view dimension instead)");
  const size_t lead = rank - brank;
  auto i64 = [&](Value* v) { return cast(v, DType::i64); };
  auto zero = [&] { return constant(0, Type::scalar(DType::i64)); };
  // Leading dimensions: one element each, a scalar offset and in-bounds condition.
  Value* ptr = base;
  Value* ok = constant(1, Type::scalar(DType::i1));
  for (size_t d = 0; d < lead; ++d) {
    Value* c = i64(coords[d]);
    ptr = add_ptr(ptr, binary(BinaryOp::Mul, c, i64(strides[d])));
    ok = binary(BinaryOp::And, ok,
                binary(BinaryOp::And, compare(CmpPred::Ge, c, zero()), compare(CmpPred::Lt, c, i64(dims[d]))));
  }
  // Block dimensions: coordinate + arange along its own axis, broadcast against the others.
  Value* mask = nullptr;
  for (size_t j = 0; j < brank; ++j) {
    size_t d = lead + j;
    Value* idx = binary(BinaryOp::Add, cast(arange(0, block[j]), DType::i64), i64(coords[d]));
    Value* in = binary(BinaryOp::And, compare(CmpPred::Ge, idx, zero()), compare(CmpPred::Lt, idx, i64(dims[d])));
    Value* off = binary(BinaryOp::Mul, idx, i64(strides[d]));
    for (size_t k = 0; k < brank; ++k) {
      if (k < j) off = expand_dims(off, 0), in = expand_dims(in, 0);
      if (k > j) off = expand_dims(off, static_cast<int>(k)), in = expand_dims(in, static_cast<int>(k));
    }
    ptr = add_ptr(ptr, off);
    mask = mask ? binary(BinaryOp::And, mask, in) : in;
  }
  ViewBlock vb;
  vb.ptr = broadcast_to(ptr, block);
  vb.mask = broadcast_to(binary(BinaryOp::And, mask, ok), block);
  vb.description.push_back(base);
  for (const auto* list : {&dims, &strides, &coords})
    vb.description.insert(vb.description.end(), list->begin(), list->end());
  return vb;
}

Value* Builder::load_view(Value* base, const std::vector<Value*>& dims, const std::vector<Value*>& strides,
                          const std::vector<Value*>& coords, const Shape& block, Evict e) {
  ViewBlock vb = view_block("load", base, dims, strides, coords, block);
  std::vector<Value*> ops{vb.ptr, vb.mask, constant(0, Type::tile(base->type.dtype, block))};
  ops.insert(ops.end(), vb.description.begin(), vb.description.end());
  Op* op = create(OpKind::Load, ops, {Type{base->type.dtype, false, block}});
  op->evict = e;
  op->view_rank = static_cast<int>(dims.size());
  return op->result();
}

void Builder::store_view(Value* base, const std::vector<Value*>& dims, const std::vector<Value*>& strides,
                         const std::vector<Value*>& coords, Value* value, Evict e) {
  if (value->type.is_ptr || value->type.is_scalar())
    fail("store to a tensor view of " + value->type.str() + ", which is not a tile of values",
         "Store a tile whose shape is the block to write");
  if (base->type.is_ptr && value->type.dtype != base->type.dtype)
    fail(std::string("store of a ") + name(value->type.dtype) + " tile to a tensor view of " + name(base->type.dtype),
         std::string("Cast the tile first: value.cast<") + name(base->type.dtype) + ">()");
  ViewBlock vb = view_block("store", base, dims, strides, coords, value->type.shape);
  std::vector<Value*> ops{vb.ptr, value, vb.mask};
  ops.insert(ops.end(), vb.description.begin(), vb.description.end());
  Op* op = create(OpKind::Store, ops, {});
  op->evict = e;
  op->view_rank = static_cast<int>(dims.size());
}

void Builder::store(Value* ptr, Value* value, Value* mask, Evict e) {
  if (!ptr->type.is_ptr) fail("store to " + ptr->type.str() + ", which is not a pointer", "Pass pointer + offsets");
  if (e == Evict::Shared)
    fail("store with Cache::KeepInShared: that hint keeps a loaded tile in shared memory",
         "Use it on a load; stores take Cache::Normal, EvictFirst or EvictLast");
  if (value->type.is_ptr) fail("store of a pointer value " + value->type.str());
  if (value->type.dtype != ptr->type.dtype)
    fail(std::string("store of a ") + name(value->type.dtype) + " value through a pointer to " + name(ptr->type.dtype),
         std::string("Cast the value first: value.cast<") + name(ptr->type.dtype) + ">()");
  if (!broadcasts_to(value->type.shape, ptr->type.shape))
    fail("store value shape " + shape_str(value->type.shape) + " does not match the pointer tile shape " +
             shape_str(ptr->type.shape),
         "Store a value of the pointer tile's shape (or one that broadcasts to it); build the pointers with the "
         "same offsets as the value");
  std::vector<Value*> ops{ptr, broadcast_to(value, ptr->type.shape)};
  if (mask) {
    if (mask->type.is_ptr || mask->type.dtype != DType::i1)
      fail("store mask has type " + mask->type.str() + ", not bool", "Pass a comparison such as cols < n");
    if (!broadcasts_to(mask->type.shape, ptr->type.shape))
      fail("store mask shape " + shape_str(mask->type.shape) + " does not match the pointer tile shape " +
               shape_str(ptr->type.shape),
           "The mask must have the pointer tile's shape (or broadcast to it)");
    ops.push_back(broadcast_to(mask, ptr->type.shape));
  }
  Op* op = create(OpKind::Store, ops, {});
  op->evict = e;
}

void Builder::barrier() { create(OpKind::Barrier, {}, {}); }

Value* Builder::atomic_rmw(AtomicOp a, Value* ptr, Value* value, Value* mask, bool acq_rel) {
  if (!ptr->type.is_ptr) fail(std::string("atomic_") + name(a) + " on " + ptr->type.str() + ", which is not a pointer");
  DType d = ptr->type.dtype;
  if (d == DType::f16 || d == DType::bf16 || d == DType::i8 || d == DType::u8 || d == DType::i16 || d == DType::i1 ||
      is_float8(d))
    fail(std::string("atomic_") + name(a) + " on " + name(d) + " elements is not supported",
         "Use i32, u32, i64, f32 or f64 elements");
  if (a == AtomicOp::Read && ((d != DType::i32 && d != DType::i64) || !ptr->type.shape.empty() || mask || acq_rel))
    fail("load_relaxed on " + ptr->type.str() + ": it reads one i32 or i64 element",
         "Pass a scalar pointer to an i32 or i64 counter");
  if (a == AtomicOp::WaitAtLeast &&
      ((d != DType::i32 && (d != DType::i64 || acq_rel)) || !ptr->type.shape.empty() || mask))
    fail("wait_at_least on " + ptr->type.str() + ": it waits on one i32 counter (i32 or i64 with MemOrder::Relaxed)",
         "Pass a scalar pointer to an i32 counter that other programs raise with atomic_add");
  if ((a == AtomicOp::Max || a == AtomicOp::Min) && d == DType::f64)
    fail(std::string("atomic_") + name(a) + " on f64 is not supported", "Use f32 or an integer type");
  if (value->type.is_ptr || !broadcasts_to(value->type.shape, ptr->type.shape))
    fail(std::string("atomic_") + name(a) + " value " + value->type.str() + " does not match the pointer tile " +
             ptr->type.str(),
         "Pass a scalar or a tile of the pointer tile's shape (or one that broadcasts to it)");
  Value* v = broadcast_to(cast(value, d), ptr->type.shape);
  std::vector<Value*> ops{ptr, v};
  if (mask) {
    if (!broadcasts_to(mask->type.shape, ptr->type.shape) || mask->type.is_ptr || mask->type.dtype != DType::i1)
      fail(std::string("atomic_") + name(a) + " mask " + mask->type.str() + " does not match the pointer tile " +
               ptr->type.str(),
           "The mask must be a bool tile of the pointer tile's shape (or broadcast to it)");
    ops.push_back(broadcast_to(mask, ptr->type.shape));
  }
  Op* op = create(OpKind::AtomicRMW, ops, {Type{d, false, ptr->type.shape}});
  op->code = static_cast<uint8_t>(a);
  op->acq_rel = acq_rel;
  return op->result();
}

Value* Builder::atomic_cas(Value* ptr, Value* cmp, Value* value, bool acq_rel) {
  if (!ptr->type.is_ptr) fail("atomic_cas on " + ptr->type.str() + ", which is not a pointer");
  DType d = ptr->type.dtype;
  if (d != DType::i32 && d != DType::u32 && d != DType::i64 && d != DType::f32)
    fail(std::string("atomic_cas on ") + name(d) + " elements is not supported", "Use i32, u32, i64 or f32");
  Op* op = create(OpKind::AtomicCas,
                  {ptr, broadcast_to(cast(cmp, d), ptr->type.shape), broadcast_to(cast(value, d), ptr->type.shape)},
                  {Type{d, false, ptr->type.shape}});
  op->acq_rel = acq_rel;
  return op->result();
}

Value* Builder::reduce(Value* x, int axis, ReduceKind k) {
  if (k == ReduceKind::Custom) internal_error("use reduce_custom");
  if (x->type.is_scalar()) fail(std::string(name(k)) + " of a scalar", "Reductions take a tile");
  if (x->type.is_ptr) fail(std::string(name(k)) + " of a pointer tile");
  int a = normalize_axis(axis, x->type.rank(), (std::string(name(k)) + " of " + x->type.str()).c_str());
  Shape s = x->type.shape;
  s.erase(s.begin() + a);
  Value* in = x;
  if (k == ReduceKind::Sum && in->type.dtype == DType::i1) in = cast(in, DType::i32);
  if (is_float8(in->type.dtype)) in = cast(in, DType::f32);
  DType d = (k == ReduceKind::Argmax || k == ReduceKind::Argmin) ? DType::i32 : in->type.dtype;
  Op* op = create(OpKind::Reduce, {in}, {Type{d, false, s}});
  op->axis = a;
  op->code = static_cast<uint8_t>(k);
  return op->result();
}

Value* Builder::reduce_custom(Value* x, int axis, const Combine& combine) {
  if (x->type.is_scalar() || x->type.is_ptr) fail("reduce of " + x->type.str(), "Reductions take a tile of values");
  int a = normalize_axis(axis, x->type.rank(), ("reduce of " + x->type.str()).c_str());
  Shape s = x->type.shape;
  s.erase(s.begin() + a);
  Op* op = create(OpKind::Reduce, {x}, {x->type.with_shape(s)});
  op->axis = a;
  op->code = static_cast<uint8_t>(ReduceKind::Custom);
  auto body = std::make_unique<Block>();
  body->parent = op;
  for (int i = 0; i < 2; ++i) {
    Value* arg = f_.new_value(x->type.element());
    arg->block = body.get();
    arg->index = i;
    body->args.push_back(arg);
  }
  Block* bb = body.get();
  op->regions.push_back(std::move(body));
  Block* saved = block_;
  block_ = bb;
  Value* r = combine(*this, bb->args[0], bb->args[1]);
  if (r->type != x->type.element())
    fail("reduce combine returns " + r->type.str() + " but the elements are " + x->type.element().str(),
         "The combine function must return the element type");
  create(OpKind::Yield, {r}, {});
  block_ = saved;
  return op->result();
}

Value* Builder::scan(Value* x, int axis, ReduceKind k) {
  if (k != ReduceKind::Sum) fail(std::string("scan with ") + name(k) + " is not supported", "Use cumsum");
  if (x->type.is_scalar() || x->type.is_ptr) fail("cumsum of " + x->type.str(), "Scans take a tile of values");
  int a = normalize_axis(axis, x->type.rank(), ("cumsum of " + x->type.str()).c_str());
  Value* in = x->type.dtype == DType::i1 ? cast(x, DType::i32) : is_float8(x->type.dtype) ? cast(x, DType::f32) : x;
  Op* op = create(OpKind::Scan, {in}, {in->type});
  op->axis = a;
  op->code = static_cast<uint8_t>(k);
  return op->result();
}

void Builder::check_cluster_operand(const Value* x, const std::string& what, bool tile_ok) {
  if ((!tile_ok && !x->type.is_scalar()) || x->type.is_ptr || x->type.dtype == DType::i1)
    fail(what + (tile_ok ? ": cluster reductions combine numbers" : ": cluster_reduce combines numbers, one per program"),
         tile_ok ? "Cast the tile to f32 or i32 first" : "Reduce the tile first, e.g. cluster_sum(sum(x, 0))");
  if (byte_size(x->type.dtype) < 4)
    fail(what + ": cluster reductions take 32- or 64-bit numbers", "Cast to f32 or i32 first");
  std::string why;
  if (!reached_by_whole_cluster(*block_, f_.cluster_size, &why))
    fail(what + " " + why + ": every program of a cluster must reach each cluster reduction the same number of "
                "times, or the cluster deadlocks",
         "Call it at the top level of the kernel body, or in loops whose bounds are the same in every program of "
         "the cluster (e.g. for_range(cluster_id(), n, num_programs(0) / cluster_size()))");
}

Value* Builder::cluster_reduce(Value* x, ReduceKind k) {
  if (k != ReduceKind::Sum && k != ReduceKind::Max && k != ReduceKind::Min)
    fail(std::string("cluster reduction with ") + name(k) + " is not supported",
         "Use cluster_sum, cluster_max or cluster_min (or cluster_reduce with a combine function)");
  check_cluster_operand(x, std::string("cluster_") + name(k) + " of " + x->type.str(), true);
  Op* op = create(OpKind::ClusterReduce, {x}, {x->type});
  op->code = static_cast<uint8_t>(k);
  return op->result();
}

std::vector<Value*> Builder::cluster_reduce_custom(const std::vector<Value*>& xs, const MultiCombine& combine) {
  if (xs.empty() || xs.size() > kMaxClusterValues)
    fail("cluster_reduce of " + std::to_string(xs.size()) + " values: it combines 1 to " +
             std::to_string(kMaxClusterValues) + " numbers per program",
         "Pass between 1 and " + std::to_string(kMaxClusterValues) + " scalars");
  const Type t = xs[0]->type;
  for (size_t i = 0; i < xs.size(); ++i) {
    check_cluster_operand(xs[i], "cluster_reduce of value " + std::to_string(i) + " (" + xs[i]->type.str() + ")");
    if (xs[i]->type != t)
      fail("cluster_reduce values differ in type: value 0 is " + t.str() + ", value " + std::to_string(i) + " is " +
               xs[i]->type.str(),
           "Cast the values to one dtype (e.g. all f32)");
  }
  const size_t n = xs.size();
  Op* op = create(OpKind::ClusterReduce, xs, std::vector<Type>(n, t));
  op->code = static_cast<uint8_t>(ReduceKind::Custom);
  auto body = std::make_unique<Block>();
  body->parent = op;
  for (size_t i = 0; i < 2 * n; ++i) {
    Value* arg = f_.new_value(t);
    arg->block = body.get();
    arg->index = static_cast<int>(i);
    body->args.push_back(arg);
  }
  Block* bb = body.get();
  op->regions.push_back(std::move(body));
  Block* saved = block_;
  block_ = bb;
  std::vector<Value*> lhs(bb->args.begin(), bb->args.begin() + static_cast<long>(n));
  std::vector<Value*> rhs(bb->args.begin() + static_cast<long>(n), bb->args.end());
  std::vector<Value*> out = combine(*this, lhs, rhs);
  if (out.size() != n)
    fail("cluster_reduce combine returns " + std::to_string(out.size()) + " values for " + std::to_string(n) + " inputs",
         "Return one combined value per input value");
  for (size_t i = 0; i < n; ++i)
    if (out[i]->type != t)
      fail("cluster_reduce combine returns " + out[i]->type.str() + " as value " + std::to_string(i) +
               " but the values are " + t.str(),
           "Return values of the inputs' type");
  create(OpKind::Yield, out, {});
  block_ = saved;
  return op->results;
}

Value* Builder::dot(Value* a, Value* b, Value* acc, DotPrecision precision) {
  if (a->type.rank() != 2 || b->type.rank() != 2)
    fail("dot needs two rank-2 tiles, got " + a->type.str() + " and " + b->type.str(), "Reshape the operands to 2-D");
  DType da = a->type.dtype, db = b->type.dtype;
  bool ok = !a->type.is_ptr && !b->type.is_ptr &&
            ((da == db && (da == DType::f16 || da == DType::bf16 || da == DType::f32)) ||
             (is_float8(da) && is_float8(db)));
  if (!ok)
    fail(std::string("dot does not support ") + a->type.str() + " x " + b->type.str() + " inputs",
         "Supported: f16 x f16, bf16 x bf16, f32 x f32 and 8-bit floats (f8e4m3/f8e5m2, either with either), "
         "accumulating in f32; cast the operands");
  const Shape& sa = a->type.shape;
  const Shape& sb = b->type.shape;
  if (sa[1] != sb[0])
    fail("dot inner dimensions differ: a is " + shape_str(sa) + ", b is " + shape_str(sb),
         "a must be [M, K] and b [K, N]; transpose with trans() if needed");
  if (precision == DotPrecision::Tf32 && da != DType::f32)
    fail(std::string("dot precision tf32 applies to f32 inputs, not ") + a->type.str() + " x " + b->type.str(),
         "Drop Precision::tf32: f16, bf16 and 8-bit float inputs run on tensor cores already");
  Type rt = Type::tile(DType::f32, {sa[0], sb[1]});
  if (!acc) acc = const_float(0.0, rt);
  if (acc->type != rt)
    fail("dot accumulator is " + acc->type.str() + " but the product is " + rt.str(),
         "Pass an f32 accumulator of shape [M, N]");
  Op* op = create(OpKind::Dot, {a, b, acc}, {rt});
  op->code = static_cast<uint8_t>(precision);
  return op->result();
}

std::vector<Value*> Builder::for_(Value* lo, Value* hi, Value* step, const std::vector<Value*>& inits,
                                  const ForBody& body) {
  for (Value* v : {lo, hi, step})
    if (!v->type.is_scalar() || v->type.is_ptr || !is_int(v->type.dtype) || v->type.dtype == DType::i1)
      fail("for_range bounds must be integer scalars, got " + v->type.str(), "Pass I32/I64 values or integers");
  DType d = promote(promote(lo->type.dtype, hi->type.dtype), step->type.dtype);
  std::vector<Value*> operands{cast(lo, d), cast(hi, d), cast(step, d)};
  std::vector<Type> types;
  for (Value* v : inits) {
    operands.push_back(v);
    types.push_back(v->type);
  }
  Op* op = create(OpKind::For, operands, types);
  auto region = std::make_unique<Block>();
  region->parent = op;
  Value* iv = f_.new_value(Type::scalar(d));
  iv->block = region.get();
  region->args.push_back(iv);
  std::vector<Value*> iters;
  for (size_t i = 0; i < inits.size(); ++i) {
    Value* a = f_.new_value(inits[i]->type);
    a->block = region.get();
    a->index = static_cast<int>(i + 1);
    region->args.push_back(a);
    iters.push_back(a);
  }
  Block* rb = region.get();
  op->regions.push_back(std::move(region));
  Block* saved = block_;
  SourceLoc saved_loc = loc_;
  block_ = rb;
  std::vector<Value*> yields = body(*this, iv, iters);
  block_ = saved;
  loc_ = saved_loc;
  if (yields.size() != inits.size())
    internal_error("for_ body yields " + std::to_string(yields.size()) + " values for " +
                   std::to_string(inits.size()) + " iteration values");
  for (size_t i = 0; i < yields.size(); ++i)
    if (yields[i]->type != inits[i]->type)
      fail("a loop-carried value (a handle assigned in the for_range body) changes type inside the loop: " +
               inits[i]->type.str() + " before the loop, " + yields[i]->type.str() + " at the end of the body",
           "A value assigned in a for_range body must keep its shape and dtype; cast or reshape it back, "
           "or use a new variable");
  // Drop invariant iteration values: uses of the argument become uses of the init.
  std::vector<Value*> results(op->results.begin(), op->results.end());
  std::vector<Value*> out(inits.size());
  std::vector<Value*> kept_yields;
  std::vector<Value*> new_results;
  std::vector<Value*> new_args{iv};
  std::vector<Value*> new_operands(op->operands.begin(), op->operands.begin() + 3);
  for (size_t i = 0; i < inits.size(); ++i) {
    if (yields[i] == iters[i]) {
      replace_uses(*rb, iters[i], inits[i]);
      out[i] = inits[i];
    } else {
      iters[i]->index = static_cast<int>(new_args.size());
      new_args.push_back(iters[i]);
      new_operands.push_back(inits[i]);
      results[i]->index = static_cast<int>(new_results.size());
      new_results.push_back(results[i]);
      kept_yields.push_back(yields[i]);
      out[i] = results[i];
    }
  }
  rb->args = new_args;
  op->operands = new_operands;
  op->results = new_results;
  block_ = rb;
  create(OpKind::Yield, kept_yields, {});
  block_ = saved;
  return out;
}

std::vector<Value*> Builder::if_(Value* cond, const Branch& then_branch, const Branch& else_branch) {
  if (!cond->type.is_scalar() || cond->type.is_ptr || cond->type.dtype != DType::i1)
    fail("if_ condition must be a bool scalar, got " + cond->type.str(),
         "Compare scalars (e.g. pid < n) for the condition; use where() for tiles");
  Op* op = create(OpKind::If, {cond}, {});
  Block* saved = block_;
  SourceLoc saved_loc = loc_;
  std::vector<Value*> ys[2];
  for (int i = 0; i < 2; ++i) {
    auto region = std::make_unique<Block>();
    region->parent = op;
    block_ = region.get();
    op->regions.push_back(std::move(region));
    const Branch& br = i == 0 ? then_branch : else_branch;
    if (br) ys[i] = br(*this);
    loc_ = saved_loc;
  }
  if (ys[0].size() != ys[1].size())
    internal_error("if_ branches yield different numbers of values");
  // A value both branches leave the same needs no result.
  std::vector<Value*> out(ys[0].size());
  std::vector<Value*> kept[2];
  for (size_t i = 0; i < ys[0].size(); ++i) {
    if (ys[0][i]->type != ys[1][i]->type)
      fail("a handle assigned in an if_ branch gets different types: " + ys[0][i]->type.str() +
               " after then, " + ys[1][i]->type.str() + " after else",
           "Both branches must assign values of the same shape and dtype");
    if (ys[0][i] == ys[1][i]) {
      out[i] = ys[0][i];
      continue;
    }
    Value* r = f_.new_value(ys[0][i]->type);
    r->def = op;
    r->index = static_cast<int>(op->results.size());
    op->results.push_back(r);
    kept[0].push_back(ys[0][i]);
    kept[1].push_back(ys[1][i]);
    out[i] = r;
  }
  for (int i = 0; i < 2; ++i) {
    block_ = op->region(i);
    create(OpKind::Yield, kept[i], {});
  }
  block_ = saved;
  return out;
}

void replace_uses(Block& b, Value* from, Value* to) {
  walk(b, [&](Op& op) {
    for (auto*& o : op.operands)
      if (o == from) o = to;
  });
}

}  // namespace tilefuse::ir
