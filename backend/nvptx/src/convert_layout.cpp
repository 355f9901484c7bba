// Layout conversion: free when equal, a register renaming when every thread already
// holds what it needs, otherwise a round trip through shared memory.
#include <optional>
#include <unordered_map>

#include "codegen.hpp"
#include "passes.hpp"
#include "tilefuse/nvptx/shared_encoding.hpp"

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

Regs Codegen::smem_load_tile(const LinearLayout& to, int byte_offset, llvm::Type* ty, llvm::Value* dyn_base) {
  int es = elem_bytes_of(ty);
  bool is_bool = ty->isIntegerTy(1);
  llvm::Type* st = is_bool ? b.getInt8Ty() : ty;
  int vec = flat_vector_width(to, es, !ty->isPointerTy());
  Regs flat = flat_indices(to);
  Regs out(to.num_regs());
  for (int r = 0; r < to.num_regs(); r += vec) {
    llvm::Value* off = b.CreateMul(flat[r], c32(es), "", true, true);
    if (dyn_base) off = b.CreateAdd(off, dyn_base, "", true, true);
    llvm::Value* addr = smem_addr(byte_offset, off);
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

namespace {

// ldmatrix (sm_75+) loads whole 8x8 matrices of 16-bit elements, 16-byte rows at
// addresses the lanes supply, into the fragment layout of mma.sync. It applies when `e`
// (the target layout with bases as shared-memory element offsets) has the pattern:
//   plain: register bit 0 = the next element, lanes 0-1 = the next 32-bit words of a
//          row, lanes 2-4 = rows (anywhere, 16-byte aligned);
//   trans: register bit 0 and lanes 0-1 = rows, lanes 2-4 = the next elements of a row
//          (each thread receives a column pair: the operand stored the other way).
// Register bits 1-2 then pick up to 4 matrices per instruction; all other bases must
// keep rows 16-byte aligned.
struct Ldmatrix {
  bool trans = false;
  int mats = 0;                  // matrices per instruction: 1, 2 or 4
  std::vector<uint32_t> lane_map;  // supplying lane bits -> offset (row bits, then matrix bits)
};

std::optional<Ldmatrix> ldmatrix_plan(const LinearLayout& e) {
  const auto& r = e.regs();
  const auto& l = e.lanes();
  if (r.empty() || l.size() != 5) return std::nullopt;
  auto aligned = [](uint32_t x) { return (x & 7) == 0; };
  Ldmatrix p;
  std::vector<uint32_t> rows;
  if (r[0] == 1 && l[0] == 2 && l[1] == 4) {
    rows = {l[2], l[3], l[4]};
  } else if (l[2] == 1 && l[3] == 2 && l[4] == 4) {
    p.trans = true;
    rows = {r[0], l[0], l[1]};
  } else {
    return std::nullopt;
  }
  for (uint32_t x : rows)
    if (!aligned(x)) return std::nullopt;
  for (size_t i = 1; i < r.size(); ++i)
    if (!aligned(r[i])) return std::nullopt;
  for (uint32_t x : e.warps())
    if (!aligned(x)) return std::nullopt;
  p.mats = static_cast<int>(std::min<size_t>(4, size_t{1} << (r.size() - 1)));
  p.lane_map = rows;
  for (int i = 0; (2 << i) <= p.mats; ++i) p.lane_map.push_back(r[1 + i]);  // lanes 8-31 pick the matrix
  p.lane_map.resize(5, 0);
  return p;
}

Regs load_ldmatrix(Codegen& cg, const LinearLayout& e, const Ldmatrix& p, int byte_offset, llvm::Type* ty,
                   llvm::Value* dyn_base) {
  auto& b = cg.b;
  llvm::Value* thread;
  {
    uint32_t lb = 0, wb = 0;
    for (uint32_t x : p.lane_map) lb |= x;
    for (uint32_t x : e.warps()) wb |= x;
    llvm::Value* a = cg.linear_map(cg.lane(), p.lane_map);
    llvm::Value* w = cg.linear_map(cg.warp(), e.warps());
    thread = (lb & wb) ? b.CreateXor(a, w) : b.CreateOr(a, w);
  }
  uint32_t tb = 0;
  for (uint32_t x : p.lane_map) tb |= x;
  for (uint32_t x : e.warps()) tb |= x;
  int group_bits = 1 + log2_exact(p.mats);
  std::string regs_list, cons;
  for (int i = 0; i < p.mats; ++i) {
    regs_list += (i ? ",$" : "$") + std::to_string(i);
    cons += "=r,";
  }
  std::string text = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(p.mats) + (p.trans ? ".trans" : "") +
                     ".shared.b16 {" + regs_list + "}, [$" + std::to_string(p.mats) + "+";
  std::vector<llvm::Type*> outs(p.mats, cg.i32());
  llvm::Type* ret = p.mats == 1 ? cg.i32() : static_cast<llvm::Type*>(llvm::StructType::get(cg.ctx, outs));
  auto* pair = llvm::FixedVectorType::get(ty, 2);
  Regs out(e.num_regs());
  for (int g = 0; g < e.num_regs(); g += 1 << group_bits) {
    // offset = thread ^ reg part: the reg bits the thread part may have are xor-ed into
    // a base (few distinct ones), the others go into the instruction's immediate.
    uint32_t rp = e.reg_part(g), lo = rp & tb, hi = rp & ~tb;
    llvm::Value* off = lo ? b.CreateXor(thread, cg.c32(lo)) : thread;
    off = b.CreateShl(off, 1);
    if (dyn_base) off = b.CreateAdd(off, dyn_base, "", true, true);
    llvm::Value* addr = cg.shared_addr32(cg.smem_addr(0, off));
    std::string imm = std::to_string(byte_offset + 2 * static_cast<int64_t>(hi)) + "];";
    // Side effects: it reads shared memory written before a barrier, so it must stay after it.
    llvm::Value* v = cg.inline_asm(ret, text + imm, cons + "r,~{memory}", {addr}, true);
    for (int i = 0; i < p.mats; ++i) {
      llvm::Value* w = p.mats == 1 ? v : b.CreateExtractValue(v, i);
      llvm::Value* h = b.CreateBitCast(w, pair);
      out[g | (i << 1)] = b.CreateExtractElement(h, uint64_t{0});
      out[g | (i << 1) | 1] = b.CreateExtractElement(h, uint64_t{1});
    }
  }
  return out;
}

// The shared-memory encoding of a conversion out of layout `from`: rank-2 tiles stored
// along the dimension `from` writes contiguously, swizzled.
SharedEncoding conversion_encoding(const LinearLayout& from, llvm::Type* ty) {
  if (from.rank() != 2 || ty->isPointerTy() || ty->isIntegerTy(1)) return identity_encoding(from.shape());
  return swizzled_encoding(from.shape(), contiguous_dim(from), elem_bytes_of(ty));
}

}  // namespace

const Codegen::Hoisted* Codegen::find_hoisted(const ir::Value* v, const LinearLayout& l) const {
  for (auto& h : hoisted_)
    if (h.v == v && h.layout == l) return &h;
  return nullptr;
}

Regs Codegen::smem_read_encoded(const SharedEncoding& enc, const LinearLayout& to, int byte_offset, llvm::Type* ty,
                                llvm::Value* dyn_base) {
  LinearLayout e = enc.apply(to);
  if (elem_bytes_of(ty) == 2 && ty->isFloatingPointTy())
    if (auto p = ldmatrix_plan(e)) return load_ldmatrix(*this, e, *p, byte_offset, ty, dyn_base);
  return smem_load_tile(e, byte_offset, ty, dyn_base);
}

std::function<Regs()> Codegen::stage(const ir::Value* v, const LinearLayout& d, int smem_offset, bool& wrote) {
  if (const Hoisted* h = find_hoisted(v, d)) return [r = h->regs] { return r; };
  if (v->def && plan.op(v->def).async_copy && !plan.op(v->def).staged) {
    // Already in shared memory (cp.async); the dot waited for the copy and synchronized.
    SharedEncoding enc = async_encoding(plan, v->def);
    llvm::Value* base = async_base.at(v->def);
    llvm::Type* ty = elem_type(v->type);
    return [this, enc, d, base, ty] { return smem_read_encoded(enc, d, 0, ty, base); };
  }
  const LinearLayout& a = plan.layout(v)->ll;
  if (is_rematerializable(v)) {
    Regs r = a == d ? regs(v) : rematerialize(*this, v, d);
    return [r] { return r; };
  }
  bool lazy = plan.lazy.count(v) != 0;
  if (!lazy && a == d) return [this, v] { return regs(v); };
  TF_ASSERT(a.shape() == d.shape(), "conversion between different shapes");
  if (!lazy && register_only(a, d)) {
    const Regs& src = regs(v);
    std::unordered_map<uint32_t, int> where;
    for (int r = a.num_regs() - 1; r >= 0; --r) where[a.reg_part(r)] = r;
    Regs out;
    for (int r = 0; r < d.num_regs(); ++r) out.push_back(src[where.at(d.reg_part(r))]);
    return [out] { return out; };
  }
  if (v->def && is_elementwise(v->def->kind) && cheap_to_recompute(v)) {
    // Masks and index tiles: recomputed from their (cheap) operands in the new layout.
    std::vector<Regs> in;
    for (const ir::Value* x : v->def->operands) in.push_back(x->type.is_scalar() ? regs(x) : in_layout(x, d, smem_offset));
    Regs out = elementwise_regs(*this, *v->def, in);
    return [out] { return out; };
  }
  if (v->def && is_view_op(v->def->kind)) {
    // Convert the (smaller) operand instead and relabel again.
    const ir::Op& op = *v->def;
    LinearLayout need = view_source_layout(op, d);
    const ir::Value* x = op.operand(0);
    if (x->type.is_scalar()) {
      Regs xs(need.num_regs(), scalar(x));
      Regs out = view_regs(*this, op, xs, need, d);
      return [out] { return out; };
    }
    auto inner = stage(x, need, smem_offset, wrote);
    return [this, &op, inner, need, d] { return view_regs(*this, op, inner(), need, d); };
  }
  const Regs& src = regs(v);
  llvm::Type* ty = elem_type(v->type);
  SharedEncoding enc = conversion_encoding(a, ty);
  smem_before_write();
  smem_store_tile(src, enc.apply(a), smem_offset, ty);
  wrote = true;
  return [this, enc, d, smem_offset, ty] { return smem_read_encoded(enc, d, smem_offset, ty); };
}

Regs Codegen::in_layout(const ir::Value* v, const LinearLayout& d, int smem_offset) {
  bool wrote = false;
  auto read = stage(v, d, smem_offset, wrote);
  if (wrote) smem_after_write();
  Regs out = read();
  if (wrote) smem_after_read();
  return out;
}

}  // namespace tilefuse::nvptx
