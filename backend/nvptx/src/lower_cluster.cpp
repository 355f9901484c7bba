// Cluster reductions (sm_90): thread 0 of each program publishes its value in a
// shared-memory slot; a cluster barrier (release/acquire) makes the slots visible;
// every thread reads all slots through distributed shared memory (mapa +
// ld.shared::cluster) and combines them in rank order, so all programs compute the
// same bits; a second cluster barrier keeps each slot alive until everyone has read it.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"

namespace tilefuse::nvptx {

namespace {

void cluster_barrier(Codegen& cg) {
  cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_arrive_aligned, {});
  cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_wait_aligned, {});
}

// Loads the value in the same slot of cluster program `rank`.
llvm::Value* load_remote(Codegen& cg, llvm::Value* slot_addr, int rank, DType dt) {
  llvm::Value* remote = cg.inline_asm(cg.i32(), "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r",
                                      {slot_addr, cg.c32(rank)}, false);
  bool wide = byte_size(dt) == 8;
  const char* bits = wide ? "b64" : "b32";
  llvm::Type* raw = wide ? cg.b.getInt64Ty() : cg.i32();
  llvm::Value* v = cg.inline_asm(raw, std::string("ld.shared::cluster.") + bits + " $0, [$1];",
                                 std::string(wide ? "=l" : "=r") + ",r,~{memory}", {remote}, true);
  return cg.b.CreateBitCast(v, cg.elem_type(dt));
}

}  // namespace

void lower_cluster_reduce(Codegen& cg, const ir::Op& op) {
  llvm::IRBuilder<>& b = cg.b;
  const int n = cg.fn.cluster_size;
  const DType dt = op.operand(0)->type.dtype;
  llvm::Value* mine = cg.scalar(op.operand(0));
  if (n == 1) return cg.set(op.result(), {mine});
  TF_ASSERT(byte_size(dt) == 4 || byte_size(dt) == 8, "cluster reduction of a 16-bit or smaller value");

  const OpPlan& p = cg.plan.op(&op);
  llvm::Value* slot = cg.smem_addr(p.smem_offset);
  cg.smem_before_write();
  cg.if_then(b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] { b.CreateStore(mine, slot); });
  cluster_barrier(cg);
  llvm::Value* slot_addr = b.CreateTrunc(b.CreatePtrToInt(slot, b.getInt64Ty()), cg.i32());
  ir::BinaryOp combine = op.red() == ir::ReduceKind::Sum   ? ir::BinaryOp::Add
                         : op.red() == ir::ReduceKind::Max ? ir::BinaryOp::Max
                                                           : ir::BinaryOp::Min;
  llvm::Value* acc = nullptr;
  for (int r = 0; r < n; ++r) {
    llvm::Value* v = load_remote(cg, slot_addr, r, dt);
    acc = acc ? binary_element(cg, combine, acc, v, dt) : v;
  }
  cluster_barrier(cg);
  cg.set_smem_pending(false);  // the barriers ordered every earlier shared access
  cg.set(op.result(), {acc});
}

}  // namespace tilefuse::nvptx
