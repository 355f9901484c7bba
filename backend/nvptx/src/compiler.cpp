// The compile script: one pass per line, each with its dump point.
//
//   axis-info      contiguity / divisibility / constancy of integers and pointers
//   layouts        coalesced anchors, wanted-layout propagation, assignment, vector widths
//   shared-memory  scratch per op, liveness-based offsets
//   lower          LLVM IR, one op family per file (barriers placed while lowering)
//   libdevice      link the __nv_* math actually used
//   optimize       LLVM O3
//   ptx            NVPTX code generation
#include "tilefuse/nvptx/compiler.hpp"

#include <chrono>
#include <iostream>

#include "codegen.hpp"
#include "llvm_backend.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::nvptx {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int effective_opt_level(const CompileOptions& o) {
  std::string k = knob("TILEFUSE_PTX_OPT");
  if (k.size() == 1 && k[0] >= '0' && k[0] <= '3') return k[0] - '0';
  return o.opt_level;
}

// 8-bit floats: conversions to them exist from sm_89 (cvt.satfinite), their mma.sync
// from PTX ISA 8.4.
void check_float8(const ir::Op& op, TargetInfo& ti) {
  if (op.kind == ir::OpKind::Cast && is_float8(op.result()->type.dtype) && ti.target().sm < 89)
    user_error(std::string("cast to ") + name(op.result()->type.dtype) + " on " + ti.cpu() +
                   ": converting to 8-bit floats needs sm_89 or newer (cvt.rn.satfinite)",
               op.loc, "Compile for sm_90 or sm_90a, or keep the values in f16/bf16 on this GPU");
  if (op.kind == ir::OpKind::Dot && is_float8(op.operand(0)->type.dtype) && ti.target().sm >= 89) ti.require_ptx(84);
}

// min_programs_per_sm caps each thread's registers at 64K / (threads x programs), in
// multiples of 8. Below what one warpgroup MMA instruction holds (its accumulator,
// instr_n / 2 registers a thread, and 26 more: ptxas asks for 90 at n128 and 154 at
// n256) ptxas stops with C7602, which the driver reports only when the kernel loads.
void check_register_cap(const ir::Function& f, const GpuPlan& plan) {
  if (f.min_programs_per_sm <= 0 || plan.warp_specialized()) return;
  const int cap = std::min(255, 65536 / (32 * f.num_warps * f.min_programs_per_sm)) / 8 * 8;
  ir::walk(const_cast<ir::Block&>(f.body), [&](ir::Op& op) {
    if (op.kind != ir::OpKind::Dot || !plan.op(&op).wgmma) return;
    const int n = plan.op(&op).wgmma_tiling.instr_n, need = n / 2 + 26;
    if (cap >= need) return;
    user_error("kernel '" + f.name + "' is configured with num_warps = " + std::to_string(f.num_warps) +
                   " and min_programs_per_sm = " + std::to_string(f.min_programs_per_sm) + ", which caps each thread at " +
                   std::to_string(cap) + " registers; its dot of " + op.operand(0)->type.str() + " x " +
                   op.operand(1)->type.str() + " runs as warpgroup MMAs of 64x" + std::to_string(n) +
                   " that need at least " + std::to_string(need),
               op.loc,
               "Use fewer programs per SM (min_programs_per_sm), fewer warps, or a narrower BLOCK_N for this dot");
  });
}

}  // namespace

CompileArtifacts compile_with_artifacts(const ir::Function& f, const CompileOptions& opts, bool keep_text) {
  CompileArtifacts art;
  TargetInfo ti(opts.target);
  ir::walk(f.body, [&](ir::Op& op) {
    if ((op.kind == ir::OpKind::Load || op.kind == ir::OpKind::Store) && op.evict != ir::Evict::Normal &&
        op.evict != ir::Evict::Shared)
      ti.require_ptx(74);  // .L1::evict_* qualifiers
    if (op.kind == ir::OpKind::ClusterReduce) ti.require_ptx(clusters_in_memory(f, opts.target) ? 70 : 81);
    check_float8(op, ti);
  });
  if (ti.has_grid_dependency_control()) ti.require_ptx(78);  // griddepcontrol (lower_kernel.cpp)
  int level = effective_opt_level(opts);
  bool dump_ir = knob_selects("TILEFUSE_DUMP_IR", f.name);
  bool dump_llvm = knob_selects("TILEFUSE_DUMP_LLVM", f.name);
  bool dump_ptx = knob_selects("TILEFUSE_DUMP_PTX", f.name);
  if (f.num_warps < 1 || f.num_warps > 32 || (f.num_warps & (f.num_warps - 1)))
    throw UserError("kernel '" + f.name + "' asks for " + std::to_string(f.num_warps) +
                    " warps. Use a power of two between 1 and 32");

  auto t0 = Clock::now();
  GpuPlan plan;
  auto dump = [&](const char* pass) {
    if (dump_ir) std::cerr << "// ----- tile IR after " << pass << " (" << f.name << ") -----\n" << dump_plan(f, plan);
  };
  // What the plan may use; each retry below gives one optimization up where the shared
  // memory does not fit.
  struct Choices {
    bool accumulator_stores = false, tma_stores = true, stage_loads = true, hold_loads = true, producer_copies = true,
         two_buffer_copies = true;
  } choices;
  auto make_plan = [&](const Choices& c) {
    choices = c;
    plan = GpuPlan();
    plan.num_warps = f.num_warps;
    plan.clusters_in_memory = clusters_in_memory(f, opts.target);
    plan.stage_loads = c.stage_loads;
    plan.hold_loads = c.hold_loads;
    plan.accumulator_stores = c.accumulator_stores;
    plan.allow_tma_stores = c.tma_stores;
    plan.allow_producer_copies = c.producer_copies;
    plan.allow_two_buffer_copies = c.two_buffer_copies;
    plan.axis = analyze_axis_info(f);                 dump("axis-info");
    find_tma_stores(f, opts.target, plan);
    assign_layouts(f, opts.target, plan);             dump("layouts");
    group_reductions(f, plan);                        dump("reduction-groups");
    plan_async_copies(f, opts.target, plan);          dump("async-copies");
    plan_held_loads(f, opts.target, plan);            dump("held-loads");
    plan_tma_copies(f, opts.target, plan);            dump("tma-copies");
    plan_wgmma_waits(f, plan);                        dump("wgmma-waits");
    allocate_shared_memory(f, plan);                  dump("shared-memory");
  };
  auto too_big = [&] { return plan.shared_bytes > ti.max_shared_bytes(); };
  auto retry = [&](auto change) {
    Choices c = choices;
    change(c);
    make_plan(c);
  };
  make_plan(Choices{});
  // The producer's copies of blocks read outside loops keep their buffers from kernel
  // entry; where that does not fit, first a persistent kernel's copy before its loops
  // keeps one buffer and goes back to the consumers, then the consumers copy all such
  // blocks (wide heads with Q_VIEW).
  auto two_buffers = [&] {
    for (const auto& c : plan.producer_copies)
      if (plan.op(c.load).stages > 1) return true;
    return false;
  };
  if (two_buffers() && too_big()) {
    // The epilogue's layout conversion is the one buffer not live for the whole kernel
    // beside them: dot results stored in their own layout first (d128 attention, Q on
    // two buffers); then one buffer, with the conversion back.
    retry([](Choices& c) { c.accumulator_stores = true, c.tma_stores = false; });
    if (too_big())
      retry([](Choices& c) { c.two_buffer_copies = false, c.accumulator_stores = false, c.tma_stores = true; });
  }
  if (!plan.producer_copies.empty() && too_big()) retry([](Choices& c) { c.producer_copies = false; });
  // A TMA store's block needs shared memory of its own while it leaves; where that does
  // not fit (beside a persistent kernel's ring), view stores are plain stores.
  if (!plan.tma_stores.empty() && too_big()) retry([](Choices& c) { c.tma_stores = false; });
  // A persistent kernel's ring (prefetched, or a warp-specialized producer's) stays live
  // through the epilogue; when the epilogue's layout conversion no longer fits beside it,
  // dot results are stored in their own layout.
  if ((plan.prefetch_loop || (f.persistent && plan.warp_specialized())) && too_big())
    retry([](Choices& c) { c.accumulator_stores = true, c.tma_stores = false; });
  // Loads staged num_stages - 1 iterations ahead are an optimization: where their buffers
  // do not fit (a loop of large tiles beside a kernel's dot pipeline), they stay loads.
  if (too_big() && plan.any_staged()) retry([](Choices& c) { c.stage_loads = false; });
  // So are tiles kept in shared memory: where they do not fit, they live in registers.
  if (too_big() && plan.any_held()) retry([](Choices& c) { c.hold_loads = false; });
  if (!plan.tensor_maps.empty()) ti.require_ptx(80);  // cp.async.bulk.tensor, mbarrier expect_tx
  if (plan.shared_bytes > ti.max_shared_bytes())
    throw UserError("kernel '" + f.name + "' needs " + std::to_string(plan.shared_bytes) +
                    " bytes of shared memory but " + ti.cpu() + " allows " + std::to_string(ti.max_shared_bytes()) +
                    (f.num_stages > 1 ? " (num_stages=" + std::to_string(f.num_stages) +
                                            " keeps that many copies of each pipelined tile)"
                                      : std::string()) +
                    ". Use smaller block sizes" + (f.num_stages > 1 ? " or fewer stages" : ""));
  check_register_cap(f, plan);
  if (keep_text) art.plan = dump_plan(f, plan);
  art.ms_plan = ms_since(t0);

  auto t1 = Clock::now();
  llvm::LLVMContext ctx;
  auto mod = std::make_unique<llvm::Module>(f.name, ctx);
  llvm::TargetMachine& tm = target_machine(ti, level);
  prepare_module(*mod, tm);
  Codegen cg(ctx, *mod, f, plan, ti);
  cg.fast_math = knob_on("TILEFUSE_FAST_MATH");
  cg.lower_kernel();                                  verify_module(*mod, "after lowering");
  if (keep_text || dump_llvm) art.llvm_ir = module_text(*mod);
  if (dump_llvm) std::cerr << "// ----- LLVM IR after lowering (" << f.name << ") -----\n" << art.llvm_ir;
  art.linked_libdevice = needs_libdevice(*mod);
  if (art.linked_libdevice) link_libdevice(*mod);
  art.ms_lower = ms_since(t1);

  auto t2 = Clock::now();
  optimize_module(*mod, tm, level);
  if (keep_text || dump_llvm) art.llvm_ir_opt = module_text(*mod);
  if (dump_llvm) std::cerr << "// ----- LLVM IR after O" << level << " (" << f.name << ") -----\n" << art.llvm_ir_opt;
  art.ms_opt = ms_since(t2);

  auto t3 = Clock::now();
  std::string ptx = emit_ptx(*mod, tm);
  if (dump_ptx) std::cerr << "// ----- PTX (" << f.name << ") -----\n" << ptx;
  art.ms_ptx = ms_since(t3);

  CompiledKernel& k = art.kernel;
  k.name = f.name;
  k.ptx = std::move(ptx);
  k.target = opts.target;
  k.num_warps = f.num_warps + (plan.warp_specialized() ? 4 : 0);  // + the producer warpgroup
  k.cluster_size = f.cluster_size;
  k.cluster_in_memory = plan.clusters_in_memory;
  if (plan.clusters_in_memory) k.cluster_exchange_bytes = memory_cluster_layout(f, plan).bytes;
  k.shared_bytes = plan.shared_bytes;
  for (auto& p : f.params) k.params.push_back(ParamAbi{p.value->type.is_ptr, p.value->type.dtype});
  k.tensor_maps = plan.tensor_maps;
  k.persistent = f.persistent;
  k.early_launch_max_blocks = early_launch_max_blocks(ti);
  return art;
}

CompiledKernel compile(const ir::Function& f, const CompileOptions& opts) {
  return std::move(compile_with_artifacts(f, opts, false).kernel);
}

}  // namespace tilefuse::nvptx
