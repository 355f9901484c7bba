#pragma once
// IR types: a scalar or tile (shape x element), where the element is a DType or a
// pointer to a DType in global memory.
#include <cstdint>
#include <string>
#include <vector>

#include "tilefuse/ir/dtype.hpp"

namespace tilefuse::ir {

using Shape = std::vector<int64_t>;

struct Type {
  DType dtype = DType::f32;  // element type; for pointers, the pointee type
  bool is_ptr = false;       // element is a global pointer to `dtype`
  Shape shape;               // empty: scalar

  static Type scalar(DType d) { return Type{d, false, {}}; }
  static Type pointer(DType pointee) { return Type{pointee, true, {}}; }
  static Type tile(DType d, Shape s) { return Type{d, false, std::move(s)}; }

  bool is_scalar() const { return shape.empty(); }
  bool is_tile() const { return !shape.empty(); }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;
  // Same element (dtype + pointer-ness), new shape.
  Type with_shape(Shape s) const { return Type{dtype, is_ptr, std::move(s)}; }
  Type with_dtype(DType d) const { return Type{d, false, shape}; }
  Type element() const { return Type{dtype, is_ptr, {}}; }

  bool operator==(const Type& o) const { return dtype == o.dtype && is_ptr == o.is_ptr && shape == o.shape; }
  bool operator!=(const Type& o) const { return !(*this == o); }
  // "f32", "ptr<bf16>", "tile<128x64xf32>", "tile<128xptr<f16>>"
  std::string str() const;
};

std::string shape_str(const Shape& s);  // "[128, 64]"
bool is_pow2(int64_t v);

}  // namespace tilefuse::ir
