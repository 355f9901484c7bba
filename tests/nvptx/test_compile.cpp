// Gallery-shaped kernels through the whole pipeline; PTX assembled with ptxas for
// sm_80 and sm_90a; 128-bit global accesses and no spills where expected.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <iostream>

#include "ir_kernels.hpp"
#include "check.hpp"
#include "tilefuse/ir/passes.hpp"
#include "tilefuse/ir/printer.hpp"
#include "tilefuse/nvptx/compiler.hpp"

using namespace tilefuse;

namespace {

nvptx::CompileOptions sm(const char* t) { return tftest::opts_for(t); }
using tftest::compile_and_assemble;

bool has_128bit_load(const std::string& ptx) {
  return ptx.find("ld.global.v4.b32") != std::string::npos || ptx.find("ld.global.v4.u32") != std::string::npos ||
         ptx.find("ld.global.v4.f32") != std::string::npos || ptx.find("ld.global.nc.v4") != std::string::npos ||
         ptx.find("ld.global.v2.u64") != std::string::npos || ptx.find("ld.global.v2.b64") != std::string::npos ||
         ptx.find("ld.global.v2.f64") != std::string::npos || ptx.find("ld.global.v4.b16") != std::string::npos;
}
bool has_128bit_store(const std::string& ptx) {
  return ptx.find("st.global.v4.b32") != std::string::npos || ptx.find("st.global.v4.u32") != std::string::npos ||
         ptx.find("st.global.v4.f32") != std::string::npos || ptx.find("st.global.v2.u64") != std::string::npos ||
         ptx.find("st.global.v2.b64") != std::string::npos || ptx.find("st.global.v2.f64") != std::string::npos;
}

}  // namespace

TEST_CASE("softmax-like kernels: every config assembles, 128-bit accesses, no spills") {
  struct Cfg {
    DType in, out;
    int64_t block;
    int warps;
  };
  std::vector<Cfg> cfgs = {{DType::bf16, DType::bf16, 1024, 4}, {DType::f32, DType::f32, 4096, 8},
                           {DType::bf16, DType::bf16, 4096, 8}, {DType::f32, DType::bf16, 2048, 4},
                           {DType::f16, DType::f16, 16, 1},     {DType::f32, DType::f32, 128, 4},
                           {DType::bf16, DType::bf16, 256, 1},  {DType::f32, DType::f32, 16384, 8}};
  for (auto& c : cfgs) {
    auto f = tftest::softmax(c.in, c.out, c.block, c.warps);
    std::string tag = std::string("softmax_") + name(c.in) + "_" + std::to_string(c.block) + "_w" + std::to_string(c.warps);
    INFO(tag);
    auto art = compile_and_assemble(*f, tag, c.block <= 4096);
    bool wide = c.block * byte_size(c.in) >= 16 * 32 * c.warps;  // at least 16 bytes per thread
    if (wide) {
      CHECK(has_128bit_load(art.kernel.ptx));
      CHECK(has_128bit_store(art.kernel.ptx) == (c.block * byte_size(c.out) >= 16 * 32 * c.warps));
    }
  }
}

TEST_CASE("rmsnorm-like kernels assemble with 128-bit accesses and no spills") {
  for (auto [dt, block, warps] : {std::tuple{DType::bf16, int64_t(4096), 8}, std::tuple{DType::f32, int64_t(1024), 4},
                                  std::tuple{DType::bf16, int64_t(512), 2}, std::tuple{DType::f16, int64_t(64), 1}}) {
    auto f = tftest::rmsnorm(dt, block, warps);
    std::string tag = std::string("rmsnorm_") + name(dt) + "_" + std::to_string(block);
    INFO(tag);
    auto art = compile_and_assemble(*f, tag, true);
    if (block * byte_size(dt) >= 16 * 32 * warps) {
      CHECK(has_128bit_load(art.kernel.ptx));
      CHECK(has_128bit_store(art.kernel.ptx));
    }
  }
}

TEST_CASE("flash-attention-like loop with two dots and loop-carried tiles assembles") {
  for (auto [bm, bn, d, warps] : {std::tuple{64, 64, 64, 4}, std::tuple{16, 16, 16, 1}, std::tuple{128, 32, 64, 8},
                                  std::tuple{32, 64, 128, 4}}) {
    auto f = tftest::attention(bm, bn, d, warps);
    std::string tag = "attention_" + std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(d);
    INFO(tag);
    auto art = compile_and_assemble(*f, tag, false);
    CHECK(art.kernel.shared_bytes > 0);
  }
}

TEST_CASE("compile time of a softmax stays well under 50 ms") {
  auto f = tftest::softmax(DType::bf16, DType::bf16, 4096, 8);
  nvptx::compile(*f, sm("sm_90a"));  // warm: libdevice read, target machine built
  double best = 1e9;
  nvptx::CompileArtifacts art;
  for (int i = 0; i < 5; ++i) {
    auto t = std::chrono::steady_clock::now();
    art = nvptx::compile_with_artifacts(*f, sm("sm_90a"));
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
  }
  MESSAGE("softmax bf16 4096 compile: " << best << " ms (plan " << art.ms_plan << ", lower " << art.ms_lower
                                        << ", O3 " << art.ms_opt << ", ptx " << art.ms_ptx
                                        << ", libdevice " << art.linked_libdevice << ")");
  CHECK(best < 50);
}

TEST_CASE("optimization levels 0-3 all produce valid PTX (libdevice reflection included)") {
  auto f = tftest::softmax(DType::f32, DType::f16, 1024, 4);
  for (int level : {0, 1, 2, 3}) {
    nvptx::CompileOptions o = sm("sm_90a");
    o.opt_level = level;
    auto art = nvptx::compile_with_artifacts(*f, o);
    CHECK(art.linked_libdevice);
    CHECK(art.kernel.ptx.find("__nvvm_reflect") == std::string::npos);
    auto r = tftest::run_ptxas(art.kernel.ptx, "sm_90a", "optlevel" + std::to_string(level));
    if (r.ran) CHECK(r.status == 0);
  }
}

TEST_CASE("kernels without math functions do not link libdevice") {
  auto f = tftest::rmsnorm(DType::f32, 256, 2);  // rsqrt: libdevice
  CHECK(nvptx::compile_with_artifacts(*f, sm("sm_80")).linked_libdevice);
  auto g = tftest::attention(16, 16, 16, 1);  // exp2.approx only
  CHECK_FALSE(nvptx::compile_with_artifacts(*g, sm("sm_80")).linked_libdevice);
}

TEST_CASE("concurrent compiles in several threads give identical PTX") {
  auto f = tftest::attention(32, 32, 64, 4);
  auto g = tftest::softmax(DType::bf16, DType::bf16, 2048, 4);
  std::string ref_f = nvptx::compile(*f, sm("sm_90a")).ptx;
  std::string ref_g = nvptx::compile(*g, sm("sm_80")).ptx;
  std::vector<std::thread> ts;
  std::atomic<int> same{0};
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 3; ++i) {
        bool ok = (t % 2 ? nvptx::compile(*f, sm("sm_90a")).ptx == ref_f : nvptx::compile(*g, sm("sm_80")).ptx == ref_g);
        same += ok;
      }
    });
  for (auto& t : ts) t.join();
  CHECK(same == 12);
}

TEST_CASE("dump knobs print the annotated tile IR after each pass, the LLVM IR and the PTX") {
  auto f = tftest::softmax(DType::f32, DType::f32, 256, 2);
  setenv("TILEFUSE_DUMP_IR", "softmax", 1);
  setenv("TILEFUSE_DUMP_LLVM", "other_kernel,softmax", 1);
  setenv("TILEFUSE_DUMP_PTX", "1", 1);
  std::stringstream ss;
  auto* old = std::cerr.rdbuf(ss.rdbuf());
  nvptx::compile(*f, sm("sm_80"));
  std::cerr.rdbuf(old);
  unsetenv("TILEFUSE_DUMP_IR");
  unsetenv("TILEFUSE_DUMP_LLVM");
  unsetenv("TILEFUSE_DUMP_PTX");
  std::string out = ss.str();
  for (const char* pass : {"axis-info", "layouts", "shared-memory"})
    CHECK(out.find(std::string("tile IR after ") + pass + " (softmax)") != std::string::npos);
  CHECK(out.find("#L0 = blocked{") != std::string::npos);
  CHECK(out.find("LLVM IR after lowering (softmax)") != std::string::npos);
  CHECK(out.find("LLVM IR after O3 (softmax)") != std::string::npos);
  CHECK(out.find(".visible .entry softmax") != std::string::npos);
}

TEST_CASE("TILEFUSE_LLVM_OPTIONS reaches LLVM: pass timers on stderr, a clear error for a bad option") {
  auto f = tftest::softmax(DType::f32, DType::f32, 256, 2);
  setenv("TILEFUSE_LLVM_OPTIONS", "-no-such-tilefuse-option", 1);
  std::string err;
  try {
    nvptx::compile(*f, sm("sm_80"));
  } catch (const UserError& e) {
    err = e.what();
  }
  CHECK(err.find("TILEFUSE_LLVM_OPTIONS: LLVM did not accept '-no-such-tilefuse-option'") != std::string::npos);
  CHECK(err.find("Unknown command line argument") != std::string::npos);
  CHECK(err.find("unset the variable") != std::string::npos);

  // LLVM prints its timers to file descriptor 2: catch them in a file.
  setenv("TILEFUSE_LLVM_OPTIONS", "-time-passes", 1);
  std::FILE* tmp = std::tmpfile();
  std::fflush(stderr);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  std::string ptx = nvptx::compile(*f, sm("sm_80")).ptx;
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  setenv("TILEFUSE_LLVM_OPTIONS", "", 1);  // timers off again (options parse from the defaults)
  std::string ptx_after = nvptx::compile(*f, sm("sm_80")).ptx;
  unsetenv("TILEFUSE_LLVM_OPTIONS");
  std::string printed(static_cast<size_t>(std::ftell(tmp)), '\0');
  std::rewind(tmp);
  CHECK(std::fread(printed.data(), 1, printed.size(), tmp) == printed.size());
  std::fclose(tmp);
  CHECK(printed.find("Pass execution timing report") != std::string::npos);
  CHECK(printed.find("InstCombinePass") != std::string::npos);
  CHECK(printed.find("NVPTX DAG->DAG Pattern Instruction Selection") != std::string::npos);
  // The options reset to the defaults keep 32-bit shared pointers: the same PTX.
  CHECK(ptx == ptx_after);
  CHECK(ptx.find(".visible .entry softmax") != std::string::npos);
}

TEST_CASE("portable sm_90 PTX assembles too") {
  auto f = tftest::softmax(DType::bf16, DType::bf16, 4096, 8);
  auto k = nvptx::compile(*f, sm("sm_90"));
  CHECK(k.ptx.find(".target sm_90\n") != std::string::npos);
  auto r = tftest::run_ptxas(k.ptx, "sm_90", "portable90");
  if (r.ran) CHECK(r.status == 0);
}

// Programmatic dependent launch: on sm_90+ a kernel in a grid of at most
// early_launch_max_blocks blocks waits for the grids before it ahead of its first memory
// access (so the runtime may launch it early). A kernel without a loop over the grid lets
// the next one launch when it exits (no trigger: at entry it cost 16% in grids of many
// waves). sm_80 and TILEFUSE_PDL=0 have none of it.
TEST_CASE("sm_90 kernels wait for prior grids before their first memory access, sm_80 kernels do not") {
  auto f = tftest::softmax(DType::bf16, DType::bf16, 1024, 4);
  for (const char* t : {"sm_90", "sm_90a"}) {
    INFO(t);
    auto k = nvptx::compile(*f, sm(t));
    CHECK(k.early_launch_max_blocks == nvptx::kEarlyLaunchMaxBlocks);
    size_t grid = k.ptx.find("%nctaid.z");
    size_t wait = k.ptx.find("@p griddepcontrol.wait;");
    REQUIRE(grid != std::string::npos);
    REQUIRE(wait != std::string::npos);
    CHECK(grid < wait);  // the test of the grid's size comes first
    CHECK(k.ptx.find("griddepcontrol.launch_dependents") == std::string::npos);
    for (const char* access : {"ld.global", "st.global"}) {
      size_t first = k.ptx.find(access);
      if (first != std::string::npos) CHECK(wait < first);
    }
    auto r = tftest::run_ptxas(k.ptx, t, std::string("pdl_") + t);
    if (r.ran) CHECK(r.status == 0);
  }
  auto k80 = nvptx::compile(*f, sm("sm_80"));
  CHECK(k80.early_launch_max_blocks == 0);
  CHECK(k80.ptx.find("griddepcontrol") == std::string::npos);

  setenv("TILEFUSE_PDL_BLOCKS", "1056", 1);
  auto bounded = nvptx::compile(*f, sm("sm_90a"));
  unsetenv("TILEFUSE_PDL_BLOCKS");
  CHECK(bounded.early_launch_max_blocks == 1056);
  size_t bound = std::min(bounded.ptx.find("1056"), bounded.ptx.find("1057"));  // <= 1056 or < 1057
  CHECK(bound < bounded.ptx.find("@p griddepcontrol.wait;"));
  setenv("TILEFUSE_PDL", "0", 1);
  auto off = nvptx::compile(*f, sm("sm_90a"));
  unsetenv("TILEFUSE_PDL");
  CHECK(off.early_launch_max_blocks == 0);
  CHECK(off.ptx.find("griddepcontrol") == std::string::npos);
}

// A kernel whose body loops over the grid (programs striding by num_programs) lets the
// next kernel launch after that loop, in grids that launch early.
TEST_CASE("kernels looping over the grid let the next kernel launch after the loop") {
  auto f = tftest::new_kernel("grid_stride", 4);
  {
    ir::Builder b(*f);
    ir::Value* out = b.param("out", ir::Type::pointer(DType::f32));
    ir::Value* in = b.param("in", ir::Type::pointer(DType::f32), true);
    ir::Value* n = b.param("n", ir::Type::scalar(DType::i32));
    ir::Value* step = b.binary(ir::BinaryOp::Mul, b.num_programs(0), b.const_int(256, ir::Type::scalar(DType::i32)));
    ir::Value* lo = b.binary(ir::BinaryOp::Mul, b.program_id(0), b.const_int(256, ir::Type::scalar(DType::i32)));
    b.for_(lo, n, step, {}, [&](ir::Builder& lb, ir::Value* i, const std::vector<ir::Value*>&) {
      ir::Value* offs = lb.binary(ir::BinaryOp::Add, lb.arange(0, 256), i);
      ir::Value* mask = lb.compare(ir::CmpPred::Lt, offs, n);
      lb.store(lb.add_ptr(out, offs), lb.load(lb.add_ptr(in, offs), mask), mask);
      return std::vector<ir::Value*>{};
    });
  }
  auto k = nvptx::compile(*f, sm("sm_90a"));
  size_t wait = k.ptx.find("@p griddepcontrol.wait;"), trigger = k.ptx.find("@p griddepcontrol.launch_dependents;");
  REQUIRE(wait != std::string::npos);
  REQUIRE(trigger != std::string::npos);
  size_t last_store = k.ptx.rfind("st.global");
  REQUIRE(last_store != std::string::npos);
  CHECK(last_store < trigger);  // after the loop's stores
  CHECK(k.ptx.find("@p griddepcontrol.launch_dependents;", trigger + 1) == std::string::npos);  // once
  auto r = tftest::run_ptxas(k.ptx, "sm_90a", "grid_stride");
  if (r.ran) CHECK(r.status == 0);
}

namespace {

// out = cluster_sum(sum(in[0:256])) over clusters of `size`; with `chained`, the sum is
// of a cluster_max of that (two dependent cluster reductions).
std::unique_ptr<ir::Function> cluster_kernel(const std::string& name, int size, bool chained) {
  auto f = tftest::new_kernel(name, 4);
  f->cluster_size = size;
  ir::Builder b(*f);
  ir::Value* out = b.param("out", ir::Type::pointer(DType::f32));
  ir::Value* in = b.param("in", ir::Type::pointer(DType::f32), true);
  ir::Value* s = b.reduce(b.load(b.add_ptr(in, b.arange(0, 256))), 0, ir::ReduceKind::Sum);
  if (chained) s = b.cluster_reduce(s, ir::ReduceKind::Max);
  b.store(out, b.cluster_reduce(s, ir::ReduceKind::Sum));
  return f;
}

}  // namespace

TEST_CASE("clusters of up to 16 on sm_90a are thread-block clusters, larger ones and sm_80 clusters exchange in memory") {
  auto f = cluster_kernel("cluster_sum_kernel", 4, false);
  nvptx::CompiledKernel k = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  CHECK(k.cluster_size == 4);
  CHECK_FALSE(k.cluster_in_memory);
  CHECK(k.cluster_exchange_bytes == 0);
  CHECK(k.ptx.find("st.async.shared::cluster") != std::string::npos);
  auto r = tftest::run_ptxas(k.ptx, "sm_90a", "cluster_sum_kernel");
  if (r.ran) CHECK(r.status == 0);

  // In memory: a program ticket, a release per arrival, acquire spins, relaxed slot
  // reads, the last program's reset; no cluster instructions at all.
  for (auto [size, target] : {std::pair{4, "sm_80"}, std::pair{64, "sm_90a"}, std::pair{1024, "sm_90a"}}) {
    CAPTURE(size);
    CAPTURE(target);
    auto g = cluster_kernel("memory_cluster_" + std::to_string(size), size, true);
    ir::run_frontend_passes(*g);
    nvptx::CompiledKernel m = nvptx::compile(*g, nvptx::CompileOptions{nvptx::parse_target(target)});
    CHECK(m.cluster_size == size);
    CHECK(m.cluster_in_memory);
    // exit counter, two counters per exchange (two: max then sum), two sets of 8-byte slots each
    CHECK(m.cluster_exchange_bytes == 32 + 2 * 2 * size * 8);
    CHECK(m.ptx.find("atom.global.add.u32") != std::string::npos);
    CHECK(m.ptx.find("red.release.gpu.global.add.u32") != std::string::npos);
    CHECK(m.ptx.find("ld.acquire.gpu.global.u32") != std::string::npos);
    CHECK(m.ptx.find("ld.relaxed.gpu.global.b32") != std::string::npos);
    CHECK(m.ptx.find("atom.acq_rel.gpu.global.add.u32") != std::string::npos);
    CHECK(m.ptx.find("shared::cluster") == std::string::npos);
    CHECK(m.ptx.find("barrier.cluster") == std::string::npos);
    CHECK(m.ptx.find("cluster_ctarank") == std::string::npos);
    auto rm = tftest::run_ptxas(m.ptx, target, "memory_cluster_" + std::to_string(size));
    if (rm.ran) CHECK(rm.status == 0);
  }
}

TEST_CASE("a cluster reduction of a cluster reduction is not grouped with it and compiles") {
  auto f = cluster_kernel("cluster_chain", 2, true);
  ir::run_frontend_passes(*f);
  nvptx::CompiledKernel k = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  size_t waits = 0;
  for (size_t p = k.ptx.find("mbarrier.try_wait"); p != std::string::npos; p = k.ptx.find("mbarrier.try_wait", p + 1))
    ++waits;
  CHECK(waits == 2);  // two exchanges, one after the other
  auto r = tftest::run_ptxas(k.ptx, "sm_90a", "cluster_chain");
  if (r.ran) CHECK(r.status == 0);
}

TEST_CASE("wait_at_least: warp 0 polls with acquire loads and a vote, then fences, and ptxas accepts it") {
  auto f = tftest::new_kernel("wait_kernel", 4);
  ir::Builder b(*f);
  ir::Value* counter = b.param("counter", ir::Type::pointer(DType::i32));
  ir::Value* out = b.param("out", ir::Type::pointer(DType::i32));
  ir::Value* seen = b.atomic_rmw(ir::AtomicOp::WaitAtLeast, counter, b.const_int(3, ir::Type::scalar(DType::i32)),
                                 nullptr, true);
  b.store(out, seen);
  ir::run_frontend_passes(*f);  // verifies
  nvptx::CompiledKernel k = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  CHECK(k.ptx.find("ld.acquire.gpu.global.u32") != std::string::npos);
  CHECK(k.ptx.find("vote.sync.all.pred") != std::string::npos);
  CHECK(k.ptx.find("fence.acq_rel.gpu") != std::string::npos);
  CHECK(k.ptx.find("atom.") == std::string::npos);  // it never writes the counter
  auto r = tftest::run_ptxas(k.ptx, "sm_90a", "wait_kernel");
  if (r.ran) CHECK(r.status == 0);
  // Only one ordered scalar i32 counter.
  auto g = tftest::new_kernel("bad_wait", 4);
  ir::Builder bg(*g);
  ir::Value* fp = bg.param("f", ir::Type::pointer(DType::f32));
  try {
    bg.atomic_rmw(ir::AtomicOp::WaitAtLeast, fp, bg.const_float(1.0, ir::Type::scalar(DType::f32)), nullptr, true);
    FAIL("accepted a wait on an f32");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("wait_at_least on") != std::string::npos);
    CHECK(std::string(e.what()).find("it waits on one i32 counter") != std::string::npos);
  }
}

TEST_CASE("barrier: kept by the passes, printed, and a CTA barrier in the PTX") {
  auto f = tftest::new_kernel("barrier_kernel", 4);
  ir::Builder b(*f);
  ir::Value* out = b.param("out", ir::Type::pointer(DType::f32));
  b.store(out, b.const_float(1.0f, ir::Type::scalar(DType::f32)));
  b.barrier();
  b.barrier();  // not merged with the first
  b.store(out, b.const_float(2.0f, ir::Type::scalar(DType::f32)));
  ir::run_frontend_passes(*f);  // verifies
  std::string ir_text = ir::to_string(*f);
  auto first = ir_text.find("barrier");
  REQUIRE(first != std::string::npos);
  CHECK(ir_text.find("barrier", first + 1) != std::string::npos);
  nvptx::CompiledKernel k = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  auto bar = k.ptx.find("bar.sync");
  if (bar == std::string::npos) bar = k.ptx.find("barrier.sync");
  REQUIRE(bar != std::string::npos);
  // Between the two stores.
  auto st1 = k.ptx.find("st.global"), st2 = k.ptx.rfind("st.global");
  CHECK(st1 < bar);
  CHECK(bar < st2);
  auto r = tftest::run_ptxas(k.ptx, "sm_90a", "barrier_kernel");
  if (r.ran) CHECK(r.status == 0);
}

TEST_CASE("wait_at_least relaxed: every warp polls an i64 word itself, without barriers or fences") {
  auto f = tftest::new_kernel("relaxed_wait_kernel", 4);
  ir::Builder b(*f);
  ir::Value* word = b.param("word", ir::Type::pointer(DType::i64));
  ir::Value* out = b.param("out", ir::Type::pointer(DType::i64));
  ir::Value* three = b.const_int(int64_t(3) << 32, ir::Type::scalar(DType::i64));  // 3 arrivals, high half
  ir::Value* seen = b.atomic_rmw(ir::AtomicOp::WaitAtLeast, word, three, nullptr, false);
  b.store(out, seen);
  ir::run_frontend_passes(*f);  // verifies
  nvptx::CompiledKernel k = nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
  CHECK(k.ptx.find("ld.relaxed.gpu.global.u64") != std::string::npos);
  CHECK(k.ptx.find("vote.sync.all.pred") != std::string::npos);
  CHECK(k.ptx.find("fence.") == std::string::npos);
  CHECK(k.ptx.find("bar.sync") == std::string::npos);
  CHECK(k.ptx.find("ld.acquire") == std::string::npos);
  auto r = tftest::run_ptxas(k.ptx, "sm_90a", "relaxed_wait_kernel");
  if (r.ran) CHECK(r.status == 0);
  // An ordered wait takes an i32 counter only.
  auto g = tftest::new_kernel("bad_ordered_wait", 4);
  ir::Builder bg(*g);
  ir::Value* w64 = bg.param("w", ir::Type::pointer(DType::i64));
  try {
    bg.atomic_rmw(ir::AtomicOp::WaitAtLeast, w64, bg.const_int(1, ir::Type::scalar(DType::i64)), nullptr, true);
    FAIL("accepted an ordered wait on an i64");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("it waits on one i32 counter (i32 or i64 with MemOrder::Relaxed)") !=
          std::string::npos);
  }
}

TEST_CASE("a tile's cluster reduction in a cluster that exchanges through memory is a clear error") {
  auto f = tftest::new_kernel("memory_cluster_tile", 4);
  f->cluster_size = 32;
  ir::Builder b(*f);
  ir::Value* out = b.param("out", ir::Type::pointer(DType::f32));
  ir::Value* in = b.param("in", ir::Type::pointer(DType::f32), true);
  ir::Value* offs = b.arange(0, 128);
  ir::Value* t = b.cluster_reduce(b.load(b.add_ptr(in, offs)), ir::ReduceKind::Sum);
  b.store(b.add_ptr(out, offs), t);
  ir::run_frontend_passes(*f);
  try {
    nvptx::compile(*f, nvptx::CompileOptions{nvptx::parse_target("sm_90a")});
    FAIL("compiled a tile's cluster reduction in a cluster of 32");
  } catch (const UserError& e) {
    std::string msg = e.what();
    CHECK(msg.find("a cluster reduction of a tile in clusters of 32 programs") != std::string::npos);
    CHECK(msg.find("clusters exchange scalars only") != std::string::npos);
  }
}
