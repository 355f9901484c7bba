// Index and shape ops: program_id, num_programs, constants, arange, splat, broadcast,
// expand_dims, reshape, trans.
#include <algorithm>
#include <array>

#include "exec.hpp"
#include "numeric.hpp"

namespace tilefuse::interp::detail {
namespace {

constexpr int kMaxRank = 16;

// out[k] = in[offset of k], where the offset of the out position (j0, ..., jr-1) is
// sum_d j_d * strides[d]: one routine for broadcast (stride 0) and trans (permuted).
template <class T>
void gather(const T* in, T* out, const ir::Shape& shape, const std::array<int64_t, kMaxRank>& strides) {
  int r = static_cast<int>(shape.size());
  if (r == 0) {
    out[0] = in[0];
    return;
  }
  int64_t inner = shape[r - 1], is = strides[r - 1];
  int64_t outer = 1;
  for (int d = 0; d + 1 < r; ++d) outer *= shape[d];
  std::array<int64_t, kMaxRank> ctr{};
  int64_t base = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T* src = in + base;
    if (is == 1) {
      for (int64_t j = 0; j < inner; ++j) out[j] = src[j];
    } else {
      for (int64_t j = 0; j < inner; ++j) out[j] = src[j * is];
    }
    out += inner;
    for (int d = r - 2; d >= 0; --d) {
      base += strides[d];
      if (++ctr[d] < shape[d]) break;
      base -= strides[d] * shape[d];
      ctr[d] = 0;
    }
  }
}

void gather_slot(Slot& dst, const Slot& src, Kind k, const ir::Shape& shape,
                 const std::array<int64_t, kMaxRank>& strides) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  resize(dst, k, n);
  if (k == Kind::Float) {
    gather(src.f.data(), dst.f.data(), shape, strides);
  } else {
    gather(src.i.data(), dst.i.data(), shape, strides);
    if (k == Kind::Ptr) gather(src.buf.data(), dst.buf.data(), shape, strides);
  }
}

std::array<int64_t, kMaxRank> row_major_strides(const ir::Shape& s) {
  std::array<int64_t, kMaxRank> st{};
  int64_t acc = 1;
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= s[d];
  }
  return st;
}

void check_rank(Exec& ex, const ir::Op& op, const ir::Type& t) {
  if (t.rank() > kMaxRank)
    ex.fail(op, "a tile of rank " + std::to_string(t.rank()) + " (" + t.str() + ")",
            "The interpreter supports tiles of rank up to 16; reshape to fewer dimensions");
}

}  // namespace

void exec_index_op(Exec& ex, const ir::Op& op) {
  using ir::OpKind;
  const ir::Value* res = op.result();
  Slot& out = ex.at(res);
  Kind k = kind_of(res->type);
  int64_t n = res->type.numel();
  switch (op.kind) {
    case OpKind::ProgramId:
    case OpKind::NumPrograms: {
      TF_ASSERT(op.axis >= 0 && op.axis < 3, "program axis out of range");
      resize(out, Kind::Int, 1);
      out.i[0] = op.kind == OpKind::ProgramId ? ex.pid[op.axis] : ex.nprog[op.axis];
      return;
    }
    case OpKind::Constant: {
      TF_ASSERT(k != Kind::Ptr, "pointer constant");
      resize(out, k, n);
      if (k == Kind::Float) {
        double v = round_to(op.fval, res->type.dtype);
        std::fill(out.f.begin(), out.f.end(), v);
      } else {
        std::fill(out.i.begin(), out.i.end(), int_to_int(op.ival, res->type.dtype));
      }
      return;
    }
    case OpKind::Arange: {
      TF_ASSERT(n == op.end - op.start, "arange size does not match its type");
      resize(out, Kind::Int, n);
      for (int64_t j = 0; j < n; ++j) out.i[j] = wrap_int(op.start + j, res->type.dtype);
      return;
    }
    case OpKind::Splat: {
      const Slot& in = ex.at(op.operand(0));
      resize(out, k, n);
      if (k == Kind::Float) {
        std::fill(out.f.begin(), out.f.end(), in.f[0]);
      } else {
        std::fill(out.i.begin(), out.i.end(), in.i[0]);
        if (k == Kind::Ptr) std::fill(out.buf.begin(), out.buf.end(), in.buf[0]);
      }
      return;
    }
    case OpKind::ExpandDims:
    case OpKind::Reshape: {  // row-major data is unchanged
      TF_ASSERT(op.operand(0)->type.numel() == n, "reshape changes the number of elements");
      copy_slot(out, ex.at(op.operand(0)), k);
      return;
    }
    case OpKind::Broadcast: {
      const ir::Type& it = op.operand(0)->type;
      check_rank(ex, op, res->type);
      TF_ASSERT(it.rank() == res->type.rank(), "broadcast changes the rank");
      auto st = row_major_strides(it.shape);
      for (int d = 0; d < it.rank(); ++d) {
        TF_ASSERT(it.shape[d] == res->type.shape[d] || it.shape[d] == 1, "broadcast of a non-unit dimension");
        if (it.shape[d] == 1) st[d] = 0;
      }
      gather_slot(out, ex.at(op.operand(0)), k, res->type.shape, st);
      return;
    }
    case OpKind::Trans: {
      const ir::Type& it = op.operand(0)->type;
      check_rank(ex, op, res->type);
      TF_ASSERT(static_cast<int>(op.perm.size()) == it.rank(), "trans permutation has the wrong length");
      auto in_st = row_major_strides(it.shape);
      std::array<int64_t, kMaxRank> st{};
      for (int d = 0; d < it.rank(); ++d) st[d] = in_st[op.perm[d]];
      gather_slot(out, ex.at(op.operand(0)), k, res->type.shape, st);
      return;
    }
    default: internal_error(std::string("exec_index_op: unexpected op ") + ir::name(op.kind));
  }
}

}  // namespace tilefuse::interp::detail
