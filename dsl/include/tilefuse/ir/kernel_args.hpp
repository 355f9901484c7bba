#pragma once
// The argument vocabulary shared by the front end and the executors: one ArgValue per
// kernel parameter, already checked against the signature by the front end.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tilefuse/ir/dtype.hpp"

namespace tilefuse {

struct ArgValue {
  enum class Kind : uint8_t {
    HostBuffer,  // host memory the interpreter may access: [ptr, ptr + bytes)
    DevicePtr,   // a CUDA device address (GPU executor only)
    Int,         // integer scalar (i32/i64/u32/...)
    Float,       // float scalar (f32/f64)
  };
  Kind kind = Kind::Int;
  DType dtype = DType::i32;  // element type of buffers, type of scalars
  void* ptr = nullptr;       // HostBuffer: host address; DevicePtr: device address
  size_t bytes = 0;          // HostBuffer/DevicePtr: accessible size from ptr (0 = unknown for DevicePtr)
  int64_t i = 0;
  double f = 0;

  static ArgValue host(void* p, size_t bytes, DType d) { return {Kind::HostBuffer, d, p, bytes, 0, 0}; }
  static ArgValue device(void* p, size_t bytes, DType d) { return {Kind::DevicePtr, d, p, bytes, 0, 0}; }
  static ArgValue integer(int64_t v, DType d) { return {Kind::Int, d, nullptr, 0, v, 0}; }
  static ArgValue real(double v, DType d) { return {Kind::Float, d, nullptr, 0, 0, v}; }

  bool is_buffer() const { return kind == Kind::HostBuffer || kind == Kind::DevicePtr; }
};

// The divisibility fact a GPU specialization records for one argument: the largest
// power of two up to 16 dividing a device address or an integer (1 for anything else).
// Part of the compile key, like Triton's "divisible by 16" specialization, but finer,
// so that e.g. bf16 rows of 5000 elements (10000 bytes) still get 16-byte accesses.
inline int64_t specialization_divisibility(const ArgValue& a) {
  uint64_t v;
  if (a.kind == ArgValue::Kind::DevicePtr) v = reinterpret_cast<uintptr_t>(a.ptr);
  else if (a.kind == ArgValue::Kind::Int) v = static_cast<uint64_t>(a.i);
  else return 1;
  int64_t d = 1;
  while (d < 16 && v % (2 * d) == 0) d *= 2;
  return d;
}

struct Grid {
  int64_t x = 1, y = 1, z = 1;
  Grid() = default;
  Grid(int64_t x_, int64_t y_ = 1, int64_t z_ = 1) : x(x_), y(y_), z(z_) {}
  int64_t size() const { return x * y * z; }
};

}  // namespace tilefuse
