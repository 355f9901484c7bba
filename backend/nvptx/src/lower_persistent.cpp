// Persistent kernels (Function::persistent). The launch starts P thread blocks along x,
// as many as are resident at once; block b runs one program of each round of P
// programs, b in even rounds and P - 1 - b in odd ones (2P - 1 - b, 2P + b, ...), of the
// grid, whose sizes arrive as three hidden i32 parameters after the tensor maps. Each
// iteration binds program_id to its program's coordinates (x fastest, as the hardware
// orders blocks) and lowers the whole body again. Warp-specialized, the producer runs
// the same loop over programs for its copies (split_producer), so the ring continues
// from program to program: the next program's first copies land during this one's
// epilogue.
//
// With a prefetch loop (GpuPlan::prefetch_loop) the loop's TMA ring continues from
// program to program: its mbarriers are set up once, at kernel start, with the copies
// of the first program's first iterations, and each program's loop exit issues those
// of the next program (whose coordinates and bounds are evaluated for it), so that they
// land while this program's epilogue runs.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen.hpp"

namespace tilefuse::nvptx {

void bind_program(Codegen& cg, llvm::Value* t) {
  auto& b = cg.b;
  llvm::Value* xy = b.CreateMul(cg.grid_size[0], cg.grid_size[1], "", true, true);
  cg.program[0] = b.CreateURem(t, cg.grid_size[0]);
  cg.program[1] = b.CreateURem(b.CreateUDiv(t, cg.grid_size[0]), cg.grid_size[1]);
  cg.program[2] = b.CreateUDiv(t, xy);
}

void bind_grid_sizes(Codegen& cg) {
  if (cg.grid_size[0]) return;
  unsigned first = static_cast<unsigned>(cg.fn.params.size() + cg.plan.tensor_maps.size());
  const char* names[3] = {"grid_x", "grid_y", "grid_z"};
  for (unsigned d = 0; d < 3; ++d) {
    cg.grid_size[d] = cg.kernel->getArg(first + d);
    cg.grid_size[d]->setName(names[d]);
  }
}

llvm::Value* grid_programs(Codegen& cg) {
  // The launch checked that the grid's size fits an i32.
  auto& b = cg.b;
  return b.CreateMul(b.CreateMul(cg.grid_size[0], cg.grid_size[1], "", true, true), cg.grid_size[2], "programs", true,
                     true);
}

void loop_over_programs(Codegen& cg, llvm::Value* start, llvm::Value* stride, const std::string& name,
                        const std::function<Ring(llvm::Value* t, Ring ring)>& program) {
  auto& b = cg.b;
  llvm::Value* total = grid_programs(cg);
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(cg.ctx, name + ".header", f);
  auto* body = llvm::BasicBlock::Create(cg.ctx, name + ".body", f);
  auto* exit = llvm::BasicBlock::Create(cg.ctx, name + ".exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  // Rounds of `stride` programs taken in alternating directions: block `start` runs
  // program start of round 0, stride - 1 - start of round 1, and so on. Programs whose
  // costs fall in the same pattern every round (causal attention's longest query block
  // of each head first) even out over a block's rounds instead of one block always
  // drawing the long ones; a round's programs stay one window of the grid (its heads'
  // K and V in L2). `parity`: the rounds run before this one, mod 2.
  llvm::PHINode* round = b.CreatePHI(cg.i32(), 2, name + "_round");
  llvm::PHINode* slot = b.CreatePHI(cg.i32(), 2, name + "_ring_stage");
  llvm::PHINode* phase = b.CreatePHI(cg.i32(), 2, name + "_ring_phase");
  llvm::PHINode* parity = b.CreatePHI(cg.i32(), 2, name + "_parity");
  llvm::PHINode* pairs = b.CreatePHI(cg.i32(), 2, name + "_pair_parity");
  pairs->addIncoming(cg.c32(0), pre);
  round->addIncoming(cg.c32(0), pre);
  slot->addIncoming(cg.c32(0), pre);
  phase->addIncoming(cg.c32(0), pre);
  parity->addIncoming(cg.c32(0), pre);
  llvm::Value* mirrored = b.CreateSub(b.CreateSub(stride, cg.c32(1)), start);
  auto in_round = [&](llvm::Value* p) { return b.CreateSelect(b.CreateICmpNE(p, cg.c32(0)), mirrored, start); };
  llvm::Value* t = b.CreateAdd(round, in_round(parity), name);
  // (Past the grid's end only in the last round: the next round starts later still.)
  b.CreateCondBr(b.CreateICmpULT(t, total), body, exit);
  b.SetInsertPoint(body);
  bind_program(cg, t);
  cg.program_parity = parity;
  cg.program_pair_parity = pairs;
  llvm::Value* next_parity = b.CreateXor(parity, cg.c32(1));
  llvm::Value* next_round = b.CreateAdd(round, stride);
  cg.next_program = b.CreateAdd(next_round, in_round(next_parity));
  auto [slot_next, phase_next] = program(t, {slot, phase});
  llvm::BasicBlock* latch = b.GetInsertBlock();
  round->addIncoming(next_round, latch);
  slot->addIncoming(slot_next, latch);
  phase->addIncoming(phase_next, latch);
  parity->addIncoming(next_parity, latch);
  pairs->addIncoming(b.CreateXor(pairs, parity), latch);  // flips after every odd program
  b.CreateBr(header);
  b.SetInsertPoint(exit);
  for (int d = 0; d < 3; ++d) cg.program[d] = nullptr;
  cg.program_parity = cg.program_pair_parity = nullptr;
  cg.next_program = nullptr;
}

namespace {

// The first copies of program t's prefetch loop into the ring from `slot` on (when valid).
void prefetch_program(Codegen& cg, llvm::Value* t, llvm::Value* slot, llvm::Value* valid) {
  const ir::Op& loop = *cg.plan.prefetch_loop;
  llvm::Value* saved[3] = {cg.program[0], cg.program[1], cg.program[2]};
  bind_program(cg, t);
  cg.reevaluate(cg.plan.prefetch_ops, [&] {
    issue_tma_prologue(cg, loop, cg.scalar(loop.operand(0)), cg.scalar(loop.operand(1)), cg.scalar(loop.operand(2)),
                       slot, valid);
  });
  for (int d = 0; d < 3; ++d) cg.program[d] = saved[d];
}

}  // namespace

void prefetch_next_program(Codegen& cg, llvm::Value* slot) {
  auto& b = cg.b;
  // Every warp's MMAs have read the stages the copies refill.
  cg.inline_asm(b.getVoidTy(), "wgmma.wait_group.sync.aligned 0;", "~{memory}", {}, true);
  cg.barrier();
  llvm::Value* total = b.CreateMul(b.CreateMul(cg.grid_size[0], cg.grid_size[1]), cg.grid_size[2]);
  llvm::Value* valid = b.CreateICmpULT(cg.next_program, total);
  // Past the grid's end the copies are predicated off; program 0's coordinates keep the
  // arithmetic that computes them within the grid.
  prefetch_program(cg, b.CreateSelect(valid, cg.next_program, cg.c32(0)), slot, valid);
}

void lower_persistent_body(Codegen& cg) {
  auto& b = cg.b;
  bind_grid_sizes(cg);
  llvm::Value* start = cg.call_intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {});
  llvm::Value* stride = cg.call_intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, {});
  if (const ir::Op* loop = cg.plan.prefetch_loop) {
    init_tma_barriers(cg, cg.plan.pipelines.at(loop));
    prefetch_program(cg, start, cg.c32(0), b.CreateICmpULT(start, grid_programs(cg)));
  }
  loop_over_programs(cg, start, stride, "program", [&](llvm::Value*, Ring ring) {
    cg.ring_position = ring;
    cg.smem_unknown();  // the previous program may still be reading shared memory
    cg.lower_block(cg.fn.body);
    release_producer_copies(cg);
    pingpong_pass_turn(cg);  // every program starts without the turn
    return cg.ring_position;
  });
}

}  // namespace tilefuse::nvptx
