// Layout assignment. Anchors (coalesced memory ops, the dot accumulator) fix layouts;
// a backward walk propagates the layouts consumers want through elementwise and
// shape ops; a forward walk then gives every tile value a layout and records, per op
// operand, the layout the op needs (a mismatch is a conversion at lowering).
#include <algorithm>
#include <unordered_set>

#include "passes.hpp"
#include "target_info.hpp"

namespace tilefuse::nvptx {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Value;

bool is_elementwise(OpKind k) {
  switch (k) {
    case OpKind::Binary: case OpKind::Unary: case OpKind::Compare: case OpKind::Select:
    case OpKind::Fma: case OpKind::Cast: case OpKind::AddPtr:
      return true;
    default: return false;
  }
}

bool is_rematerializable(const Value* v) {
  if (!v->def) return false;
  OpKind k = v->def->kind;
  return k == OpKind::Constant || k == OpKind::Splat || k == OpKind::Arange;
}

bool is_view_op(OpKind k) {
  return k == OpKind::Broadcast || k == OpKind::ExpandDims || k == OpKind::Reshape || k == OpKind::Trans;
}

namespace {
std::vector<int> inverse_perm(const std::vector<int>& perm) {
  std::vector<int> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int>(i);
  return inv;
}
}  // namespace

LinearLayout view_source_layout(const Op& op, const LinearLayout& to) {
  const auto& src = op.operand(0)->type.shape;
  switch (op.kind) {
    case OpKind::Broadcast: return to.project_to(src);
    case OpKind::ExpandDims: return to.drop_dim(op.axis);
    case OpKind::Reshape: return to.reshape(src);
    case OpKind::Trans: return to.permute(inverse_perm(op.perm));
    default: internal_error("view_source_layout of a non-view op");
  }
}

bool register_only(const LinearLayout& from, const LinearLayout& to) {
  if (from.lanes() != to.lanes() || from.warps() != to.warps() || from.shape() != to.shape()) return false;
  std::unordered_set<uint32_t> parts;
  for (int r = 0; r < from.num_regs(); ++r) parts.insert(from.reg_part(r));
  for (int r = 0; r < to.num_regs(); ++r)
    if (!parts.count(to.reg_part(r))) return false;
  return true;
}

bool defined_within(const Value* v, const ir::Block& region) {
  const ir::Block* b = v->def ? v->def->parent : v->block;
  for (; b; b = b->parent ? b->parent->parent : nullptr)
    if (b == &region) return true;
  return false;
}

bool cheap_to_recompute(const Value* v, int depth) {
  if (v->type.is_scalar() || is_rematerializable(v)) return true;
  if (!v->def || depth > 4) return false;
  OpKind k = v->def->kind;
  if (!is_view_op(k) && !is_elementwise(k)) return false;
  for (const Value* x : v->def->operands)
    if (!cheap_to_recompute(x, depth + 1)) return false;
  return true;
}

bool conversion_needs_smem(const GpuPlan& plan, const Value* v, const LinearLayout& to) {
  if (v->type.is_scalar() || is_rematerializable(v)) return false;
  if (v->def && is_elementwise(v->def->kind) && cheap_to_recompute(v, 0)) return false;
  LayoutRef from = plan.layout(v);
  bool lazy = plan.lazy.count(v) != 0;  // never materialized in its own layout
  if (!lazy && (from->ll == to || register_only(from->ll, to))) return false;
  if (v->def && is_view_op(v->def->kind)) {
    const Value* src = v->def->operand(0);
    if (src->type.is_scalar()) return false;
    return conversion_needs_smem(plan, src, view_source_layout(*v->def, to));
  }
  return true;
}

Blocked dot_fma_blocked(int64_t m, int64_t n, int num_warps) {
  // Each thread holds a few consecutive columns (one shared-memory vector of B per k)
  // and rows strided over the lanes; warps are laid along M so row reductions of the
  // result stay inside a warp.
  Blocked b;
  b.order = {1, 0};
  int spt_n = static_cast<int>(std::min<int64_t>(n, 4));
  int tpw_n = static_cast<int>(std::min<int64_t>(32, std::max<int64_t>(1, n / spt_n)));
  int tpw_m = 32 / tpw_n;
  int wpc_m = static_cast<int>(std::min<int64_t>(num_warps, std::max<int64_t>(1, m / tpw_m)));
  b.size_per_thread = {1, spt_n};
  b.threads_per_warp = {tpw_m, tpw_n};
  b.warps_per_cta = {wpc_m, num_warps / wpc_m};
  return b;
}

namespace {

class LayoutPass {
 public:
  LayoutPass(const ir::Function& f, GpuPlan& plan, bool wgmma, bool float8_mma)
      : f_(f), plan_(plan), wgmma_(wgmma), float8_mma_(float8_mma) {}

  void run() {
    choose_memory_anchors(f_, plan_, anchors_);
    for (auto& [op, l] : anchors_) memory_anchors_.push_back({op, l});
    ir::walk(f_.body, [&](Op& op) {
      if (op.kind == OpKind::Dot) plan_dot(op);
    });
    if (plan_.accumulator_stores || !plan_.tma_stores.empty()) stores_in_accumulator_layout();
    // Loop-carried values need a second sweep to see wants from inside their bodies.
    for (int i = 0; i < 3; ++i) backward(f_.body);
    forward(f_.body);
    for (const Value* v : floating_)
      if (v->def && is_view_op(v->def->kind)) plan_.lazy.insert(v);
  }

 private:
  LayoutRef want(const Value* v) const {
    auto it = want_.find(v);
    return it == want_.end() ? nullptr : it->second;
  }
  void set_want(const Value* v, LayoutRef l) {
    if (!l || v->type.is_scalar() || want_.count(v)) return;
    want_[v] = l;
  }
  LayoutRef derived(const LinearLayout& ll, const std::string& how, LayoutRef from) {
    return plan_.intern(ll, how + "(#L" + std::to_string(from->id) + ")");
  }
  LayoutRef sliced(LayoutRef parent, int axis) {
    return plan_.intern(parent->ll.drop_dim(axis),
                        "slice{dim=" + std::to_string(axis) + ", parent=#L" + std::to_string(parent->id) + "}");
  }
  LayoutRef default_layout(const ir::Shape& s) {
    Blocked b = make_blocked(s, plan_.num_warps, row_major_order(static_cast<int>(s.size())), 1);
    return plan_.intern(to_linear(b, s), b.str());
  }
  // The layout a consumer wanting `w` for the result needs for tile operand `v` of op.
  LayoutRef operand_want(const Op& op, const Value* v, LayoutRef w) {
    if (!w || v->type.is_scalar()) return nullptr;
    switch (op.kind) {
      case OpKind::Broadcast: return derived(view_source_layout(op, w->ll), "project", w);
      case OpKind::ExpandDims: return sliced(w, op.axis);
      case OpKind::Reshape: return derived(view_source_layout(op, w->ll), "reshape", w);
      case OpKind::Trans: return derived(view_source_layout(op, w->ll), "trans", w);
      default: return w;
    }
  }

  // A dot's accumulator layout (an anchor) and, on tensor cores, its operand layouts.
  void plan_dot(const Op& op) {
    const auto& a = op.operand(0)->type;
    const auto& s = op.result()->type.shape;
    int nw = plan_.num_warps;
    MmaKind kind;
    if (!mma_applies(a.dtype, op.precision() == ir::DotPrecision::Tf32, s[0], s[1], a.shape[1], &kind, float8_mma_)) {
      Blocked b = dot_fma_blocked(s[0], s[1], nw);
      anchors_[&op] = plan_.intern(to_linear(b, s), b.str());
      return;
    }
    OpPlan& p = plan_.op(&op);
    p.mma = true;
    p.mma_kind = kind;
    if (wgmma_ && wgmma_applies(a.dtype, kind == MmaKind::Tf32, s[0], s[1], a.shape[1], nw)) {
      p.wgmma = true;
      p.wgmma_tiling = choose_wgmma_tiling(s[0], s[1], nw, chained(op));
      const WgmmaTiling& t = p.wgmma_tiling;
      auto tiling = "groups=[" + std::to_string(t.wg_m) + "," + std::to_string(t.wg_n) + "], n=" +
                    std::to_string(t.instr_n);
      anchors_[&op] = plan_.intern(wgmma_accumulator(s, t, nw), "wgmma_acc{" + tiling + "}");
      // B is read from shared memory in whatever layout it arrives (no conversion).
      mma_operands_[&op] = {plan_.intern(wgmma_operand_a(a.shape, t, nw, kind), "wgmma_a{" + tiling + "}"), nullptr};
      return;
    }
    p.mma_tiling = choose_mma_tiling(s[0], s[1], nw, chained(op));
    auto tiling = "warps=[" + std::to_string(p.mma_tiling.warps_m) + "," + std::to_string(p.mma_tiling.warps_n) + "]" +
                  (kind == MmaKind::Tf32 ? ", tf32" : kind == MmaKind::F8 ? ", f8" : "");
    anchors_[&op] = plan_.intern(mma_accumulator(s, p.mma_tiling, nw), "mma_acc{" + tiling + "}");
    mma_operands_[&op] = {
        plan_.intern(mma_operand_a(a.shape, p.mma_tiling, nw, kind), "mma_a{" + tiling + "}"),
        plan_.intern(mma_operand_b(op.operand(1)->type.shape, p.mma_tiling, nw, kind), "mma_b{" + tiling + "}")};
  }

  // A dot whose A operand is computed from another dot's result (FlashAttention's P V),
  // or whose result feeds another dot's A operand: warps along M keep the first
  // accumulator register-for-register the second A operand, and row statistics in-warp.
  bool chained(const Op& op) const {
    if (reaches_dot(op.operand(0), 0)) return true;
    bool feeds = false;
    ir::walk(f_.body, [&](Op& o) {
      if (o.kind == OpKind::Dot && &o != &op && reaches_value(o.operand(0), op.result(), 0)) feeds = true;
    });
    return feeds;
  }
  static bool reaches_dot(const Value* v, int depth) {
    if (!v->def || depth > 16) return false;
    if (v->def->kind == OpKind::Dot) return true;
    if (!is_elementwise(v->def->kind)) return false;
    for (auto* x : v->def->operands)
      if (reaches_dot(x, depth + 1)) return true;
    return false;
  }
  static bool reaches_value(const Value* v, const Value* target, int depth) {
    if (v == target) return true;
    if (!v->def || depth > 16 || !is_elementwise(v->def->kind)) return false;
    for (auto* x : v->def->operands)
      if (reaches_value(x, target, depth + 1)) return true;
    return false;
  }

  // ---- backward: what do consumers want? ----
  // GpuPlan::accumulator_stores: a store of a dot's accumulator (through elementwise
  // epilogue ops) writes in the accumulator's layout instead of converting through
  // shared memory (a persistent kernel's ring leaves no room for it). A TMA store
  // writes its block to shared memory from any layout: the accumulator's saves a
  // conversion.
  void stores_in_accumulator_layout() {
    ir::walk(f_.body, [&](Op& op) {
      if (op.kind != OpKind::Store || !anchors_.count(&op)) return;
      if (!plan_.accumulator_stores && !plan_.is_tma_store(&op)) return;
      LayoutRef acc = accumulator_layout(op.operand(1), 0);
      if (acc && acc->ll.shape() == op.operand(0)->type.shape) anchors_[&op] = acc;
    });
  }
  LayoutRef accumulator_layout(const Value* v, int depth) const {
    if (!v->def || v->type.is_scalar() || depth > 16) return nullptr;
    const Op& d = *v->def;
    if (d.kind == OpKind::Dot) return anchors_.at(&d);
    if (d.kind == OpKind::For) {
      for (size_t i = 0; i < d.results.size(); ++i)
        if (d.results[i] == v) return accumulator_layout(d.regions[0]->terminator()->operand(static_cast<int>(i)), depth + 1);
      return nullptr;
    }
    if (!is_elementwise(d.kind)) return nullptr;
    for (const Value* x : d.operands)
      if (LayoutRef l = accumulator_layout(x, depth + 1)) return l;
    return nullptr;
  }

  // A narrowing cast of a dot's accumulator (through an elementwise epilogue): the
  // consumer's wish stops here, so the epilogue runs in the accumulator's layout and
  // only the narrow result moves to the store's layout (forward's cast rule), instead
  // of the f32 tile moving through shared memory at the first epilogue op.
  bool narrows_accumulator(const Op& op) const {
    if (op.kind != OpKind::Cast || !op.result()->type.is_tile()) return false;
    const Value* x = op.operand(0);
    return byte_size(op.result()->type.dtype) < byte_size(x->type.dtype) && accumulator_layout(x, 0) != nullptr;
  }

  void backward(const Block& b) {
    for (auto it = b.ops.rbegin(); it != b.ops.rend(); ++it) {
      const Op& op = **it;
      auto anchor = anchors_.find(&op);
      if (is_memory_op(op.kind) && anchor != anchors_.end()) {
        if (LayoutRef w = broadcast_load_want(op, anchor->second)) anchor->second = w;
        for (auto* v : op.operands) set_want(v, anchor->second);
        continue;
      }
      switch (op.kind) {
        case OpKind::Dot: set_want(op.operand(2), anchors_.at(&op)); break;
        case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Trans:
        case OpKind::Scan: case OpKind::ClusterReduce:  // (a cluster reduction's tile: in place)
          if (op.result()->type.is_tile()) set_want(op.operand(0), operand_want(op, op.operand(0), want(op.result())));
          break;
        case OpKind::For: {
          const Block& body = *op.regions[0];
          backward(body);
          // Loop-carried values take wants from inside the loop only: a consumer after
          // the loop converts once, not every iteration.
          for (size_t i = 0; i < op.results.size(); ++i) set_want(op.operands[i + 3], want(body.args[i + 1]));
          break;
        }
        case OpKind::If:
          backward(*op.regions[0]);
          backward(*op.regions[1]);
          break;
        case OpKind::Yield: {
          const Op* parent = b.parent;
          for (size_t i = 0; i < op.operands.size(); ++i) {
            LayoutRef w = nullptr;
            if (parent && parent->kind == OpKind::For) w = want(parent->regions[0]->args[i + 1]);
            if (parent && parent->kind == OpKind::If) w = want(parent->results[i]);
            set_want(op.operands[i], w);
          }
          break;
        }
        default:
          if (is_elementwise(op.kind) && !narrows_accumulator(op))
            for (auto* v : op.operands) set_want(v, want(op.result()));
          break;
      }
    }
  }

  // A load broadcast over a larger tile (a per-column weight over a batch of rows) is
  // read in the layout its consumers want where that is another memory op's coalesced
  // layout projected onto it: the rows' own runs (e.g. 8-byte vectors on rows of 300
  // 16-bit columns) instead of its 16-byte vectors and a conversion through shared
  // memory and barriers per program. Null where that does not apply.
  LayoutRef broadcast_load_want(const Op& op, LayoutRef anchor) {
    const Value* r = op.results.empty() ? nullptr : op.result();
    LayoutRef w = r && op.kind == OpKind::Load ? want(r) : nullptr;
    if (!w || w == anchor || !r->type.is_tile()) return nullptr;
    const auto& shape = r->type.shape;
    // Only where the pointer's own alignment covers the wanted runs: a run it cannot move
    // whole would become element accesses of lanes a run apart (where runs are not
    // realigned), worse than the conversion.
    const Value* ptr = op.operand(0);
    const AxisInfo& ai = plan_.axis.get(ptr);
    int dim = contiguous_dim(ai, static_cast<int>(shape.size()));
    if (w->ll.contiguous_regs(dim) > aligned_pointer_vec(ptr, ai, dim)) return nullptr;
    for (auto& [m, ml] : memory_anchors_) {
      const auto& ms = m->operand(0)->type.shape;
      if (m == &op || ms.size() != shape.size() || ms == shape) continue;
      bool source = true;
      for (size_t d = 0; d < shape.size(); ++d) source = source && (shape[d] == ms[d] || shape[d] == 1);
      if (source && ml->ll.project_to(shape) == w->ll) return w;
    }
    return nullptr;
  }

  // ---- forward: assign ----
  // A "floating" value has a layout nobody asked for (constants, splats, aranges, shape
  // ops without a wanted layout, loop values still being decided): it is recomputed
  // in whatever layout a consumer needs, so consumers follow their other operands.
  void set(const Value* v, LayoutRef l, bool floating = false) {
    if (v->type.is_scalar()) return;
    plan_.layouts[v] = l;
    if (floating) floating_.insert(v);
    else floating_.erase(v);
  }
  bool floating(const Value* v) const { return floating_.count(v) != 0; }
  LayoutRef of(const Value* v) const { return v->type.is_scalar() ? nullptr : plan_.layouts.at(v); }
  void require(const Op& op, std::vector<LayoutRef> ls) { plan_.op(&op).operands = std::move(ls); }
  void require_same(const Op& op, LayoutRef l) {
    std::vector<LayoutRef> ls;
    for (auto* v : op.operands) ls.push_back(v->type.is_scalar() ? nullptr : l);
    require(op, ls);
  }

  void forward(const Block& b) {
    for (auto& up : b.ops) {
      const Op& op = *up;
      const Value* r = op.results.empty() ? nullptr : op.result();
      auto anchor = anchors_.find(&op);
      switch (op.kind) {
        case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::AlignPtr: break;
        case OpKind::ClusterReduce:
          if (r->type.is_tile()) {  // in place: each thread exchanges the registers it holds
            LayoutRef in = of(op.operand(0));
            set(r, in, floating(op.operand(0)));
            require(op, {in});
          } else {
            require_same(op, nullptr);  // scalars
          }
          break;
        case OpKind::Constant: case OpKind::Arange: case OpKind::Splat:
          if (r->type.is_tile()) set(r, want(r) ? want(r) : default_layout(r->type.shape), !want(r));
          require_same(op, nullptr);
          break;
        case OpKind::Broadcast: {
          LayoutRef l = want(r) ? want(r) : default_layout(r->type.shape);
          set(r, l, !want(r));
          require(op, {operand_want(op, op.operand(0), l)});
          break;
        }
        case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Trans: {
          const Value* x = op.operand(0);
          LayoutRef l = want(r);
          bool fl = !l && (x->type.is_scalar() || floating(x));
          if (!l && x->type.is_scalar()) l = default_layout(r->type.shape);
          if (!l) {
            LayoutRef s = of(x);
            if (op.kind == OpKind::ExpandDims) l = derived(s->ll.insert_dim(op.axis), "expand", s);
            if (op.kind == OpKind::Reshape) l = derived(s->ll.reshape(r->type.shape), "reshape", s);
            if (op.kind == OpKind::Trans) l = derived(s->ll.permute(op.perm), "trans", s);
          }
          set(r, l, fl);
          require(op, {operand_want(op, x, l)});
          break;
        }
        case OpKind::Load: case OpKind::Store: case OpKind::AtomicRMW: case OpKind::AtomicCas:
          if (anchor == anchors_.end()) {  // scalar access
            require_same(op, nullptr);
            break;
          }
          if (r) set(r, anchor->second);
          require_same(op, anchor->second);
          break;
        case OpKind::Reduce: {
          LayoutRef in = of(op.operand(0));
          require(op, {in});
          if (r->type.is_tile()) set(r, sliced(in, op.axis), floating(op.operand(0)));
          break;
        }
        case OpKind::Scan: {
          LayoutRef in = of(op.operand(0));
          set(r, in, floating(op.operand(0)));
          require(op, {in});
          break;
        }
        case OpKind::Dot: {
          LayoutRef l = anchor->second;
          set(r, l);
          auto mma = mma_operands_.find(&op);
          if (mma != mma_operands_.end())
            require(op, {mma->second.first, mma->second.second ? mma->second.second : of(op.operand(1)), l});
          else require(op, {of(op.operand(0)), of(op.operand(1)), l});
          break;
        }
        case OpKind::For: loop(op); break;
        case OpKind::If: branch(op); break;
        case OpKind::Yield: break;  // set by the parent
        case OpKind::Barrier: break;
        default:
          if (is_elementwise(op.kind)) {
            if (r->type.is_scalar()) {
              require_same(op, nullptr);
              break;
            }
            LayoutRef l = want(r);
            bool fl = false;
            // A narrowing cast of a costly tile (a dot's accumulator headed for a store)
            // keeps its operand's layout: the conversion moves the narrow elements
            // (half the shared-memory bytes and traffic for f32 -> 16-bit).
            if (l && op.kind == OpKind::Cast && r->type.is_tile()) {
              const Value* x = op.operand(0);
              if (!floating(x) && of(x) && of(x) != l && byte_size(r->type.dtype) < byte_size(x->type.dtype) &&
                  !cheap_to_recompute(x))
                l = of(x);
            }
            // Follow an operand that is costly to move: not a shape op's result or a
            // mask computed from indices (cheap to produce in another layout; a dot
            // accumulator is not).
            auto costly = [](const Value* v) { return !(v->def && is_view_op(v->def->kind)) && !cheap_to_recompute(v); };
            for (int pass = 0; pass < 2 && !l; ++pass)
              for (auto* v : op.operands)
                if (!v->type.is_scalar() && !floating(v) && (pass == 1 || costly(v))) {
                  l = of(v);
                  break;
                }
            if (!l) {
              l = of(op.operand(0));
              fl = true;
            }
            set(r, l, fl);
            require_same(op, l);
          }
          break;
      }
    }
  }

  // Loop-carried values take the layout their yields produce (found by iterating the
  // body), unless a consumer inside the loop wants a specific one.
  void loop(const Op& op) {
    const Block& body = *op.regions[0];
    const Op& yield = *body.terminator();
    size_t n = op.results.size();
    std::vector<LayoutRef> carried(n, nullptr);
    std::vector<bool> fixed(n, false), fl(n, false);
    for (size_t i = 0; i < n; ++i) {
      const Value* arg = body.args[i + 1];
      if (!arg->type.is_tile()) continue;
      if (want(arg)) {
        carried[i] = want(arg);
        fixed[i] = true;
      } else {
        carried[i] = of(op.operands[i + 3]);
        fl[i] = true;
      }
    }
    for (int iter = 0; iter < 4; ++iter) {
      for (size_t i = 0; i < n; ++i) set(body.args[i + 1], carried[i], fl[i]);
      forward(body);
      bool changed = false;
      for (size_t i = 0; i < n; ++i) {
        const Value* y = yield.operands[i];
        if (fixed[i] || !y->type.is_tile() || floating(y)) continue;
        if (of(y) != carried[i] || fl[i]) {
          changed = changed || of(y) != carried[i];
          carried[i] = of(y);
          fl[i] = false;
        }
      }
      if (!changed) break;
    }
    std::vector<LayoutRef> req{nullptr, nullptr, nullptr};
    for (size_t i = 0; i < n; ++i) {
      req.push_back(carried[i]);
      set(op.results[i], carried[i], fl[i]);
    }
    require(op, req);
    require(yield, carried);
  }

  void branch(const Op& op) {
    forward(*op.regions[0]);
    forward(*op.regions[1]);
    const Op* ys[2] = {op.regions[0]->terminator(), op.regions[1]->terminator()};
    std::vector<LayoutRef> ls;
    for (size_t i = 0; i < op.results.size(); ++i) {
      const Value* r = op.results[i];
      LayoutRef l = nullptr;
      bool fl = false;
      if (r->type.is_tile()) {
        l = want(r);
        for (int k = 0; k < 2 && !l; ++k)
          if (!floating(ys[k]->operands[i])) l = of(ys[k]->operands[i]);
        if (!l) {
          l = of(ys[0]->operands[i]);
          fl = true;
        }
      }
      ls.push_back(l);
      set(r, l, fl);
    }
    require(op, {nullptr});
    require(*ys[0], ls);
    require(*ys[1], ls);
  }

  const ir::Function& f_;
  GpuPlan& plan_;
  AnchorMap anchors_;
  std::vector<std::pair<const Op*, LayoutRef>> memory_anchors_;  // choose_memory_anchors' picks
  std::unordered_map<const Value*, LayoutRef> want_;
  std::unordered_set<const Value*> floating_;
  std::unordered_map<const Op*, std::pair<LayoutRef, LayoutRef>> mma_operands_;
  bool wgmma_;
  bool float8_mma_;  // mma.sync on 8-bit floats (sm_89+); else their dots use FMAs
};

}  // namespace

LayoutRef GpuPlan::intern(const LinearLayout& ll, const std::string& desc) {
  for (auto& e : pool)
    if (e.ll == ll) return &e;
  pool.push_back(LayoutEntry{ll, desc, static_cast<int>(pool.size())});
  return &pool.back();
}

LayoutRef GpuPlan::layout(const ir::Value* v) const {
  auto it = layouts.find(v);
  return it == layouts.end() ? nullptr : it->second;
}

const OpPlan& GpuPlan::op(const ir::Op* o) const {
  static const OpPlan empty;
  auto it = ops.find(o);
  return it == ops.end() ? empty : it->second;
}

void assign_layouts(const ir::Function& f, const Target& t, GpuPlan& plan) {
  plan.num_warps = f.num_warps;
  LayoutPass(f, plan, TargetInfo(t).has_wgmma(), t.sm >= 89).run();
  choose_vector_widths(f, plan);
}

}  // namespace tilefuse::nvptx
