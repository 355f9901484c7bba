// The GPU passes without LLVM: axis info, coalesced layouts, vector widths (and the
// TILEFUSE_DEBUG explanation when they are lost), layout propagation through
// reductions and loops, shared-memory plans.
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "check.hpp"
#include "op_kernels.hpp"
#include "tilefuse/ir/passes.hpp"
#include "tilefuse/nvptx/gpu_plan.hpp"

using namespace tilefuse;
using namespace tilefuse::nvptx;
using ir::BinaryOp;
using ir::Builder;
using ir::Type;
using ir::Value;

namespace {

const Target kH100{90, true};

const ir::Op* find_op(const ir::Function& f, ir::OpKind k, int nth = 0) {
  const ir::Op* found = nullptr;
  ir::walk(f.body, [&](ir::Op& op) {
    if (op.kind == k && nth-- == 0) found = &op;
  });
  REQUIRE(found);
  return found;
}

// Every layout the planner produced covers its tile exactly.
void check_all_layouts(const GpuPlan& p) {
  for (auto& e : p.pool) {
    INFO(e.desc << " " << e.ll.str());
    CHECK(e.ll.covers_tile());
    CHECK(e.ll.num_lanes() == 32);
    CHECK(e.ll.num_warps() == p.num_warps);
  }
}

// A [rows, cols] load of `dt` at base + r * stride + c, stored back.
std::unique_ptr<ir::Function> copy2d(DType dt, int64_t rows, int64_t cols, int warps, int64_t ptr_div,
                                     int64_t stride_div) {
  auto f = tftest::new_kernel("copy2d", warps);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(dt));
  Value* in = b.param("in", Type::pointer(dt));
  Value* stride = b.param("stride", Type::scalar(DType::i32));
  Value* off = b.binary(ir::BinaryOp::Add,
                        b.binary(ir::BinaryOp::Mul, b.expand_dims(b.arange(0, rows), 1), stride),
                        b.expand_dims(b.arange(0, cols), 0));
  Value* x = b.load(b.add_ptr(in, off));
  b.store(b.add_ptr(out, off), x);
  f->params[0].divisibility = f->params[1].divisibility = ptr_div;
  f->params[2].divisibility = stride_div;
  return f;
}

struct CaptureStderr {
  std::stringstream ss;
  std::streambuf* old;
  CaptureStderr() : old(std::cerr.rdbuf(ss.rdbuf())) {}
  ~CaptureStderr() { std::cerr.rdbuf(old); }
};

}  // namespace

TEST_CASE("axis info: arange, splat, add, mul, expand/broadcast, compare, rem") {
  auto f = tftest::new_kernel("ai", 4);
  Builder b(*f);
  Value* n = b.param("n", Type::scalar(DType::i32));
  f->params[0].divisibility = 16;
  Value* pid = b.program_id(0);
  Value* base = b.binary(ir::BinaryOp::Mul, pid, b.const_int(256, Type::scalar(DType::i32)));
  Value* cols = b.binary(ir::BinaryOp::Add, b.splat(base, {256}), b.arange(0, 256));
  Value* mask = b.compare(ir::CmpPred::Lt, cols, n);
  Value* le = b.compare(ir::CmpPred::Le, cols, n);
  Value* twice = b.binary(ir::BinaryOp::Mul, cols, b.const_int(2, Type::tile(DType::i32, {256})));
  Value* rows = b.expand_dims(b.arange(0, 8), 1);
  Value* grid = b.binary(ir::BinaryOp::Add, b.binary(ir::BinaryOp::Mul, rows, n), b.expand_dims(b.arange(0, 32), 0));
  Value* ucols = b.cast(b.arange(0, 64), DType::u32);
  Value* urem = b.binary(ir::BinaryOp::Rem, ucols, b.const_int(8, Type::scalar(DType::u32)));
  Value* srem = b.binary(ir::BinaryOp::Rem, b.arange(0, 64), b.const_int(8, Type::scalar(DType::i32)));
  AxisInfoMap ai = analyze_axis_info(*f);
  CHECK(ai.get(base).divisibility[0] == 256);
  CHECK(ai.get(cols).contiguity[0] == 256);
  CHECK(ai.get(cols).divisibility[0] == 256);
  CHECK(ai.get(mask).constancy[0] == 16);  // cols < n: n is a multiple of 16
  CHECK(ai.get(le).constancy[0] == 1);     // cols <= n changes at n + 1
  CHECK(ai.get(twice).contiguity[0] == 1);
  CHECK(ai.get(twice).divisibility[0] == 2);
  CHECK(ai.get(grid).contiguity == std::vector<int64_t>{1, 32});
  CHECK(ai.get(grid).divisibility[1] == 16);
  CHECK(ai.get(grid).constancy == std::vector<int64_t>{1, 1});
  CHECK(ai.get(urem).contiguity[0] == 8);
  CHECK(ai.get(srem).contiguity[0] == 1);  // C remainder of signed values: unknown sign
}

// min and max return one of their operands, so they keep the divisors both have: an edge
// tile clamped to end at an aligned extent keeps an aligned start (a TMA coordinate).
TEST_CASE("axis info: min and max keep the divisors their operands share") {
  auto f = tftest::new_kernel("minmax", 4);
  Builder b(*f);
  Value* n = b.param("n", Type::scalar(DType::i32));
  f->params[0].divisibility = 8;
  auto i32 = [&](int64_t v) { return b.const_int(v, Type::scalar(DType::i32)); };
  Value* n0 = b.binary(ir::BinaryOp::Mul, b.program_id(0), i32(256));
  Value* last = b.binary(ir::BinaryOp::Sub, n, i32(256));  // divisible by 8
  Value* clamped = b.binary(ir::BinaryOp::Min, n0, b.binary(ir::BinaryOp::Max, last, i32(0)));
  Value* odd = b.binary(ir::BinaryOp::Min, n0, b.binary(ir::BinaryOp::Sub, n, i32(3)));
  AxisInfoMap ai = analyze_axis_info(*f);
  CHECK(ai.get(n0).divisibility[0] == 256);
  CHECK(ai.get(clamped).divisibility[0] == 8);
  CHECK(ai.get(odd).divisibility[0] == 1);
}

TEST_CASE("axis info through a loop: loop-carried pointers keep what every iteration keeps") {
  auto f = tftest::new_kernel("loop", 1);
  Builder b(*f);
  Value* p = b.param("p", Type::pointer(DType::f32));
  f->params[0].divisibility = 16;
  Value* ptrs = b.add_ptr(p, b.arange(0, 128));
  Value* zero = b.const_int(0, Type::scalar(DType::i32));
  Value* step = b.const_int(1, Type::scalar(DType::i32));
  Value* n = b.const_int(10, Type::scalar(DType::i32));
  auto res = b.for_(zero, n, step, {ptrs}, [&](Builder& b, Value*, const std::vector<Value*>& it) {
    b.store(it[0], b.const_float(1.0, Type::tile(DType::f32, {128})));
    return std::vector<Value*>{b.add_ptr(it[0], b.const_int(128, Type::scalar(DType::i32)))};
  });
  AxisInfoMap ai = analyze_axis_info(*f);
  CHECK(ai.get(res[0]).contiguity[0] == 128);
  CHECK(ai.get(res[0]).divisibility[0] == 16);
  GpuPlan plan = plan_kernel(*f, kH100);
  CHECK(plan.op(find_op(*f, ir::OpKind::Store)).vec == 4);
}

TEST_CASE("golden: a 1x1024 bf16 load with 4 warps gives each thread 8 contiguous elements") {
  auto f = copy2d(DType::bf16, 1, 1024, 4, 16, 16);
  GpuPlan plan = plan_kernel(*f, kH100);
  check_all_layouts(plan);
  const ir::Op* ld = find_op(*f, ir::OpKind::Load);
  LayoutRef l = plan.layout(ld->result());
  REQUIRE(l);
  CHECK(l->desc == "blocked{spt=[1,8], tpw=[1,32], wpc=[1,4], order=[1,0]}");
  CHECK(l->ll.contiguous_regs(1) == 8);
  CHECK(l->ll.str() == "reg=[(0,1),(0,2),(0,4)] lane=[(0,8),(0,16),(0,32),(0,64),(0,128)] warp=[(0,256),(0,512)]");
  CHECK(plan.op(ld).vec == 8);
  CHECK(plan.op(ld).fast_dim == 1);
  CHECK(plan.op(find_op(*f, ir::OpKind::Store)).vec == 8);
  CHECK(plan.shared_bytes == 0);
}

TEST_CASE("golden: 2-D tiles, row- and column-contiguous") {
  auto f = copy2d(DType::f16, 64, 64, 4, 16, 16);
  GpuPlan plan = plan_kernel(*f, kH100);
  check_all_layouts(plan);
  CHECK(plan.layout(find_op(*f, ir::OpKind::Load)->result())->desc ==
        "blocked{spt=[1,8], tpw=[4,8], wpc=[4,1], order=[1,0]}");
  // Transposed access: addresses contiguous down the rows.
  auto g = tftest::new_kernel("colmajor", 4);
  Builder b(*g);
  Value* in = b.param("in", Type::pointer(DType::f32));
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* ld = b.param("ld", Type::scalar(DType::i32));
  Value* off = b.binary(ir::BinaryOp::Add, b.expand_dims(b.arange(0, 64), 1),
                        b.binary(ir::BinaryOp::Mul, b.expand_dims(b.arange(0, 32), 0), ld));
  Value* x = b.load(b.add_ptr(in, off));
  b.store(b.add_ptr(out, off), x);
  tftest::specialize16(*g);
  GpuPlan p2 = plan_kernel(*g, kH100);
  check_all_layouts(p2);
  const ir::Op* l2 = find_op(*g, ir::OpKind::Load);
  CHECK(p2.layout(l2->result())->desc == "blocked{spt=[4,1], tpw=[16,2], wpc=[1,4], order=[0,1]}");
  CHECK(p2.op(l2).vec == 4);
  CHECK(p2.op(l2).fast_dim == 0);
}

TEST_CASE("vector width follows alignment and mask facts, losses are explained under TILEFUSE_DEBUG") {
  setenv("TILEFUSE_DEBUG", "1", 1);
  {
    auto f = copy2d(DType::f32, 1, 1024, 4, 4, 16);  // pointers only 4-byte aligned
    CaptureStderr cap;
    GpuPlan plan = plan_kernel(*f, kH100);
    CHECK(plan.op(find_op(*f, ir::OpKind::Load)).vec == 1);
    CHECK(cap.ss.str().find("only known to be 4-byte aligned") != std::string::npos);
    CHECK(cap.ss.str().find("kernel 'copy2d'") != std::string::npos);
  }
  {
    auto f = copy2d(DType::f32, 4, 256, 4, 16, 2);  // stride only even: rows start 8-byte aligned
    CaptureStderr cap;
    GpuPlan plan = plan_kernel(*f, kH100);
    CHECK(plan.op(find_op(*f, ir::OpKind::Load)).vec == 2);
  }
  {
    auto f = tftest::softmax(DType::f32, DType::f32, 1024, 4, /*aligned=*/false);
    f->params[0].divisibility = f->params[1].divisibility = 16;  // pointers aligned, n_cols unknown
    CaptureStderr cap;
    GpuPlan plan = plan_kernel(*f, kH100);
    CHECK(plan.op(find_op(*f, ir::OpKind::Load)).vec == 1);
    CHECK(cap.ss.str().find("the mask is only known to be constant over 1") != std::string::npos);
  }
  {
    auto f = tftest::softmax(DType::f32, DType::f32, 1024, 4);
    CaptureStderr cap;
    GpuPlan plan = plan_kernel(*f, kH100);
    CHECK(plan.op(find_op(*f, ir::OpKind::Load)).vec == 4);
    CHECK(cap.ss.str().empty());
  }
  unsetenv("TILEFUSE_DEBUG");
}

TEST_CASE("softmax: one layout end to end, no conversions, reductions need only tiny scratch") {
  for (int warps : {1, 4, 8}) {
    auto f = tftest::softmax(DType::f32, DType::bf16, 4096, warps);
    GpuPlan plan = plan_kernel(*f, kH100);
    check_all_layouts(plan);
    // f32 load shares the bf16 store's 8-element layout (loaded as two 16-byte vectors).
    LayoutRef l = plan.layout(find_op(*f, ir::OpKind::Load)->result());
    CHECK(l->ll.contiguous_regs(0) == 8);
    CHECK(plan.op(find_op(*f, ir::OpKind::Load)).vec == 4);
    CHECK(plan.op(find_op(*f, ir::OpKind::Store)).vec == 8);
    std::string dump = dump_plan(*f, plan);
    CHECK(dump.find("[convert") == std::string::npos);
    CHECK(plan.shared_bytes == (warps > 1 ? 16 + 16 * (warps > 4) : 0));
  }
}

TEST_CASE("attention: row statistics are slices of the dot layout, no conversion inside the loop") {
  auto f = tftest::attention(64, 64, 64, 4);
  GpuPlan plan = plan_kernel(*f, kH100);
  check_all_layouts(plan);
  const ir::Op* loop = find_op(*f, ir::OpKind::For);
  const ir::Op* dot = find_op(*f, ir::OpKind::Dot);
  const ir::Op* dot2 = find_op(*f, ir::OpKind::Dot, 1);
  LayoutRef acc = plan.layout(dot->result());
  // Chained dots on tensor cores with warps along M: each row of the dot result stays
  // in one warp, and P (the first accumulator cast to 16 bits) is the second dot's A
  // operand register for register.
  CHECK(plan.op(dot).mma);
  CHECK(plan.op(dot).wgmma);  // sm_90a: one warpgroup, its 4 warps along M
  CHECK(acc->desc == "wgmma_acc{groups=[1,1], n=64}");
  for (uint32_t w : acc->ll.warps()) CHECK(acc->ll.coord(w, 1) == 0);
  CHECK(register_only(acc->ll, plan.op(dot2).operands[0]->ll));
  const ir::Block& body = *loop->regions[0];
  CHECK(plan.layout(body.args[1]) == acc);
  LayoutRef row = plan.layout(body.args[2]);
  CHECK(row->ll == acc->ll.drop_dim(1));
  CHECK(plan.layout(body.args[3]) == row);
  // Inside the loop only the dots' operands use shared memory: K and V are copied there
  // by cp.async (they only feed dots); Q is staged once before the loop.
  ir::walk(body, [&](ir::Op& op) {
    if (op.kind == ir::OpKind::Load) {
      CHECK(plan.op(&op).async_copy);
      CHECK(plan.op(&op).smem_bytes == 64 * 64 * 2);
    } else if (op.kind != ir::OpKind::Dot && !op.results.empty() && !plan.lazy.count(op.result())) {
      INFO(ir::name(op.kind));
      CHECK(plan.op(&op).smem_bytes == 0);
    }
  });
}

TEST_CASE("shared memory: scratch of ops alive at different times overlaps") {
  auto f = tftest::softmax(DType::f32, DType::f32, 1024, 8);
  GpuPlan plan = plan_kernel(*f, kH100);
  const ir::Op* r0 = find_op(*f, ir::OpKind::Reduce, 0);
  const ir::Op* r1 = find_op(*f, ir::OpKind::Reduce, 1);
  CHECK(plan.op(r0).smem_bytes == 32);
  CHECK(plan.op(r0).smem_offset == 0);
  CHECK(plan.op(r1).smem_offset == 0);
  CHECK(plan.shared_bytes == 32);
}

TEST_CASE("shared memory: sibling reductions form a group with disjoint scratch, cluster slots are never shared") {
  auto f = tftest::new_kernel("moments", 8);
  f->cluster_size = 4;
  {
    Builder b(*f);
    Value* out = b.param("out", Type::pointer(DType::f32));
    Value* in = b.param("in", Type::pointer(DType::f32), true);
    Value* x = b.load(b.add_ptr(in, b.arange(0, 1024)));
    Value* s1 = b.reduce(x, 0, ir::ReduceKind::Sum);
    Value* s2 = b.reduce(b.binary(ir::BinaryOp::Mul, x, x), 0, ir::ReduceKind::Sum);
    ir::group_sibling_reductions(*f);  // the front end puts the two sums side by side
    Value* c1 = b.cluster_reduce(s1, ir::ReduceKind::Sum);
    Value* c2 = b.cluster_reduce(s2, ir::ReduceKind::Max);
    Value* m = b.reduce(x, 0, ir::ReduceKind::Max);  // after the cluster reductions
    b.store(out, b.binary(ir::BinaryOp::Add, b.binary(ir::BinaryOp::Add, c1, c2), m));
  }
  GpuPlan plan = plan_kernel(*f, kH100);
  const ir::Op* r0 = find_op(*f, ir::OpKind::Reduce, 0);
  const ir::Op* r1 = find_op(*f, ir::OpKind::Reduce, 1);
  const ir::Op* r2 = find_op(*f, ir::OpKind::Reduce, 2);
  const ir::Op* c0 = find_op(*f, ir::OpKind::ClusterReduce, 0);
  const ir::Op* c1 = find_op(*f, ir::OpKind::ClusterReduce, 1);
  REQUIRE(plan.reduce_groups.count(r0));
  CHECK(plan.reduce_groups.at(r0) == std::vector<const ir::Op*>{r0, r1});
  CHECK(plan.reduce_group_leader.at(r1) == r0);
  CHECK(plan.reduce_groups.at(c0) == std::vector<const ir::Op*>{c0, c1});
  CHECK_FALSE(plan.reduce_group_leader.count(r2));
  auto disjoint = [&](const ir::Op* a, const ir::Op* b) {
    const OpPlan &pa = plan.op(a), &pb = plan.op(b);
    return pa.smem_offset + pa.smem_bytes <= pb.smem_offset || pb.smem_offset + pb.smem_bytes <= pa.smem_offset;
  };
  CHECK(plan.op(c0).smem_bytes == cluster_reduce_smem_bytes(4));
  CHECK(disjoint(r0, r1));  // both in use during the group's one exchange
  for (const ir::Op* r : {r0, r1, r2}) {
    CHECK(disjoint(r, c0));  // peers write cluster slots at any time
    CHECK(disjoint(r, c1));
  }
  CHECK(disjoint(c0, c1));
}

TEST_CASE("pipelining plan: attention's K and V copies run ahead of their dots, issued by them") {
  auto f = tftest::attention(64, 64, 64, 4);
  f->num_stages = 3;
  GpuPlan plan = plan_kernel(*f, kH100);
  const ir::Op* loop = find_op(*f, ir::OpKind::For);
  REQUIRE(plan.pipelines.count(loop));
  const GpuPlan::Pipeline& pl = plan.pipelines.at(loop);
  CHECK(pl.stages == 3);
  REQUIRE(pl.loads.size() == 2);
  const ir::Op* k_load = pl.loads[0];
  const ir::Op* v_load = pl.loads[1];
  CHECK(plan.op(k_load).issue_at == find_op(*f, ir::OpKind::Dot, 0));
  CHECK(plan.op(v_load).issue_at == find_op(*f, ir::OpKind::Dot, 1));
  CHECK(plan.op(k_load).async_index == 1);
  CHECK(plan.op(v_load).async_index == 2);
  // Three buffers of a [64, 64] f16 tile each, live for the whole loop: disjoint.
  CHECK(plan.op(k_load).smem_bytes == 3 * 64 * 64 * 2);
  CHECK(plan.op(v_load).smem_bytes == 3 * 64 * 64 * 2);
  int k0 = plan.op(k_load).smem_offset, v0 = plan.op(v_load).smem_offset;
  CHECK((k0 + 3 * 8192 <= v0 || v0 + 3 * 8192 <= k0));
  // The address ops re-evaluated for the iteration ahead depend on the loop index only.
  CHECK(!pl.slice.empty());
  for (const ir::Op* o : pl.slice) CHECK(o->parent == loop->regions[0].get());
  // sm_90a: P.V's accumulator is rescaled (read) next iteration, so its MMAs are waited
  // for before the yield, not carried across the back edge: no buffer held longer, the
  // copies still run num_stages - 1 iterations ahead.
  const ir::Op* qk = find_op(*f, ir::OpKind::Dot, 0);
  const ir::Op* pv = find_op(*f, ir::OpKind::Dot, 1);
  CHECK(pl.lag == 0);
  CHECK(!plan.wgmma_exit_waits.count(loop));
  for (auto& [op, w] : plan.wgmma_waits) {
    CHECK(w.pending == 0);  // S is read right away, P.V at the yield: nothing younger in flight
    for (const ir::Value* v : w.values) CHECK((v == qk->result() || v == pv->result()));
  }
  std::string dump = dump_plan(*f, plan);
  CHECK(dump.find("pipelined: 3 stages, 2 copies, prologue of 2 iterations") != std::string::npos);
  CHECK(dump.find("cp.async #1/2, 2 iterations ahead, issued by") != std::string::npos);
  GpuPlan plan80 = plan_kernel(*f, Target{80, false});  // mma.sync: the same schedule
  CHECK(dump_plan(*f, plan80).find("cp.async #1/2, 2 iterations ahead, issued by") != std::string::npos);
}

TEST_CASE("pipelining plan: a load whose address is loop-carried is copied but not pipelined, a load also used "
          "elsewhere stays in registers") {
  auto f = tftest::carried_pointer_dot_kernel();
  f->num_stages = 3;
  GpuPlan plan = plan_kernel(*f, kH100);
  CHECK(plan.pipelines.empty());
  const ir::Op* x = find_op(*f, ir::OpKind::Load, 0);
  const ir::Op* y = find_op(*f, ir::OpKind::Load, 1);
  CHECK(plan.op(x).async_copy);
  CHECK(plan.op(x).stages == 1);
  CHECK_FALSE(plan.op(y).async_copy);
  auto art = tftest::compile_and_assemble(*f, "carried_pointer_dot");
  CHECK(art.kernel.ptx.find("cp.async.wait_group 0;") != std::string::npos);
}

TEST_CASE("shared memory: a wgmma left in flight keeps the B it staged until its wait") {
  // Per iteration: B computed in registers (staged by the dot for its descriptor), the
  // dot issued, then a cross-warp reduction of another tile, then the dot's result read.
  // The dot is waited for at that read, so its MMAs still read the staged B while the
  // reduction uses its scratch: the two must not share bytes.
  auto f = tftest::new_kernel("staged_b_in_flight", 4);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* A = b.param("a", Type::pointer(DType::f16), true);
  Value* B = b.param("b", Type::pointer(DType::f16), true);
  Value* X = b.param("x", Type::pointer(DType::f32), true);
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* r64 = b.arange(0, 64);
  auto col = [&](Value* v) { return b.expand_dims(v, 1); };
  auto row = [&](Value* v) { return b.expand_dims(v, 0); };
  Value* c64 = b.const_int(64, Type::scalar(DType::i32));
  Value* offs = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, col(r64), c64), row(r64));  // [64, 64]
  Value* a = b.load(b.add_ptr(A, offs));
  Value* acc = b.const_float(0.0, Type::tile(DType::f32, {64}));
  Value* zero = b.const_int(0, Type::scalar(DType::i32));
  Value* one = b.const_int(1, Type::scalar(DType::i32));
  auto res = b.for_(zero, n, one, {acc}, [&](Builder& b, Value* i, const std::vector<Value*>& it) {
    Value* shift = b.binary(BinaryOp::Mul, i, b.const_int(4096, Type::scalar(DType::i32)));
    Value* bt = b.load(b.add_ptr(b.add_ptr(B, shift), offs));
    Value* b2 = b.binary(BinaryOp::Add, bt, bt);  // computed: not a copy the dot can read in place
    Value* d = b.dot(a, b2);
    Value* x = b.load(b.add_ptr(b.add_ptr(X, shift), offs));
    Value* xs = b.reduce(x, 0, ir::ReduceKind::Sum);  // across warps: scratch
    Value* ds = b.reduce(d, 1, ir::ReduceKind::Sum);  // the dot's first reader
    return std::vector<Value*>{b.binary(BinaryOp::Add, it[0], b.binary(BinaryOp::Add, ds, xs))};
  });
  b.store(b.add_ptr(out, r64), res[0]);
  tftest::specialize16(*f);
  GpuPlan plan = plan_kernel(*f, kH100);
  const ir::Op* dot = find_op(*f, ir::OpKind::Dot);
  REQUIRE(plan.op(dot).wgmma);
  REQUIRE(plan.op(dot).wgmma_defer);
  const OpPlan& dp = plan.op(dot);
  REQUIRE(dp.smem_bytes > 0);  // B staged
  const OpPlan& rp = plan.op(find_op(*f, ir::OpKind::Reduce, 0));
  REQUIRE(rp.smem_bytes > 0);
  CHECK((dp.smem_offset + dp.smem_bytes <= rp.smem_offset || rp.smem_offset + rp.smem_bytes <= dp.smem_offset));
}
