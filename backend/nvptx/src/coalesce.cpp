// Coalescing: memory ops get blocked layouts whose threads own contiguous 16-byte runs.
#include <algorithm>
#include <iostream>
#include <unordered_set>

#include "passes.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

using ir::Op;
using ir::OpKind;

// Scalar is the default: on H200 it measured faster than realigned chunks on every odd
// width tried (bf16 16384x4099 RMSNorm 42% of copy vs 27%; bench/NOTES.md), the
// realignment's selects and shuffles costing more issue slots than the wider accesses
// save.
UnalignedMode unaligned_mode() {
  std::string v = knob("TILEFUSE_UNALIGNED");
  if (v == "realign") return UnalignedMode::Realign;
  if (v == "narrow") return UnalignedMode::Narrow;
  return UnalignedMode::Scalar;
}
bool realign_enabled() { return unaligned_mode() == UnalignedMode::Realign; }
// Runs whose mask is tested at run time (OpPlan::checked) and the layout rule that keeps
// whole runs for aligned rows with unaligned weights; TILEFUSE_CHECKED=0 turns both off.
bool checked_runs_enabled() { return knob("TILEFUSE_CHECKED") != "0"; }

bool is_memory_op(OpKind k) {
  return k == OpKind::Load || k == OpKind::Store || k == OpKind::AtomicRMW || k == OpKind::AtomicCas;
}

namespace {

int64_t pow2_floor(int64_t v) {
  if (v < 1) return 1;
  return int64_t(1) << (63 - __builtin_clzll(static_cast<uint64_t>(v)));
}

// Dimensions by decreasing pointer contiguity; ties keep the row-major preference.
std::vector<int> access_order(const AxisInfo& ai, int rank) {
  std::vector<int> order = row_major_order(rank);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return ai.contiguity[a] > ai.contiguity[b]; });
  return order;
}

// Elements one thread can access at once along `dim` given what axis info proves about
// the pointer alone: contiguity, alignment and the 16-byte limit. A contiguous run of a
// whole 16 bytes is realigned in registers when its alignment is unknown (see
// choose_vector_widths), so only shorter runs are limited by alignment.
int pointer_vec(const ir::Value* ptr, const AxisInfo& ai, int dim) {
  int64_t es = byte_size(ptr->type.dtype);
  int64_t v = std::min(16 / es, pow2_floor(ai.contiguity[dim]));
  if (v < 16 / es || !realign_enabled()) v = aligned_pointer_vec(ptr, ai, dim);
  return static_cast<int>(std::max<int64_t>(v, 1));
}

struct MemOp {
  const Op* op;
  std::vector<int> order;
  int own_vec;
  bool narrowed;  // by what is known of the pointer's alignment
  int loop_depth;
};

// Loops around an op: accesses deeper in loops run more often.
int loop_depth(const Op& op) {
  int depth = 0;
  for (const ir::Block* b = op.parent; b && b->parent; b = b->parent->parent)
    if (b->parent->kind == OpKind::For) ++depth;
  return depth;
}

}  // namespace

int aligned_pointer_vec(const ir::Value* ptr, const AxisInfo& ai, int dim) {
  int64_t es = byte_size(ptr->type.dtype);
  int64_t v = std::min({16 / es, pow2_floor(ai.contiguity[dim]), std::max<int64_t>(1, pow2_floor(ai.divisibility[dim]) / es)});
  return static_cast<int>(std::max<int64_t>(v, 1));
}

int contiguous_dim(const AxisInfo& ai, int rank) { return access_order(ai, rank)[0]; }

void choose_memory_anchors(const ir::Function& f, GpuPlan& plan, AnchorMap& anchors) {
  std::vector<MemOp> mem;
  ir::walk(f.body, [&](Op& op) {
    if (!is_memory_op(op.kind) || op.operand(0)->type.is_scalar()) return;
    const ir::Value* ptr = op.operand(0);
    const AxisInfo& ai = plan.axis.get(ptr);
    auto order = access_order(ai, ptr->type.rank());
    bool atomic = op.kind == OpKind::AtomicRMW || op.kind == OpKind::AtomicCas;
    int vec = atomic ? 1 : pointer_vec(ptr, ai, order[0]);
    int64_t contig = std::min<int64_t>(16 / byte_size(ptr->type.dtype), pow2_floor(ai.contiguity[order[0]]));
    mem.push_back({&op, order, vec, !atomic && vec < contig, loop_depth(op)});
  });
  // In scalar mode, memory ops related to one whose alignment is unknown share its
  // narrow layout (consecutive lanes then access consecutive elements) when such an op
  // stores, or when they outnumber the aligned ones. Otherwise (rows indexed from their
  // aligned start, with a weight read at the row's offset) the aligned accesses keep
  // their 16-byte runs and the unaligned loads are realigned in registers. Only the
  // related ops in the deepest loop count: a per-column weight read, or a partial sum
  // stored, once outside the loop over the rows (the norm backward's persistent
  // programs) converts its tile once rather than narrowing every row's accesses.
  bool scalar_mode = unaligned_mode() == UnalignedMode::Scalar;
  int threads = 32 * plan.num_warps;
  for (auto& m : mem) {
    const ir::Value* ptr = m.op->operand(0);
    int per_thread = m.own_vec;
    bool atomic = m.op->kind == OpKind::AtomicRMW || m.op->kind == OpKind::AtomicCas;
    if (!atomic) {
      // Loads take the widest access of the related memory ops (same shape and order),
      // so e.g. an f32 load feeding a bf16 store shares its layout; stores never exceed
      // their own 16 bytes per thread.
      auto related = [&](const MemOp& o) {
        return o.op->kind != OpKind::AtomicRMW && o.op->kind != OpKind::AtomicCas &&
               o.op->operand(0)->type.shape == ptr->type.shape && o.order == m.order;
      };
      int narrowed = 0, aligned = 0, depth = 0;
      bool narrowed_store = false;
      for (auto& o : mem)
        if (related(o)) depth = std::max(depth, o.loop_depth);
      for (auto& o : mem) {
        if (!related(o) || o.loop_depth < depth) continue;
        (o.narrowed ? narrowed : aligned) += 1;
        narrowed_store |= o.narrowed && o.op->kind != OpKind::Load;
      }
      bool narrow = scalar_mode && narrowed > 0 && (narrowed_store || narrowed > aligned || !checked_runs_enabled());
      for (auto& o : mem)
        if (related(o)) per_thread = narrow ? std::min(per_thread, o.own_vec) : std::max(per_thread, o.own_vec);
      int64_t numel = ptr->type.numel();
      per_thread = static_cast<int>(std::min<int64_t>(per_thread, std::max<int64_t>(numel / threads, 1)));
      if (m.op->kind != OpKind::Load) per_thread = std::min(per_thread, m.own_vec);
    }
    Blocked b = make_blocked(ptr->type.shape, plan.num_warps, m.order, per_thread);
    anchors[m.op] = plan.intern(to_linear(b, ptr->type.shape), b.str());
  }
}

void choose_vector_widths(const ir::Function& f, GpuPlan& plan) {
  bool debug = knob_on("TILEFUSE_DEBUG");
  ir::walk(f.body, [&](Op& op) {
    if (op.kind != OpKind::Load && op.kind != OpKind::Store) return;
    OpPlan& p = plan.op(&op);
    const ir::Value* ptr = op.operand(0);
    if (ptr->type.is_scalar()) {
      p.vec = 1;
      return;
    }
    const AxisInfo& ai = plan.axis.get(ptr);
    LayoutRef l = p.operands.at(0);
    int dim = access_order(ai, ptr->type.rank())[0];
    int64_t es = byte_size(ptr->type.dtype);
    int64_t limit = 16 / es;
    int64_t contig = pow2_floor(ai.contiguity[dim]);
    int64_t align = std::max<int64_t>(1, pow2_floor(ai.divisibility[dim]) / es);
    int64_t regs = l->ll.contiguous_regs(dim);
    int64_t mask = op.mask() ? pow2_floor(plan.axis.get(op.mask()).constancy[dim]) : limit;
    int64_t vec = std::max<int64_t>(1, std::min({limit, contig, align, regs, mask}));
    p.vec = p.aligned_vec = static_cast<int>(vec);
    p.fast_dim = dim;
    // Whole 16-byte runs limited only by what is known of their alignment or of the
    // mask move as realigned chunks instead of narrower accesses (knob), or: aligned
    // runs limited by the mask test it per run; loads of unknown alignment that share
    // a layout of whole runs (choose_memory_anchors) are realigned.
    bool whole = vec < limit && std::min({limit, contig, regs}) == limit;
    bool scalar_mode = unaligned_mode() == UnalignedMode::Scalar && checked_runs_enabled();
    p.realign = whole && (realign_enabled() || (scalar_mode && align < limit && op.kind == OpKind::Load));
    p.checked = whole && scalar_mode && (align >= limit || p.realign);
    if (p.realign || p.checked) p.vec = static_cast<int>(limit);
    if (debug && contig > 1 && vec < std::min(limit, contig) && !p.realign && !p.checked) {
      std::string why;
      auto add = [&](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
      if (align < std::min(limit, contig))
        add("the pointer is only known to be " + std::to_string(pow2_floor(ai.divisibility[dim])) +
            "-byte aligned (specialize pointer parameters on 16-byte alignment and integer strides/offsets on "
            "divisibility by 16)");
      if (mask < std::min(limit, contig))
        add("the mask is only known to be constant over " + std::to_string(mask) +
            " consecutive elements (make the bound a multiple of 16, e.g. specialize it on divisibility)");
      if (regs < std::min(limit, contig))
        add("each thread holds only " + std::to_string(regs) +
            " consecutive elements in its layout (the tile has too few elements per thread; use fewer warps or a "
            "larger block)");
      std::cerr << "tilefuse: " << (op.kind == OpKind::Load ? "load" : "store") << " of " << ptr->type.str()
                << " in kernel '" << f.name << "' (at " << op.loc.str() << ") is contiguous over " << contig
                << " elements but vectorized to " << vec << " element(s) (" << vec * es << " bytes): " << why << "\n";
    }
  });
}

}  // namespace tilefuse::nvptx
