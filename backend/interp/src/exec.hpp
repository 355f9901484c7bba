#pragma once
// Internal state of one interpreter run: the storage of every SSA value, the host
// buffers behind pointer parameters, and the program id being executed.
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "tilefuse/ir/ir.hpp"

namespace tilefuse::interp::detail {

// Storage of one SSA value (a scalar is a tile of one element), in row-major order.
// Which vectors are used depends on the value's type:
//   float dtypes: `f` (each element exactly representable in its dtype)
//   int dtypes and i1: `i` (normalized: sign-extended for signed, zero-extended for
//                     unsigned, 0/1 for i1)
//   pointers: `i` holds the element offset and `buf` the buffer (parameter) index.
// Slots are reused from program to program, so after the first program no op
// allocates: resize() stays within capacity.
struct Slot {
  std::vector<double> f;
  std::vector<int64_t> i;
  std::vector<int32_t> buf;
};

enum class Kind : uint8_t { Float, Int, Ptr };
inline Kind kind_of(const ir::Type& t) {
  return t.is_ptr ? Kind::Ptr : is_float(t.dtype) ? Kind::Float : Kind::Int;
}

// A host buffer a pointer parameter refers to.
struct Buffer {
  std::string name;  // parameter name
  unsigned char* base = nullptr;
  int64_t n = 0;  // elements
  DType dtype = DType::f32;
  bool read_only = false;
};

class ClusterSync;

struct Exec {
  const ir::Function& fn;
  std::vector<Slot> slots;      // indexed by Value::id
  std::vector<Buffer> buffers;  // indexed by pointer-parameter position
  std::array<int64_t, 3> pid{0, 0, 0};
  std::array<int64_t, 3> nprog{1, 1, 1};
  ClusterSync* cluster = nullptr;  // the exchange of this program's cluster (null: no clusters)
  std::unique_lock<std::mutex>* cluster_turn = nullptr;  // held while this program executes
  int cluster_rank = 0;
  // Scratch space for ops that need temporaries (reused across ops).
  std::vector<double> scratch_f;
  std::vector<int64_t> scratch_i;
  std::vector<float> scratch_a, scratch_b;

  explicit Exec(const ir::Function& f) : fn(f), slots(f.num_values()) {}

  Slot& at(const ir::Value* v) { return slots[v->id]; }
  // "kernel 'name' at program id (x, y, z)"
  std::string where() const;
  // Throws UserError "<what> in kernel 'k' at program id (...) (at file:line). <fix>".
  [[noreturn]] void fail(const ir::Op& op, const std::string& what, const std::string& fix) const;
};

// Resizes `s` for `n` elements of kind `k` (only the vectors that kind uses).
inline void resize(Slot& s, Kind k, int64_t n) {
  if (k == Kind::Float) {
    s.f.resize(n);
  } else {
    s.i.resize(n);
    if (k == Kind::Ptr) s.buf.resize(n);
  }
}
// dst = src for a value of kind `k` (copies within capacity).
inline void copy_slot(Slot& dst, const Slot& src, Kind k) {
  if (k == Kind::Float) {
    dst.f.assign(src.f.begin(), src.f.end());
  } else {
    dst.i.assign(src.i.begin(), src.i.end());
    if (k == Kind::Ptr) dst.buf.assign(src.buf.begin(), src.buf.end());
  }
}
// dst[0] = src[idx] for a value of kind `k` (a scalar slot).
inline void set_scalar(Slot& dst, const Slot& src, int64_t idx, Kind k) {
  resize(dst, k, 1);
  if (k == Kind::Float) {
    dst.f[0] = src.f[idx];
  } else {
    dst.i[0] = src.i[idx];
    if (k == Kind::Ptr) dst.buf[0] = src.buf[idx];
  }
}

// Op families; each lives in its own source file.
void exec_block(Exec& ex, const ir::Block& b);  // control.cpp: every op but the terminator
void exec_index_op(Exec& ex, const ir::Op& op);  // shape.cpp: ProgramId..Trans
void exec_elementwise(Exec& ex, const ir::Op& op);  // elementwise.cpp: Binary, Unary, Compare, Select, Fma
void exec_cast(Exec& ex, const ir::Op& op);         // cast.cpp
void exec_memory(Exec& ex, const ir::Op& op);       // memory.cpp: AddPtr, Load, Store, atomics
void exec_reduce(Exec& ex, const ir::Op& op);       // reduce.cpp: Reduce, Scan
void exec_dot(Exec& ex, const ir::Op& op);          // dot.cpp
void exec_cluster_reduce(Exec& ex, const ir::Op& op);  // cluster.cpp
// Runs every cluster of the grid, one thread per program of a cluster; programs[r] is
// the bound state of rank r (cluster.cpp).
void run_clusters(std::vector<Exec>& programs, const std::array<int64_t, 3>& grid);

}  // namespace tilefuse::interp::detail
