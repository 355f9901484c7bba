// The pass manager, run_frontend_passes and the TILEFUSE_DUMP_IR dump points.
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "ir_test_util.hpp"

using namespace tilefuse;
using namespace tilefuse::ir;
using test::contains;

namespace {

// Redirects std::cerr into a string for the lifetime of the object.
class CaptureCerr {
 public:
  CaptureCerr() : old_(std::cerr.rdbuf(buf_.rdbuf())) {}
  ~CaptureCerr() { std::cerr.rdbuf(old_); }
  std::string str() const { return buf_.str(); }

 private:
  std::ostringstream buf_;
  std::streambuf* old_;
};

// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

std::unique_ptr<Function> small_kernel(const std::string& name) {
  auto f = test::make_function(name);
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i32));
  Value* two = b.const_int(2, Type::scalar(DType::i32));
  Value* three = b.const_int(3, Type::scalar(DType::i32));
  Value* x = b.binary(BinaryOp::Add, two, three);
  Value* pid = b.program_id(0);
  b.store(out, b.binary(BinaryOp::Mul, x, pid));
  return f;
}

}  // namespace

TEST_CASE("ir pipeline: TILEFUSE_DUMP_IR prints the IR after tracing and after each pass") {
  auto f = small_kernel("dumped");
  std::string err;
  {
    ScopedEnv env("TILEFUSE_DUMP_IR", "other,dumped");
    CaptureCerr cap;
    run_frontend_passes(*f);
    err = cap.str();
  }
  const char* headers[] = {"// -----// IR after trace //----- //\n", "// -----// IR after verify //----- //\n",
                           "// -----// IR after canonicalize //----- //\n"};
  size_t at = 0;
  for (const char* h : headers) {
    size_t p = err.find(h, at);
    CHECK_MESSAGE(p != std::string::npos, "missing " << h << " in\n" << err);
    if (p != std::string::npos) at = p;
  }
  // The last dump point is the final verify; each dump is followed by the kernel text.
  CHECK(contains(err, "// -----// IR after trace //----- //\nkernel @dumped(%out: ptr<i32>)"));
  CHECK(contains(err, "= add %0, %1 : i32"));  // before folding
  CHECK(err.substr(err.rfind("// -----//")) ==
        "// -----// IR after verify //----- //\n"
        "kernel @dumped(%out: ptr<i32>) warps 4 stages 1 {\n"
        "  %0 = constant 5 : i32\n"
        "  %1 = program_id 0 : i32\n"
        "  %2 = mul %0, %1 : i32\n"
        "  store %out, %2\n"
        "}\n");
}

TEST_CASE("ir pipeline: no dump when the knob is unset or names another kernel") {
  for (const char* value : {"", "other", "0"}) {
    auto f = small_kernel("quiet");
    ScopedEnv env("TILEFUSE_DUMP_IR", value);
    CaptureCerr cap;
    run_frontend_passes(*f);
    CHECK(cap.str() == "");
  }
}

TEST_CASE("ir pipeline: PassManager runs a flat script of named passes with dump points") {
  auto f = small_kernel("script");
  std::vector<std::string> ran;
  PassManager pm("input");
  pm.add("fold", [&](Function& g) { ran.push_back("fold"); fold_constants(g); })
      .add("dce", [&](Function& g) { ran.push_back("dce"); dce(g); })
      .add("verify", verify);
  CHECK(pm.pass_names() == std::vector<std::string>{"fold", "dce", "verify"});
  std::string err;
  {
    ScopedEnv env("TILEFUSE_DUMP_IR", "1");
    CaptureCerr cap;
    pm.run(*f);
    err = cap.str();
  }
  CHECK(ran == std::vector<std::string>{"fold", "dce"});
  for (const char* pass : {"input", "fold", "dce", "verify"}) CHECK(contains(err, dump_header(pass) + "\n"));
  CHECK(err.find(dump_header("fold")) < err.find(dump_header("dce")));
  CHECK(contains(err, "constant 5 : i32"));
}

TEST_CASE("ir pipeline: a verifier failure stops the pipeline with the user's line") {
  auto f = small_kernel("bad");
  Op* mul = test::first_op(*f, OpKind::Binary);
  mul->loc.file = "/src/my_kernel.cpp";
  mul->loc.line = 42;
  mul->results[0]->type = Type::scalar(DType::f32);
  CHECK_THROWS_WITH_AS(run_frontend_passes(*f),
                       "verifier: result type f32 should be i32 in Binary.add(i32, i32) -> f32 (at my_kernel.cpp:42)",
                       UserError);
}

TEST_CASE("ir pipeline: canonicalize reaches a fixed point") {
  uint64_t seed = test::random_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto f = test::make_function("chain");
  Builder b(*f);
  Value* out = b.param("out", Type::pointer(DType::i64));
  Value* v = b.const_int(static_cast<int64_t>(rng() % 1000), Type::scalar(DType::i64));
  int64_t want = v->def->ival;
  for (int i = 0; i < 50; ++i) {
    int64_t k = static_cast<int64_t>(rng() % 7) + 1;
    if (i % 2) {
      v = b.binary(BinaryOp::Add, v, b.const_int(k, Type::scalar(DType::i64)));
      want += k;
    } else {
      v = b.binary(BinaryOp::Mul, v, b.const_int(k, Type::scalar(DType::i64)));
      want = static_cast<int64_t>(static_cast<uint64_t>(want) * static_cast<uint64_t>(k));
    }
  }
  b.store(out, v);
  canonicalize(*f);
  verify(*f);
  CHECK(count_ops(*f) == 2);
  CHECK(test::first_op(*f, OpKind::Constant)->ival == want);
  CHECK_FALSE(fold_constants(*f));
  CHECK_FALSE(cse(*f));
  CHECK_FALSE(dce(*f));
}
