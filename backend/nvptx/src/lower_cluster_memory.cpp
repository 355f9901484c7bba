// Clusters the hardware does not hold (GpuPlan::clusters_in_memory: more than 16
// programs, or a GPU before sm_90): the same cluster reductions, exchanged through a
// zeroed global workspace the launch passes after the tensor maps.
//
// Workspace: a header (word 0: the next program ticket), then one block per cluster:
//   word 0           programs that have finished (the last one zeroes the block);
//   8 bytes a group  two arrival counters per reduction group, one per slot set;
//   slots            per value of each reduction: two sets of one 8-byte slot per program.
//
// Order of programs: the hardware may start thread blocks in any order, and a program
// waiting for peers that have not started would hold its SM forever. So each program
// takes its place from the ticket counter when it starts (thread 0's atomic add) and
// runs the program of that flat index (x fastest): every peer a program waits for took
// a ticket before it, or will as soon as some program finishes — as long as the GPU
// holds a whole cluster at once, which the launch checks. The last ticket resets the
// counter for the next launch.
//
// Each reduction (or group of sibling reductions, one exchange): thread 0 writes this
// program's values into its slots of the use's set and counts itself in on the set's
// counter (release); warp 0 spins until all C programs of this use have (acquire). After
// a CTA barrier lane l of every warp reads the slots of ranks l*P .. l*P+P-1 (P = C / 32
// when C > 32, else 1; relaxed loads at GPU scope, never a stale L1 line), combines them
// as a tree of rank pairs, and a butterfly of shuffles combines the lanes: the same tree
// the interpreter and the hardware clusters use, so every program gets the same bits.
// Uses inside loops alternate sets (k % 2) as the hardware clusters' slots do; use k of
// a set waits for C x (k / 2 + 1) arrivals. Counters only grow during a launch; the last
// program of a cluster to finish zeroes its whole block (the next kernel's counters may
// fall where this one's slots were).
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"

namespace tilefuse::nvptx {

bool clusters_in_memory(const ir::Function& f, const Target& t) {
  return f.cluster_size > 1 && (f.cluster_size > kMaxHardwareCluster || t.sm < 90);
}

MemoryClusterLayout memory_cluster_layout(const ir::Function& f, const GpuPlan& plan) {
  MemoryClusterLayout l;
  std::vector<const ir::Op*> leaders;
  ir::walk(const_cast<ir::Block&>(f.body), [&](ir::Op& o) {
    if (o.kind != ir::OpKind::ClusterReduce || ir::cluster_reduces_tile(o)) return;
    auto it = plan.reduce_group_leader.find(&o);
    if (it == plan.reduce_group_leader.end() || it->second == &o) leaders.push_back(&o);
  });
  if (leaders.empty()) return l;
  const int64_t n = f.cluster_size;
  int64_t off = 4;
  for (const ir::Op* g : leaders) {
    l.counters[g] = off;
    off += 8;
  }
  off = (off + 15) / 16 * 16;
  for (const ir::Op* g : leaders) {
    auto grp = plan.reduce_groups.find(g);
    std::vector<const ir::Op*> ops = grp == plan.reduce_groups.end() ? std::vector<const ir::Op*>{g} : grp->second;
    for (const ir::Op* o : ops) {
      l.slots[o] = off;
      off += o->num_operands() * 2 * n * 8;
    }
  }
  l.bytes = off;
  return l;
}

llvm::Value* poll_until_at_least(Codegen& cg, llvm::Value* ptr, llvm::Value* target, bool wrapping, bool relaxed,
                                 bool wide) {
  auto& b = cg.b;
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto* loop = llvm::BasicBlock::Create(cg.ctx, "poll", f);
  auto* done = llvm::BasicBlock::Create(cg.ctx, "polled", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  std::string load = std::string("ld.") + (relaxed ? "relaxed" : "acquire") + ".gpu.global." + (wide ? "u64" : "u32");
  llvm::Value* seen = cg.inline_asm(wide ? b.getInt64Ty() : cg.i32(), load + " $0, [$1];",
                                    wide ? "=l,l,~{memory}" : "=r,l,~{memory}", {ptr}, true);
  llvm::Value* zero = llvm::ConstantInt::get(seen->getType(), 0);
  llvm::Value* ok = wrapping ? b.CreateICmpSGE(b.CreateSub(seen, target), zero) : b.CreateICmpSGE(seen, target);
  llvm::Value* all = cg.inline_asm(
      cg.i32(), "{ .reg .pred p, q; setp.ne.u32 p, $1, 0; vote.sync.all.pred q, p, 0xffffffff; selp.u32 $0, 1, 0, q; }",
      "=r,r", {b.CreateZExt(ok, cg.i32())}, true);
  b.CreateCondBr(b.CreateICmpNE(all, cg.c32(0)), done, loop);
  b.SetInsertPoint(done);
  return seen;
}

namespace {

llvm::Value* global_at(Codegen& cg, llvm::Value* base, int64_t off) {
  return cg.b.CreateGEP(cg.b.getInt8Ty(), base, cg.b.getInt64(off));
}

// The element-wise combine of a Sum, Max or Min reduction.
ir::BinaryOp combine_of(ir::ReduceKind k) {
  return k == ir::ReduceKind::Sum ? ir::BinaryOp::Add : k == ir::ReduceKind::Max ? ir::BinaryOp::Max : ir::BinaryOp::Min;
}

// Combines a and b (lower ranks first) with op o's combine.
Regs combine(Codegen& cg, const ir::Op& o, const Regs& a, const Regs& b) {
  if (o.red() == ir::ReduceKind::Custom) {
    Regs args = a;
    args.insert(args.end(), b.begin(), b.end());
    return cg.lower_scalar_region(*o.region(0), args);
  }
  return {binary_element(cg, combine_of(o.red()), a[0], b[0], o.operand(0)->type.dtype)};
}

}  // namespace

void init_memory_clusters(Codegen& cg) {
  auto& b = cg.b;
  cg.memory_clusters = std::make_shared<MemoryClusterLayout>(memory_cluster_layout(cg.fn, cg.plan));
  if (cg.memory_clusters->bytes == 0) return;  // no exchange: programs run in any order
  if (cg.plan.warp_specialized())
    throw UserError("kernel '" + cg.fn.name + "' is warp-specialized and runs in clusters of " +
                    std::to_string(cg.fn.cluster_size) +
                    " programs, which exchange through memory; use warp_specialize with a cluster of at most 16");
  llvm::Value* ws = cg.kernel->getArg(static_cast<unsigned>(cg.fn.params.size() + cg.plan.tensor_maps.size()));
  ws->setName("cluster_workspace");
  auto* slot_ty = b.getInt32Ty();
  auto* ticket_slot = new llvm::GlobalVariable(cg.mod, slot_ty, false, llvm::GlobalValue::InternalLinkage,
                                               llvm::UndefValue::get(slot_ty), "program_ticket", nullptr,
                                               llvm::GlobalValue::NotThreadLocal, 3);
  ticket_slot->setAlignment(llvm::Align(4));
  auto nctaid = [&](llvm::Intrinsic::ID id) { return cg.call_intrinsic(id, {}); };
  llvm::Value* gx = nctaid(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
  llvm::Value* gy = nctaid(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y);
  llvm::Value* gz = nctaid(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z);
  llvm::Value* total = b.CreateMul(b.CreateMul(gx, gy), gz);
  cg.if_then(b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] {
    llvm::Value* t = b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, ws, cg.c32(1), llvm::MaybeAlign(4),
                                       llvm::AtomicOrdering::Monotonic);
    b.CreateStore(t, ticket_slot);
    cg.if_then(b.CreateICmpEQ(t, b.CreateSub(total, cg.c32(1))), [&] {
      cg.inline_asm(b.getVoidTy(), "st.relaxed.gpu.global.u32 [$0], 0;", "l,~{memory}", {ws}, true);
    });
  });
  cg.barrier();
  llvm::Value* t = b.CreateLoad(slot_ty, ticket_slot, "ticket");
  cg.program[0] = b.CreateURem(t, gx);
  cg.program[1] = b.CreateURem(b.CreateUDiv(t, gx), gy);
  cg.program[2] = b.CreateUDiv(t, b.CreateMul(gx, gy));
  const int n = cg.fn.cluster_size;
  cg.cluster_rank = b.CreateAnd(t, cg.c32(n - 1));
  llvm::Value* cluster = b.CreateZExt(b.CreateLShr(t, cg.c32(std::countr_zero(static_cast<unsigned>(n)))),
                                      b.getInt64Ty());
  llvm::Value* off = b.CreateAdd(b.getInt64(kClusterWorkspaceHeader),
                                 b.CreateMul(cluster, b.getInt64(cg.memory_clusters->bytes)));
  cg.cluster_block = b.CreateGEP(b.getInt8Ty(), ws, off, "cluster_block");
}

void lower_cluster_reduce_in_memory(Codegen& cg, const ir::Op& op, const std::vector<const ir::Op*>& ops) {
  auto& b = cg.b;
  const int n = cg.fn.cluster_size;
  const MemoryClusterLayout& layout = *cg.memory_clusters;
  llvm::Value* set = cg.c32(0);
  llvm::Value* round = cg.c32(0);  // uses of this set before this one
  if (op.parent != &cg.fn.body) {
    llvm::Value* counter = cg.entry_counter(&op);
    llvm::Value* k = b.CreateLoad(cg.i32(), counter);
    b.CreateStore(b.CreateAdd(k, cg.c32(1)), counter);
    set = b.CreateAnd(k, cg.c32(1));
    round = b.CreateLShr(k, cg.c32(1));
  }
  // This program's warps are done reading this set's previous use (and every peer's
  // were before it counted itself in for the use in between).
  cg.barrier();
  llvm::Value* arrivals = b.CreateGEP(b.getInt8Ty(), global_at(cg, cg.cluster_block, layout.counters.at(&op)),
                                      b.CreateZExt(b.CreateMul(set, cg.c32(4)), b.getInt64Ty()));
  auto slot_addr = [&](const ir::Op* o, int k, llvm::Value* rank) {
    llvm::Value* i = b.CreateAdd(b.CreateMul(set, cg.c32(n)), rank);
    return b.CreateGEP(b.getInt8Ty(), global_at(cg, cg.cluster_block, layout.slots.at(o) + int64_t{k} * 2 * n * 8),
                       b.CreateZExt(b.CreateMul(i, cg.c32(8)), b.getInt64Ty()));
  };
  cg.if_then(b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] {
    for (const ir::Op* o : ops)
      for (int k = 0; k < o->num_operands(); ++k) {
        const DType dt = o->operand(k)->type.dtype;
        TF_ASSERT(byte_size(dt) == 4 || byte_size(dt) == 8, "cluster reduction of a 16-bit or smaller value");
        llvm::Value* v = cg.scalar(o->operand(k));
        b.CreateAlignedStore(v, slot_addr(o, k, cg.cluster_rank), llvm::Align(byte_size(dt)));
      }
    cg.inline_asm(b.getVoidTy(), "red.release.gpu.global.add.u32 [$0], 1;", "l,~{memory}", {arrivals}, true);
  });
  // Warp 0 waits as a whole (a loop in one lane would leave the warp diverged at the
  // CTA barrier after it, which bar.sync's alignment rules do not allow): every lane
  // reads the counter (one transaction) and the warp leaves when all lanes saw it.
  llvm::Value* target = b.CreateMul(b.CreateAdd(round, cg.c32(1)), cg.c32(n));
  // Counters only grow within a launch: arrived when seen - target >= 0 (wrapping).
  cg.if_then(b.CreateICmpULT(cg.tid(), cg.c32(32)), [&] { poll_until_at_least(cg, arrivals, target, true); });
  cg.barrier();

  const int lanes = std::min(n, 32), per = n / lanes;
  llvm::Value* first = b.CreateMul(b.CreateAnd(cg.lane(), cg.c32(lanes - 1)), cg.c32(per));
  for (const ir::Op* o : ops) {
    const DType dt = o->operand(0)->type.dtype;
    const int es = byte_size(dt);
    llvm::Type* bits_ty = es == 8 ? b.getInt64Ty() : cg.i32();
    const std::string text = std::string("ld.relaxed.gpu.global.") + (es == 8 ? "b64" : "b32") + " $0, [$1];";
    std::vector<Regs> vals(per);  // [rank - first][value]
    for (int r = 0; r < per; ++r)
      for (int k = 0; k < o->num_operands(); ++k) {
        llvm::Value* bits = cg.inline_asm(bits_ty, text, std::string(es == 8 ? "=l" : "=r") + ",l,~{memory}",
                                          {slot_addr(o, k, b.CreateAdd(first, cg.c32(r)))}, true);
        vals[r].push_back(b.CreateBitCast(bits, cg.elem_type(dt)));
      }
    for (int s = 1; s < per; s *= 2)
      for (int r = 0; r + s < per; r += 2 * s) vals[r] = combine(cg, *o, vals[r], vals[r + s]);
    Regs acc = vals[0];
    for (int m = 1; m < lanes; m *= 2) {
      Regs other;
      for (llvm::Value* v : acc) other.push_back(shuffle_xor(cg, v, m));
      llvm::Value* upper = b.CreateICmpNE(b.CreateAnd(cg.lane(), cg.c32(m)), cg.c32(0));
      Regs lo, hi;
      for (size_t k = 0; k < acc.size(); ++k) {
        lo.push_back(b.CreateSelect(upper, other[k], acc[k]));
        hi.push_back(b.CreateSelect(upper, acc[k], other[k]));
      }
      acc = combine(cg, *o, lo, hi);
    }
    for (size_t k = 0; k < acc.size(); ++k) cg.set(o->result(static_cast<int>(k)), {acc[k]});
  }
}

void finish_memory_clusters(Codegen& cg) {
  if (!cg.memory_clusters || cg.memory_clusters->bytes == 0) return;
  auto& b = cg.b;
  const int n = cg.fn.cluster_size;
  auto* flag_ty = b.getInt32Ty();
  auto* last_flag = new llvm::GlobalVariable(cg.mod, flag_ty, false, llvm::GlobalValue::InternalLinkage,
                                             llvm::UndefValue::get(flag_ty), "last_of_cluster", nullptr,
                                             llvm::GlobalValue::NotThreadLocal, 3);
  last_flag->setAlignment(llvm::Align(4));
  // Every thread of this program is done reading slots; then thread 0 counts it out
  // (acq_rel: the last one sees every peer's reads done).
  cg.barrier();
  cg.if_then(b.CreateICmpEQ(cg.tid(), cg.c32(0)), [&] {
    llvm::Value* done = cg.inline_asm(cg.i32(), "atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;", "=r,l,~{memory}",
                                      {cg.cluster_block}, true);
    b.CreateStore(b.CreateZExt(b.CreateICmpEQ(done, cg.c32(n - 1)), flag_ty), last_flag);
  });
  cg.barrier();
  // The last program zeroes the whole block, slots included: the next kernel on this
  // stream may lay out its blocks differently, and its counters may fall on these slots.
  llvm::Value* last = b.CreateICmpNE(b.CreateLoad(flag_ty, last_flag), cg.c32(0));
  cg.if_then(last, [&] {
    const int64_t words = cg.memory_clusters->bytes / 16;  // blocks are multiples of 16 bytes
    const int threads = 32 * cg.plan.num_warps;
    llvm::Function* f = b.GetInsertBlock()->getParent();
    llvm::BasicBlock* pre = b.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(cg.ctx, "zero_block", f);
    auto* body = llvm::BasicBlock::Create(cg.ctx, "zero_chunk", f);
    auto* done = llvm::BasicBlock::Create(cg.ctx, "block_zeroed", f);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode* i = b.CreatePHI(cg.i32(), 2, "chunk");
    i->addIncoming(cg.tid(), pre);
    b.CreateCondBr(b.CreateICmpULT(i, cg.c32(words)), body, done);
    b.SetInsertPoint(body);
    llvm::Value* p = b.CreateGEP(b.getInt8Ty(), cg.cluster_block, b.CreateZExt(b.CreateMul(i, cg.c32(16)), b.getInt64Ty()));
    cg.inline_asm(b.getVoidTy(), "st.global.v4.u32 [$0], {0, 0, 0, 0};", "l,~{memory}", {p}, true);
    i->addIncoming(b.CreateAdd(i, cg.c32(threads)), body);
    b.CreateBr(loop);
    b.SetInsertPoint(done);
  });
}

}  // namespace tilefuse::nvptx
