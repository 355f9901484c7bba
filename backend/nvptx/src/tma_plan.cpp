// Which pipelined async loads the TMA engine moves (see OpPlan::tma_map). A tensor-view
// load (Op::view_rank) qualifies when its block only feeds warpgroup MMAs (so its shared
// buffer has the swizzled layout a TMA box with the same swizzle produces), it is
// pipelined over a loop at the top of the kernel (mbarrier phases start at 0 once per
// launch), and the launch can encode its descriptor: the view's base is a pointer
// argument known to be 16-byte aligned, its dimensions and strides are arguments or
// constants, the innermost stride is 1 and the others are multiples of 16 bytes.
// Anything else keeps its cp.async copies, which read exactly the same elements.
#include <optional>

#include "passes.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

using ParamIndex = std::unordered_map<const Value*, int>;

std::optional<TensorMapSpec::Value> host_value(const Value* v, const ParamIndex& params) {
  if (auto it = params.find(v); it != params.end()) return TensorMapSpec::Value{it->second, 0};
  if (v->def && v->def->kind == OpKind::Constant && is_int(v->type.dtype))
    return TensorMapSpec::Value{-1, v->def->ival};
  return std::nullopt;
}

std::optional<TensorMapSpec> tma_spec(const ir::Function& f, const GpuPlan& plan, const Op* ld,
                                      const ParamIndex& params) {
  const OpPlan& p = plan.op(ld);
  const ir::Type& t = ld->result()->type;
  if (ld->view_rank == 0 || !p.async_copy || p.stages < 2 || !read_by_wgmma(plan, ld) || t.rank() != 2)
    return std::nullopt;
  const int es = byte_size(t.dtype), rank = ld->view_rank;
  const LinearLayout& l = plan.layout(ld->result())->ll;
  if (contiguous_dim(l) != 1) return std::nullopt;
  const int swizzle = swizzle_bytes(t.shape, 1, es);
  const int64_t rows = t.shape[0], inner = swizzle / es;
  if (swizzle < 32 || rows > 256 || t.shape[1] % inner) return std::nullopt;
  // Each further column block must start where the swizzle pattern restarts.
  if (t.shape[1] > inner && rows * swizzle % 1024) return std::nullopt;
  auto base = params.find(ld->view_base());
  if (base == params.end() || f.params[base->second].divisibility < 16) return std::nullopt;
  TensorMapSpec s;
  s.dtype = t.dtype;
  s.base_param = base->second;
  s.swizzle_bytes = swizzle;
  for (int d = 0; d < rank; ++d) {
    if (ld->view_coord(d)->type.dtype != DType::i32) return std::nullopt;  // TMA coordinates are 32-bit
    auto dim = host_value(ld->view_dim(d), params);
    auto stride = host_value(ld->view_stride(d), params);
    if (!dim || !stride || (dim->param < 0 && dim->constant < 1)) return std::nullopt;
    if (d == rank - 1) {
      if (stride->param >= 0 || stride->constant != 1) return std::nullopt;
    } else if (stride->param >= 0) {
      if (f.params[stride->param].divisibility * es % 16) return std::nullopt;
    } else if (stride->constant < 1 || stride->constant * es % 16) {
      return std::nullopt;
    }
    s.dims.push_back(*dim);
    s.strides.push_back(*stride);
    s.box.push_back(d < rank - 2 ? 1 : d == rank - 2 ? static_cast<int>(rows) : static_cast<int>(inner));
  }
  return s;
}

}  // namespace

int tma_barrier_bytes(const GpuPlan& plan, const ir::Op* ld) {
  const OpPlan& p = plan.op(ld);
  return p.tma_map >= 0 ? (8 * p.stages + 15) / 16 * 16 : 0;
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
      if (auto s = tma_spec(f, plan, ld, params)) {
        plan.op(ld).tma_map = static_cast<int>(plan.tensor_maps.size());
        plan.tensor_maps.push_back(*s);
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
}

}  // namespace tilefuse::nvptx
