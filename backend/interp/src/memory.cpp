// Pointer arithmetic and memory ops: add_ptr, load, store, atomic_rmw, atomic_cas.
// Every active lane is bounds-checked against the buffer its pointer derives from;
// masked-off lanes never touch memory.
#include <cmath>
#include <cstring>

#include "element_io.hpp"
#include "exec.hpp"
#include "float_kernels.hpp"

namespace tilefuse::interp::detail {
namespace {

std::string op_label(const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::Load: return "load";
    case ir::OpKind::Store: return "store";
    case ir::OpKind::AtomicRMW: return std::string("atomic_") + ir::name(op.atomic());
    default: return "atomic_cas";
  }
}

[[noreturn]] void out_of_bounds(const Exec& ex, const ir::Op& op, const Buffer& b, int64_t index, int64_t lane) {
  std::string what = "out-of-bounds " + op_label(op) + " in kernel '" + ex.fn.name + "': element index " +
                     std::to_string(index) + " of buffer '" + b.name + "' (" + std::to_string(b.n) +
                     " elements of " + name(b.dtype) + ") at program id (" + std::to_string(ex.pid[0]) + ", " +
                     std::to_string(ex.pid[1]) + ", " + std::to_string(ex.pid[2]) + "), lane " + std::to_string(lane);
  user_error(what, op.loc, "Mask the access (e.g. mask = offs < n) or check the grid");
}

// The address of lane k's element after checking it (and, for writes, that the
// buffer may be written).
inline unsigned char* address(const Exec& ex, const ir::Op& op, const Slot& ptr, int64_t k, bool write) {
  int32_t bi = ptr.buf[k];
  TF_ASSERT(bi >= 0 && bi < static_cast<int32_t>(ex.buffers.size()), "pointer without a buffer");
  const Buffer& b = ex.buffers[bi];
  int64_t off = ptr.i[k];
  if (static_cast<uint64_t>(off) >= static_cast<uint64_t>(b.n)) out_of_bounds(ex, op, b, off, k);
  if (write && b.read_only)
    ex.fail(op, op_label(op) + " through read-only parameter '" + b.name + "' (Ptr<const " + name(b.dtype) + ">)",
            "Declare the parameter without const if the kernel writes through it");
  return b.base + off * byte_size(b.dtype);
}

// A lane the load declares readable though masked off: the GPU may read it (a whole run
// of 16 bytes), so it must lie inside its buffer; its value is not used.
void check_readable(const Exec& ex, const ir::Op& op, const Slot& ptr, int64_t k) {
  int32_t bi = ptr.buf[k];
  TF_ASSERT(bi >= 0 && bi < static_cast<int32_t>(ex.buffers.size()), "pointer without a buffer");
  const Buffer& b = ex.buffers[bi];
  int64_t off = ptr.i[k];
  if (static_cast<uint64_t>(off) < static_cast<uint64_t>(b.n)) return;
  user_error("load in kernel '" + ex.fn.name + "' declares element index " + std::to_string(off) + " of buffer '" +
                 b.name + "' (" + std::to_string(b.n) + " elements of " + name(b.dtype) +
                 ") readable, but it lies outside the buffer (program id (" + std::to_string(ex.pid[0]) + ", " +
                 std::to_string(ex.pid[1]) + ", " + std::to_string(ex.pid[2]) + "), lane " + std::to_string(k) + ")",
             op.loc, "Declare readable only lanes inside the buffer: the GPU may read them");
}

void exec_load(Exec& ex, const ir::Op& op, int64_t n) {
  const Slot& ptr = ex.at(op.operand(0));
  const int64_t* mask = op.mask() ? ex.at(op.mask()).i.data() : nullptr;
  if (op.readable()) {
    const int64_t* readable = ex.at(op.readable()).i.data();
    for (int64_t k = 0; k < n; ++k)
      if (readable[k] && !(mask && mask[k])) check_readable(ex, op, ptr, k);
  }
  const Slot* other = op.other() ? &ex.at(op.other()) : nullptr;
  Slot& out = ex.at(op.result());
  with_dtype(op.result()->type.dtype, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    if constexpr (is_float(D)) {
      out.f.resize(n);
      for (int64_t k = 0; k < n; ++k)
        out.f[k] = !mask || mask[k] ? read_float<D>(address(ex, op, ptr, k, false)) : other ? other->f[k] : 0.0;
    } else {
      out.i.resize(n);
      for (int64_t k = 0; k < n; ++k)
        out.i[k] = !mask || mask[k] ? read_int<D>(address(ex, op, ptr, k, false)) : other ? other->i[k] : 0;
    }
  });
}

void exec_store(Exec& ex, const ir::Op& op, int64_t n) {
  const Slot& ptr = ex.at(op.operand(0));
  const Slot& val = ex.at(op.operand(1));
  const int64_t* mask = op.mask() ? ex.at(op.mask()).i.data() : nullptr;
  with_dtype(op.operand(1)->type.dtype, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    for (int64_t k = 0; k < n; ++k) {
      if (mask && !mask[k]) continue;
      unsigned char* p = address(ex, op, ptr, k, true);
      if constexpr (is_float(D)) write_float<D>(p, val.f[k]);
      else write_int<D>(p, val.i[k]);
    }
  });
}

template <class T>
T rmw(ir::AtomicOp a, T old, T v, DType d) {
  switch (a) {
    case ir::AtomicOp::Add:
      if constexpr (std::is_same_v<T, double>) return round_to(old + v, d);
      else return wrap_int(static_cast<int64_t>(uint64_t(old) + uint64_t(v)), d);
    case ir::AtomicOp::Max:
      if constexpr (std::is_same_v<T, double>) return max_nan(old, v);
      else return old > v ? old : v;
    case ir::AtomicOp::Min:
      if constexpr (std::is_same_v<T, double>) return min_nan(old, v);
      else return old < v ? old : v;
    case ir::AtomicOp::Xchg: return v;
    case ir::AtomicOp::WaitAtLeast: return old;  // checked by exec_atomic_rmw
    case ir::AtomicOp::Read: return old;
  }
  return v;
}

// Lanes run one after another in index order, which makes every update atomic.
void exec_atomic_rmw(Exec& ex, const ir::Op& op, int64_t n) {
  const Slot& ptr = ex.at(op.operand(0));
  const Slot& val = ex.at(op.operand(1));
  const int64_t* mask = op.mask() ? ex.at(op.mask()).i.data() : nullptr;
  Slot& out = ex.at(op.result());
  const ir::AtomicOp a = op.atomic();
  with_dtype(op.result()->type.dtype, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    if constexpr (is_float(D)) {
      out.f.resize(n);
      for (int64_t k = 0; k < n; ++k) {
        if (mask && !mask[k]) { out.f[k] = 0; continue; }
        unsigned char* p = address(ex, op, ptr, k, true);
        double old = read_float<D>(p);
        write_float<D>(p, rmw(a, old, val.f[k], D));
        out.f[k] = old;
      }
    } else {
      out.i.resize(n);
      for (int64_t k = 0; k < n; ++k) {
        if (mask && !mask[k]) { out.i[k] = 0; continue; }
        unsigned char* p = address(ex, op, ptr, k, true);
        int64_t old = read_int<D>(p);
        if (a == ir::AtomicOp::WaitAtLeast && old < val.i[k])
          throw UserError("wait_at_least (at " + op.loc.str() + ") in kernel '" + ex.fn.name + "': program (" +
                          std::to_string(ex.pid[0]) + ", " + std::to_string(ex.pid[1]) + ", " +
                          std::to_string(ex.pid[2]) + ") waits for a counter to reach " + std::to_string(val.i[k]) +
                          ", but the programs before it left it at " + std::to_string(old) +
                          ". Programs run in order (x fastest, then y, z) and may wait only for programs before "
                          "them: such a wait would never end on the GPU");
        write_int<D>(p, rmw(a, old, val.i[k], D));
        out.i[k] = old;
      }
    }
  });
}

// Compares the element's bytes with `cmp` (bitwise, like the hardware) and writes
// `value` on equality; returns the old value.
void exec_atomic_cas(Exec& ex, const ir::Op& op, int64_t n) {
  const Slot& ptr = ex.at(op.operand(0));
  const Slot& cmp = ex.at(op.operand(1));
  const Slot& val = ex.at(op.operand(2));
  Slot& out = ex.at(op.result());
  with_dtype(op.result()->type.dtype, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    constexpr int size = byte_size(D);
    unsigned char expect[8];
    if constexpr (is_float(D)) out.f.resize(n);
    else out.i.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      unsigned char* p = address(ex, op, ptr, k, true);
      if constexpr (is_float(D)) {
        out.f[k] = read_float<D>(p);
        write_float<D>(expect, cmp.f[k]);
        if (std::memcmp(expect, p, size) == 0) write_float<D>(p, val.f[k]);
      } else {
        out.i[k] = read_int<D>(p);
        write_int<D>(expect, cmp.i[k]);
        if (std::memcmp(expect, p, size) == 0) write_int<D>(p, val.i[k]);
      }
    }
  });
}

}  // namespace

void exec_memory(Exec& ex, const ir::Op& op) {
  using ir::OpKind;
  const int64_t n = op.operand(0)->type.numel();
  // A view load's description (operands 3..) only informs GPU copies: its pointers and
  // mask already say what it reads.
  const size_t data_operands = op.view_rank ? 3 : op.operands.size();
  for (size_t i = 0; i < data_operands; ++i)
    TF_ASSERT(op.operands[i]->type.numel() == n, std::string(ir::name(op.kind)) + " operand shapes differ");
  switch (op.kind) {
    case OpKind::AddPtr: {
      const Slot& p = ex.at(op.operand(0));
      const Slot& off = ex.at(op.operand(1));
      Slot& out = ex.at(op.result());
      resize(out, Kind::Ptr, n);
      for (int64_t k = 0; k < n; ++k) out.i[k] = static_cast<int64_t>(uint64_t(p.i[k]) + uint64_t(off.i[k]));
      std::memcpy(out.buf.data(), p.buf.data(), n * sizeof(int32_t));
      return;
    }
    case OpKind::AlignPtr: {
      // The pointer's real address decides (the GPU's does there), so a row rounded
      // down here starts on the same boundary as in memory.
      const Slot& p = ex.at(op.operand(0));
      int32_t bi = p.buf[0];
      TF_ASSERT(bi >= 0 && bi < static_cast<int32_t>(ex.buffers.size()), "pointer without a buffer");
      const Buffer& b = ex.buffers[bi];
      int64_t es = byte_size(b.dtype);
      auto addr = reinterpret_cast<uintptr_t>(b.base) + static_cast<uintptr_t>(p.i[0] * es);
      int64_t dropped = static_cast<int64_t>(addr % static_cast<uintptr_t>(op.ival)) / es;
      Slot& out = ex.at(op.result());
      if (op.code) {
        resize(out, Kind::Int, 1);
        out.i[0] = dropped;
      } else {
        resize(out, Kind::Ptr, 1);
        out.i[0] = p.i[0] - dropped;
        out.buf[0] = bi;
      }
      return;
    }
    case OpKind::Load: return exec_load(ex, op, n);
    case OpKind::Store: return exec_store(ex, op, n);
    case OpKind::AtomicRMW: return exec_atomic_rmw(ex, op, n);
    case OpKind::AtomicCas: return exec_atomic_cas(ex, op, n);
    default: internal_error(std::string("exec_memory: unexpected op ") + ir::name(op.kind));
  }
}

}  // namespace tilefuse::interp::detail
