// Structured control flow: for loops with loop-carried tiles (one phi per register)
// and if/else with results. Conditions and bounds are scalars, hence uniform across
// the CTA, so barriers inside the bodies are safe.
#include "codegen.hpp"

namespace tilefuse::nvptx {

using ir::OpKind;

namespace {

// The yielded values of a region in the layouts its parent requires.
std::vector<Regs> yields(Codegen& cg, const ir::Block& block) {
  const ir::Op& y = *block.terminator();
  TF_ASSERT(y.kind == OpKind::Yield, "region without yield");
  std::vector<Regs> out;
  for (int i = 0; i < y.num_operands(); ++i) out.push_back(cg.operand(y, i));
  return out;
}

bool defined_inside(const ir::Value* v, const ir::Block& region) {
  const ir::Block* b = v->def ? v->def->parent : v->block;
  while (b) {
    if (b == &region) return true;
    b = b->parent ? b->parent->parent : nullptr;
  }
  return false;
}

// Tensor-core operands the loop only reads (FlashAttention's Q) are converted to their
// fragment layout once, before the loop, instead of through shared memory every
// iteration.
void hoist_dot_operands(Codegen& cg, const ir::Block& body) {
  ir::walk(body, [&](const ir::Op& o) {
    if (o.kind != OpKind::Dot || !cg.plan.op(&o).mma) return;
    const OpPlan& p = cg.plan.op(&o);
    for (int i = 0; i < 2; ++i) {
      const ir::Value* v = o.operand(i);
      if (defined_inside(v, body)) continue;
      cg.hoist(v, p.operands[i]->ll, cg.in_layout(v, p.operands[i]->ll, p.smem_offset));
    }
  });
}

void lower_for(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  const ir::Block& body = *op.regions[0];
  llvm::Value* lo = cg.scalar(op.operand(0));
  llvm::Value* hi = cg.scalar(op.operand(1));
  llvm::Value* step = cg.scalar(op.operand(2));
  bool sgn = is_signed_int(op.operand(0)->type.dtype);
  std::vector<Regs> inits;
  for (int i = 3; i < op.num_operands(); ++i) inits.push_back(cg.operand(op, i));
  hoist_dot_operands(cg, body);

  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(cg.ctx, "for.header", f);
  auto* loop = llvm::BasicBlock::Create(cg.ctx, "for.body", f);
  auto* exit = llvm::BasicBlock::Create(cg.ctx, "for.exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* iv = b.CreatePHI(lo->getType(), 2, "iv");
  iv->addIncoming(lo, pre);
  std::vector<std::vector<llvm::PHINode*>> phis;
  for (auto& regs : inits) {
    std::vector<llvm::PHINode*> ps;
    for (auto* r : regs) {
      auto* phi = b.CreatePHI(r->getType(), 2);
      phi->addIncoming(r, pre);
      ps.push_back(phi);
    }
    phis.push_back(ps);
  }
  llvm::Value* cond = sgn ? b.CreateICmpSLT(iv, hi) : b.CreateICmpULT(iv, hi);
  b.CreateCondBr(cond, loop, exit);

  b.SetInsertPoint(loop);
  cg.set(body.args[0], {iv});
  for (size_t i = 0; i < phis.size(); ++i) cg.set(body.args[i + 1], Regs(phis[i].begin(), phis[i].end()));
  cg.smem_unknown();  // the previous iteration may still be reading shared memory
  cg.lower_block(body);
  std::vector<Regs> next = yields(cg, body);
  llvm::Value* iv_next = b.CreateAdd(iv, step);
  llvm::BasicBlock* latch = b.GetInsertBlock();
  b.CreateBr(header);
  iv->addIncoming(iv_next, latch);
  for (size_t i = 0; i < phis.size(); ++i)
    for (size_t r = 0; r < phis[i].size(); ++r) phis[i][r]->addIncoming(next[i][r], latch);

  b.SetInsertPoint(exit);
  cg.smem_unknown();
  for (size_t i = 0; i < op.results.size(); ++i) cg.set(op.results[i], Regs(phis[i].begin(), phis[i].end()));
}

void lower_if(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto* then_bb = llvm::BasicBlock::Create(cg.ctx, "if.then", f);
  auto* else_bb = llvm::BasicBlock::Create(cg.ctx, "if.else", f);
  auto* merge = llvm::BasicBlock::Create(cg.ctx, "if.end", f);
  b.CreateCondBr(cg.scalar(op.operand(0)), then_bb, else_bb);
  bool pending = cg.smem_pending();
  bool pending_after = false;
  std::vector<Regs> vals[2];
  llvm::BasicBlock* ends[2];
  llvm::BasicBlock* starts[2] = {then_bb, else_bb};
  for (int i = 0; i < 2; ++i) {
    b.SetInsertPoint(starts[i]);
    cg.set_smem_pending(pending);
    cg.lower_block(*op.regions[i]);
    vals[i] = yields(cg, *op.regions[i]);
    pending_after = pending_after || cg.smem_pending();
    ends[i] = b.GetInsertBlock();
    b.CreateBr(merge);
  }
  b.SetInsertPoint(merge);
  cg.set_smem_pending(pending_after);
  for (size_t i = 0; i < op.results.size(); ++i) {
    Regs out;
    for (size_t r = 0; r < vals[0][i].size(); ++r) {
      auto* phi = b.CreatePHI(vals[0][i][r]->getType(), 2);
      phi->addIncoming(vals[0][i][r], ends[0]);
      phi->addIncoming(vals[1][i][r], ends[1]);
      out.push_back(phi);
    }
    cg.set(op.results[i], std::move(out));
  }
}

}  // namespace

void lower_control(Codegen& cg, const ir::Op& op) {
  if (op.kind == OpKind::For) return lower_for(cg, op);
  return lower_if(cg, op);
}

}  // namespace tilefuse::nvptx
