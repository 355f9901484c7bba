// Which pipelined async loads the TMA engine moves (see OpPlan::tma_map). A tensor-view
// load (Op::view_rank) qualifies when its block only feeds warpgroup MMAs (so its shared
// buffer has the swizzled layout a TMA box with the same swizzle produces), it is
// pipelined over a loop at the top of the kernel (mbarrier phases start at 0 once per
// launch), and the launch can encode its descriptor: the view's base is a pointer
// argument known to be 16-byte aligned, its dimensions and strides are arguments or
// constants, the innermost stride is 1 and the others are multiples of 16 bytes.
// Anything else keeps its cp.async copies, which read exactly the same elements.
#include <algorithm>
#include <iostream>
#include <optional>
#include <unordered_set>

#include "passes.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

using ParamIndex = std::unordered_map<const Value*, int>;

// What the launch knows: an argument, a constant, or the grid's size along an axis.
std::optional<TensorMapSpec::Value> host_value(const Value* v, const ParamIndex& params) {
  if (auto it = params.find(v); it != params.end()) return TensorMapSpec::Value{it->second, 0};
  if (v->def && v->def->kind == OpKind::Constant && is_int(v->type.dtype))
    return TensorMapSpec::Value{-1, v->def->ival};
  if (v->def && v->def->kind == OpKind::NumPrograms) return TensorMapSpec::Value{-1, 0, v->def->axis};
  // A widening cast of any of these (an I32 argument used as an I64 extent).
  if (v->def && v->def->kind == OpKind::Cast && is_int(v->type.dtype) && is_int(v->def->operand(0)->type.dtype) &&
      byte_size(v->type.dtype) >= byte_size(v->def->operand(0)->type.dtype) && is_signed_int(v->def->operand(0)->type.dtype))
    return host_value(v->def->operand(0), params);
  return std::nullopt;
}

std::optional<TensorMapSpec> tma_spec(const ir::Function& f, const GpuPlan& plan, const Op* ld,
                                      const ParamIndex& params, std::string& why) {
  auto no = [&](const char* reason) {
    why = reason;
    return std::nullopt;
  };
  const OpPlan& p = plan.op(ld);
  const ir::Type& t = ld->result()->type;
  if (ld->view_rank == 0 || !p.async_copy || p.stages < 2 || !read_by_wgmma(plan, ld) || t.rank() != 2)
    return no("not a pipelined 2-D view block read by warpgroup MMAs");
  const int es = byte_size(t.dtype), rank = ld->view_rank;
  const LinearLayout& l = plan.layout(ld->result())->ll;
  if (contiguous_dim(l) != 1) return no("its layout is not contiguous along the last dimension");
  const int swizzle = swizzle_bytes(t.shape, 1, es);
  const int64_t rows = t.shape[0], inner = swizzle / es;
  if (swizzle < 32 || rows > 256 || t.shape[1] % inner) return no("rows under 32 bytes or over 256 rows");
  // Each further column block must start where the swizzle pattern restarts.
  if (t.shape[1] > inner && rows * swizzle % 1024) return no("column blocks off the swizzle period");
  auto base = params.find(ld->view_base());
  if (base == params.end() || f.params[base->second].divisibility < 16)
    return no("the base is not a 16-byte-aligned pointer argument");
  TensorMapSpec s;
  s.dtype = t.dtype;
  s.base_param = base->second;
  s.swizzle_bytes = swizzle;
  for (int d = 0; d < rank; ++d) {
    if (ld->view_coord(d)->type.dtype != DType::i32) return no("a coordinate is not i32");
    auto dim = host_value(ld->view_dim(d), params);
    auto stride = host_value(ld->view_stride(d), params);
    if (!dim || !stride || (dim->param < 0 && dim->grid_axis < 0 && dim->constant < 1))
      return no("a dimension or stride is not an argument, a constant or the grid size");
    if (d == rank - 1) {
      if (stride->param >= 0 || stride->grid_axis >= 0 || stride->constant != 1)
        return no("the innermost stride is not the constant 1");
    } else if (stride->grid_axis >= 0) {
      return no("a stride is the grid size");
    } else if (stride->param >= 0) {
      if (f.params[stride->param].divisibility * es % 16) return no("a stride is not known to be a multiple of 16 bytes");
    } else if (stride->constant < 1 || stride->constant * es % 16) {
      return no("a constant stride is not a multiple of 16 bytes");
    }
    s.dims.push_back(*dim);
    s.strides.push_back(*stride);
    s.box.push_back(d < rank - 2 ? 1 : d == rank - 2 ? static_cast<int>(rows) : static_cast<int>(inner));
  }
  return s;
}

// The top-level ops before `loop` that its copies' coordinates and its bounds depend
// on, when all are pure scalar ops (what the producer warp evaluates); false when one
// is not.
bool producer_dependencies(const ir::Function& f, const GpuPlan& plan, const Op* loop,
                           std::unordered_set<const Op*>& need) {
  const GpuPlan::Pipeline& pl = plan.pipelines.at(loop);
  std::unordered_set<const Op*> inside;
  std::unordered_set<const Op*> in_slice(pl.slice.begin(), pl.slice.end());
  std::vector<const Value*> work(loop->operands.begin(), loop->operands.begin() + 3);
  for (const Op* ld : pl.loads)
    for (int d = 0; d < ld->view_rank; ++d) work.push_back(ld->view_coord(d));
  const ir::Block& body = *loop->regions[0];
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (!v->def) continue;  // parameters, the induction variable
    const Op* d = v->def;
    if (defined_within(v, body)) {  // the coordinates' part of the address slice
      if (!in_slice.count(d)) return false;
      if (inside.insert(d).second) work.insert(work.end(), d->operands.begin(), d->operands.end());
      continue;
    }
    if (d->parent != &f.body) return false;
    if (!v->type.is_scalar() || d->regions.size() || d->kind == OpKind::Load || d->kind == OpKind::Store ||
        d->kind == OpKind::AtomicRMW || d->kind == OpKind::AtomicCas || d->kind == OpKind::ClusterReduce)
      return false;
    if (need.insert(d).second) work.insert(work.end(), d->operands.begin(), d->operands.end());
  }
  return true;
}

// Whether load `b` can use load `a`'s ring of stages (same view block, same stages).
bool same_ring(const GpuPlan& plan, const Op* a, const Op* b) {
  const OpPlan &pa = plan.op(a), &pb = plan.op(b);
  return pa.tma_map == pb.tma_map && pa.stages == pb.stages && a->result()->type == b->result()->type;
}

// Pipelined top-level loops whose copies are all TMA and line up load by load, no
// clusters, nothing pipelined below the top level: the producer warp can run those
// loops' copies alone, in order.
void plan_warp_specialization(const ir::Function& f, GpuPlan& plan) {
  if (!(f.warp_specialize || knob_on("TILEFUSE_WARP_SPECIALIZE")) || f.cluster_size != 1 || f.num_warps % 4) return;
  auto no = [&](const std::string& why) {
    if (knob_on("TILEFUSE_DEBUG")) std::cerr << "tilefuse: no warp specialization for '" << f.name << "': " << why << "\n";
  };
  if (f.persistent) return no("it is persistent (its producer would run the copies of one program only)");
  std::vector<const Op*> loops;
  for (const auto& top : f.body.ops)
    if (plan.pipelines.count(top.get())) loops.push_back(top.get());
  if (loops.empty() || loops.size() != plan.pipelines.size()) return no("no pipelined loop, or one below the top level");
  const auto& first = plan.pipelines.at(loops[0]).loads;
  for (const Op* loop : loops) {
    const auto& loads = plan.pipelines.at(loop).loads;
    if (loads.size() != first.size()) return no("its loops copy different numbers of blocks");
    for (size_t i = 0; i < loads.size(); ++i)
      if (plan.op(loads[i]).tma_map < 0 || !same_ring(plan, first[i], loads[i]))
        return no("a copy is not TMA, or its loops copy different blocks");
  }
  std::unordered_set<const Op*> need;
  for (const Op* loop : loops)
    if (!producer_dependencies(f, plan, loop, need))
      return no("the copies' coordinates depend on more than scalar ops before the loop");
  plan.producer_loops = loops;
  for (const auto& o : f.body.ops)
    if (need.count(o.get())) plan.producer_ops.push_back(o.get());
  for (const Op* loop : loops) {
    const auto& loads = plan.pipelines.at(loop).loads;
    for (size_t i = 0; i < loads.size(); ++i) plan.ring_leader[loads[i]] = first[i];
  }
  plan.pingpong = f.num_warps == 8 && knob_on("TILEFUSE_PINGPONG");
}

// Persistent kernels: the one pipelined top-level loop whose copies are all TMA, when
// the next program's coordinates and bounds can be evaluated by thread 0 at its exit.
void plan_prefetch(const ir::Function& f, GpuPlan& plan) {
  if (!f.persistent || plan.warp_specialized() || plan.pipelines.size() != 1) return;
  const Op* loop = plan.pipelines.begin()->first;
  auto no = [&](const std::string& why) {
    if (knob_on("TILEFUSE_DEBUG"))
      std::cerr << "tilefuse: '" << f.name << "' does not prefetch the next program's copies: " << why << "\n";
  };
  if (loop->parent != &f.body) return no("its pipelined loop is not at the top level");
  for (const Op* ld : plan.pipelines.at(loop).loads)
    if (plan.op(ld).tma_map < 0) return no("a pipelined copy is not TMA");
  std::unordered_set<const Op*> need;
  if (!producer_dependencies(f, plan, loop, need))
    return no("the copies' coordinates depend on more than scalar ops before the loop");
  plan.prefetch_loop = loop;
  for (const auto& o : f.body.ops)
    if (need.count(o.get())) plan.prefetch_ops.push_back(o.get());
}

}  // namespace

int tma_barrier_bytes(const GpuPlan& plan, const ir::Op* ld) {
  const OpPlan& p = plan.op(ld);
  int per_stage = plan.warp_specialized() ? 16 : 8;
  return p.tma_map >= 0 ? (per_stage * p.stages + 15) / 16 * 16 : 0;
}

void plan_tma_copies(const ir::Function& f, const Target& t, GpuPlan& plan) {
  if (t.sm < 90 || knob("TILEFUSE_TMA") == "0") return;
  ParamIndex params;
  for (size_t i = 0; i < f.params.size(); ++i) params[f.params[i].value] = static_cast<int>(i);
  for (const auto& top : f.body.ops) {  // body order: the hidden parameters' order
    auto it = plan.pipelines.find(top.get());
    if (it == plan.pipelines.end()) continue;
    const GpuPlan::Pipeline& pl = it->second;
    for (const Op* ld : pl.loads) {
      std::string why;
      if (auto s = tma_spec(f, plan, ld, params, why)) {
        // Loops reading the same view's blocks (attention's two loops) share its map.
        auto same = std::find(plan.tensor_maps.begin(), plan.tensor_maps.end(), *s);
        plan.op(ld).tma_map = static_cast<int>(same - plan.tensor_maps.begin());
        if (same == plan.tensor_maps.end()) plan.tensor_maps.push_back(*s);
      } else if (ld->view_rank && knob_on("TILEFUSE_DEBUG")) {
        std::cerr << "tilefuse: view load of " << ld->result()->type.str() << " at " << ld->loc.str()
                  << " is copied by cp.async, not TMA: " << why << "\n";
      }
    }
    // The cp.async loads left count their groups among themselves, in issue order.
    int count = 0, index = 0;
    for (const Op* ld : pl.loads) count += plan.op(ld).tma_map < 0;
    for (const Op* ld : pl.loads) {
      OpPlan& p = plan.op(ld);
      p.async_count = count;
      p.async_index = p.tma_map < 0 ? ++index : 0;
    }
  }
  plan_warp_specialization(f, plan);
  plan_prefetch(f, plan);
}

}  // namespace tilefuse::nvptx
