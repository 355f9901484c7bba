// Control flow (for_range with loop-carried tiles, nested loops, if_ with and without
// else, C++ `if` on a meta-parameter) and the trace itself: one IR node per op, at the
// user's source line.
#include <map>
#include <tuple>

#include "dsl_test_util.hpp"

using namespace tilefuse;
using dsltest::first_mismatch;

namespace {
std::vector<const ir::Op*> ops_of(const ir::Function& f, ir::OpKind k) {
  std::vector<const ir::Op*> r;
  ir::walk(f.body, [&](ir::Op& op) {
    if (op.kind == k) r.push_back(&op);
  });
  return r;
}
}  // namespace

TEST_CASE("for_range: loop-carried tiles and scalars, a handle only read stays invariant") {
  static bool scale_unchanged = false, acc_changed = false;
  auto k = kernel("rowsum", {"out", "in", "n_cols"}, [](Ptr<f32> out, Ptr<const f32> in, I32 n_cols, Meta<"B"> B) {
    auto row = program_id(0);
    auto cols = arange(0, B);
    auto scale = full<f32>({B}, 0.5);  // only read inside the loop
    auto acc = zeros<f32>({B});
    auto count = scalar<i32>(0);
    ir::Value* scale_before = scale.value;
    ir::Value* acc_before = acc.value;
    for_range(0, n_cols, B, [&](I32 start) {
      auto c = start + cols;
      auto x = load(in + row * n_cols + c, c < n_cols, 0.0f);
      acc = acc + x * scale;
      count = count + 1;
    });
    scale_unchanged = scale.value == scale_before;
    acc_changed = acc.value != acc_before;
    store(out + row * 2, sum(acc, 0));
    store(out + row * 2 + 1, count.cast<f32>());
  });
  int rows = 3, cols = 77;
  int64_t B = 16;
  auto in = dsltest::rand_f(rows * cols, 80);
  std::vector<float> out(2 * rows, 0.0f);
  k.launch(grid(rows), {{"B", B}}, out, in, cols);
  std::vector<double> want(2 * rows, 0.0);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) want[2 * r] += in[r * cols + c] * 0.5;
    want[2 * r + 1] = double((cols + B - 1) / B);
  }
  CHECK(first_mismatch(out, want, 1e-5) == "");
  CHECK(scale_unchanged);
  CHECK(acc_changed);
  // Only acc and count are carried: the loop has 3 bounds + 2 inits and 2 results.
  auto f = k.trace(Config{{"B", B}});
  auto loops = ops_of(*f, ir::OpKind::For);
  REQUIRE(loops.size() == 1);
  CHECK(loops[0]->operands.size() == 5);
  CHECK(loops[0]->results.size() == 2);
  CHECK(loops[0]->region(0)->args.size() == 3);  // iv, acc, count
}

TEST_CASE("for_range: start, uneven step, I64 induction variable") {
  auto k = kernel("loops", {"out", "lo", "hi", "step"}, [](Ptr<i64> out, I32 lo, I32 hi, I32 step) {
    auto s = scalar<i64>(0);
    auto n = scalar<i32>(0);
    for_range(lo, hi, step, [&](I64 i) {
      s = s + i * i;
      n = n + 1;
    });
    store(out, s);
    store(out + 1, n.cast<i64>());
  });
  for (auto [lo, hi, step] : {std::tuple{3, 50, 5}, std::tuple{-7, 7, 3}, std::tuple{10, 10, 1}, std::tuple{9, 3, 2}}) {
    CAPTURE(lo);
    CAPTURE(hi);
    std::vector<int64_t> out(2, -1);
    k.launch(grid(1), {}, out, lo, hi, step);
    int64_t s = 0, n = 0;
    for (int64_t i = lo; i < hi; i += step) s += i * i, ++n;
    CHECK(out[0] == s);
    CHECK(out[1] == n);
  }
}

TEST_CASE("nested for_range with values carried at both levels") {
  // out[r] = sum_c in[r, c] * w[c] for each row, and out[m] = the total.
  auto k = kernel("nested", {"out", "in", "w", "m", "n"},
                  [](Ptr<f32> out, Ptr<const f32> in, Ptr<const f32> w, I32 m, I32 n, Meta<"B"> B) {
                    auto cols = arange(0, B);
                    auto total = scalar<f32>(0.0);
                    for_range(0, m, 1, [&](I32 r) {
                      auto acc = zeros<f32>({B});
                      for_range(0, n, B, [&](I32 start) {
                        auto c = start + cols;
                        auto mask = c < n;
                        acc = acc + load(in + r * n + c, mask, 0.0f) * load(w + c, mask, 0.0f);
                      });
                      auto rs = sum(acc, 0);
                      store(out + r, rs);
                      total = total + rs;
                    });
                    store(out + m, total);
                  });
  int m = 5, n = 45;
  auto in = dsltest::rand_f(m * n, 81);
  auto w = dsltest::rand_f(n, 82);
  std::vector<float> out(m + 1, 0.0f);
  k.launch(grid(1), {{"B", 16}}, out, in, w, m, n);
  std::vector<double> want(m + 1, 0.0);
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < n; ++c) want[r] += double(in[r * n + c]) * w[c];
    want[m] += want[r];
  }
  CHECK(first_mismatch(out, want, 1e-5, 1e-5) == "");
  auto f = k.trace(Config{{"B", 16}});
  CHECK(ops_of(*f, ir::OpKind::For).size() == 2);
}

TEST_CASE("if_ with and without else assigns handles, if_ inside a loop") {
  auto k = kernel("branches", {"out", "flags", "in"}, [](Ptr<f32> out, Ptr<i32> flags, Ptr<const f32> in, Meta<"B"> B) {
    auto pid = program_id(0);
    auto offs = pid * B + arange(0, B);
    auto x = load(in + offs);
    auto y = x;
    auto flag = scalar<i32>(0);
    if_(pid % 2 == 0, [&] {
      x = x * 2.0f;
      flag = flag + 1;
    }, [&] {
      x = x + 1.0f;
    });
    if_(pid < 2, [&] { y = y - 3.0f; });  // no else: y keeps its value elsewhere
    auto hits = scalar<i32>(0);
    for_range(0, 10, 1, [&](I32 i) {
      if_(i % 3 == 0, [&] { hits = hits + i; });
    });
    store(out + offs, x);
    store(out + 4 * B + offs, y);
    store(flags + pid * 2, flag);
    store(flags + pid * 2 + 1, hits);
  });
  int64_t B = 8;
  auto in = dsltest::rand_f(4 * B, 83);
  std::vector<float> out(8 * B, 0.0f);
  std::vector<int32_t> flags(8, -1);
  k.launch(grid(4), {{"B", B}}, out, flags, in);
  std::vector<float> want(8 * B);
  std::vector<int32_t> fw(8);
  for (int64_t p = 0; p < 4; ++p) {
    for (int64_t j = 0; j < B; ++j) {
      float v = in[p * B + j];
      want[p * B + j] = p % 2 == 0 ? v * 2.0f : v + 1.0f;
      want[4 * B + p * B + j] = p < 2 ? v - 3.0f : v;
    }
    fw[p * 2] = p % 2 == 0;
    fw[p * 2 + 1] = 0 + 3 + 6 + 9;
  }
  CHECK(first_mismatch(out, want) == "");
  CHECK(first_mismatch(flags, fw) == "");
  auto f = k.trace(Config{{"B", B}});
  auto ifs = ops_of(*f, ir::OpKind::If);
  REQUIRE(ifs.size() == 3);
  CHECK(ifs[0]->results.size() == 2);  // x and flag
  CHECK(ifs[1]->results.size() == 1);  // y
}

TEST_CASE("plain C++ if on a Meta<\"FLAG\", bool> specializes while tracing") {
  auto k = kernel("flag", {"out", "in", "n"},
                  [](Ptr<f32> out, Ptr<const f32> in, I32 n, Meta<"NEG", bool> NEG, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto x = load(in + offs, m);
                    if (NEG) x = -x;
                    else x = x * 2.0f;
                    store(out + offs, x, m);
                  });
  int n = 37;
  auto in = dsltest::rand_f(n, 84);
  for (int neg : {0, 1}) {
    CAPTURE(neg);
    std::vector<float> out(n, 0.0f);
    k.launch(grid(3), {{"NEG", neg}, {"B", 16}}, out, in, n);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = neg ? -in[i] : in[i] * 2.0f;
    CHECK(first_mismatch(out, want) == "");
    auto f = k.trace(Config{{"NEG", neg}, {"B", 16}});
    CHECK(ops_of(*f, ir::OpKind::If).empty());
    CHECK(ops_of(*f, ir::OpKind::Unary).size() == static_cast<size_t>(neg));
  }
}

TEST_CASE("tracing records one IR node per op at the user's source line") {
  static unsigned L[9];
  auto k = kernel("trace_lines", {"out", "in"}, [](Ptr<f32> out, Ptr<const f32> in, Meta<"B"> B) {
    L[0] = __LINE__; auto offs = arange(0, B);
    L[1] = __LINE__; auto p = in + offs;
    L[2] = __LINE__; auto x = load(p);
    L[3] = __LINE__; auto y = exp(x);
    L[4] = __LINE__; auto z = y * y;       // y is used twice but traced once
    L[5] = __LINE__; auto w = z + z;
    L[6] = __LINE__; auto s = sum(w, 0);
    L[7] = __LINE__; auto v = w - s;
    L[8] = __LINE__; store(out + offs, v);
  });
  auto f = k.trace(Config{{"B", 32}});
  std::map<unsigned, std::vector<ir::OpKind>> by_line;
  ir::walk(f->body, [&](ir::Op& op) {
    CHECK(op.loc.file.find("test_control_trace.cpp") != std::string::npos);
    by_line[op.loc.line].push_back(op.kind);
  });
  using K = ir::OpKind;
  CHECK(by_line.size() == 9);
  CHECK(by_line[L[0]] == std::vector<K>{K::Arange});
  CHECK(by_line[L[1]] == std::vector<K>{K::Splat, K::AddPtr});  // the scalar pointer is splat to [32]
  CHECK(by_line[L[2]] == std::vector<K>{K::Load});
  CHECK(by_line[L[3]] == std::vector<K>{K::Unary});
  CHECK(by_line[L[4]] == std::vector<K>{K::Binary});
  CHECK(by_line[L[5]] == std::vector<K>{K::Binary});
  CHECK(by_line[L[6]] == std::vector<K>{K::Reduce});
  CHECK(by_line[L[7]] == std::vector<K>{K::Splat, K::Binary});  // the scalar s is splat to [32]
  CHECK(by_line[L[8]] == std::vector<K>{K::Splat, K::AddPtr, K::Store});
  // The printed form carries the same locations.
  std::string text = ir::to_string(*f, {.locations = true});
  for (unsigned l : L) {
    CAPTURE(l);
    CHECK(text.find("loc(test_control_trace.cpp:" + std::to_string(l) + ")") != std::string::npos);
  }
  CHECK(text.find("exp") != std::string::npos);
  // And it runs.
  std::vector<float> in = dsltest::rand_f(32, 85, -1.0f, 1.0f), out(32, 0.0f);
  k.launch(grid(1), {{"B", 32}}, out, in);
  double s = 0;
  for (float v : in) s += 2.0 * std::exp(v) * std::exp(v);
  std::vector<double> want(32);
  for (int i = 0; i < 32; ++i) want[i] = 2.0 * std::exp(in[i]) * std::exp(in[i]) - s;
  CHECK(first_mismatch(out, want, 1e-5, 1e-4) == "");
}
