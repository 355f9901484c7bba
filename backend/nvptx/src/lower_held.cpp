// Loads kept in shared memory (OpPlan::held). At the load each thread copies the runs it
// would hold into its own part of the buffer (run k of thread t at (k * threads + t) *
// run bytes: consecutive threads hit consecutive banks) as one cp.async group; masked-off
// runs get the load's `other` by st.shared instead, so reading back needs no mask. Each
// op that reads the tile (or a cast of it) reads the runs back just before it is lowered
// and forgets them after, so no registers hold the tile between readers. A thread reads
// only what it copied: cp.async.wait_group, no barrier. The loads are volatile so that
// LLVM keeps them where they are instead of merging readers' copies into one long-lived
// value.
#include <algorithm>
#include <functional>

#include "codegen.hpp"
#include "passes.hpp"

namespace tilefuse::nvptx {

namespace {

// The registers of `vals` (one run of a tile's elements) as 32-bit words.
Regs run_words(Codegen& cg, const Regs& vals, llvm::Type* mt, int bytes) {
  auto& b = cg.b;
  llvm::Value* v = llvm::UndefValue::get(llvm::FixedVectorType::get(mt, static_cast<unsigned>(vals.size())));
  for (size_t i = 0; i < vals.size(); ++i) v = b.CreateInsertElement(v, vals[i], static_cast<uint64_t>(i));
  int words = bytes / 4;
  llvm::Value* w = b.CreateBitCast(v, llvm::FixedVectorType::get(cg.i32(), words));
  Regs out;
  for (int i = 0; i < words; ++i) out.push_back(b.CreateExtractElement(w, static_cast<uint64_t>(i)));
  return out;
}

Regs held_run_offsets(Codegen& cg, const ir::Op& op) {
  Regs offs = staged_offsets(cg, op);
  llvm::Value* base = cg.c32(cg.plan.op(&op).smem_offset);
  for (auto& o : offs)
    if (o) o = cg.b.CreateAdd(o, base, "", true, true);
  return offs;
}

// The blocks whose ops run on every path to `op`: its own and those enclosing it.
std::vector<const ir::Block*> enclosing_blocks(const ir::Op& op) {
  std::vector<const ir::Block*> path;
  for (const ir::Block* b = op.parent; b; b = b->parent ? b->parent->parent : nullptr) path.push_back(b);
  return path;
}

bool on_path(const std::vector<const ir::Block*>& path, const ir::Block* b) {
  return std::find(path.begin(), path.end(), b) != path.end();
}

// Held groups known to have landed where `op` runs: numbers below the result.
int landed_at(Codegen& cg, const std::vector<const ir::Block*>& path) {
  int landed = 0;
  for (const ir::Block* b : path)
    if (auto it = cg.held_landed.find(b); it != cg.held_landed.end()) landed = std::max(landed, it->second);
  return landed;
}

// The registers of held load `ld` for `reader`, read back from its buffer after its copies
// landed.
Regs read_held(Codegen& cg, const ir::Op& ld, const ir::Op& reader) {
  auto& b = cg.b;
  int group = cg.held_group.at(&ld);
  auto path = enclosing_blocks(reader);
  if (group >= landed_at(cg, path)) {
    // Groups committed after this one on every path here may stay in flight (groups of
    // branches lowered in between may not have run: not counted, so the wait is safe).
    int younger = 0;
    for (auto& [other, g] : cg.held_group) younger += g > group && on_path(path, other->parent);
    int pending = std::min(younger, 7);
    cg.inline_asm(b.getVoidTy(), "cp.async.wait_group " + std::to_string(pending) + ";", "~{memory}", {}, true);
    int& landed = cg.held_landed[reader.parent];
    landed = std::max(landed, group + 1);
  }
  const OpPlan& p = cg.plan.op(&ld);
  DType dt = ld.result()->type.dtype;
  llvm::Type* mt = cg.mem_type(dt);
  int vec = p.vec;
  Regs offs = held_run_offsets(cg, ld);
  Regs out(offs.size());
  for (size_t k = 0; k < offs.size(); k += vec) {
    llvm::Type* ty = vec == 1 ? mt : llvm::FixedVectorType::get(mt, vec);
    auto* v = b.CreateAlignedLoad(ty, cg.smem_addr(0, offs[k]), llvm::Align(vec * byte_size(dt)), /*volatile=*/true);
    for (int i = 0; i < vec; ++i) out[k + i] = vec == 1 ? v : b.CreateExtractElement(v, static_cast<uint64_t>(i));
  }
  cg.smem_after_read();  // scratch placed here after the buffer's life must wait for these reads
  return out;
}

}  // namespace

void issue_held_copies(Codegen& cg, const ir::Op& op) {
  auto& b = cg.b;
  const OpPlan& p = cg.plan.op(&op);
  DType dt = op.result()->type.dtype;
  int vec = p.vec, bytes = vec * byte_size(dt);
  Regs ptrs = cg.operand(op, 0);
  Regs mask = op.num_operands() > 1 ? cg.operand(op, 1) : Regs{};
  bool fill = op.num_operands() > 2 && !is_zero_constant(op.operand(2));
  Regs other = fill ? cg.operand(op, 2) : Regs{};
  Regs offs = held_run_offsets(cg, op);
  // Other threads may still read scratch of earlier ops that these bytes held.
  cg.smem_before_write();
  std::string copy = std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") + ".shared.global [$0], [$1], " +
                     std::to_string(bytes);
  int words = bytes / 4;
  std::string st = std::string("st.shared") + (words == 1 ? ".b32 [$0], $3;" : ".v" + std::to_string(words) + ".b32 [$0], {");
  if (words > 1) {
    for (int i = 0; i < words; ++i) st += (i ? ", $" : "$") + std::to_string(3 + i);
    st += "};";
  }
  llvm::Type* mt = cg.mem_type(dt);
  for (size_t r = 0; r < offs.size(); r += vec) {
    llvm::Value* dst = cg.shared_addr32(cg.smem_addr(0, offs[r]));
    if (mask.empty()) {
      cg.inline_asm(b.getVoidTy(), copy + ";", "r,l,~{memory}", {dst, ptrs[r]}, true);
    } else if (!fill) {  // cp.async zero-fills what it does not read
      llvm::Value* src_size = b.CreateSelect(mask[r], cg.c32(bytes), cg.c32(0));
      cg.inline_asm(b.getVoidTy(), copy + ", $2;", "r,l,r,~{memory}", {dst, ptrs[r], src_size}, true);
    } else {
      std::vector<llvm::Value*> args{dst, ptrs[r], b.CreateZExt(mask[r], cg.i32())};
      Regs w = run_words(cg, Regs(other.begin() + r, other.begin() + r + vec), mt, bytes);
      args.insert(args.end(), w.begin(), w.end());
      std::string constraints = "r,l,r";
      for (int i = 0; i < words; ++i) constraints += ",r";
      cg.inline_asm(b.getVoidTy(),
                    "{\n .reg .pred p;\n setp.ne.b32 p, $2, 0;\n @p " + copy + ";\n @!p " + st + "\n}",
                    constraints + ",~{memory}", args, true);
    }
  }
  cg.inline_asm(b.getVoidTy(), "cp.async.commit_group;", "~{memory}", {}, true);
  cg.held_group[&op] = cg.held_committed++;
}

void settle_held_copies(Codegen& cg, const ir::Op& op) {
  if (cg.held_group.empty()) return;
  auto path = enclosing_blocks(op);
  int landed = landed_at(cg, path);
  // Held loads whose copies may still be reading, and whether op writes what they read.
  std::vector<const ir::Value*> read_bases;
  bool unknown_read = false;
  for (auto& [ld, group] : cg.held_group) {
    if (group < landed) continue;
    const ir::Value* base = base_argument(ld->operand(0));
    unknown_read = unknown_read || !base;
    read_bases.push_back(base);
  }
  if (read_bases.empty()) return;
  bool hazard = false;
  auto check = [&](const ir::Op& o) {
    if (o.kind != ir::OpKind::Store && o.kind != ir::OpKind::AtomicRMW && o.kind != ir::OpKind::AtomicCas) return;
    const ir::Value* base = base_argument(o.operand(0));
    hazard = hazard || unknown_read || !base ||
             std::find(read_bases.begin(), read_bases.end(), base) != read_bases.end();
  };
  check(op);
  for (auto& r : op.regions) ir::walk(*r, check);
  if (!hazard) return;
  cg.inline_asm(cg.b.getVoidTy(), "cp.async.wait_group 0;", "~{memory}", {}, true);
  cg.held_landed[op.parent] = cg.held_committed;
  cg.barrier();
}

void finish_held_groups(Codegen& cg, const ir::Op& op) {
  if (cg.held_group.empty()) return;
  auto path = enclosing_blocks(op);
  int landed = landed_at(cg, path);
  for (auto& [ld, group] : cg.held_group) {
    auto last = cg.plan.held_last_reader.find(ld);
    if (group < landed || last == cg.plan.held_last_reader.end() || last->second != &op) continue;
    // Its readers were all inside op's regions (a branch not taken, a loop that did not
    // run): the copies may still be in flight, and the buffer's bytes are free from here.
    cg.inline_asm(cg.b.getVoidTy(), "cp.async.wait_group 0;", "~{memory}", {}, true);
    cg.held_landed[op.parent] = cg.held_committed;
    return;
  }
}

std::vector<const ir::Value*> Codegen::read_back_held(const ir::Op& op) {
  std::vector<const ir::Value*> made;
  std::function<void(const ir::Value*)> need = [&](const ir::Value* v) {
    if (has_regs(v) || !v->def) return;
    const ir::Op* d = v->def;
    if (d->kind == ir::OpKind::Load && plan.op(d).held) {
      set(v, read_held(*this, *d, op));
      made.push_back(v);
    } else if (plan.held_casts.count(d)) {
      need(d->operand(0));
      lower_elementwise(*this, *d);
      made.push_back(v);
    }
  };
  // A reduction group is lowered by its first op, which reads the other members'
  // operands too; the others then read nothing.
  if (auto l = plan.reduce_group_leader.find(&op); l != plan.reduce_group_leader.end() && l->second != &op)
    return made;
  std::vector<const ir::Op*> readers{&op};
  if (auto g = plan.reduce_groups.find(&op); g != plan.reduce_groups.end()) readers = g->second;
  auto held_value = [&](const ir::Value* v) {
    const ir::Op* d = v->def;
    return d && ((d->kind == ir::OpKind::Load && plan.op(d).held) || plan.held_casts.count(d));
  };
  bool reads_held = false;
  for (const ir::Op* r : readers)
    for (const ir::Value* v : r->operands) reads_held = reads_held || held_value(v);
  if (!reads_held) return made;
  // A reader must be lowered here, where the buffer is live: not deferred behind loads
  // whose rest is emitted later (lower_op defers ops that read such loads).
  finish_loads();
  for (const ir::Op* r : readers)
    for (const ir::Value* v : r->operands) need(v);
  return made;
}

}  // namespace tilefuse::nvptx
