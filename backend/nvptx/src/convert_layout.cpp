// Layout conversion: free when equal, a register renaming when every thread already
// holds what it needs, otherwise a round trip through shared memory.
#include <unordered_map>

#include "codegen.hpp"

namespace tilefuse::nvptx {

namespace {

// Consecutive registers that hold consecutive flat elements at aligned addresses:
// 2^k where reg bases 0..k-1 are 1, 2, 4, ... and no other basis touches those bits.
int flat_vector_width(const LinearLayout& l, int elem_bytes, bool allow) {
  if (!allow) return 1;
  int k = 0;
  auto& regs = l.regs();
  while (k < static_cast<int>(regs.size()) && regs[k] == (1u << k) && (elem_bytes << (k + 1)) <= 16) ++k;
  uint32_t low = (1u << k) - 1;
  auto clean = [&](const std::vector<uint32_t>& bs, size_t from) {
    for (size_t i = from; i < bs.size(); ++i)
      if (bs[i] & low) return false;
    return true;
  };
  while (k > 0 && !(clean(regs, k) && clean(l.lanes(), 0) && clean(l.warps(), 0))) {
    --k;
    low = (1u << k) - 1;
  }
  return 1 << k;
}

int elem_bytes_of(llvm::Type* ty) {
  if (ty->isPointerTy()) return 8;
  if (ty->isIntegerTy(1)) return 1;
  return static_cast<int>(ty->getPrimitiveSizeInBits() / 8);
}

}  // namespace

void Codegen::smem_store_tile(const Regs& vals, const LinearLayout& l, int byte_offset, llvm::Type* ty) {
  int es = elem_bytes_of(ty);
  bool is_bool = ty->isIntegerTy(1);
  llvm::Type* st = is_bool ? b.getInt8Ty() : ty;
  int vec = flat_vector_width(l, es, !ty->isPointerTy());
  auto red = l.redundancy();
  Regs flat = flat_indices(l);
  if_then(owner_predicate(l), [&] {
    for (int r = 0; r < l.num_regs(); r += vec) {
      if (r & red.reg) continue;
      llvm::Value* addr = smem_addr(byte_offset, b.CreateMul(flat[r], c32(es), "", true, true));
      auto elem = [&](int i) { return is_bool ? b.CreateZExt(vals[r + i], st) : vals[r + i]; };
      if (vec == 1) {
        b.CreateAlignedStore(elem(0), addr, llvm::Align(es));
      } else {
        llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(st, vec));
        for (int i = 0; i < vec; ++i) v = b.CreateInsertElement(v, elem(i), i);
        b.CreateAlignedStore(v, addr, llvm::Align(es * vec));
      }
    }
  });
}

Regs Codegen::smem_load_tile(const LinearLayout& to, int byte_offset, llvm::Type* ty) {
  int es = elem_bytes_of(ty);
  bool is_bool = ty->isIntegerTy(1);
  llvm::Type* st = is_bool ? b.getInt8Ty() : ty;
  int vec = flat_vector_width(to, es, !ty->isPointerTy());
  Regs flat = flat_indices(to);
  Regs out(to.num_regs());
  for (int r = 0; r < to.num_regs(); r += vec) {
    llvm::Value* addr = smem_addr(byte_offset, b.CreateMul(flat[r], c32(es), "", true, true));
    auto fix = [&](llvm::Value* v) { return is_bool ? b.CreateICmpNE(v, llvm::ConstantInt::get(st, 0)) : v; };
    if (vec == 1) {
      out[r] = fix(b.CreateAlignedLoad(st, addr, llvm::Align(es)));
    } else {
      llvm::Value* v = b.CreateAlignedLoad(llvm::FixedVectorType::get(st, vec), addr, llvm::Align(es * vec));
      for (int i = 0; i < vec; ++i) out[r + i] = fix(b.CreateExtractElement(v, i));
    }
  }
  return out;
}

Regs Codegen::in_layout(const ir::Value* v, const LinearLayout& d, int smem_offset) {
  const LinearLayout& a = plan.layout(v)->ll;
  if (is_rematerializable(v)) return a == d ? regs(v) : rematerialize(*this, v, d);
  bool lazy = plan.lazy.count(v) != 0;
  if (!lazy && a == d) return regs(v);
  TF_ASSERT(a.shape() == d.shape(), "conversion between different shapes");
  if (!lazy && register_only(a, d)) {
    const Regs& src = regs(v);
    std::unordered_map<uint32_t, int> where;
    for (int r = a.num_regs() - 1; r >= 0; --r) where[a.reg_part(r)] = r;
    Regs out;
    for (int r = 0; r < d.num_regs(); ++r) out.push_back(src[where.at(d.reg_part(r))]);
    return out;
  }
  if (v->def && is_view_op(v->def->kind)) {
    // Convert the (smaller) operand instead and relabel again.
    const ir::Op& op = *v->def;
    LinearLayout need = view_source_layout(op, d);
    const ir::Value* x = op.operand(0);
    Regs xs = x->type.is_scalar() ? Regs(need.num_regs(), scalar(x)) : in_layout(x, need, smem_offset);
    return view_regs(*this, op, xs, need, d);
  }
  const Regs& src = regs(v);
  llvm::Type* ty = elem_type(v->type);
  smem_before_write();
  smem_store_tile(src, a, smem_offset, ty);
  smem_after_write();
  Regs out = smem_load_tile(d, smem_offset, ty);
  smem_after_read();
  return out;
}

}  // namespace tilefuse::nvptx
