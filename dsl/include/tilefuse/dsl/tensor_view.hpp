#pragma once
// Tensor views: a global tensor described by its base pointer, dimensions and strides,
// loaded block by block. A view load reads exactly what the equivalent pointer load with
// a bounds mask and `other = 0` reads (elements outside [0, dim) are 0), and tells the
// GPU backend enough to move the block with one bulk tensor copy (TMA on sm_90) into
// shared memory when only tensor-core dots read it.
//
//   auto av = tensor_view(a, {M, K}, {lda, 1});                // [M, K], row stride lda
//   auto tile = load(av, {tile_m * BLOCK_M, k0}, {BLOCK_M, BLOCK_K});
//
//   store(cv, {tile_m * BLOCK_M, tile_n * BLOCK_N}, acc.cast<bf16>());  // the block's shape
//
// A view store writes exactly what the equivalent pointer store with a bounds mask
// writes (nothing outside [0, dim)); on sm_90 a suitable block leaves through shared
// memory as one bulk tensor copy (a TMA store).
//
// Copies need the view's base, dimensions and strides to be kernel arguments or
// constants (the launch encodes the copy descriptor from them), the innermost stride
// to be 1 and the others multiples of 16 bytes; other views load like pointer tiles.
#include <array>
#include <cstddef>
#include <type_traits>

#include "tilefuse/dsl/ops.hpp"

namespace tilefuse {

// One dimension, stride or coordinate of a view: an integer scalar handle, a C++
// integer or a meta-parameter.
struct ViewIndex {
  ir::Value* value = nullptr;
  int64_t literal = 0;
  ViewIndex() = default;
  template <class T>
    requires std::is_integral_v<T>
  ViewIndex(T v) : literal(static_cast<int64_t>(v)) {}
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  ViewIndex(const Tile<T, 0>& t) : value(t.value) {}
  template <class M>
    requires MetaLike<M>
  ViewIndex(const M& m) : literal(m.meta_value()) {}
  // The value; a literal becomes a constant of type `literal_type`.
  ir::Value* get(ir::Builder& b, DType literal_type = DType::i64) const {
    return value ? value : b.const_int(literal, ir::Type::scalar(literal_type));
  }
};

template <class T, int R>
struct GlobalTensor {
  Ptr<T> base;
  std::array<ViewIndex, R> dims, strides;
};

// A view of the tensor at `base` with dims[d] elements along dimension d (outermost
// first) and strides[d] elements between neighbours along it.
template <class T, size_t R>
GlobalTensor<T, static_cast<int>(R)> tensor_view(const Ptr<T>& base, const ViewIndex (&dims)[R],
                                               const ViewIndex (&strides)[R]) {
  GlobalTensor<T, static_cast<int>(R)> v{base, {}, {}};
  for (size_t d = 0; d < R; ++d) v.dims[d] = dims[d], v.strides[d] = strides[d];
  return v;
}

// The block of `block` elements whose first element is at `coords` (one per view
// dimension). A block of lower rank than the view covers its innermost dimensions (one
// element of each outer one), so a [batch, rows, cols] view gives [rows, cols] tiles.
template <class T, int R, size_t RB>
Tile<std::remove_const_t<T>, static_cast<int>(RB)> load(const GlobalTensor<T, R>& view,
                                                        const ViewIndex (&coords)[static_cast<size_t>(R)],
                                                        const int64_t (&block)[RB], Cache cache = Cache::Normal,
                                                        TF_HERE) {
  static_assert(RB >= 1 && RB <= static_cast<size_t>(R), "load(view): give 1 to R block sizes");
  ir::Builder& b = detail::builder("load", loc);
  std::vector<ir::Value*> dims, strides, at;
  for (int d = 0; d < R; ++d) {
    dims.push_back(view.dims[d].get(b));
    strides.push_back(view.strides[d].get(b));
    at.push_back(coords[d].get(b, DType::i32));  // block coordinates are 32-bit, like program ids
  }
  return Tile<std::remove_const_t<T>, static_cast<int>(RB)>(
      b.load_view(view.base.value, dims, strides, at, detail::to_shape(block), detail::to_evict(cache)));
}

// Writes `value` as the block whose first element is at `coords`; the block is value's
// shape (lower rank than the view: its innermost dimensions, as for load). Elements
// outside [0, dim) are left alone.
template <class T, int R, class V, int RB>
void store(const GlobalTensor<T, R>& view, const ViewIndex (&coords)[static_cast<size_t>(R)], const Tile<V, RB>& value,
           Cache cache = Cache::Normal, TF_HERE) {
  static_assert(!std::is_const_v<T>, "store(view): the view's pointer is const (Ptr<const T>); pass a Ptr<T>");
  static_assert(RB >= 1 && RB <= R, "store(view): the tile's rank must be 1 to the view's rank");
  ir::Builder& b = detail::builder("store", loc);
  std::vector<ir::Value*> dims, strides, at;
  for (int d = 0; d < R; ++d) {
    dims.push_back(view.dims[d].get(b));
    strides.push_back(view.strides[d].get(b));
    at.push_back(coords[d].get(b, DType::i32));
  }
  b.store_view(view.base.value, dims, strides, at, value.value, detail::to_evict(cache));
}

}  // namespace tilefuse
