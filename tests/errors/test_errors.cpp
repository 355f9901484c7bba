// Every user error's TEXT: what went wrong (with shapes/dtypes/names), where (this
// file and the offending line) and how to fix it. The offending statement shares its
// line with `g_line = __LINE__` so the expected location is exact.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include <tilefuse/tilefuse.hpp>

using namespace tilefuse;

namespace {

unsigned g_line = 0;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a UserError> ") + e.what();
  }
  return "<no error>";
}

std::string at(unsigned line) { return "(at test_errors.cpp:" + std::to_string(line) + ")"; }

// Stands for at(g_line), read when the parts are checked: arguments are evaluated in
// an unspecified order, so g_line may be set only while the error is produced.
const std::string kAtLine = "<at g_line>";

void expect_parts(const std::string& msg, std::initializer_list<std::string> parts) {
  INFO("message: ", msg);
  for (std::string p : parts) {
    if (p == kAtLine) p = at(g_line);
    CHECK_MESSAGE(msg.find(p) != std::string::npos, (std::string("missing: ") + p));
  }
}

// A well-formed kernel for the launch-time checks.
auto& copy_kernel() {
  static auto k = kernel("copy", {"out", "in", "n"}, [](Ptr<f32> out, Ptr<const f32> in, I32 n, Meta<"B"> B) {
    auto offs = program_id(0) * B + arange(0, B);
    auto m = offs < n;
    store(out + offs, load(in + offs, m), m);
  });
  return k;
}

struct FakeDeviceBuffer {  // stands for a device buffer; never dereferenced
  ArgValue arg() const { return ArgValue::device(reinterpret_cast<void*>(0x10000), 256, DType::f32); }
};

}  // namespace

// ---------------------------------------------------------------- trace time: shapes

TEST_CASE("shape mismatch in an elementwise op shows both shapes") {
  auto k = kernel("ew", [](Ptr<f32> out) {
    auto a = zeros<f32>({16, 8});
    auto b = zeros<f32>({16});
    g_line = __LINE__; auto c = a + b;  // [16, 8] + [16]: the user meant b.col()
    store(out + arange(0, 8), sum(c, 0));
  });
  auto msg = error_of([&] { k.trace({}); });
  expect_parts(msg, {"shape mismatch in add: [16, 8] vs [16]", kAtLine, "numpy rules", ".col()/.row()"});

  auto k2 = kernel("ew2", [](Ptr<f32> out) {
    g_line = __LINE__; auto c = zeros<f32>({16}) * full<f32>({32}, 1.0);
    store(out + arange(0, 16), c);
  });
  expect_parts(error_of([&] { k2.trace({}); }), {"shape mismatch in mul: [16] vs [32]", kAtLine});
}

TEST_CASE("shape mismatch in where shows both shapes") {
  auto k = kernel("where_shapes", [](Ptr<f32> out) {
    auto cond = arange(0, 16) < 3;
    auto x = zeros<f32>({32});
    g_line = __LINE__; auto y = where(cond, x, 1.0f);
    store(out + arange(0, 32), y);
  });
  expect_parts(error_of([&] { k.trace({}); }), {"shape mismatch in where: [16] vs [32]", kAtLine, "broadcast"});

  auto k2 = kernel("where_shapes2", [](Ptr<f32> out) {
    g_line = __LINE__; auto y = where(arange(0, 16) < 3, zeros<f32>({16}), zeros<f32>({8}));
    store(out + arange(0, 16), y);
  });
  expect_parts(error_of([&] { k2.trace({}); }), {"shape mismatch in where: [16] vs [8]", kAtLine});
}

TEST_CASE("block shapes that are not powers of two") {
  auto k = kernel("arange100", [](Ptr<i32> out) {
    g_line = __LINE__; auto r = arange(0, 100);
    store(out + r, r);
  });
  expect_parts(error_of([&] { k.trace({}); }),
               {"block shape [100] in arange is not a power of two", kAtLine, "round the block size up",
                "e.g. to 128", "mask the tail"});

  auto k2 = kernel("full48", [](Ptr<f32> out) {
    g_line = __LINE__; auto x = full<f32>({48}, 1.0);
    store(out + arange(0, 64), x);
  });
  expect_parts(error_of([&] { k2.trace({}); }),
               {"block shape [48] in a constant tile is not a power of two", kAtLine, "e.g. to 64"});

  // The usual way to hit it: a meta-parameter chosen from the problem size.
  auto k3 = kernel("meta_block", {"out", "n"}, [](Ptr<f32> out, I32 n, Meta<"BLOCK"> BLOCK) {
    g_line = __LINE__; auto offs = arange(0, BLOCK);
    store(out + offs, offs.cast<f32>(), offs < n);
  });
  std::vector<float> out(100);
  expect_parts(error_of([&] { k3.launch(grid(1), {{"BLOCK", 100}}, out, 100); }),
               {"block shape [100] in arange", kAtLine, "e.g. to 128"});

  auto k4 = kernel("splat12", [](Ptr<f32> out) {
    g_line = __LINE__; auto x = broadcast_to(scalar<f32>(1.0), {12});
    store(out + arange(0, 16), x);
  });
  expect_parts(error_of([&] { k4.trace({}); }), {"block shape [12] in a broadcast", kAtLine, "e.g. to 16"});
}

TEST_CASE("mask, other and value shapes that do not match the pointer tile") {
  auto k = kernel("mask_shape", {"out", "in", "n"}, [](Ptr<f32> out, Ptr<const f32> in, I32 n) {
    auto offs = arange(0, 16);
    auto m = arange(0, 32) < n;
    g_line = __LINE__; auto x = load(in + offs, m);
    store(out + offs, x);
  });
  expect_parts(error_of([&] { k.trace({}); }),
               {"load mask shape [32] does not match the pointer tile shape [16]", kAtLine,
                "The mask must have the pointer tile's shape"});

  auto k2 = kernel("store_mask_shape", {"out", "n"}, [](Ptr<f32> out, I32 n) {
    auto r = arange(0, 16);
    g_line = __LINE__; store(out + r.col() * 8 + arange(0, 8).row(), zeros<f32>({16, 8}), (r < n).row());
  });
  expect_parts(error_of([&] { k2.trace({}); }),
               {"store mask shape [1, 16] does not match the pointer tile shape [16, 8]", kAtLine,
                "The mask must have the pointer tile's shape"});

  auto k3 = kernel("other_shape", {"out", "in", "n"}, [](Ptr<f32> out, Ptr<const f32> in, I32 n) {
    auto offs = arange(0, 16);
    g_line = __LINE__; auto x = load(in + offs, offs < n, zeros<f32>({8}));
    store(out + offs, x);
  });
  expect_parts(error_of([&] { k3.trace({}); }),
               {"load 'other' shape [8] does not match the pointer tile shape [16]", kAtLine, "Pass a scalar"});

  auto k4 = kernel("value_shape", {"out"}, [](Ptr<f32> out) {
    g_line = __LINE__; store(out + arange(0, 16), zeros<f32>({32}));
  });
  expect_parts(error_of([&] { k4.trace({}); }),
               {"store value shape [32] does not match the pointer tile shape [16]", kAtLine,
                "Store a value of the pointer tile's shape"});

  auto k5 = kernel("atomic_mask", {"out", "n"}, [](Ptr<i32> out, I32 n) {
    g_line = __LINE__; atomic_add(out + arange(0, 16), 1, arange(0, 8) < n);
  });
  expect_parts(error_of([&] { k5.trace({}); }),
               {"atomic_add mask tile<8xi1> does not match the pointer tile tile<16xptr<i32>>", kAtLine,
                "bool tile of the pointer tile's shape"});

  auto k6 = kernel("atomic_value", {"out"}, [](Ptr<i32> out) {
    g_line = __LINE__; atomic_max(out + arange(0, 16), arange(0, 32));
  });
  expect_parts(error_of([&] { k6.trace({}); }),
               {"atomic_max value tile<32xi32> does not match the pointer tile tile<16xptr<i32>>", kAtLine,
                "Pass a scalar or a tile"});
}

TEST_CASE("other shape errors: broadcast_to, reshape, expand_dims, program_id, arange bounds") {
  auto k = kernel("bcast", [](Ptr<f32> out) {
    g_line = __LINE__; auto x = broadcast_to(zeros<f32>({16}), {8});
    store(out + arange(0, 8), x);
  });
  expect_parts(error_of([&] { k.trace({}); }), {"cannot broadcast a tile of shape [16] to [8]", kAtLine,
                                                "Only dimensions of size 1 can be broadcast"});

  auto k2 = kernel("reshape", [](Ptr<f32> out) {
    g_line = __LINE__; auto x = reshape(zeros<f32>({16}), {4, 8});
    store(out + arange(0, 4).col() * 8 + arange(0, 8).row(), x);
  });
  expect_parts(error_of([&] { k2.trace({}); }),
               {"reshape from [16] to [4, 8] changes the number of elements", kAtLine, "must have 16 elements"});

  auto k3 = kernel("expand", [](Ptr<f32> out) {
    g_line = __LINE__; auto x = expand_dims(zeros<f32>({16}), 2);
    store(out + arange(0, 16), reshape(x, {16}));
  });
  expect_parts(error_of([&] { k3.trace({}); }),
               {"expand_dims of tile<16xf32>", "axis 2 is out of range", kAtLine, "Use an axis in [-2, 1]"});

  auto k4 = kernel("pid3", [](Ptr<i32> out) {
    g_line = __LINE__; auto p = program_id(3);
    store(out, p);
  });
  expect_parts(error_of([&] { k4.trace({}); }), {"program_id axis 3 is out of range", kAtLine, "Use 0, 1 or 2"});

  auto k5 = kernel("nprog", [](Ptr<i32> out) {
    g_line = __LINE__; auto p = num_programs(-1);
    store(out, p);
  });
  expect_parts(error_of([&] { k5.trace({}); }), {"num_programs axis -1 is out of range", kAtLine});

  auto k6 = kernel("arange_empty", [](Ptr<i32> out) {
    g_line = __LINE__; auto r = arange(8, 8);
    store(out + r, r);
  });
  expect_parts(error_of([&] { k6.trace({}); }),
               {"arange(8, 8) is empty", kAtLine, "The end must be greater than the start"});
}

// ---------------------------------------------------------------- trace time: dot, reductions, control flow

TEST_CASE("dot: mismatched inner dimensions, unsupported dtypes, wrong accumulator") {
  auto k = kernel("dot_k", [](Ptr<f32> out) {
    auto a = zeros<f32>({16, 32});
    auto b = zeros<f32>({16, 16});
    g_line = __LINE__; auto c = dot(a, b);
    store(out + arange(0, 16).col() * 16 + arange(0, 16).row(), c);
  });
  expect_parts(error_of([&] { k.trace({}); }),
               {"dot inner dimensions differ: a is [16, 32], b is [16, 16]", kAtLine, "a must be [M, K] and b [K, N]",
                "trans()"});

  auto k2 = kernel("dot_i32", [](Ptr<f32> out) {
    auto a = zeros<i32>({16, 16});
    g_line = __LINE__; auto c = dot(a, a);
    store(out + arange(0, 16).col() * 16 + arange(0, 16).row(), c);
  });
  expect_parts(error_of([&] { k2.trace({}); }),
               {"dot does not support tile<16x16xi32> x tile<16x16xi32> inputs", kAtLine,
                "Supported: f16 x f16, bf16 x bf16, f32 x f32 and 8-bit floats", "cast the operands"});

  auto k3 = kernel("dot_mixed", [](Ptr<f32> out) {
    g_line = __LINE__; auto c = dot(zeros<f16>({16, 16}), zeros<bf16>({16, 16}));
    store(out + arange(0, 16).col() * 16 + arange(0, 16).row(), c);
  });
  expect_parts(error_of([&] { k3.trace({}); }),
               {"dot does not support tile<16x16xf16> x tile<16x16xbf16> inputs", kAtLine});

  auto k4 = kernel("dot_acc", [](Ptr<f32> out) {
    auto a = zeros<f32>({16, 16});
    g_line = __LINE__; auto c = dot(a, a, zeros<f32>({16, 8}));
    store(out + arange(0, 16).col() * 16 + arange(0, 16).row(), c);
  });
  expect_parts(error_of([&] { k4.trace({}); }),
               {"dot accumulator is tile<16x8xf32> but the product is tile<16x16xf32>", kAtLine,
                "Pass an f32 accumulator of shape [M, N]"});

  auto k5 = kernel("dot_tf32_f16", [](Ptr<f32> out) {
    auto a = zeros<f16>({16, 16});
    g_line = __LINE__; auto c = dot(a, a, Precision::tf32);
    store(out + arange(0, 16).col() * 16 + arange(0, 16).row(), c);
  });
  expect_parts(error_of([&] { k5.trace({}); }),
               {"dot precision tf32 applies to f32 inputs, not tile<16x16xf16> x tile<16x16xf16>", kAtLine,
                "Drop Precision::tf32: f16, bf16 and 8-bit float inputs run on tensor cores already"});
}

TEST_CASE("reduction axis out of range") {
  auto k = kernel("sum_axis", [](Ptr<f32> out) {
    auto x = zeros<f32>({16, 8});
    g_line = __LINE__; auto s = sum(x, 2);
    store(out + arange(0, 16), s);
  });
  expect_parts(error_of([&] { k.trace({}); }),
               {"sum of tile<16x8xf32>: axis 2 is out of range (2 axes)", kAtLine, "Use an axis in [-2, 1]"});

  auto k2 = kernel("argmax_axis", [](Ptr<i32> out) {
    g_line = __LINE__; auto s = argmax(zeros<f32>({16}), -2);
    store(out, s);
  });
  expect_parts(error_of([&] { k2.trace({}); }),
               {"argmax of tile<16xf32>: axis -2 is out of range (1 axes)", kAtLine, "Use an axis in [-1, 0]"});

  auto k3 = kernel("cumsum_axis", [](Ptr<f32> out) {
    g_line = __LINE__; auto s = cumsum(zeros<f32>({16}), 1);
    store(out + arange(0, 16), s);
  });
  expect_parts(error_of([&] { k3.trace({}); }), {"cumsum of tile<16xf32>: axis 1 is out of range", kAtLine});

  auto k4 = kernel("reduce_axis", [](Ptr<f32> out) {
    g_line = __LINE__; auto s = reduce(zeros<f32>({16}), 1, [](F32 a, F32 b) { return a + b; });
    store(out, s);
  });
  expect_parts(error_of([&] { k4.trace({}); }), {"reduce of tile<16xf32>: axis 1 is out of range", kAtLine});
}

TEST_CASE("reduce combine returning another dtype") {
  auto k = kernel("combine_type", [](Ptr<i32> out) {
    g_line = __LINE__; auto s = reduce(arange(0, 16), 0, [](I32 a, I32 b) { return scalar<f32>(0.0) + a; });
    store(out, s);
  });
  // The combine's own ops sit on the same line; the check names the element types.
  expect_parts(error_of([&] { k.trace({}); }),
               {"reduce combine returns f32 but the elements are i32", kAtLine, "must return the element type"});
}

TEST_CASE("a loop-carried value whose shape changes inside the loop") {
  auto k = kernel("carried", {"out", "in", "n"}, [](Ptr<f32> out, Ptr<const f32> in, I32 n, Meta<"B"> B) {
    auto acc = zeros<f32>({B});
    g_line = __LINE__; for_range(0, n, B, [&](I32 start) {
      acc = load(in + start + arange(0, 2 * B));  // [2B] replaces [B]
    });
    store(out + arange(0, B), acc);
  });
  expect_parts(error_of([&] { k.trace(Config{{"B", 16}}); }),
               {"loop-carried value", "changes type inside the loop: tile<16xf32> before the loop, tile<32xf32> at "
                                      "the end of the body",
                kAtLine, "must keep its shape and dtype"});
}

TEST_CASE("for_range bounds and if_ branches of different types") {
  auto k = kernel("float_bound", {"out", "hi"}, [](Ptr<f32> out, F32 hi) {
    auto acc = scalar<f32>(0.0);
    g_line = __LINE__; for_range(0, hi, 1, [&](I32 i) { acc = acc + 1.0f; });
    store(out, acc);
  });
  expect_parts(error_of([&] { k.trace({}); }),
               {"for_range bounds must be integer scalars, got f32", kAtLine, "Pass I32/I64 values or integers"});

  auto k2 = kernel("if_types", {"out", "in"}, [](Ptr<f32> out, Ptr<const f32> in) {
    auto x = zeros<f32>({16});
    g_line = __LINE__; if_(program_id(0) == 0, [&] { x = load(in + arange(0, 32)); });
    store(out + arange(0, 16), x);
  });
  expect_parts(error_of([&] { k2.trace({}); }),
               {"a handle assigned in an if_ branch gets different types: tile<32xf32> after then, tile<16xf32> "
                "after else",
                kAtLine, "Both branches must assign values of the same shape and dtype"});
}

TEST_CASE("atomics on unsupported element types") {
  auto k = kernel("atomic_f16", {"out"}, [](Ptr<f16> out) {
    g_line = __LINE__; atomic_add(out + arange(0, 16), 1.0f);
  });
  expect_parts(error_of([&] { k.trace({}); }),
               {"atomic_add on f16 elements is not supported", kAtLine, "Use i32, u32, i64, f32 or f64"});

  auto k2 = kernel("atomic_max_f64", {"out"}, [](Ptr<f64> out) {
    g_line = __LINE__; atomic_max(out, 1.0);
  });
  expect_parts(error_of([&] { k2.trace({}); }),
               {"atomic_max on f64 is not supported", kAtLine, "Use f32 or an integer type"});

  auto k3 = kernel("cas_f64", {"out"}, [](Ptr<f64> out) {
    g_line = __LINE__; atomic_cas(out, 0.0, 1.0);
  });
  expect_parts(error_of([&] { k3.trace({}); }),
               {"atomic_cas on f64 elements is not supported", kAtLine, "Use i32, u32, i64 or f32"});
}

TEST_CASE("where mixing a pointer and a number") {
  auto k = kernel("where_ptr", {"out", "in"}, [](Ptr<f32> out, Ptr<const f32> in) {
    auto offs = arange(0, 16);
    g_line = __LINE__; auto p = where(offs < 4, in + offs, 0);
    store(out + offs, load(p));
  });
  expect_parts(error_of([&] { k.trace({}); }),
               {"where of different pointer types tile<16xptr<f32>> and i32", kAtLine, "Both values must be pointers"});
}

TEST_CASE("DSL ops called outside a kernel trace") {
  g_line = __LINE__; auto msg = error_of([] { arange(0, 16); });
  expect_parts(msg, {"tilefuse DSL op 'arange' called outside a kernel trace", kAtLine,
                     "DSL ops only work inside a kernel(...) lambda", "plain C++"});
  g_line = __LINE__; msg = error_of([] { zeros<f32>({16}); });
  expect_parts(msg, {"tilefuse DSL op 'full' called outside a kernel trace", kAtLine});
  g_line = __LINE__; msg = error_of([] { program_id(0); });
  expect_parts(msg, {"'program_id' called outside a kernel trace", kAtLine});
}

// ---------------------------------------------------------------- launch time

TEST_CASE("missing meta-parameter and unknown config keys") {
  std::vector<float> out(16), in(16);
  g_line = __LINE__; auto msg = error_of([&] { copy_kernel().launch(grid(1), {num_warps(4)}, out, in, 16); });
  expect_parts(msg, {"kernel 'copy' needs meta-parameter B, but the launch config {num_warps=4 num_stages=1} does "
                     "not set it",
                     kAtLine, "Add {\"B\", <value>} to the config"});

  g_line = __LINE__; msg = error_of([&] { copy_kernel().launch(grid(1), {{"B", 16}, {"BLOCK", 16}}, out, in, 16); });
  expect_parts(msg, {"the launch config sets 'BLOCK', which is not a meta-parameter of kernel 'copy'", kAtLine,
                     "Its meta-parameters are: B"});

  auto no_meta = kernel("no_meta", {"out"}, [](Ptr<f32> out) { store(out, scalar<f32>(1.0)); });
  g_line = __LINE__; msg = error_of([&] { no_meta.launch(grid(1), {{"B", 16}}, out); });
  expect_parts(msg, {"'B', which is not a meta-parameter of kernel 'no_meta'", kAtLine,
                     "This kernel has no meta-parameters"});
}

TEST_CASE("num_warps and num_stages out of range, empty grid") {
  std::vector<float> out(16), in(16);
  g_line = __LINE__; auto msg = error_of([&] { copy_kernel().launch(grid(1), {{"B", 16}, num_warps(3)}, out, in, 16); });
  expect_parts(msg, {"num_warps = 3 for kernel 'copy' is not a power of two from 1 to 32", kAtLine,
                     "Use num_warps(w) with w = 1, 2, 4, 8, 16 or 32"});
  g_line = __LINE__; msg = error_of([&] { copy_kernel().launch(grid(1), {{"B", 16}, num_warps(64)}, out, in, 16); });
  expect_parts(msg, {"num_warps = 64 for kernel 'copy'", kAtLine});
  g_line = __LINE__; msg = error_of([&] { copy_kernel().launch(grid(1), {{"B", 16}, num_stages(0)}, out, in, 16); });
  expect_parts(msg, {"num_stages = 0 for kernel 'copy' is less than 1", kAtLine, "Use num_stages(1)"});
  g_line = __LINE__; msg = error_of([&] { copy_kernel().launch(grid(0), {{"B", 16}}, out, in, 16); });
  expect_parts(msg, {"launch of kernel 'copy' with an empty grid (0, 1, 1)", kAtLine,
                     "Every grid dimension must be at least 1"});
}

TEST_CASE("wrong number of launch arguments") {
  std::vector<float> out(16), in(16);
  g_line = __LINE__; auto msg = error_of([&] { copy_kernel().launch(grid(1), {{"B", 16}}, out, in); });
  expect_parts(msg, {"kernel 'copy' takes 3 arguments (out: Ptr<f32>, in: Ptr<const f32>, n: I32) but the launch "
                     "passes 2",
                     kAtLine, "Pass one argument per non-Meta parameter, in order"});
}

TEST_CASE("wrong type of launch argument") {
  auto k = kernel("bf16_out", {"out", "in", "n", "scale"}, [](Ptr<bf16> out, Ptr<const f32> in, I32 n, F32 scale) {
    auto offs = arange(0, 16);
    store(out + offs, (load(in + offs, offs < n) * scale).cast<bf16>(), offs < n);
  });
  std::vector<float> f(16), in(16);
  std::vector<bf16> b(16);
  g_line = __LINE__; auto msg = error_of([&] { k.launch(grid(1), {}, f, in, 16, 1.0f); });
  expect_parts(msg, {"argument 1 ('out') of kernel 'bf16_out' must be a buffer of bf16 (Ptr<bf16>), got a host "
                     "buffer of f32",
                     kAtLine, "Pass a std::span/std::vector of bf16"});

  g_line = __LINE__; msg = error_of([&] { k.launch(grid(1), {}, b, in, 16.0f, 1.0f); });
  expect_parts(msg, {"argument 3 ('n') of kernel 'bf16_out' must be an integer (I32), got a float (f32)", kAtLine,
                     "Pass an integer value"});

  g_line = __LINE__; msg = error_of([&] { k.launch(grid(1), {}, b, in, int64_t(5000000000), 1.0f); });
  expect_parts(msg, {"argument 3 ('n') of kernel 'bf16_out' is 5000000000, which does not fit I32", kAtLine,
                     "Declare the parameter wider (e.g. I64) or pass a smaller value"});

  g_line = __LINE__; msg = error_of([&] { k.launch(grid(1), {}, b, in, 16, in); });
  expect_parts(msg, {"argument 4 ('scale') of kernel 'bf16_out' must be a number (F32), got a host buffer of f32",
                     kAtLine, "Pass a float or integer value"});

  g_line = __LINE__; msg = error_of([&] { k.launch(grid(1), {}, b, 7, 16, 1.0f); });
  expect_parts(msg, {"argument 2 ('in') of kernel 'bf16_out' must be a buffer of f32 (Ptr<const f32>), got an "
                     "integer (i32)",
                     kAtLine});
}

TEST_CASE("host and device buffers in one launch") {
  std::vector<float> in(16);
  g_line = __LINE__; auto msg = error_of([&] { copy_kernel().launch(grid(1), {{"B", 16}}, FakeDeviceBuffer{}, in, 16); });
  expect_parts(msg, {"kernel 'copy' was given both host and device buffers", kAtLine,
                     "Pass all buffers as host spans (interpreter) or all as device buffers (GPU)"});
}

// ---------------------------------------------------------------- run time (interpreter)

TEST_CASE("out-of-bounds unmasked load and store name the op, program id, index and line") {
  static unsigned load_line = 0, store_line = 0;
  auto k = kernel("oob", {"out", "in"}, [](Ptr<f32> out, Ptr<const f32> in, Meta<"B"> B) {
    auto offs = program_id(0) * B + arange(0, B);
    load_line = __LINE__; auto x = load(in + offs);  // no mask
    store_line = __LINE__; store(out + offs, x * 2.0f);
  });
  std::vector<float> in(20, 1.0f), out(64, 0.0f);
  auto msg = error_of([&] { k.launch(grid(2), {{"B", 16}}, out, in); });
  expect_parts(msg, {"out-of-bounds load in kernel 'oob': element index 20 of buffer 'in' (20 elements of f32)",
                     "at program id (1, 0, 0), lane 4", at(load_line), "Mask the access (e.g. mask = offs < n)"});

  std::vector<float> in2(64, 1.0f), out2(40, 0.0f);
  msg = error_of([&] { k.launch(grid(4), {{"B", 16}}, out2, in2); });
  expect_parts(msg, {"out-of-bounds store in kernel 'oob': element index 40 of buffer 'out' (40 elements of f32)",
                     "at program id (2, 0, 0), lane 8", at(store_line), "Mask the access"});

  static unsigned atomic_line = 0;
  auto k2 = kernel("oob_atomic", {"hist", "bins"}, [](Ptr<i32> hist, Ptr<const i32> bins) {
    auto b = load(bins + arange(0, 4));
    atomic_line = __LINE__; atomic_add(hist + b, 1);
  });
  std::vector<int32_t> hist(8, 0), bins = {1, 7, 8, 2};
  msg = error_of([&] { k2.launch(grid(1), {}, hist, bins); });
  expect_parts(msg, {"out-of-bounds atomic_add in kernel 'oob_atomic': element index 8 of buffer 'hist'",
                     "lane 2", at(atomic_line), "Mask the access"});
}

TEST_CASE("integer division by zero on the interpreter") {
  static unsigned line = 0;
  auto k = kernel("div0", {"out", "a", "b"}, [](Ptr<i32> out, Ptr<const i32> a, Ptr<const i32> b) {
    auto offs = arange(0, 4);
    line = __LINE__; store(out + offs, load(a + offs) / load(b + offs));
  });
  std::vector<int32_t> out(4), a = {5, 6, 7, 8}, b = {1, 2, 0, 4};
  auto msg = error_of([&] { k.launch(grid(1), {}, out, a, b); });
  expect_parts(msg, {"integer division by zero (7 / 0, element 2 of a i32 tile)", "kernel 'div0' at program id (0, 0, 0)",
                     at(line), "Make sure the divisor is never zero"});
}

TEST_CASE("cluster reductions: in a loop whose bounds differ in the cluster, in if_, of a 16-bit value, bad cluster "
          "sizes and grids") {
  auto in_loop = kernel("cluster_in_loop", {"out", "n"}, [](Ptr<f32> out, I32 n) {
    auto acc = scalar<f32>(0.0);
    for_range(0, n + program_id(0), 1, [&](I32) {
      g_line = __LINE__; acc = acc + cluster_sum(scalar<f32>(1.0));
    });
    store(out, acc);
  });
  expect_parts(error_of([&] { in_loop.trace(Config{cluster(2)}); }),
               {"cluster_sum of f32 inside a for_range whose bounds may differ between the programs of a cluster",
                "every program of a cluster must reach each cluster reduction the same number of times", kAtLine,
                "or in loops whose bounds are the same in every program of the cluster"});
  // Bounds from cluster_id() and num_programs are the same in every program: allowed.
  auto uniform_loop = kernel("cluster_uniform_loop", {"out", "n"}, [](Ptr<f32> out, I32 n) {
    auto acc = scalar<f32>(0.0);
    for_range(cluster_id(), n, num_programs(0) / cluster_size(), [&](I32 i) {
      for_range(0, i, 1, [&](I32) { acc = acc + cluster_sum(scalar<f32>(1.0)); });
    });
    store(out, acc);
  });
  CHECK_NOTHROW(uniform_loop.trace(Config{cluster(2)}));
  auto in_if = kernel("cluster_in_if", {"out"}, [](Ptr<f32> out) {
    if_(program_id(0) == 0, [&] {
      g_line = __LINE__; store(out, cluster_max(scalar<f32>(1.0)));
    });
  });
  expect_parts(error_of([&] { in_if.trace(Config{cluster(2)}); }),
               {"cluster_max of f32 inside if_, whose branch may differ between the programs of a cluster", kAtLine});
  // A branch on cluster_id() and arguments is taken by the whole cluster: allowed, also nested.
  auto uniform_if = kernel("cluster_uniform_if", {"out", "n"}, [](Ptr<f32> out, I32 n) {
    if_(cluster_id() < n, [&] { store(out, scalar<f32>(0.0)); }, [&] {
      if_(cluster_id() - n > 2, [&] { store(out + cluster_id(), cluster_max(load(out + program_id(0)))); });
    });
  });
  CHECK_NOTHROW(uniform_if.trace(Config{cluster(4)}));
  auto mixed_if = kernel("cluster_mixed_if", {"out", "n"}, [](Ptr<f32> out, I32 n) {
    if_(cluster_id() < n, [&] {
      if_(program_id(0) < n, [&] { g_line = __LINE__; store(out, cluster_max(scalar<f32>(1.0))); });
    });
  });
  expect_parts(error_of([&] { mixed_if.trace(Config{cluster(2)}); }),
               {"cluster_max of f32 inside if_, whose branch may differ between the programs of a cluster", kAtLine});

  auto narrow = kernel("cluster_f16", [](Ptr<f16> out) {
    g_line = __LINE__; store(out, cluster_max(load(out)));
  });
  expect_parts(error_of([&] { narrow.trace(Config{cluster(2)}); }),
               {"cluster_max of f16: cluster reductions take 32- or 64-bit numbers", kAtLine, "Cast to f32"});
  // cluster_reduce with a combine function: the same rules for each of its values.
  auto plus = [](auto a, auto b) { return std::array{a[0] + b[0], a[1] + b[1]}; };
  auto custom_if = kernel("cluster_reduce_in_if", {"out"}, [&](Ptr<f32> out) {
    if_(load(out) > 0.0f, [&] {
      g_line = __LINE__; store(out, cluster_reduce(std::array{scalar<f32>(1.0), scalar<f32>(2.0)}, plus)[1]);
    });
  });
  expect_parts(error_of([&] { custom_if.trace(Config{cluster(2)}); }),
               {"cluster_reduce of value 0 (f32) inside if_, whose branch may differ between the programs of a cluster",
                kAtLine, "Call it at the top level of the kernel body"});
  auto custom_f16 = kernel("cluster_reduce_f16", [&](Ptr<f16> out) {
    g_line = __LINE__; store(out, cluster_reduce(std::array{load(out), load(out + 1)}, plus)[0]);
  });
  expect_parts(error_of([&] { custom_f16.trace(Config{cluster(2)}); }),
               {"cluster_reduce of value 0 (f16): cluster reductions take 32- or 64-bit numbers", kAtLine, "Cast to f32"});

  std::vector<float> out(16), in(16);
  g_line = __LINE__; auto msg = error_of([&] { copy_kernel().launch(grid(3), {{"B", 16}, cluster(3)}, out, in, 16); });
  expect_parts(msg, {"cluster = 3 for kernel 'copy' is not a power of two from 1 to 1024", kAtLine,
                     "Use cluster(c) with c = 1, 2, 4, ..., 1024", "more exchange through memory"});
  g_line = __LINE__; msg = error_of([&] { copy_kernel().launch(grid(2048), {{"B", 16}, cluster(2048)}, out, in, 16); });
  expect_parts(msg, {"cluster = 2048 for kernel 'copy' is not a power of two from 1 to 1024", kAtLine});
  g_line = __LINE__; msg = error_of([&] { copy_kernel().launch(grid(3), {{"B", 16}, cluster(2)}, out, in, 16); });
  expect_parts(msg, {"launch of kernel 'copy' with grid x = 3, which is not a multiple of its cluster size 2", kAtLine,
                     "make grid x a multiple of 2"});
  g_line = __LINE__; msg = error_of([&] { copy_kernel().launch(grid(3), {{"B", 16}, min_programs_per_sm(40)}, out, in, 16); });
  expect_parts(msg, {"min_programs_per_sm = 40 for kernel 'copy' is outside 0..32", kAtLine,
                     "Use min_programs_per_sm(n) with n from 1 to 32"});
  Config ws_and_min{{"B", 16}, warp_specialize(), min_programs_per_sm(2)};
  g_line = __LINE__; msg = error_of([&] { copy_kernel().launch(grid(3), ws_and_min, out, in, 16); });
  expect_parts(msg, {"kernel 'copy' is configured with warp_specialize and min_programs_per_sm = 2", kAtLine,
                     "Leave min_programs_per_sm out with warp_specialize"});
}
