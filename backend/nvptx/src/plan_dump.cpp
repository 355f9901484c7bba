// Text form of the tile IR annotated with the GPU plan (TILEFUSE_DUMP_IR).
#include <sstream>

#include "passes.hpp"

namespace tilefuse::nvptx {
namespace {

using ir::Op;
using ir::OpKind;

class PlanPrinter {
 public:
  PlanPrinter(const ir::Function& f, const GpuPlan& p) : f_(f), p_(p) {}

  std::string run() {
    for (auto& prm : f_.params) names_[prm.value] = "%" + prm.name;
    os_ << "kernel @" << f_.name << " warps " << f_.num_warps << " shared " << p_.shared_bytes << " bytes\n";
    for (auto& prm : f_.params)
      os_ << "  param %" << prm.name << ": " << prm.value->type.str() << " " << p_.axis.get(prm.value).str() << "\n";
    block(f_.body, 1);
    os_ << "layouts:\n";
    for (auto& e : p_.pool) os_ << "  #L" << e.id << " = " << e.desc << "  " << e.ll.str() << "\n";
    return os_.str();
  }

 private:
  std::string name(const ir::Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    return names_[v] = "%" + std::to_string(v->id);
  }
  std::string lay(const ir::Value* v) {
    LayoutRef l = p_.layout(v);
    return l ? " #L" + std::to_string(l->id) : "";
  }
  void block(const ir::Block& b, int depth) {
    std::string ind(2 * depth, ' ');
    if (!b.args.empty()) {
      os_ << ind << "^(";
      for (size_t i = 0; i < b.args.size(); ++i)
        os_ << (i ? ", " : "") << name(b.args[i]) << ": " << b.args[i]->type.str() << lay(b.args[i]);
      os_ << ")\n";
    }
    for (auto& op : b.ops) this->op(*op, depth);
  }
  void op(const Op& op, int depth) {
    std::string ind(2 * depth, ' ');
    const OpPlan& pl = p_.op(&op);
    os_ << ind;
    for (size_t i = 0; i < op.results.size(); ++i) os_ << (i ? ", " : "") << name(op.results[i]);
    if (!op.results.empty()) os_ << " = ";
    os_ << ir::name(op.kind);
    switch (op.kind) {
      case OpKind::Binary: os_ << "." << ir::name(op.bin()); break;
      case OpKind::Unary: os_ << "." << ir::name(op.un()) << (op.approx ? ".approx" : ""); break;
      case OpKind::Compare: os_ << "." << ir::name(op.cmp()); break;
      case OpKind::ClusterReduce: os_ << "." << ir::name(op.red()); break;
      case OpKind::Reduce: case OpKind::Scan: os_ << "." << ir::name(op.red()) << " axis " << op.axis; break;
      case OpKind::AtomicRMW: os_ << "." << ir::name(op.atomic()); break;
      case OpKind::ExpandDims: case OpKind::ProgramId: case OpKind::NumPrograms: os_ << " axis " << op.axis; break;
      case OpKind::Constant:
        if (is_float(op.result()->type.dtype)) os_ << " " << op.fval;
        else os_ << " " << op.ival;
        break;
      case OpKind::Arange: os_ << " " << op.start << ", " << op.end; break;
      default: break;
    }
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const ir::Value* v = op.operands[i];
      os_ << (i ? ", " : " ") << name(v);
      LayoutRef want = i < pl.operands.size() ? pl.operands[i] : nullptr;
      bool lazy = !op.results.empty() && p_.lazy.count(op.result());
      bool by_descriptor = pl.wgmma && i < 2 && wgmma_smem_source(p_, v, static_cast<int>(i));
      if (want && !lazy && !by_descriptor && p_.layout(v) && want != p_.layout(v))
        os_ << (conversion_needs_smem(p_, v, want->ll) ? " [convert #L" : " [remat #L") << want->id << "]";
    }
    if (!op.results.empty()) {
      os_ << " :";
      for (auto* r : op.results) os_ << " " << r->type.str() << lay(r);
      const ir::Value* r = op.result();
      if (r->type.is_ptr || (is_int(r->type.dtype) && p_.axis.has(r))) os_ << " " << p_.axis.get(r).str();
    }
    if ((op.kind == OpKind::Load || op.kind == OpKind::Store) && op.operand(0)->type.is_tile())
      os_ << " vec " << pl.vec << " along dim " << pl.fast_dim << (pl.checked ? " checked" : "")
          << (pl.realign ? " realigned" : "");
    if (pl.held) os_ << " held in shared #" << pl.held_index << " (smem " << pl.smem_offset << ")";
    if (pl.async_copy) {
      if (pl.tma_map >= 0) os_ << " tma (tensor map " << pl.tma_map << ")";
      if (p_.is_producer_copy(&op))
        os_ << ", copied by the producer into " << pl.stages << (pl.stages > 1 ? " buffers" : " buffer");
      else os_ << (pl.staged ? " staged cp.async #" : " cp.async #") << pl.async_index << "/" << pl.async_count;
      if (pl.issue_at) os_ << ", " << pl.ahead << " iterations ahead, issued by " << name(pl.issue_at->result());
      else if (pl.staged) os_ << ", " << pl.ahead << " iterations ahead";
    }
    if (op.kind == OpKind::For)
      if (auto it = p_.pipelines.find(&op); it != p_.pipelines.end()) {
        os_ << " pipelined: " << it->second.stages << " stages, " << it->second.loads.size() << " copies, prologue of "
            << it->second.ahead() << " iterations, " << it->second.slice.size() << " address ops re-evaluated";
        if (it->second.lag) os_ << ", MMAs of " << it->second.lag << " iteration in flight";
      }
    if (pl.wgmma) {
      os_ << " wgmma";
      for (int i = 0; i < 2; ++i)
        if (wgmma_smem_source(p_, op.operand(i), i)) os_ << (i ? ", B" : ", A") << " by descriptor";
      if (pl.wgmma_defer) os_ << ", left in flight";
    }
    if (auto w = p_.wgmma_waits.find(&op); w != p_.wgmma_waits.end()) {
      os_ << " (after wgmma.wait_group " << w->second.pending;
      for (const ir::Value* v : w->second.values) os_ << " " << name(v);
      os_ << ")";
    }
    if (pl.smem_bytes) os_ << " smem[" << pl.smem_offset << ", +" << pl.smem_bytes << ")";
    if (pl.async_copy && pl.tma_map >= 0 && op.kind == ir::OpKind::Load)
      os_ << " barriers smem[" << pl.barrier_offset << ", +" << tma_barrier_bytes(p_, &op) << ")";
    if (!op.results.empty() && p_.lazy.count(op.result())) os_ << " (on demand)";
    if (!op.results.empty() && p_.pinned.count(op.result())) os_ << " (pinned before the next wgmma issue)";
    os_ << "\n";
    for (size_t r = 0; r < op.regions.size(); ++r) {
      if (r) os_ << ind << "} else {\n";
      else os_ << ind << "{\n";
      block(*op.regions[r], depth + 1);
    }
    if (!op.regions.empty()) os_ << ind << "}\n";
  }

  const ir::Function& f_;
  const GpuPlan& p_;
  std::ostringstream os_;
  std::unordered_map<const ir::Value*, std::string> names_;
};

}  // namespace

std::string dump_plan(const ir::Function& f, const GpuPlan& plan) { return PlanPrinter(f, plan).run(); }

}  // namespace tilefuse::nvptx
