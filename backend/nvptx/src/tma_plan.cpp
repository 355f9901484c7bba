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

// The view's base, dimensions and strides as the launch sees them (into `s`), when it
// can encode a tensor map of them: a 16-byte-aligned pointer argument, dimensions and
// strides that are arguments, constants or grid sizes, the innermost stride 1 and the
// others multiples of 16 bytes. `box_rows` x `box_inner`: the box of the last two
// dimensions (one element of the others).
//
// The engine also needs the innermost coordinate to be a multiple of 16 bytes (else
// the copy faults: an illegal instruction), and a store writes whole 16-byte chunks of
// a row (past the view's innermost extent up to the next 16-byte boundary, where a
// plain store writes nothing), so a store needs that extent in 16-byte multiples too.
bool view_map(const ir::Function& f, const AxisInfoMap& axis, const Op* op, const ParamIndex& params,
              int64_t box_rows, int64_t box_inner, TensorMapSpec& s, std::string& why) {
  const int es = byte_size(op->view_base()->type.dtype), rank = op->view_rank;
  if (axis.get(op->view_coord(rank - 1)).divisibility[0] * es % 16)
    return why = "the innermost coordinate is not known to be a multiple of 16 bytes", false;
  if (op->kind == OpKind::Store) {
    auto inner = host_value(op->view_dim(rank - 1), params);
    int64_t div = !inner || inner->grid_axis >= 0 ? 1
                  : inner->param >= 0           ? f.params[inner->param].divisibility
                                                : highest_pow2_divisor(inner->constant);
    if (div * es % 16) return why = "the innermost dimension is not known to be a multiple of 16 bytes", false;
  }
  auto base = params.find(op->view_base());
  if (base == params.end() || f.params[base->second].divisibility < 16)
    return why = "the base is not a 16-byte-aligned pointer argument", false;
  s.dtype = op->view_base()->type.dtype;
  s.base_param = base->second;
  for (int d = 0; d < rank; ++d) {
    if (op->view_coord(d)->type.dtype != DType::i32) return why = "a coordinate is not i32", false;
    auto dim = host_value(op->view_dim(d), params);
    auto stride = host_value(op->view_stride(d), params);
    if (!dim || !stride || (dim->param < 0 && dim->grid_axis < 0 && dim->constant < 1))
      return why = "a dimension or stride is not an argument, a constant or the grid size", false;
    if (d == rank - 1) {
      if (stride->param >= 0 || stride->grid_axis >= 0 || stride->constant != 1)
        return why = "the innermost stride is not the constant 1", false;
    } else if (stride->grid_axis >= 0) {
      return why = "a stride is the grid size", false;
    } else if (stride->param >= 0) {
      if (f.params[stride->param].divisibility * es % 16)
        return why = "a stride is not known to be a multiple of 16 bytes", false;
    } else if (stride->constant < 1 || stride->constant * es % 16) {
      return why = "a constant stride is not a multiple of 16 bytes", false;
    }
    s.dims.push_back(*dim);
    s.strides.push_back(*stride);
    s.box.push_back(d < rank - 2 ? 1 : d == rank - 2 ? static_cast<int>(box_rows) : static_cast<int>(box_inner));
  }
  return true;
}

// A 2-D block of `shape` moves as boxes of 128-byte-swizzled (or narrower) rows, one
// per column block of `swizzle` bytes; the boxes' rows must fit the engine (<= 256) and
// each further column block start where the swizzle pattern restarts.
bool box_shape_ok(const Shape& shape, int es, std::string& why) {
  const int swizzle = swizzle_bytes(shape, 1, es);
  const int64_t rows = shape[0], inner = swizzle ? swizzle / es : 0;
  if (swizzle < 32 || rows > 256 || shape[1] % inner) return why = "rows under 32 bytes or over 256 rows", false;
  if (shape[1] > inner && rows * swizzle % 1024) return why = "column blocks off the swizzle period", false;
  return true;
}

// `one_shot`: a copy outside loops (the producer's, GpuPlan::producer_copies).
std::optional<TensorMapSpec> tma_spec(const ir::Function& f, const GpuPlan& plan, const Op* ld,
                                      const ParamIndex& params, std::string& why, bool one_shot = false) {
  const OpPlan& p = plan.op(ld);
  const ir::Type& t = ld->result()->type;
  if (ld->view_rank == 0 || !p.async_copy || (p.stages < 2 && !one_shot) || !read_by_wgmma(plan, ld) || t.rank() != 2)
    return why = "not a pipelined 2-D view block read by warpgroup MMAs", std::nullopt;
  const int es = byte_size(t.dtype);
  if (contiguous_dim(plan.layout(ld->result())->ll) != 1)
    return why = "its layout is not contiguous along the last dimension", std::nullopt;
  if (!box_shape_ok(t.shape, es, why)) return std::nullopt;
  TensorMapSpec s;
  s.swizzle_bytes = swizzle_bytes(t.shape, 1, es);
  if (!view_map(f, plan.axis, ld, params, t.shape[0], s.swizzle_bytes / es, s, why)) return std::nullopt;
  return s;
}

// A view store TMA can write: a 2-D block (see box_shape_ok) of a view the launch can
// describe, outside any warp-specialized producer's reach (stores run in the consumers).
std::optional<TensorMapSpec> tma_store_spec(const ir::Function& f, const AxisInfoMap& axis, const Op* st,
                                            const ParamIndex& params, std::string& why) {
  const ir::Type& t = st->operand(1)->type;
  if (st->view_rank < 2 || t.rank() != 2) return why = "not a 2-D block", std::nullopt;
  const int es = byte_size(t.dtype);
  if (!box_shape_ok(t.shape, es, why)) return std::nullopt;
  TensorMapSpec s;
  s.swizzle_bytes = swizzle_bytes(t.shape, 1, es);
  if (!view_map(f, axis, st, params, t.shape[0], s.swizzle_bytes / es, s, why)) return std::nullopt;
  return s;
}

ParamIndex param_index(const ir::Function& f) {
  ParamIndex params;
  for (size_t i = 0; i < f.params.size(); ++i) params[f.params[i].value] = static_cast<int>(i);
  return params;
}

// Collects into `need` the top-level ops that the values of `work` depend on, when all
// are pure scalar ops (what the producer warp evaluates); values defined in `body` (a
// loop's body, or null) must be ops of its address slice `in_slice`. False otherwise.
bool scalar_dependencies(const ir::Function& f, std::vector<const Value*> work, const ir::Block* body,
                         const std::unordered_set<const Op*>& in_slice, std::unordered_set<const Op*>& need) {
  std::unordered_set<const Op*> inside;
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (!v->def) continue;  // parameters, the induction variable
    const Op* d = v->def;
    if (body && defined_within(v, *body)) {  // the coordinates' part of the address slice
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

// The top-level ops before `loop` that its copies' coordinates and its bounds depend
// on (see scalar_dependencies).
bool producer_dependencies(const ir::Function& f, const GpuPlan& plan, const Op* loop,
                           std::unordered_set<const Op*>& need) {
  const GpuPlan::Pipeline& pl = plan.pipelines.at(loop);
  std::unordered_set<const Op*> in_slice(pl.slice.begin(), pl.slice.end());
  std::vector<const Value*> work(loop->operands.begin(), loop->operands.begin() + 3);
  for (const Op* ld : pl.loads)
    for (int d = 0; d < ld->view_rank; ++d) work.push_back(ld->view_coord(d));
  return scalar_dependencies(f, work, loop->regions[0].get(), in_slice, need);
}

// The cp.async copies among `loads` (a block's async loads, in issue order) count their
// groups among themselves; TMA copies commit none.
void number_cp_async_groups(GpuPlan& plan, const std::vector<const Op*>& loads) {
  int count = 0, index = 0;
  for (const Op* ld : loads) count += plan.op(ld).tma_map < 0;
  for (const Op* ld : loads) {
    OpPlan& p = plan.op(ld);
    p.async_count = count;
    p.async_index = p.tma_map < 0 ? ++index : 0;
  }
}

// Index of TMA spec `s` in the kernel's tensor maps (loads of one view share a map).
int tensor_map_index(GpuPlan& plan, const TensorMapSpec& s) {
  auto same = std::find(plan.tensor_maps.begin(), plan.tensor_maps.end(), s);
  if (same == plan.tensor_maps.end()) return plan.tensor_maps.push_back(s), static_cast<int>(plan.tensor_maps.size()) - 1;
  return static_cast<int>(same - plan.tensor_maps.begin());
}

// The top-level view loads the producer copies too (GpuPlan::producer_copies), their
// coordinates' ops added to `need`; the cp.async loads left renumber their groups.
// TILEFUSE_PRODUCER_COPIES=0 leaves them to the consumers.
void plan_producer_copies(const ir::Function& f, GpuPlan& plan, std::unordered_set<const Op*>& need) {
  if (!plan.allow_producer_copies || plan.any_held() || knob("TILEFUSE_PRODUCER_COPIES") == "0") return;
  ParamIndex params = param_index(f);
  const auto& loops = plan.producer_loops;
  int after = 0;
  for (const auto& top : f.body.ops) {
    const Op* ld = top.get();
    if (std::find(loops.begin(), loops.end(), ld) != loops.end()) ++after;
    if (ld->kind != OpKind::Load || !ld->view_rank || !plan.ops.count(ld) || !plan.op(ld).async_copy ||
        plan.op(ld).stages > 1)
      continue;
    if (f.persistent && after == 0 && !plan.allow_two_buffer_copies) continue;
    std::string why;
    auto s = tma_spec(f, plan, ld, params, why, true);
    std::vector<const Value*> coords;
    for (int d = 0; d < ld->view_rank; ++d) coords.push_back(ld->view_coord(d));
    std::unordered_set<const Op*> deps;
    if (s && !scalar_dependencies(f, coords, nullptr, {}, deps))
      why = "its coordinates depend on more than scalar ops", s.reset();
    if (!s) {
      if (knob_on("TILEFUSE_DEBUG"))
        std::cerr << "tilefuse: view load at " << ld->loc.str() << " is not copied by the producer: " << why << "\n";
      continue;
    }
    need.insert(deps.begin(), deps.end());
    plan.op(ld).tma_map = tensor_map_index(plan, *s);
    // Persistent, one before the first loop gets two buffers, the programs' in turn: the
    // producer copies the next program's while this one still reads its own.
    if (f.persistent && after == 0) plan.op(ld).stages = 2;
    plan.producer_copies.push_back({ld, after});
  }
  std::vector<const Op*> copies;
  for (const auto& top : f.body.ops)
    if (auto it = plan.ops.find(top.get()); it != plan.ops.end() && it->second.async_copy) copies.push_back(top.get());
  number_cp_async_groups(plan, copies);
}

// Whether load `b` can use load `a`'s ring of stages (same view block, same stages).
bool same_ring(const GpuPlan& plan, const Op* a, const Op* b) {
  const OpPlan &pa = plan.op(a), &pb = plan.op(b);
  return pa.tma_map == pb.tma_map && pa.stages == pb.stages && a->result()->type == b->result()->type;
}

// Pipelined top-level loops whose copies are all TMA and line up load by load, no
// clusters, nothing pipelined below the top level: the producer warp can run those
// loops' copies alone, in order (persistent: program after program, as the consumers).
void plan_warp_specialization(const ir::Function& f, GpuPlan& plan) {
  if (!(f.warp_specialize || knob_on("TILEFUSE_WARP_SPECIALIZE")) || f.cluster_size != 1 || f.num_warps % 4) return;
  auto no = [&](const std::string& why) {
    if (knob_on("TILEFUSE_DEBUG")) std::cerr << "tilefuse: no warp specialization for '" << f.name << "': " << why << "\n";
  };
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
  plan_producer_copies(f, plan, need);
  for (const auto& o : f.body.ops)
    if (need.count(o.get())) plan.producer_ops.push_back(o.get());
  for (const Op* loop : loops) {
    const auto& loads = plan.pipelines.at(loop).loads;
    for (size_t i = 0; i < loads.size(); ++i) plan.ring_leader[loads[i]] = first[i];
  }
  // Two consumer warpgroups take turns issuing MMAs where an iteration does work of its
  // own between them (two or more dots: attention's softmax between Q.K^T and P.V), so
  // one warpgroup's softmax runs beside the other's MMAs (d128 attention +3-7%, H200), and
  // where each warpgroup owns its rows of every dot (split along M), so they need not
  // meet between their turns. A GEMM's loop (one accumulating dot) has nothing to
  // overlap. TILEFUSE_PINGPONG=0 / 1 turns it off / on for every such kernel.
  int dots = 0;
  bool rows_split = true;
  for (const auto& o : loops[0]->regions[0]->ops)
    if (o->kind == OpKind::Dot) {
      ++dots;
      rows_split = rows_split && plan.op(o.get()).wgmma && plan.op(o.get()).wgmma_tiling.wg_m == f.num_warps / 4;
    }
  const std::string pp = knob("TILEFUSE_PINGPONG");
  plan.pingpong = f.num_warps == 8 && (pp.empty() ? dots >= 2 && rows_split : pp != "0");
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

bool tma_view_possible(const ir::Function& f, const Target& t, const GpuPlan& plan, const Op* ld) {
  if (t.sm < 90 || knob("TILEFUSE_TMA") == "0" || ld->view_rank == 0) return false;
  const ir::Type& ty = ld->result()->type;
  if (ty.rank() != 2 || contiguous_dim(plan.layout(ld->result())->ll) != 1) return false;
  std::string why;
  if (!box_shape_ok(ty.shape, byte_size(ty.dtype), why)) return false;
  TensorMapSpec s;
  const int es = byte_size(ty.dtype);
  return view_map(f, plan.axis, ld, param_index(f), ty.shape[0], swizzle_bytes(ty.shape, 1, es) / es, s, why);
}

void find_tma_stores(const ir::Function& f, const Target& t, GpuPlan& plan) {
  if (t.sm < 90 || knob("TILEFUSE_TMA") == "0" || knob("TILEFUSE_TMA_STORE") == "0" || !plan.allow_tma_stores) return;
  ParamIndex params = param_index(f);
  ir::walk(f.body, [&](Op& op) {
    if (op.kind != OpKind::Store || !op.view_rank) return;
    std::string why;
    if (tma_store_spec(f, plan.axis, &op, params, why)) {
      plan.tma_stores.push_back(&op);
    } else if (knob_on("TILEFUSE_DEBUG")) {
      std::cerr << "tilefuse: view store of " << op.operand(1)->type.str() << " at " << op.loc.str()
                << " is written by plain stores, not TMA: " << why << "\n";
    }
  });
}

void plan_tma_copies(const ir::Function& f, const Target& t, GpuPlan& plan) {
  if (t.sm < 90 || knob("TILEFUSE_TMA") == "0") return;
  ParamIndex params = param_index(f);
  for (const auto& top : f.body.ops) {  // body order: the hidden parameters' order
    auto it = plan.pipelines.find(top.get());
    if (it == plan.pipelines.end()) continue;
    const GpuPlan::Pipeline& pl = it->second;
    for (const Op* ld : pl.loads) {
      std::string why;
      if (auto s = tma_spec(f, plan, ld, params, why)) {
        // Loops reading the same view's blocks (attention's two loops) share its map.
        plan.op(ld).tma_map = tensor_map_index(plan, *s);
      } else if (plan.op(ld).tma_only) {
        internal_error("view load at " + ld->loc.str() + " was planned for TMA but cannot be: " + why);
      } else if (ld->view_rank && knob_on("TILEFUSE_DEBUG")) {
        std::cerr << "tilefuse: view load of " << ld->result()->type.str() << " at " << ld->loc.str()
                  << " is copied by cp.async, not TMA: " << why << "\n";
      }
    }
    number_cp_async_groups(plan, pl.loads);
  }
  for (const Op* st : plan.tma_stores) {  // the loads' maps first, then the stores'
    std::string why;
    plan.op(st).tma_map = tensor_map_index(plan, *tma_store_spec(f, plan.axis, st, params, why));
  }
  plan_warp_specialization(f, plan);
  plan_prefetch(f, plan);
}

}  // namespace tilefuse::nvptx
