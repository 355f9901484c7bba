// Every op kind through the GPU compiler, on several dtypes, shapes and warp counts;
// the PTX must assemble for sm_80 and sm_90a. Plus the compiler's user errors.
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "check.hpp"
#include "op_kernels.hpp"
#include "tilefuse/ir/printer.hpp"
#include "tilefuse/nvptx/gpu_plan.hpp"

using namespace tilefuse;
using ir::BinaryOp;
using ir::Builder;
using ir::Type;
using ir::UnaryOp;
using ir::Value;
using tftest::compile_and_assemble;

namespace {

using tftest::TileKernel;

std::string tag(const std::string& base, std::initializer_list<std::string> parts) {
  std::string s = base;
  for (auto& p : parts) s += "_" + p;
  return s;
}

}  // namespace

TEST_CASE("binary ops on every dtype") {
  for (DType dt : {DType::i32, DType::u32, DType::i64, DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8,
                   DType::u8, DType::i16})
    compile_and_assemble(*tftest::binary_kernel(dt), tag("binary", {name(dt)}));
}

TEST_CASE("unary math, exact and approximate, and integer unary ops") {
  for (DType dt : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (bool approx : {false, true}) {
      auto art = compile_and_assemble(*tftest::unary_kernel(dt, approx), tag("unary", {name(dt), approx ? "approx" : "exact"}));
      if (approx && dt == DType::f32) CHECK(art.kernel.ptx.find("ex2.approx") != std::string::npos);
    }
  for (DType dt : {DType::i32, DType::u32, DType::i64, DType::i8})
    compile_and_assemble(*tftest::int_unary_kernel(dt), tag("intunary", {name(dt)}));
}

// Approximate f32 math in its .ftz forms (subnormals flushed, no fix-up around each
// instruction) unless TILEFUSE_APPROX_FTZ=0, which keeps the plain forms.
TEST_CASE("approximate math flushes subnormals unless TILEFUSE_APPROX_FTZ=0") {
  auto ptx_of = [](const char* ftz) {
    if (ftz) setenv("TILEFUSE_APPROX_FTZ", ftz, 1);
    std::string ptx = compile_and_assemble(*tftest::unary_kernel(DType::f32, true), tag("unary_ftz", {ftz ? ftz : "default"})).kernel.ptx;
    unsetenv("TILEFUSE_APPROX_FTZ");
    return ptx;
  };
  const std::regex flushing(R"((ex2|lg2|sqrt|rsqrt|sin|cos|div)\.approx\.ftz\.f32)"),
      plain(R"((ex2|lg2|sqrt|rsqrt|sin|cos|div)\.approx\.f32)");
  auto count = [](const std::string& s, const std::regex& re) {
    return std::distance(std::sregex_iterator(s.begin(), s.end(), re), std::sregex_iterator());
  };
  std::string flushed = ptx_of(nullptr), kept = ptx_of("0");
  CHECK(ptx_of("1") == flushed);
  // (libdevice's functions, e.g. erf's, flush either way: nvvm-reflect-ftz.)
  CHECK(count(kept, plain) > 0);
  CHECK(count(flushed, plain) == 0);
  CHECK(count(flushed, flushing) == count(kept, flushing) + count(kept, plain));
}

TEST_CASE("compare, select, fma, logical ops on masks") {
  for (DType dt : {DType::i32, DType::u32, DType::f32, DType::f16, DType::i64})
    compile_and_assemble(*tftest::cmpsel_kernel(dt), tag("cmpsel", {name(dt)}));
}

TEST_CASE("casts between every pair of dtypes") {
  for (DType from : tftest::all_dtypes()) compile_and_assemble(*tftest::cast_kernel(from), tag("casts", {name(from)}));
}

TEST_CASE("program ids, constants, shape ops (expand, broadcast, reshape, trans)") {
  compile_and_assemble(*tftest::shapes_kernel(), "shapes");
}

TEST_CASE("loads and stores: masks, other values, eviction hints, bools, bytes, scalars") {
  for (DType dt : {DType::i1, DType::i8, DType::f16, DType::f32, DType::i64, DType::f64})
    for (int64_t n : {int64_t(16), int64_t(128), int64_t(2048)})
      compile_and_assemble(*tftest::memory_kernel(dt, n), tag("memory", {name(dt), std::to_string(n)}));
}

TEST_CASE("atomics: every op and dtype, masked, replicated tiles, scalars, cas") {
  for (auto& [op, dt] : tftest::atomic_cases())
    for (int64_t n : {int64_t(16), int64_t(256)})
      compile_and_assemble(*tftest::atomic_kernel(op, dt, n), tag("atomics", {ir::name(op), name(dt), std::to_string(n)}));
  for (DType dt : {DType::i32, DType::u32, DType::i64, DType::f32})
    compile_and_assemble(*tftest::cas_kernel(dt), tag("cas", {name(dt)}));
}

// MemOrder::AcqRel: `atom.acq_rel.gpu` after a CTA barrier that follows the program's
// earlier stores (the performing thread's release then covers them).
TEST_CASE("ordered atomics: acq_rel at GPU scope, after a barrier") {
  auto f = tftest::ordered_atomic_kernel();
  CHECK(ir::to_string(*f).find("atomic_add.acq_rel") != std::string::npos);
  auto art = compile_and_assemble(*f, "ordered_atomics");
  const std::string& ptx = art.kernel.ptx;
  size_t st = ptx.find("st.global"), count = ptx.find("atom.acq_rel.gpu.global.add.u32");
  REQUIRE(st != std::string::npos);
  REQUIRE(count != std::string::npos);
  size_t bar = ptx.find("bar.sync", st);
  CHECK(bar < count);
  CHECK(ptx.find("atom.acq_rel.gpu.global.add.f32") != std::string::npos);
  CHECK(ptx.find("atom.global.") == std::string::npos);  // none unordered
}

TEST_CASE("reductions: every kind, both axes, 1-D to scalar, small and large tiles") {
  for (auto& [shape, warps] : tftest::reduce_shapes())
    for (DType dt : {DType::f32, DType::i32, DType::f16})
      compile_and_assemble(*tftest::reduce_kernel(shape, warps, dt),
                           tag("reduce", {ir::shape_str(shape), name(dt), std::to_string(warps)}));
}

TEST_CASE("scans along either axis") {
  for (auto& [shape, warps] : tftest::scan_shapes())
    for (DType dt : {DType::f32, DType::i32, DType::f16}) {
      auto art = compile_and_assemble(*tftest::scan_kernel(shape, warps, dt), tag("scan", {ir::shape_str(shape), name(dt)}));
      CHECK(art.kernel.shared_bytes > 0);
    }
}

TEST_CASE("dot: f16, bf16 and f32 operands, several shapes and warp counts") {
  for (auto& d : tftest::dot_shapes())
    for (DType dt : {DType::f16, DType::bf16, DType::f32}) {
      auto art = compile_and_assemble(*tftest::dot_kernel(d[0], d[1], d[2], static_cast<int>(d[3]), dt),
                                      tag("dot", {std::to_string(d[0]), std::to_string(d[1]), std::to_string(d[2]), name(dt)}));
      const std::string& ptx = art.kernel.ptx;
      if (dt == DType::f32) {
        CHECK(ptx.find("fma.rn.f32") != std::string::npos);
        continue;
      }
      // 16-bit operands run on tensor cores: on sm_90a (the artifacts returned) warpgroup
      // MMAs reading the copied tiles by descriptor where the tile allows, else mma.sync
      // fed from swizzled shared memory by ldmatrix.
      if (nvptx::wgmma_applies(dt, false, d[0], d[1], d[2], static_cast<int>(d[3]))) {
        std::string wgmma = std::string("wgmma.mma_async.sync.aligned.m64n");
        CHECK_MESSAGE(ptx.find(wgmma) != std::string::npos, wgmma);
        CHECK(ptx.find(std::string(".f32.") + name(dt) + "." + name(dt)) != std::string::npos);
        CHECK(ptx.find("wgmma.wait_group.sync.aligned 0;") != std::string::npos);
        CHECK(ptx.find("ldmatrix") == std::string::npos);  // both operands by descriptor
      } else {
        std::string mma = std::string("mma.sync.aligned.m16n8k16.row.col.f32.") + name(dt) + "." + name(dt) + ".f32";
        CHECK_MESSAGE(ptx.find(mma) != std::string::npos, mma);
        CHECK(ptx.find("ldmatrix.sync.aligned.m8n8") != std::string::npos);
      }
      CHECK(ptx.find("fma.rn.f32") == std::string::npos);
    }
}

TEST_CASE("warpgroup MMA operands: by descriptor, transposed, in registers and staged") {
  using tftest::DotOperands;
  for (auto [m, n, k, w] : std::vector<std::array<int64_t, 4>>{{64, 8, 64, 4}, {64, 256, 128, 4}, {128, 64, 128, 8},
                                                                {64, 256, 32, 8}})
    for (DotOperands how : {DotOperands::Copied, DotOperands::BTransposed, DotOperands::AComputed, DotOperands::BComputed}) {
      auto art = compile_and_assemble(*tftest::dot_operands_kernel(m, n, k, static_cast<int>(w), DType::bf16, how),
                                      tag("dot_operands", {std::to_string(m), std::to_string(n), std::to_string(k),
                                                           std::to_string(static_cast<int>(how))}));
      const std::string& ptx = art.kernel.ptx;
      CAPTURE(n);
      CAPTURE(w);
      CAPTURE(static_cast<int>(how));
      CHECK(ptx.find("wgmma.mma_async.sync.aligned") != std::string::npos);
      // A in registers is written {a0, a1, a2, a3}; by descriptor it is a 64-bit register.
      bool a_regs = ptx.find("bf16.bf16 {%f", 0) != std::string::npos &&
                    ptx.find("}, {%r") != std::string::npos;
      CHECK(a_regs == (how == DotOperands::AComputed));
      // The copies are fenced for the async proxy once; a staged B a second time: B
      // computed, or rows of N < 16 elements (16 bytes: no swizzle a descriptor can name).
      bool staged = how == DotOperands::BComputed || (how != DotOperands::BTransposed && n < 16);
      size_t fences = 0;
      for (size_t at = ptx.find("fence.proxy.async"); at != std::string::npos; at = ptx.find("fence.proxy.async", at + 1))
        ++fences;
      CHECK(fences == (staged ? 2u : 1u));
    }
}

TEST_CASE("dot with tf32 precision: m16n8k8 tensor cores, inputs rounded with cvt.rna.tf32") {
  for (auto& d : tftest::dot_shapes()) {
    auto art = compile_and_assemble(*tftest::dot_kernel(d[0], d[1], d[2], static_cast<int>(d[3]), DType::f32,
                                                        ir::DotPrecision::Tf32),
                                    tag("dot_tf32", {std::to_string(d[0]), std::to_string(d[1]), std::to_string(d[2])}));
    const std::string& ptx = art.kernel.ptx;
    CHECK(ptx.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") != std::string::npos);
    CHECK(ptx.find("cvt.rna.tf32.f32") != std::string::npos);
    CHECK(ptx.find("cp.async") != std::string::npos);  // the f32 operand loads feed only the dot
  }
  // Smaller than one m16n8k8 tile: the FMA path, with the same tf32 rounding of the inputs.
  auto art = compile_and_assemble(*tftest::dot_kernel(8, 8, 8, 1, DType::f32, ir::DotPrecision::Tf32), "dot_tf32_fma");
  CHECK(art.kernel.ptx.find("mma.sync") == std::string::npos);
  CHECK(art.kernel.ptx.find("cvt.rna.tf32.f32") != std::string::npos);
}

TEST_CASE("a dot operand hoisted before a loop inside an if is converted again after the if") {
  // Regression: the copy converted in the loop's preheader was reused after the if,
  // where it does not dominate ("Instruction does not dominate all uses").
  compile_and_assemble(*tftest::hoist_across_if_kernel(), "hoist_if");
}

TEST_CASE("layout conversions through shared memory") {
  for (auto [r, c, warps] : {std::tuple{64, 64, 4}, std::tuple{16, 128, 8}, std::tuple{128, 8, 2}, std::tuple{32, 32, 1}})
    for (DType dt : {DType::f16, DType::f32})
      for (bool via_trans : {false, true}) {
        auto art = compile_and_assemble(*tftest::transpose_kernel(dt, r, c, warps, via_trans),
                                        tag("transpose", {std::to_string(r), std::to_string(c), name(dt)}));
        CHECK(art.kernel.shared_bytes >= r * c * byte_size(dt));  // converted before the cast
      }
}

TEST_CASE("control flow: loops with tile and scalar iteration values, nested loops, if with results") {
  compile_and_assemble(*tftest::control_kernel(), "control");
}

TEST_CASE("user errors name the kernel, the parameter and the fix") {
  {
    auto f = tftest::new_kernel("badparam", 4);
    Builder b(*f);
    b.param("flag", Type::scalar(DType::i16));
    try {
      nvptx::compile(*f, tftest::opts_for("sm_90a"));
      FAIL("expected a UserError");
    } catch (const UserError& e) {
      CHECK(std::string(e.what()) ==
            "kernel 'badparam' parameter 'flag' has type i16, which the GPU backend cannot pass. Use i32, u32, i64, "
            "f32, f64 or a pointer (widen narrow integers and bools to i32)");
    }
  }
  {
    auto f = tftest::new_kernel("bad name", 4);
    CHECK_THROWS_WITH_AS(nvptx::compile(*f, tftest::opts_for("sm_80")),
                         "kernel name 'bad name' is not a valid PTX entry name. Use letters, digits and underscores, "
                         "not starting with a digit",
                         UserError);
  }
  {
    auto f = tftest::new_kernel("warps", 3);
    CHECK_THROWS_AS(nvptx::compile(*f, tftest::opts_for("sm_80")), UserError);
  }
  {
    // A 256x256 f32 scan needs 2 x 256 KB of scratch.
    TileKernel k("bigscan", 4, {256, 256}, {DType::f32}, DType::f32);
    k.store(k.b.scan(k.inputs[0], 1));
    try {
      nvptx::compile(*k.f, tftest::opts_for("sm_80"));
      FAIL("expected a UserError");
    } catch (const UserError& e) {
      CHECK(std::string(e.what()).find("kernel 'bigscan' needs 524288 bytes of shared memory but sm_80 allows") == 0);
    }
  }
  CHECK_THROWS_WITH_AS(nvptx::parse_target("sm_70"),
                       "unsupported GPU target 'sm_70'. Use sm_80 (Ampere and newer), sm_90 (Hopper, portable) or "
                       "sm_90a (Hopper-specific, e.g. H100)",
                       UserError);
  for (const char* bad : {"sm_86", "sm_80a", "sm90", "sm_9000", "", "compute_90"})
    CHECK_THROWS_AS(nvptx::parse_target(bad), UserError);
  CHECK(nvptx::parse_target("sm_90") == nvptx::Target{90, false});
  CHECK(nvptx::parse_target("sm_90a") == nvptx::Target{90, true});
  CHECK(nvptx::parse_target("sm_80") == nvptx::Target{80, false});
}
