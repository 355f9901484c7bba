// Reductions along one axis: first the registers of each thread, then a butterfly of
// warp shuffles over the lanes that span the axis, then (only when warps span it) one
// exchange through shared memory. Argmax/argmin carry the index of the winning element.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <unordered_map>

#include "codegen.hpp"
#include "passes.hpp"

namespace tilefuse::nvptx {

using ir::ReduceKind;

namespace {

struct Acc {
  llvm::Value* v;
  llvm::Value* idx = nullptr;  // argmax/argmin
};

class Reducer {
 public:
  Reducer(Codegen& cg, const ir::Op& op) : cg_(cg), b_(cg.b), op_(op), kind_(op.red()) {
    dt_ = accumulate_dtype(op);
    arg_ = kind_ == ReduceKind::Argmax || kind_ == ReduceKind::Argmin;
  }

  // Steps 1 and 2: within each thread, then across the lanes of each warp.
  void within_warps() {
    const ir::Value* x = op_.operand(0);
    l_ = cg_.plan.op(&op_).operands[0]->ll;
    Regs in = cg_.operand(op_, 0);
    int axis = op_.axis;
    res_ = l_.drop_dim(axis);
    DType in_dt = x->type.dtype;

    std::unordered_map<uint32_t, int> res_reg;
    for (int j = res_.num_regs() - 1; j >= 0; --j) res_reg[res_.reg_part(j)] = j;
    std::vector<std::vector<Acc>> groups(res_.num_regs());
    auto red = l_.redundancy();
    std::vector<Regs> coords;
    if (arg_) coords = cg_.coords(l_);
    for (int r = 0; r < l_.num_regs(); ++r) {
      if (r & red.reg) continue;
      auto c = l_.coords(l_.reg_part(r));
      c.erase(c.begin() + axis);
      auto it = res_reg.find(res_.flatten(c));
      TF_ASSERT(it != res_reg.end(), "reduce: register without a result slot");
      llvm::Value* v = convert_element(cg_, in[r], in_dt, dt_);
      groups[it->second].push_back(Acc{v, arg_ ? coords[axis][r] : nullptr});
    }
    for (auto& g : groups) acc_.push_back(tree(g, 0, static_cast<int>(g.size())));

    for (size_t i = 0; i < l_.lanes().size(); ++i) {
      uint32_t base = l_.lanes()[i];
      if (l_.coord(base, axis) == 0) continue;
      TF_ASSERT(!(red.lane >> i & 1) && base == (static_cast<uint32_t>(l_.coord(base, axis)) << l_.dim_shift(axis)),
                "reduce: lane basis mixes the axis with other dimensions");
      for (auto& a : acc_) a = combine(a, shuffle(a, 1u << i));
    }
    for (size_t i = 0; i < l_.warps().size(); ++i) {
      uint32_t base = l_.warps()[i];
      if (l_.coord(base, axis) == 0) continue;
      TF_ASSERT(!(red.warp >> i & 1) && base == (static_cast<uint32_t>(l_.coord(base, axis)) << l_.dim_shift(axis)),
                "reduce: warp basis mixes the axis with other dimensions");
      warp_bits_.push_back(static_cast<int>(i));
    }
  }

  // Step 3, across warps through shared memory: write, (barrier), read.
  bool across_warps() const { return !warp_bits_.empty(); }

  void write_partials() {
    const OpPlan& p = cg_.plan.op(&op_);
    slots_ = 1 << warp_bits_.size();
    es_ = byte_size(dt_);
    idx_base_ = p.smem_offset + (static_cast<int>(res_.numel()) * slots_ * es_ + 15) / 16 * 16;
    llvm::Value* slot = cg_.c32(0);
    for (size_t k = 0; k < warp_bits_.size(); ++k) {
      llvm::Value* bit = b_.CreateAnd(b_.CreateLShr(cg_.warp(), warp_bits_[k]), 1);
      slot = b_.CreateOr(slot, b_.CreateShl(bit, static_cast<uint64_t>(k)));
    }
    uint32_t axis_lanes = 0;
    for (size_t i = 0; i < l_.lanes().size(); ++i)
      if (l_.coord(l_.lanes()[i], op_.axis) != 0) axis_lanes |= 1u << i;
    llvm::Value* writer = axis_lanes ? b_.CreateICmpEQ(b_.CreateAnd(cg_.lane(), axis_lanes), cg_.c32(0)) : nullptr;
    flat_ = cg_.flat_indices(res_);
    cg_.if_then(writer, [&] {
      for (size_t j = 0; j < acc_.size(); ++j) {
        llvm::Value* i = slot_index(static_cast<int>(j), slot);
        b_.CreateStore(acc_[j].v, cg_.smem_addr(p.smem_offset, b_.CreateMul(i, cg_.c32(es_))));
        if (arg_) b_.CreateStore(acc_[j].idx, cg_.smem_addr(idx_base_, b_.CreateMul(i, cg_.c32(4))));
      }
    });
  }

  void read_partials() {
    const OpPlan& p = cg_.plan.op(&op_);
    llvm::Type* vty = cg_.elem_type(dt_);
    std::vector<Acc> out;
    for (size_t j = 0; j < acc_.size(); ++j) {
      Acc a{nullptr};
      for (int s = 0; s < slots_; ++s) {
        llvm::Value* i = slot_index(static_cast<int>(j), cg_.c32(s));
        Acc c{b_.CreateLoad(vty, cg_.smem_addr(p.smem_offset, b_.CreateMul(i, cg_.c32(es_))))};
        if (arg_) c.idx = b_.CreateLoad(b_.getInt32Ty(), cg_.smem_addr(idx_base_, b_.CreateMul(i, cg_.c32(4))));
        a = s == 0 ? c : combine(a, c);
      }
      out.push_back(a);
    }
    acc_ = std::move(out);
  }

  void finish() {
    Regs out;
    DType out_dt = op_.result()->type.dtype;
    for (auto& a : acc_) out.push_back(arg_ ? a.idx : convert_element(cg_, a.v, dt_, out_dt));
    cg_.set(op_.result(), std::move(out));
  }

 private:
  Acc tree(std::vector<Acc>& g, int lo, int hi) {
    if (hi - lo == 1) return g[lo];
    int mid = lo + (hi - lo) / 2;
    return combine(tree(g, lo, mid), tree(g, mid, hi));
  }

  Acc combine(const Acc& a, const Acc& c) {
    switch (kind_) {
      case ReduceKind::Sum: return {binary_element(cg_, ir::BinaryOp::Add, a.v, c.v, dt_)};
      case ReduceKind::Max: return {binary_element(cg_, ir::BinaryOp::Max, a.v, c.v, dt_)};
      case ReduceKind::Min: return {binary_element(cg_, ir::BinaryOp::Min, a.v, c.v, dt_)};
      case ReduceKind::Argmax:
      case ReduceKind::Argmin: {
        bool mx = kind_ == ReduceKind::Argmax;
        llvm::Value *better, *equal;
        if (is_float(dt_)) {
          // NaN beats every number (the first NaN wins, like the interpreter).
          llvm::Value* c_nan = b_.CreateFCmpUNO(c.v, c.v);
          llvm::Value* a_nan = b_.CreateFCmpUNO(a.v, a.v);
          better = mx ? b_.CreateFCmpOGT(c.v, a.v) : b_.CreateFCmpOLT(c.v, a.v);
          better = b_.CreateOr(better, b_.CreateAnd(c_nan, b_.CreateNot(a_nan)));
          equal = b_.CreateOr(b_.CreateFCmpOEQ(c.v, a.v), b_.CreateAnd(c_nan, a_nan));
        } else {
          bool s = is_signed_int(dt_);
          better = mx ? (s ? b_.CreateICmpSGT(c.v, a.v) : b_.CreateICmpUGT(c.v, a.v))
                      : (s ? b_.CreateICmpSLT(c.v, a.v) : b_.CreateICmpULT(c.v, a.v));
          equal = b_.CreateICmpEQ(c.v, a.v);
        }
        // Ties go to the first index.
        llvm::Value* take = b_.CreateOr(better, b_.CreateAnd(equal, b_.CreateICmpSLT(c.idx, a.idx)));
        return {b_.CreateSelect(take, c.v, a.v), b_.CreateSelect(take, c.idx, a.idx)};
      }
      case ReduceKind::Custom: return {cg_.lower_scalar_region(*op_.regions[0], {a.v, c.v})[0]};
    }
    return a;
  }

  Acc shuffle(const Acc& a, uint32_t mask) {
    return {shuffle_xor(cg_, a.v, mask), a.idx ? shuffle_xor(cg_, a.idx, mask) : nullptr};
  }

  llvm::Value* slot_index(int j, llvm::Value* s) { return b_.CreateAdd(b_.CreateMul(flat_[j], cg_.c32(slots_)), s); }

  Codegen& cg_;
  llvm::IRBuilder<>& b_;
  const ir::Op& op_;
  ReduceKind kind_;
  DType dt_;
  bool arg_;
  LinearLayout l_, res_;
  std::vector<Acc> acc_;
  std::vector<int> warp_bits_;
  Regs flat_;
  int slots_ = 1, es_ = 4, idx_base_ = 0;
};

}  // namespace

llvm::Value* shuffle_xor(Codegen& cg, llvm::Value* v, uint32_t mask) {
  llvm::IRBuilder<>& b_ = cg.b;
  llvm::Type* ty = v->getType();
  int bits = static_cast<int>(ty->getPrimitiveSizeInBits());
  auto shfl32 = [&](llvm::Value* w) {
    return cg.call_intrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32,
                             {b_.getInt32(0xffffffffu), w, b_.getInt32(mask), b_.getInt32(0x1f)});
  };
  if (bits == 64) {
    auto* v2 = llvm::FixedVectorType::get(b_.getInt32Ty(), 2);
    llvm::Value* w = b_.CreateBitCast(v, v2);
    llvm::Value* lo = shfl32(b_.CreateExtractElement(w, uint64_t(0)));
    llvm::Value* hi = shfl32(b_.CreateExtractElement(w, uint64_t(1)));
    llvm::Value* r = b_.CreateInsertElement(llvm::PoisonValue::get(v2), lo, uint64_t(0));
    r = b_.CreateInsertElement(r, hi, uint64_t(1));
    return b_.CreateBitCast(r, ty);
  }
  llvm::Value* w = bits == 32 ? v : b_.CreateBitCast(v, b_.getIntNTy(bits));
  if (bits == 32) return b_.CreateBitCast(shfl32(b_.CreateBitCast(w, b_.getInt32Ty())), ty);
  llvm::Value* s = shfl32(b_.CreateZExt(w, b_.getInt32Ty()));
  return b_.CreateBitCast(b_.CreateTrunc(s, b_.getIntNTy(bits)), ty);
}

// A group of sibling reductions (GpuPlan::reduce_groups) shares the barriers of the
// exchange between warps; every member is lowered when the group's first op is.
void lower_reduce(Codegen& cg, const ir::Op& op) {
  std::vector<const ir::Op*> ops{&op};
  auto leader = cg.plan.reduce_group_leader.find(&op);
  if (leader != cg.plan.reduce_group_leader.end()) {
    if (leader->second != &op) return;  // lowered with its group
    ops = cg.plan.reduce_groups.at(&op);
  }
  std::vector<Reducer> rs;
  rs.reserve(ops.size());
  for (const ir::Op* o : ops) {
    rs.emplace_back(cg, *o);
    rs.back().within_warps();
  }
  bool exchange = false;
  for (auto& r : rs) exchange |= r.across_warps();
  if (exchange) {
    cg.smem_before_write();
    for (auto& r : rs)
      if (r.across_warps()) r.write_partials();
    cg.smem_after_write();
    for (auto& r : rs)
      if (r.across_warps()) r.read_partials();
    cg.smem_after_read();
  }
  for (auto& r : rs) r.finish();
}

}  // namespace tilefuse::nvptx
