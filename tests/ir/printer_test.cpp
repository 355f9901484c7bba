// Golden text of the printer for a small kernel built with ir::Builder.
#include <doctest/doctest.h>

#include "ir_test_util.hpp"

using namespace tilefuse;
using namespace tilefuse::ir;

namespace {

// out[i] = in[i] * 2.5 for i in this program's block of 128, masked by n.
std::unique_ptr<Function> scale_kernel() {
  auto f = test::make_function("scale");
  f->meta["BLOCK"] = 128;
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* in = b.param("in", Type::pointer(DType::f32), true);
  Value* n = b.param("n", Type::scalar(DType::i32));
  Value* pid = b.program_id(0);
  Value* base = b.binary(BinaryOp::Mul, pid, b.const_int(128, Type::scalar(DType::i32)));
  Value* cols = b.arange(0, 128);
  Value* offs = b.binary(BinaryOp::Add, base, cols);
  Value* mask = b.compare(CmpPred::Lt, offs, n);
  Value* zero = b.const_float(0.0, Type::scalar(DType::f32));
  Value* in_ptrs = b.add_ptr(in, offs);
  Value* x = b.load(in_ptrs, mask, zero);
  Value* y = b.binary(BinaryOp::Mul, x, b.const_float(2.5, Type::scalar(DType::f32)));
  Value* out_ptrs = b.add_ptr(out, offs);
  b.store(out_ptrs, y, mask);
  return f;
}

}  // namespace

TEST_CASE("ir printer: golden text of a traced kernel") {
  auto f = scale_kernel();
  const char* want =
      "kernel @scale(%out: ptr<f32>, %in: ptr<f32> const, %n: i32) meta {BLOCK = 128} warps 4 stages 1 {\n"
      "  %0 = program_id 0 : i32\n"
      "  %1 = constant 128 : i32\n"
      "  %2 = mul %0, %1 : i32\n"
      "  %3 = arange 0, 128 : tile<128xi32>\n"
      "  %4 = splat %2 : tile<128xi32>\n"
      "  %5 = add %4, %3 : tile<128xi32>\n"
      "  %6 = splat %n : tile<128xi32>\n"
      "  %7 = cmp lt %5, %6 : tile<128xi1>\n"
      "  %8 = constant 0 : f32\n"
      "  %9 = splat %in : tile<128xptr<f32>>\n"
      "  %10 = add_ptr %9, %5 : tile<128xptr<f32>>\n"
      "  %11 = splat %8 : tile<128xf32>\n"
      "  %12 = load %10, %7, %11 : tile<128xf32>\n"
      "  %13 = constant 2.5 : f32\n"
      "  %14 = splat %13 : tile<128xf32>\n"
      "  %15 = mul %12, %14 : tile<128xf32>\n"
      "  %16 = splat %out : tile<128xptr<f32>>\n"
      "  %17 = add_ptr %16, %5 : tile<128xptr<f32>>\n"
      "  store %17, %15, %7\n"
      "}\n";
  CHECK(to_string(*f) == want);
  verify(*f);
}

TEST_CASE("ir printer: golden text after canonicalization") {
  auto f = scale_kernel();
  run_frontend_passes(*f);
  // Splats of constants became constant tiles; nothing else changes.
  const char* want =
      "kernel @scale(%out: ptr<f32>, %in: ptr<f32> const, %n: i32) meta {BLOCK = 128} warps 4 stages 1 {\n"
      "  %0 = program_id 0 : i32\n"
      "  %1 = constant 128 : i32\n"
      "  %2 = mul %0, %1 : i32\n"
      "  %3 = arange 0, 128 : tile<128xi32>\n"
      "  %4 = splat %2 : tile<128xi32>\n"
      "  %5 = add %4, %3 : tile<128xi32>\n"
      "  %6 = splat %n : tile<128xi32>\n"
      "  %7 = cmp lt %5, %6 : tile<128xi1>\n"
      "  %8 = splat %in : tile<128xptr<f32>>\n"
      "  %9 = add_ptr %8, %5 : tile<128xptr<f32>>\n"
      "  %10 = constant 0 : tile<128xf32>\n"
      "  %11 = load %9, %7, %10 : tile<128xf32>\n"
      "  %12 = constant 2.5 : tile<128xf32>\n"
      "  %13 = mul %11, %12 : tile<128xf32>\n"
      "  %14 = splat %out : tile<128xptr<f32>>\n"
      "  %15 = add_ptr %14, %5 : tile<128xptr<f32>>\n"
      "  store %15, %13, %7\n"
      "}\n";
  CHECK(to_string(*f) == want);
}

TEST_CASE("ir printer: loops print their iteration values and yields") {
  auto f = test::make_function("loop");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::f32));
  Value* n = b.param("n", Type::scalar(DType::i32));
  Type t = Type::tile(DType::f32, {16});
  Value* acc0 = b.const_float(0.0, t);
  Value* keep = b.const_float(1.0, t);
  Value* lo = b.const_int(0, Type::scalar(DType::i32));
  Value* step = b.const_int(1, Type::scalar(DType::i32));
  auto r = b.for_(lo, n, step, {acc0, keep}, [&](Builder& bb, Value* iv, const std::vector<Value*>& it) {
                    Value* x = bb.cast(iv, DType::f32);
                    return std::vector<Value*>{bb.binary(BinaryOp::Add, it[0], x), it[1]};
                  });
  Value* ptrs = b.add_ptr(out, b.arange(0, 16));
  b.store(ptrs, b.binary(BinaryOp::Mul, r[0], r[1]));
  const char* want =
      "kernel @loop(%out: ptr<f32>, %n: i32) warps 4 stages 1 {\n"
      "  %0 = constant 0 : tile<16xf32>\n"
      "  %1 = constant 1 : tile<16xf32>\n"
      "  %2 = constant 0 : i32\n"
      "  %3 = constant 1 : i32\n"
      "  %4 = for %5 = %2 to %n step %3 iter(%6 = %0) : tile<16xf32> {\n"
      "    %7 = cast %5 : f32\n"
      "    %8 = splat %7 : tile<16xf32>\n"
      "    %9 = add %6, %8 : tile<16xf32>\n"
      "    yield %9\n"
      "  }\n"
      "  %10 = arange 0, 16 : tile<16xi32>\n"
      "  %11 = splat %out : tile<16xptr<f32>>\n"
      "  %12 = add_ptr %11, %10 : tile<16xptr<f32>>\n"
      "  %13 = mul %4, %1 : tile<16xf32>\n"
      "  store %12, %13\n"
      "}\n";
  CHECK(to_string(*f) == want);
  verify(*f);
}
