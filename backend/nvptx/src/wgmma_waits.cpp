// Where the wgmma groups of a loop body are waited for (OpPlan::wgmma_defer,
// GpuPlan::wgmma_waits). A dot's group is left in flight and its result waited for
// just before the first op of the body that reads it, so its MMAs overlap everything in
// between (FlashAttention-3's intra-warpgroup overlap: the next block's Q·Kᵀ runs while
// this block's softmax does). Groups complete in commit order, so a read placed after n
// younger groups were committed waits with `wgmma.wait_group n`.
//
// A result carried to the next iteration (yield -> block argument) stays in flight
// across the back edge only when the next iteration reads it as the accumulator of a
// wgmma (a GEMM main loop): the MMAs chain on the same registers. Anything else would
// read registers still being written (ptxas then serializes every wgmma, C7514), so
// such results are waited for before the yield. Groups in flight across the back
// edge still read their shared-memory tiles when the next iteration starts, so their
// operands must be read by descriptor from copies, and the pipeline keeps one more buffer (lag 1: copies stages - 2 iterations ahead, which needs
// 3 stages or more), every iteration ends waiting for the groups of the one before, and
// the loop exit waits for the last.
//
// Loops qualify when their dots are all wgmma dots at the top level of the body
// (unconditional: every iteration commits the same groups in the same order).
#include <algorithm>

#include "passes.hpp"

namespace tilefuse::nvptx {

using ir::Block;
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

struct LoopWaits {
  const Op& loop;
  const Block& body;
  GpuPlan& plan;
  std::unordered_map<const Value*, std::vector<std::pair<const Op*, int>>>& uses;
  std::unordered_map<const Op*, int> pos;  // top-level ops of the body
  std::vector<int> dot_pos;                 // positions of the body's dots, in order

  // The op of the body that `u` is or is nested in; null outside the body.
  const Op* top(const Op* u) const {
    while (u && u->parent != &body) u = u->parent && u->parent->parent ? u->parent->parent : nullptr;
    return u;
  }
  int dots_between(int after, int before) const {  // dots at positions in (after, before)
    return static_cast<int>(std::count_if(dot_pos.begin(), dot_pos.end(), [&](int p) { return p > after && p < before; }));
  }
  static bool accumulates(const Op* u, int idx, const GpuPlan& plan) {
    return u->kind == OpKind::Dot && idx == 2 && plan.op(u).wgmma;
  }

  // The first reader of `v` in the body that needs its value (an accumulating wgmma
  // does not); false when a reader is outside the body or passes it on unread.
  bool first_reader(const Value* v, const Op*& first, bool allow_yield) const {
    first = nullptr;
    auto it = uses.find(v);
    if (it == uses.end()) return true;
    for (auto [u, idx] : it->second) {
      if (accumulates(u, idx, plan) && u->parent == &body) continue;
      if (u == body.terminator()) {
        if (!allow_yield) return false;
        continue;
      }
      const Op* t = top(u);
      if (!t) return false;
      if (!first || pos.at(t) < pos.at(first)) first = t;
    }
    return true;
  }

  void add_wait(const Op* at, const Value* v, int pending) {
    auto& w = plan.wgmma_waits[at];
    if (w.values.empty() || pending < w.pending) w.pending = pending;
    if (v && std::find(w.values.begin(), w.values.end(), v) == w.values.end()) w.values.push_back(v);
  }

  // Warp-specialized loops: each TMA stage goes back to the producer at the wait that
  // completes the one dot reading it (FlashAttention-3 releases K right after Q.K^T's
  // wait), not at the next iteration's issue: the producer refills it a softmax earlier.
  // Only where every TMA load of the pipeline is read by exactly one dot whose wait is
  // in the body; other loops release at the issue (lower_async_copy.cpp).
  void plan_early_release(const std::vector<std::pair<const Op*, const Op*>>& completes) {
    auto pl = plan.pipelines.find(&loop);
    const auto& loops = plan.producer_loops;
    if (pl == plan.pipelines.end() ||
        std::find(loops.begin(), loops.end(), &loop) == loops.end())
      return;
    for (const Op* ld : pl->second.loads) {
      if (plan.op(ld).tma_map < 0) return;
      int readers = 0;
      bool completed = false;
      for (int p : dot_pos) {
        const Op* d = body.ops[p].get();
        bool reads = async_source(plan, d->operand(0)) == ld || async_source(plan, d->operand(1)) == ld;
        if (!reads) continue;
        ++readers;
        for (auto& c : completes) completed = completed || c.second == d;
      }
      if (readers != 1 || !completed) return;
    }
    plan.early_release_loops.insert(&loop);
    for (auto& [at, d] : completes) plan.wgmma_releases[at].push_back(d);
  }

  void run(bool may_cross) {
    const Op* yield = body.terminator();
    int n = static_cast<int>(dot_pos.size());
    bool crossing = false;
    std::vector<int> exit_results;
    std::vector<std::pair<const Op*, const Op*>> completes;  // (op whose wait completes it, dot)
    for (auto& up : body.ops) {
      const Op* d = up.get();
      if (d->kind != OpKind::Dot) continue;
      int pd = pos.at(d);
      int after = dots_between(pd, 1 << 30);
      const Value* r = d->result();
      const Op* first = nullptr;
      if (!first_reader(r, first, true)) continue;  // waited for at the dot
      std::vector<int> carried;  // yield operands it becomes
      for (int k = 0; k < yield->num_operands(); ++k)
        if (yield->operand(k) == r) carried.push_back(k);
      if (first) {  // read in this iteration: complete before the yield passes it on
        plan.op(d).wgmma_defer = true;
        add_wait(first, r, dots_between(pd, pos.at(first)));
        completes.push_back({first, d});
        continue;
      }
      if (carried.empty()) continue;  // never read: keep the plain wait
      // Only into an accumulating wgmma: a value in flight that anything else reads
      // next iteration needs a register copy at the back edge, and ptxas serializes
      // every wgmma whose accumulator a non-wgmma instruction reads (C7514).
      bool ok = may_cross;
      for (int k : carried) {
        const Op* f = nullptr;
        ok = ok && first_reader(body.args[k + 1], f, false) && !f;
      }
      if (!ok) {  // cannot cross the back edge: waited for at the end of the iteration
        plan.op(d).wgmma_defer = true;
        add_wait(yield, r, after);
        completes.push_back({yield, d});
        continue;
      }
      plan.op(d).wgmma_defer = true;
      crossing = true;
      for (int k : carried) exit_results.push_back(k);
    }
    if (!crossing) return plan_early_release(completes);
    // Each iteration ends with the groups of the previous one complete (their buffers
    // are refilled after the next barrier).
    add_wait(yield, nullptr, n);
    plan.wgmma_exit_waits[&loop] = exit_results;
    if (auto pl = plan.pipelines.find(&loop); pl != plan.pipelines.end()) {
      pl->second.lag = 1;
      for (const Op* ld : pl->second.loads) plan.op(ld).ahead = pl->second.ahead();
    }
  }
};

}  // namespace

void plan_wgmma_waits(const ir::Function& f, GpuPlan& plan) {
  std::unordered_map<const Value*, std::vector<std::pair<const Op*, int>>> uses;
  ir::walk(f.body, [&](Op& op) {
    for (int i = 0; i < op.num_operands(); ++i) uses[op.operand(i)].push_back({&op, i});
  });
  ir::walk(f.body, [&](Op& op) {
    if (op.kind != OpKind::For) return;
    const Block& body = *op.regions[0];
    LoopWaits lw{op, body, plan, uses, {}, {}};
    bool eligible = true;
    int i = 0;
    for (auto& o : body.ops) {
      lw.pos[o.get()] = i;
      if (o->kind == OpKind::Dot) {
        eligible = eligible && plan.op(o.get()).wgmma;
        lw.dot_pos.push_back(i);
      }
      for (auto& region : o->regions)
        ir::walk(*region, [&](Op& inner) { eligible = eligible && inner.kind != OpKind::Dot; });
      ++i;
    }
    if (!eligible || lw.dot_pos.empty()) return;
    // An accumulator computed in the body before another dot's issue (a rescaled
    // FlashAttention O): pinned there, so that LLVM does not sink its arithmetic past
    // that issue, where reading registers a wgmma wrote would make ptxas wait for every
    // group in flight (C7517).
    for (int d : lw.dot_pos) {
      const Op* dot = body.ops[d].get();
      const Value* c = dot->operand(2);
      if (!c->def || c->def->parent != &body || !is_elementwise(c->def->kind) || c->type.dtype != DType::f32) continue;
      if (lw.dots_between(lw.pos.at(c->def), d) > 0) plan.pinned.insert(c);
    }
    // Crossing the back edge needs every operand read by descriptor from a buffer the
    // next iteration leaves alone: a copy made before the loop, or one of a pipeline of 3
    // stages or more (unpipelined copies reuse one buffer). An operand staged through
    // shared memory by the dot itself (or held in registers) is rewritten by the next
    // iteration's dot while this one's MMAs may still read it: a GEMM over plain loads
    // whose next tile was ready at once (a K tail, all masked) got rows 64+ wrong.
    bool may_cross = true;
    for (auto& o : body.ops)
      if (o->kind == OpKind::Dot)
        for (int k = 0; k < 2; ++k) {
          const Op* ld = wgmma_smem_source(plan, o->operand(k), k);
          if (!ld) {
            may_cross = false;
          } else if (ld->parent == &body) {
            auto pl = plan.pipelines.find(&op);
            may_cross = may_cross && pl != plan.pipelines.end() && pl->second.stages >= 3;
          }
        }
    lw.run(may_cross);
  });
}

}  // namespace tilefuse::nvptx
