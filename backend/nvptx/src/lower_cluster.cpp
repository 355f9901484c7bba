// Cluster reductions (sm_90); a tile's: see lower_cluster_reduce_tile below. Scalars',
// without cluster-wide memory fences: each reduction owns shared memory for the whole
// kernel: one slot per program of the cluster for each of
// its values (one, or up to 8 for a custom combine) and an mbarrier expecting 4 (or 8)
// bytes per value from each of them.
//   kernel start: thread 0 initializes the mbarriers, fences the initialization to
//     the cluster and every thread arrives (relaxed) on the cluster barrier; the first
//     reduction waits on it, long after the peers arrived (their loads are in flight).
//   each reduction (or group of sibling reductions, sharing the first one's mbarrier):
//     lane r < C of warp 0 stores this program's value into slot [my rank] of cluster
//     program r with st.async, which also counts its bytes on r's mbarrier; thread 0
//     arms the local mbarrier with the bytes it expects; every thread waits on the
//     local mbarrier, then the lanes of each warp combine the C slots with a butterfly
//     of shuffles (the same bits in every lane of every program).
// A program leaves only after receiving every peer's value, so no store can reach a
// program that has exited, and no cluster barrier is needed at the end.
//
// Reductions inside loops (every program runs them equally often: cluster-uniform loop
// bounds, checked when tracing) alternate between two sets of slots and mbarriers: use k
// takes set k % 2 and waits for phase parity (k / 2) % 2 of its mbarrier. A peer can be
// at most one use ahead (its use k + 1 needs this program's value of use k + 1, sent
// after this program's wait of use k), so it never writes a set still being read; a CTA
// barrier before each send keeps this program's warps from still reading use k - 1's set.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"

namespace tilefuse::nvptx {

namespace {


// The element-wise combine of a Sum, Max or Min reduction.
ir::BinaryOp combine_op(ir::ReduceKind k) {
  return k == ir::ReduceKind::Sum ? ir::BinaryOp::Add : k == ir::ReduceKind::Max ? ir::BinaryOp::Max : ir::BinaryOp::Min;
}

// One value's slots: 8 bytes per program of the cluster.
int slots_bytes(int cluster_size) { return (8 * cluster_size + 15) / 16 * 16; }
// Set `set` (0 or 1) of a reduction's shared memory: each value's slots, then the
// mbarrier (a custom reduction combines several values; the others one).
int set_bytes(const ir::Op& op, int cluster_size) { return op.num_operands() * slots_bytes(cluster_size) + 16; }
int mbarrier_offset(const OpPlan& p, const ir::Op& op, int cluster_size, int set = 0) {
  return p.smem_offset + set * set_bytes(op, cluster_size) + op.num_operands() * slots_bytes(cluster_size);
}

}  // namespace

void init_cluster_reductions(Codegen& cg) {
  if (cg.fn.cluster_size == 1) return;
  if (cg.plan.clusters_in_memory) return init_memory_clusters(cg);
  std::vector<const ir::Op*> ops;
  ir::walk(const_cast<ir::Block&>(cg.fn.body), [&](ir::Op& o) {
    if (o.kind == ir::OpKind::ClusterReduce && !ir::cluster_reduces_tile(o)) ops.push_back(&o);
  });
  if (ops.empty()) return;
  cg.if_then(cg.b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] {
    for (const ir::Op* op : ops)
      for (int set = 0; set < 2; ++set) {
        llvm::Value* bar =
            cg.shared_addr32(cg.smem_addr(mbarrier_offset(cg.plan.op(op), *op, cg.fn.cluster_size, set)));
        cg.inline_asm(cg.b.getVoidTy(), "mbarrier.init.shared::cta.b64 [$0], 1;", "r,~{memory}", {bar}, true);
      }
    cg.inline_asm(cg.b.getVoidTy(), "fence.mbarrier_init.release.cluster;", "~{memory}", {}, true);
  });
  cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_arrive_relaxed_aligned, {});
  cg.cluster_start_wait = true;
  // A reduction inside a loop would wait in every iteration: wait here instead.
  for (const ir::Op* op : ops)
    if (op->parent != &cg.fn.body && cg.cluster_start_wait) {
      cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_wait_aligned, {});
      cg.cluster_start_wait = false;
    }
}

namespace {

// A tile combined element by element over the cluster; every program gets the result.
// Every program holds the tile in the same layout, so thread t's register r is the same
// element in each: each thread writes its registers to its own slots of this program's
// shared memory (register-major: 16-byte vectors, conflict-free), a cluster barrier
// (release / acquire) makes them visible, and each thread reads the same slots of every
// program of the cluster — its own included, so that all combine them in rank order and
// get the same bits — from distributed shared memory. A second cluster barrier keeps
// every program (and its shared memory) in place until its peers have read it.
void lower_cluster_reduce_tile(Codegen& cg, const ir::Op& op) {
  llvm::IRBuilder<>& b = cg.b;
  const int n = cg.fn.cluster_size;
  Regs mine = cg.operand(op, 0);
  if (n == 1) return cg.set(op.result(), mine);
  if (cg.plan.warp_specialized())
    cg.unsupported(op, "a cluster reduction of a tile in a warp-specialized kernel (its producer warps never reach it)");
  if (cg.plan.clusters_in_memory)
    cg.unsupported(op, "a cluster reduction of a tile in clusters of " + std::to_string(n) +
                           " programs (more than 16, or before sm_90, clusters exchange scalars only)");
  const DType dt = op.operand(0)->type.dtype;
  const int es = byte_size(dt);
  const int regs = static_cast<int>(mine.size());
  int vec = 16 / es;
  while (regs % vec) vec /= 2;
  const int threads = 32 * cg.plan.num_warps;
  if (cg.cluster_start_wait) {  // balance the kernel start's arrival (scalar reductions)
    cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_wait_aligned, {});
    cg.cluster_start_wait = false;
  }
  llvm::Type* bits_ty = es == 8 ? b.getInt64Ty() : cg.i32();
  llvm::Type* elem_ty = cg.elem_type(dt);
  // Byte offset of this thread's chunk c (vec registers from c * vec).
  llvm::Value* thread_off = b.CreateMul(cg.tid(), cg.c32(vec * es));
  auto chunk_addr = [&](int c) {
    return cg.smem_addr(cg.plan.op(&op).smem_offset + c * threads * vec * es, thread_off);
  };
  cg.smem_before_write();
  for (int c = 0; c < regs / vec; ++c) {
    if (vec == 1) {
      b.CreateAlignedStore(mine[c], chunk_addr(c), llvm::Align(es));
      continue;
    }
    llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(elem_ty, vec));
    for (int i = 0; i < vec; ++i) v = b.CreateInsertElement(v, mine[c * vec + i], i);
    b.CreateAlignedStore(v, chunk_addr(c), llvm::Align(es * vec));
  }
  cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_arrive_aligned, {});  // release
  cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_wait_aligned, {});    // acquire

  // ld.shared::cluster of `vec` elements at a 32-bit cluster address.
  std::string regs_text, cons;
  std::vector<llvm::Type*> outs(vec, bits_ty);
  for (int i = 0; i < vec; ++i) {
    regs_text += (i ? ", $" : "$") + std::to_string(i);
    cons += es == 8 ? "=l," : "=r,";
  }
  const std::string width = std::string(vec > 1 ? ".v" + std::to_string(vec) : "") + (es == 8 ? ".b64" : ".b32");
  const std::string text = "ld.shared::cluster" + width + " " + (vec > 1 ? "{" + regs_text + "}" : regs_text) +
                           ", [$" + std::to_string(vec) + "];";
  llvm::Type* ret = vec > 1 ? static_cast<llvm::Type*>(llvm::StructType::get(cg.ctx, outs)) : bits_ty;
  const ir::BinaryOp combine = combine_op(op.red());
  Regs out(regs);
  for (int c = 0; c < regs / vec; ++c) {
    llvm::Value* local = cg.shared_addr32(chunk_addr(c));
    std::vector<Regs> got;  // [rank][i]
    for (int r = 0; r < n; ++r) {
      llvm::Value* remote =
          cg.inline_asm(cg.i32(), "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", {local, cg.c32(r)}, false);
      llvm::Value* v = cg.inline_asm(ret, text, cons + "r,~{memory}", {remote}, true);
      Regs vals;
      for (int i = 0; i < vec; ++i)
        vals.push_back(b.CreateBitCast(vec > 1 ? b.CreateExtractValue(v, {static_cast<unsigned>(i)}) : v, elem_ty));
      got.push_back(std::move(vals));
    }
    for (int i = 0; i < vec; ++i) {
      llvm::Value* acc = got[0][i];
      for (int r = 1; r < n; ++r) acc = binary_element(cg, combine, acc, got[r][i], dt);
      out[c * vec + i] = acc;
    }
  }
  cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_arrive_aligned, {});  // done reading the peers
  cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_wait_aligned, {});
  cg.set_smem_pending(false);  // every thread of this program passed the barrier after its reads
  cg.set(op.result(), std::move(out));
}

}  // namespace

void lower_cluster_reduce(Codegen& cg, const ir::Op& op) {
  if (ir::cluster_reduces_tile(op)) return lower_cluster_reduce_tile(cg, op);
  llvm::IRBuilder<>& b = cg.b;
  const int n = cg.fn.cluster_size;
  if (n == 1) return cg.set(op.result(), {cg.scalar(op.operand(0))});
  // A group of sibling cluster reductions shares one exchange: every value goes out
  // before the one wait, on the first op's mbarrier.
  std::vector<const ir::Op*> ops{&op};
  auto leader = cg.plan.reduce_group_leader.find(&op);
  if (leader != cg.plan.reduce_group_leader.end()) {
    if (leader->second != &op) return;  // lowered with its group
    ops = cg.plan.reduce_groups.at(&op);
  }
  if (cg.plan.clusters_in_memory) return lower_cluster_reduce_in_memory(cg, op, ops);
  TF_ASSERT(n <= 32, "cluster larger than a warp");
  if (cg.cluster_start_wait) {  // the peers' mbarriers are initialized
    cg.call_intrinsic(llvm::Intrinsic::nvvm_barrier_cluster_wait_aligned, {});
    cg.cluster_start_wait = false;
  }
  // Which set this use takes and the phase parity it waits for (top level: set 0, parity 0).
  llvm::Value* set = cg.c32(0);
  llvm::Value* parity = cg.c32(0);
  if (op.parent != &cg.fn.body) {
    llvm::Value* counter = cg.entry_counter(&op);
    llvm::Value* k = b.CreateLoad(cg.i32(), counter);
    b.CreateStore(b.CreateAdd(k, cg.c32(1)), counter);
    set = b.CreateAnd(k, cg.c32(1));
    parity = b.CreateAnd(b.CreateLShr(k, cg.c32(1)), cg.c32(1));
    cg.barrier();  // this program's warps are done reading the set of use k - 2
  }
  // Each op of the group has its own set size; the mbarrier is the first op's.
  auto set_off = [&](const ir::Op* o) { return b.CreateMul(set, cg.c32(set_bytes(*o, n))); };
  llvm::Value* bar = cg.shared_addr32(cg.smem_addr(mbarrier_offset(cg.plan.op(&op), op, n), set_off(&op)));
  llvm::Value* my_rank = cg.call_intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_cluster_ctarank, {});

  // Send: lane r of warp 0 writes slot [my rank] of each op in program r.
  int bytes = 0;
  cg.if_then(b.CreateICmpULT(cg.tid(), cg.c32(n)), [&] {
    llvm::Value* to = cg.tid();
    auto map = [&](llvm::Value* a) {
      return cg.inline_asm(cg.i32(), "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", {a, to}, false);
    };
    llvm::Value* remote_bar = map(bar);
    for (const ir::Op* o : ops)
      for (int k = 0; k < o->num_operands(); ++k) {
        const DType dt = o->operand(k)->type.dtype;
        const int es = byte_size(dt);
        TF_ASSERT(es == 4 || es == 8, "cluster reduction of a 16-bit or smaller value");
        llvm::Value* slots =
            cg.shared_addr32(cg.smem_addr(cg.plan.op(o).smem_offset + k * slots_bytes(n), set_off(o)));
        llvm::Value* slot = b.CreateAdd(slots, b.CreateMul(my_rank, cg.c32(es)));
        llvm::Value* bits = b.CreateBitCast(cg.scalar(o->operand(k)), es == 8 ? b.getInt64Ty() : cg.i32());
        cg.inline_asm(b.getVoidTy(),
                      std::string("st.async.shared::cluster.mbarrier::complete_tx::bytes.") +
                          (es == 8 ? "b64" : "b32") + " [$0], $1, [$2];",
                      std::string("r,") + (es == 8 ? "l" : "r") + ",r,~{memory}", {map(slot), bits, remote_bar}, true);
        bytes += n * es;
      }
  });
  // Arm the local mbarrier: one arrival (this one) and every value of every peer.
  cg.if_then(b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] {
    cg.inline_asm(b.getInt64Ty(), "mbarrier.arrive.expect_tx.shared::cta.b64 $0, [$1], $2;", "=l,r,r,~{memory}",
                  {bar, cg.c32(bytes)}, true);
  });
  // Wait until everything has arrived (the phase of this use completes).
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto* loop = llvm::BasicBlock::Create(cg.ctx, "cluster_wait", f);
  auto* done = llvm::BasicBlock::Create(cg.ctx, "cluster_received", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::Value* ready = cg.inline_asm(
      cg.i32(), "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [$1], $2; "
      "selp.u32 $0, 1, 0, p; }",
      "=r,r,r,~{memory}", {bar, parity}, true);
  b.CreateCondBr(b.CreateICmpNE(ready, cg.c32(0)), done, loop);
  b.SetInsertPoint(done);

  // Combine: lane l takes the value of rank l % C, then a butterfly of shuffles. Each
  // step combines two values symmetrically, so every lane of every program gets the
  // same bits, and each thread holds one value instead of C.
  // A custom combine is not assumed commutative: the lane whose bit m is clear passes
  // its own values on the left, its partner the same two on the right.
  llvm::Value* rank = b.CreateAnd(cg.lane(), cg.c32(n - 1));
  for (const ir::Op* o : ops) {
    const DType dt = o->operand(0)->type.dtype;
    const int es = byte_size(dt);
    Regs acc;
    for (int k = 0; k < o->num_operands(); ++k)
      acc.push_back(b.CreateLoad(cg.elem_type(dt),
                                 cg.smem_addr(cg.plan.op(o).smem_offset + k * slots_bytes(n),
                                              b.CreateAdd(set_off(o), b.CreateMul(rank, cg.c32(es))))));
    for (int m = 1; m < n; m *= 2) {
      Regs other;
      for (llvm::Value* v : acc) other.push_back(shuffle_xor(cg, v, m));
      if (o->red() == ir::ReduceKind::Custom) {
        llvm::Value* upper = b.CreateICmpNE(b.CreateAnd(cg.lane(), cg.c32(m)), cg.c32(0));
        Regs args;
        for (size_t k = 0; k < acc.size(); ++k) args.push_back(b.CreateSelect(upper, other[k], acc[k]));
        for (size_t k = 0; k < acc.size(); ++k) args.push_back(b.CreateSelect(upper, acc[k], other[k]));
        acc = cg.lower_scalar_region(*o->region(0), args);
      } else {
        acc[0] = binary_element(cg, combine_op(o->red()), acc[0], other[0], dt);
      }
    }
    for (size_t k = 0; k < acc.size(); ++k) cg.set(o->result(static_cast<int>(k)), {acc[k]});
  }
  cg.set_smem_pending(true);  // conservatively: later writers of nearby scratch synchronize first
}

}  // namespace tilefuse::nvptx
