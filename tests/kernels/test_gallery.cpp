// Every gallery kernel on the interpreter against a plain C++ reference, on random
// inputs at odd shapes (tails masked), for each dtype it supports.
#include <doctest/doctest.h>

#include <tilefuse/kernels/kernels.hpp>

#include "reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using ref::rtol;

TEST_CASE_TEMPLATE("softmax matches the reference at odd shapes", T, float, half, bfloat16) {
  struct Shape { int64_t rows, cols; };
  for (Shape s : {Shape{7, 1}, Shape{5, 37}, Shape{3, 1000}, Shape{2, 5000}}) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    auto x = ref::random_vec<T>(s.rows * s.cols, 11 + s.cols);
    std::vector<T> y(x.size());
    tk::softmax(y, x, s.rows, s.cols);
    std::vector<double> want;
    ref::softmax(want, ref::to_float(x), s.rows, s.cols);
    CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("looped online softmax handles rows longer than one tile", T, float, bfloat16) {
  int64_t rows = 3, cols = 333;
  auto x = ref::random_vec<T>(rows * cols, 5, -20.0f, 20.0f);
  std::vector<T> y(x.size());
  tk::softmax(y, x, rows, cols, -1, -1, Config{{"BLOCK", 64}, num_warps(2)});
  std::vector<double> want;
  ref::softmax(want, ref::to_float(x), rows, cols);
  CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
}

TEST_CASE("softmax on strided rows, -inf entries and large magnitudes") {
  int64_t rows = 4, cols = 45, stride = 51;
  auto x = ref::random_vec<float>(rows * stride, 9, -1e4f, 1e4f);
  for (int64_t c = 0; c < cols; c += 3) x[1 * stride + c] = -inf;  // a row with many -inf
  std::vector<float> y(rows * stride, 7.0f);
  tk::softmax(y, x, rows, cols, stride, stride);
  std::vector<float> packed(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) packed[r * cols + c] = x[r * stride + c];
  std::vector<double> want;
  ref::softmax(want, packed, rows, cols);
  std::vector<float> got(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) got[r * cols + c] = y[r * stride + c];
  CHECK(ref::max_rel_err(got, want, 1e-6, 1e-5) <= 1.0);
  CHECK(y[cols] == 7.0f);  // the padding between rows is untouched
}

TEST_CASE_TEMPLATE("rmsnorm matches the reference", T, float, half, bfloat16) {
  struct Shape { int64_t rows, cols; Config cfg; };
  for (auto& s : {Shape{6, 1, tk::norm_heuristic(1, dtype_v<T>)}, Shape{5, 77, tk::norm_heuristic(77, dtype_v<T>)},
                  Shape{3, 300, Config{{"BLOCK", 128}, num_warps(4)}}}) {
    CAPTURE(s.cols);
    auto x = ref::random_vec<T>(s.rows * s.cols, 3 + s.cols);
    auto w = ref::random_vec<T>(s.cols, 4, 0.5f, 1.5f);
    std::vector<T> y(x.size());
    tk::rmsnorm(y, x, w, s.rows, s.cols, 1e-6f, s.cfg);
    std::vector<double> want;
    ref::rmsnorm(want, ref::to_float(x), ref::to_float(w), s.rows, s.cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("fused residual add + rmsnorm writes the sum and the normalized rows", T, float, bfloat16) {
  for (int64_t block : {int64_t(0), int64_t(32)}) {
    int64_t rows = 4, cols = 90;
    auto x = ref::random_vec<T>(rows * cols, 21);
    auto r = ref::random_vec<T>(rows * cols, 22);
    auto w = ref::random_vec<T>(cols, 23, 0.5f, 1.5f);
    std::vector<T> y(x.size()), sum_out(x.size());
    tk::ConfigOverride cfg;
    if (block) cfg = Config{{"BLOCK", block}, num_warps(1)};
    tk::add_rmsnorm(y, sum_out, x, r, w, rows, cols, 1e-6f, cfg);
    std::vector<float> s(x.size());
    std::vector<double> want_sum(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      s[i] = static_cast<float>(T(float(x[i]) + float(r[i])));  // rounded to T, as stored
      want_sum[i] = s[i];
    }
    CHECK(ref::max_rel_err(sum_out, want_sum, 0, 0) == 0.0);
    std::vector<double> want;
    ref::rmsnorm(want, s, ref::to_float(w), rows, cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("layernorm matches the reference", T, float, half, bfloat16) {
  struct Shape { int64_t rows, cols; int64_t block; };
  for (auto& s : {Shape{3, 1, 0}, Shape{5, 123, 0}, Shape{3, 250, 64}}) {
    CAPTURE(s.cols);
    auto x = ref::random_vec<T>(s.rows * s.cols, 30 + s.cols, 2.0f, 6.0f);  // non-zero mean
    auto w = ref::random_vec<T>(s.cols, 31, 0.5f, 1.5f);
    auto b = ref::random_vec<T>(s.cols, 32);
    std::vector<T> y(x.size());
    tk::ConfigOverride cfg;
    if (s.block) cfg = Config{{"BLOCK", s.block}, num_warps(2)};
    tk::layernorm(y, x, w, b, s.rows, s.cols, 1e-5f, cfg);
    std::vector<double> want;
    ref::layernorm(want, ref::to_float(x), ref::to_float(w), ref::to_float(b), s.rows, s.cols, 1e-5);
    CHECK(ref::max_rel_err(y, want, 1e-4, rtol<T>() * 2) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("flash attention forward matches the reference", T, half, bfloat16) {
  struct Case { int64_t bh, n, d; bool causal; Config cfg; float scale = 0.0f; };
  Case cases[] = {
      {2, 37, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, num_warps(1)}},
      {1, 50, 64, true, Config{{"BLOCK_M", 32}, {"BLOCK_N", 16}, num_warps(2)}},
      {1, 21, 128, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, num_warps(1)}},
      {1, 19, 128, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 32}, num_warps(1)}},
      // Q.K^T one block ahead: no full block, one, several; causal with full blocks
      {2, 37, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"QK_AHEAD", 1}, num_warps(1)}},
      {1, 40, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"QK_AHEAD", 1}, num_warps(1)}},
      {1, 66, 64, true, Config{{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"QK_AHEAD", 1}, num_warps(2)}},
      // P.V one block behind: no full block (only the zero block's P.V), one, several;
      // causal with full blocks, and a width of exactly one block
      {2, 13, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, num_warps(1)}},
      {1, 37, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"PV_LAG", 1}, num_warps(1)}},
      {2, 83, 128, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, num_warps(1)}},
      {1, 70, 64, true, Config{{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"PV_LAG", 1}, num_warps(2)}},
      {1, 32, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"PV_LAG", 1}, num_warps(1)}},
      // ... with O rescaled after the softmax (RESCALE_LATE): no full block, several,
      // causal, a negative scale
      {2, 13, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, {"RESCALE_LATE", 1}, num_warps(1)}},
      {2, 83, 128, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, {"RESCALE_LATE", 1}, num_warps(1)}},
      {1, 70, 128, true, Config{{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"PV_LAG", 1}, {"RESCALE_LATE", 1}, num_warps(2)}},
      {2, 37, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"PV_LAG", 1}, {"RESCALE_LATE", 1}, num_warps(1)}, -0.4f},
      // ... with the diagonal block first (DIAGONAL_FIRST, causal): one query block per
      // key block and two, blocks down to 0, odd N (the last query block partial), late
      // rescale, a negative scale, a head in parts; ignored where not causal
      {2, 45, 64, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, {"DIAGONAL_FIRST", 1}, num_warps(1)}},
      {1, 77, 64, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"PV_LAG", 1}, {"DIAGONAL_FIRST", 1}, num_warps(1)}},
      {2, 70, 128, true,
       Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, {"RESCALE_LATE", 1}, {"DIAGONAL_FIRST", 1}, num_warps(1)}},
      {1, 61, 64, true,
       Config{{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"PV_LAG", 1}, {"RESCALE_LATE", 1}, {"DIAGONAL_FIRST", 1}, num_warps(2)},
       -0.6f},
      {1, 50, 96, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, {"DIAGONAL_FIRST", 1}, num_warps(1)}},
      {1, 16, 64, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, {"DIAGONAL_FIRST", 1}, num_warps(1)}},
      {2, 37, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, {"DIAGONAL_FIRST", 1}, num_warps(1)}},
      // explicit scales: the row max over raw scores (positive) and over scaled ones
      // (negative: SCALE_NEG), with and without masks and the lagged P.V
      {1, 45, 64, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, num_warps(1)}, 0.9f},
      {1, 45, 64, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, num_warps(1)}, -0.7f},
      {2, 37, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"PV_LAG", 1}, num_warps(1)}, -0.4f},
      // heads that are not powers of two, in parts: 96 = 64 + 32, 80 = 64 + 16, 40 =
      // 32 + 16 and 33 = 32 + 16 (columns past the head read 0, not stored; 33 leaves
      // rows off 16 bytes), 176 = 128 + 64; in one block: 200 (256), 112 (128), 96 with
      // HEAD_SPLIT=0; plain, one block ahead, one behind
      {2, 37, 96, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, num_warps(1)}},
      {1, 45, 96, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, num_warps(1)}},
      {2, 29, 80, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"QK_AHEAD", 1}, num_warps(1)}},
      {1, 50, 40, true, Config{{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"PV_LAG", 1}, num_warps(2)}},
      {2, 23, 33, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, num_warps(1)}},
      {1, 19, 200, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, num_warps(1)}, 0.05f},
      {2, 26, 176, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, num_warps(1)}},
      {1, 31, 112, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"QK_AHEAD", 1}, num_warps(1)}},
      {1, 33, 96, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"HEAD_SPLIT", 0}, num_warps(1)}},
      {1, 21, 256, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, num_warps(1)}},
      // Q's blocks through a view (Q_VIEW: rows past N and columns past the head read 0)
      {3, 37, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"Q_VIEW", 1}, num_warps(1)}},
      {2, 50, 96, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, {"Q_VIEW", 1}, num_warps(1)}},
      {1, 29, 40, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"Q_VIEW", 1}, num_warps(1)}},
  };
  for (auto& c : cases) {
    CAPTURE(c.n);
    CAPTURE(c.d);
    CAPTURE(c.causal);
    CAPTURE(c.scale);
    size_t sz = c.bh * c.n * c.d;
    auto q = ref::random_vec<T>(sz, 41, -1.0f, 1.0f);
    auto k = ref::random_vec<T>(sz, 42, -1.0f, 1.0f);
    auto v = ref::random_vec<T>(sz, 43, -1.0f, 1.0f);
    std::vector<T> o(sz);
    std::vector<float> lse(c.bh * c.n);
    double scale = c.scale != 0.0f ? c.scale : 1.0 / std::sqrt(double(c.d));
    tk::attention_fwd(o, lse, q, k, v, c.bh, c.n, c.d, c.causal, c.scale, c.cfg);
    std::vector<double> want_o, want_lse;
    ref::attention(want_o, want_lse, ref::to_float(q), ref::to_float(k), ref::to_float(v), c.bh, c.n, c.d, c.causal,
                   scale);
    CHECK(ref::max_rel_err(o, want_o, 1e-2, 1e-2) <= 1.0);
    CHECK(ref::max_rel_err(lse, want_lse, 1e-3, 1e-3) <= 1.0);
  }
}

// Grouped-query attention against the reference on k and v with each key/value head
// repeated for its group of query heads.
TEST_CASE_TEMPLATE("grouped-query attention matches the reference with key/value heads repeated", T, half, bfloat16) {
  struct Case { int64_t bh, group, n, d; bool causal; Config cfg; };
  Case cases[] = {
      {6, 3, 37, 64, false, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, num_warps(1)}},
      {8, 4, 45, 96, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"PV_LAG", 1}, num_warps(1)}},
      {4, 2, 29, 40, false, Config{{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"QK_AHEAD", 1}, num_warps(2)}},
      {5, 5, 20, 32, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, num_warps(1)}},  // one key/value head
  };
  for (auto& c : cases) {
    CAPTURE(c.group);
    CAPTURE(c.n);
    CAPTURE(c.d);
    const size_t head = size_t(c.n * c.d), sz = size_t(c.bh) * head, kv_sz = sz / c.group;
    auto q = ref::random_vec<T>(sz, 61, -1.0f, 1.0f);
    auto k = ref::random_vec<T>(kv_sz, 62, -1.0f, 1.0f), v = ref::random_vec<T>(kv_sz, 63, -1.0f, 1.0f);
    std::vector<T> o(sz);
    std::vector<float> lse(size_t(c.bh * c.n));
    tk::attention_fwd_grouped(o, lse, q, k, v, c.bh, c.group, c.n, c.d, c.causal, 0.0f, c.cfg);
    std::vector<T> k_full(sz), v_full(sz);  // query head h reads key/value head h / group
    for (int64_t h = 0; h < c.bh; ++h)
      for (size_t i = 0; i < head; ++i) {
        k_full[h * head + i] = k[(h / c.group) * head + i];
        v_full[h * head + i] = v[(h / c.group) * head + i];
      }
    std::vector<double> want_o, want_lse;
    ref::attention(want_o, want_lse, ref::to_float(q), ref::to_float(k_full), ref::to_float(v_full), c.bh, c.n, c.d,
                   c.causal, 1.0 / std::sqrt(double(c.d)));
    CHECK(ref::max_rel_err(o, want_o, 1e-2, 1e-2) <= 1.0);
    CHECK(ref::max_rel_err(lse, want_lse, 1e-3, 1e-3) <= 1.0);
  }
}

TEST_CASE("attention: a head is split into power-of-two parts of 16+ columns") {
  auto widths = [](int64_t d) {
    std::vector<std::pair<int64_t, int64_t>> got;
    for (const auto& p : tk::head_parts(d)) got.emplace_back(p.offset, p.width);
    return got;
  };
  using Parts = std::vector<std::pair<int64_t, int64_t>>;
  CHECK(widths(128) == Parts{{0, 128}});
  CHECK(widths(8) == Parts{{0, 8}});  // a power of two stays whole, however narrow
  CHECK(widths(96) == Parts{{0, 64}, {64, 32}});
  CHECK(widths(80) == Parts{{0, 64}, {64, 16}});
  CHECK(widths(40) == Parts{{0, 32}, {32, 16}});  // 48 columns, the last 8 past the head
  CHECK(widths(12) == Parts{{0, 16}});
  CHECK(widths(176) == Parts{{0, 128}, {128, 64}});  // the rest (48) rounded up to a power of two
  CHECK(widths(112) == Parts{{0, 128}});             // 64 + 64: one block
  CHECK(widths(200) == Parts{{0, 256}});             // 128 + 80 -> 128 + 128
  CHECK(widths(33) == Parts{{0, 32}, {32, 16}});
  CHECK(widths(17) == Parts{{0, 32}});  // 32 columns: one block
  CHECK(tk::head_parts(96, false).size() == 1);  // HEAD_SPLIT=0: the next power of two
  CHECK(tk::head_parts(96, false)[0].width == 128);
  CHECK(tk::head_parts_width(tk::head_parts(176)) == 192);
}

TEST_CASE("attention: sizes and buffers out of range are user errors") {
  auto error_of = [](int64_t bh, int64_t n, int64_t d, size_t q_size, size_t lse_size) {
    std::vector<half> q(q_size), kv(size_t(bh * n * d)), out(size_t(bh * n * d));
    std::vector<float> lse(lse_size);
    try {
      tk::attention_fwd(out, lse, q, kv, kv, bh, n, d, false);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string wide = error_of(1, 4, 320, 1280, 4);
  CHECK(wide.find("attention_fwd: batch_heads x seq_len x head_dim = 1 x 4 x 320 is out of range") != std::string::npos);
  CHECK(wide.find("a head dim of at most 256") != std::string::npos);
  CHECK(error_of(2, 0, 64, 0, 0).find("2 x 0 x 64 is out of range") != std::string::npos);
  std::string short_q = error_of(2, 5, 96, 900, 10);
  CHECK(short_q.find("attention_fwd: q has 900 elements, but batch_heads x seq_len x head_dim = 2 x 5 x 96 needs 960") !=
        std::string::npos);
  CHECK(error_of(2, 5, 96, 960, 9).find("attention_fwd: lse has 9 elements, but batch_heads x seq_len = 2 x 5 needs 10") !=
        std::string::npos);
  // Grouped-query attention: groups that do not divide the heads; key/value buffers sized
  // for the query heads' share.
  auto grouped_error = [](int64_t bh, int64_t group, size_t kv_size) {
    std::vector<half> q(size_t(bh) * 4 * 16), out(q.size()), kv(kv_size);
    std::vector<float> lse(size_t(bh) * 4);
    try {
      tk::attention_fwd_grouped(out, lse, q, kv, kv, bh, group, 4, 16, false);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(grouped_error(6, 4, 128).find("attention_fwd: 6 query heads do not split into groups of kv_group = 4") !=
        std::string::npos);
  CHECK(grouped_error(6, 0, 128).find("groups of kv_group = 0") != std::string::npos);
  CHECK(grouped_error(6, 3, 100).find("attention_fwd: k has 100 elements, but batch_heads / kv_group x seq_len x "
                                      "head_dim = 2 x 4 x 16 needs 128") != std::string::npos);
  CHECK(grouped_error(6, 3, 128) == "no error");
}

TEST_CASE_TEMPLATE("matmul with fused epilogues matches the reference at odd M, N, K", T, half, bfloat16) {
  struct Case { int64_t m, n, k; bool b_trans; float alpha; tk::Activation act; bool bias, res; Config cfg; };
  Config small{{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 16}, {"GROUP_M", 2}, num_warps(4)};
  Case cases[] = {
      {37, 45, 53, false, 1.0f, tk::Activation::none, false, false, small},
      {61, 29, 70, true, 0.5f, tk::Activation::gelu_tanh, true, false, small},
      {16, 64, 32, false, 1.0f, tk::Activation::relu, true, true, Config{{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, num_warps(2)}},
      {50, 33, 19, true, 2.0f, tk::Activation::silu, false, true, small},
      {9, 7, 5, false, 1.0f, tk::Activation::none, false, false, Config{}},  // the heuristic's config
  };
  for (auto& c : cases) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    auto a = ref::random_vec<T>(c.m * c.k, 51, -1.0f, 1.0f);
    auto b = ref::random_vec<T>(c.k * c.n, 52, -1.0f, 1.0f);
    auto bias = ref::random_vec<T>(c.n, 53, -1.0f, 1.0f);
    auto res = ref::random_vec<float>(c.m * c.n, 54, -1.0f, 1.0f);
    std::vector<float> out(c.m * c.n, 7.0f);
    tk::MatmulOptions o{c.b_trans, c.alpha, c.act};
    tk::ConfigOverride cfg;
    if (!c.cfg.meta.empty()) cfg = c.cfg;
    if (c.bias && c.res) tk::matmul(out, a, b, c.m, c.n, c.k, o, bias, res, cfg);
    else if (c.bias) tk::matmul(out, a, b, c.m, c.n, c.k, o, bias, nullptr, cfg);
    else if (c.res) tk::matmul(out, a, b, c.m, c.n, c.k, o, nullptr, res, cfg);
    else tk::matmul(out, a, b, c.m, c.n, c.k, o, nullptr, nullptr, cfg);
    auto want = ref::matmul(ref::to_float(a), ref::to_float(b), c.m, c.n, c.k, c.b_trans, c.alpha, static_cast<int>(c.act),
                            c.bias ? ref::to_float(bias) : std::vector<float>{}, c.res ? res : std::vector<float>{});
    CHECK(ref::max_rel_err(out, want, 1e-4, 1e-4) <= 1.0);
  }
  // 16-bit output.
  std::vector<T> out16(40 * 24);
  auto a = ref::random_vec<T>(40 * 48, 55, -1.0f, 1.0f), b = ref::random_vec<T>(48 * 24, 56, -1.0f, 1.0f);
  tk::matmul(out16, a, b, 40, 24, 48, {}, nullptr, nullptr, small);
  auto want = ref::matmul(ref::to_float(a), ref::to_float(b), 40, 24, 48, false, 1.0, 0, {}, {});
  CHECK(ref::max_rel_err(out16, want, 1e-2, rtol<T>()) <= 1.0);
}

// The last row of tiles ends at row M (EDGE_SHIFT, on by default) and the last column at
// N rounded up to 16 bytes (EDGE_SHIFT_N, on by default): the rows and columns they share
// with their neighbours are written twice with the same values; with a residual (which
// may be c itself) they stay in place, or those elements would add the residual twice.
TEST_CASE("matmul: the last row and column of tiles moved inside C give the same result, in-place residual too") {
  const int64_t m = 70, n = 45, k = 77;  // 32-row tiles: the third starts at row 38, not 64
  Config cfg{{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 16}, num_warps(4)};
  auto a = ref::random_vec<bfloat16>(m * k, 81, -1.0f, 1.0f), b = ref::random_vec<bfloat16>(k * n, 82, -1.0f, 1.0f);
  for (bool b_trans : {false, true}) {
    CAPTURE(b_trans);
    auto want = ref::matmul(ref::to_float(a), ref::to_float(b), m, n, k, b_trans, 1.0, 0, {}, {});
    for (int shift : {0, 1})
      for (int shift_n : {0, 1}) {
        CAPTURE(shift);
        CAPTURE(shift_n);
        // shift_n: the second column of tiles covers columns 16-47 (45 rounded up to 8,
        // bf16's 16 bytes), overlapping the first.
        std::vector<float> out(m * n, 7.0f);
        Config c = Config(cfg).set("EDGE_SHIFT", shift).set("EDGE_SHIFT_N", shift_n);
        tk::matmul(out, a, b, m, n, k, {b_trans}, nullptr, nullptr, c);
        CHECK(ref::max_rel_err(out, want, 1e-4, 1e-4) <= 1.0);
        std::vector<bfloat16> out16(m * n, bfloat16(7.0f));
        tk::matmul(out16, a, b, m, n, k, {b_trans}, nullptr, nullptr, c);
        CHECK(ref::max_rel_err(out16, want, 1e-2, rtol<bfloat16>()) <= 1.0);
      }
  }
  auto res = ref::random_vec<float>(m * n, 83, -1.0f, 1.0f);
  std::vector<float> c = res;  // c += a . b, c read as the residual
  tk::matmul(c, a, b, m, n, k, {}, nullptr, c, Config(cfg).set("EDGE_SHIFT", 1).set("EDGE_SHIFT_N", 1));
  CHECK(ref::max_rel_err(c, ref::matmul(ref::to_float(a), ref::to_float(b), m, n, k, false, 1.0, 0, {}, res), 1e-4,
                         1e-4) <= 1.0);
}

// Rows 16 mod 32 bytes apart cost TMA a sector per box row: the host copies such a B into
// 128-byte rows where the GEMM reads it often (reuse = M) over more than one wave of
// tiles; TILEFUSE_GEMM_COPY forces either way (A too).
TEST_CASE("GEMM operands an odd multiple of 16 bytes apart are copied where the GEMM reuses them enough") {
  using tk::detail::sector_copy_pays;
  CHECK(sector_copy_pays(3000, 2, 4096, 384, 132, true));          // B: 6000 bytes, 16 mod 32
  CHECK(sector_copy_pays(3088, 1, 4096, 400, 132, true));          // 8-bit, 3088 bytes
  CHECK(sector_copy_pays(3000, 2, 2000, 192, 132, true));          // 2000 rows, 1.5 waves
  CHECK_FALSE(sector_copy_pays(3000, 2, 16384, 1536, 132, false)); // A: only when forced
  CHECK_FALSE(sector_copy_pays(3008, 2, 4096, 384, 132, true));    // 6016 bytes: 47 lines
  CHECK_FALSE(sector_copy_pays(4000, 2, 4096, 384, 132, true));    // 8000 bytes: a multiple of 32
  CHECK_FALSE(sector_copy_pays(5000, 2, 1024, 384, 132, true));    // read by 1024 rows only
  CHECK_FALSE(sector_copy_pays(1000, 2, 4096, 128, 132, true));    // one wave of tiles
  setenv("TILEFUSE_GEMM_COPY", "0", 1);
  CHECK_FALSE(sector_copy_pays(3000, 2, 4096, 384, 132, true));
  setenv("TILEFUSE_GEMM_COPY", "1", 1);
  CHECK(sector_copy_pays(1000, 2, 64, 1, 132, false));
  CHECK_FALSE(sector_copy_pays(4000, 2, 64, 1, 132, true));
  unsetenv("TILEFUSE_GEMM_COPY");
}

// On wgmma the heuristic keeps 128x256 tiles where they fill the SMs and takes 64x128
// tiles (4x as many) where they would leave more than half of them idle, or splits K.
TEST_CASE("GEMM heuristics on wgmma: smaller tiles where the large ones leave SMs idle") {
  auto tile = [](const Config& c) {
    return std::tuple{c.get("BLOCK_M"), c.get("BLOCK_N"), c.num_warps, c.num_stages,
                      c.has("SPLIT_K") ? c.get("SPLIT_K") : int64_t{1}};
  };
  using T5 = std::tuple<int64_t, int64_t, int, int, int64_t>;
  CHECK(tile(tk::matmul_heuristic(4096, 4096, 4096, true, 132)) == T5{128, 256, 8, 4, 1});
  CHECK(tile(tk::matmul_heuristic(2048, 2048, 2048, true, 132)) == T5{128, 256, 8, 4, 1});  // 128 tiles
  // 64x128 tiles (4x as many): 6 stages where they fit in one wave, 4 (two per SM) past it.
  CHECK(tile(tk::matmul_heuristic(1024, 1024, 1024, true, 132)) == T5{64, 128, 4, 6, 1});   // 32 -> 128 tiles
  CHECK(tile(tk::matmul_heuristic(128, 8192, 8192, true, 132)) == T5{64, 128, 4, 6, 1});
  // 128x128 tiles on two warpgroups, 6 stages, where they fill over half the SMs in one wave.
  CHECK(tile(tk::matmul_heuristic(512, 4096, 4096, true, 132)) == T5{128, 128, 8, 6, 1});   // 128 tiles
  CHECK(tile(tk::matmul_heuristic(300, 4096, 4096, true, 132)) == T5{128, 128, 8, 6, 1});   // 96
  CHECK(tile(tk::matmul_heuristic(512, 4096, 14336, true, 132)) == T5{128, 128, 8, 6, 1});  // not split
  CHECK(tile(tk::matmul_heuristic(256, 4096, 4096, true, 132)) == T5{64, 128, 4, 6, 1});    // 64: too few
  // A partial last wave: its tiles split (SPLIT_TAIL), 128x128 or the large ones, by cost.
  auto tail = [](const Config& c) { return c.has("SPLIT_TAIL") ? c.get("SPLIT_TAIL") : int64_t{0}; };
  Config c640 = tk::matmul_heuristic(640, 4096, 4096, true, 132);  // 80 large tiles, or 132 + 28 of 128x128
  CHECK(tile(c640) == T5{128, 128, 8, 6, 4});
  CHECK(tail(c640) == 1);
  Config c1536 = tk::matmul_heuristic(1536, 1536, 1536, true, 132);  // slices of 4 blocks: whole
  CHECK(tile(c1536) == T5{128, 256, 8, 4, 1});
  CHECK(tail(c1536) == 0);
  Config c1100 = tk::matmul_heuristic(1100, 4096, 4096, true, 132);  // 288 of 128x128: 264 + 27, 4 slices
  CHECK(tile(c1100) == T5{128, 128, 8, 6, 4});
  CHECK(tail(c1100) == 1);
  Config c5000 = tk::matmul_heuristic(1024, 5000, 8192, true, 132);  // 132 + 28 large tiles
  CHECK(tile(c5000) == T5{128, 256, 8, 4, 4});
  CHECK(tail(c5000) == 1);
  // The standard shapes' last waves are nearly full: whole tiles.
  for (auto [m, n, k] : {std::tuple{4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 1024}, {16384, 4096, 4096},
                         {4000, 4000, 4000}}) {
    CAPTURE(m);
    CHECK(tile(tk::matmul_heuristic(m, n, k, true, 132)) == T5{128, 256, 8, 4, 1});
  }
  CHECK(tile(tk::matmul_heuristic(64, 16384, 4096, true, 132)) == T5{64, 128, 4, 6, 1});
  // Each SM's share of the MMAs past ~200 MFLOP: the large tiles, K split.
  CHECK(tile(tk::matmul_heuristic(256, 4096, 14336, true, 132)) == T5{128, 256, 8, 4, 4});
  // Fewer 64x128 tiles than half the SMs (skinny GEMMs): 64x64 tiles, two per SM, split.
  CHECK(tile(tk::matmul_heuristic(64, 4096, 4096, true, 132)) == T5{64, 64, 4, 6, 4});
  // M ≤ 16: 16-row tiles (mma.sync), split, unless they fill the SMs unsplit.
  CHECK(tile(tk::matmul_heuristic(1, 4096, 4096, true, 132)) == T5{16, 64, 4, 4, 4});
  CHECK(tile(tk::matmul_heuristic(16, 4096, 14336, true, 132)) == T5{16, 64, 4, 4, 4});
  CHECK(tile(tk::matmul_heuristic(16, 14336, 4096, true, 132)) == T5{64, 128, 4, 6, 1});
  CHECK(tile(tk::matmul_heuristic(17, 4096, 4096, true, 132)) == T5{64, 64, 4, 6, 4});
  CHECK(tile(tk::matmul_heuristic(128, 4096, 4096, true, 132)) == T5{64, 64, 4, 6, 2});
  CHECK(tile(tk::matmul_heuristic(1024, 1024, 1024, true, 16)) == T5{128, 256, 8, 4, 1});   // a small GPU: filled
  CHECK(tile(tk::matmul_heuristic(100, 40, 64, true, 132)) == T5{64, 64, 4, 6, 1});         // K too short to split
  CHECK(tile(tk::matmul_heuristic(64, 4096, 4096, true, 0)) == T5{64, 256, 4, 4, 1});       // sms = 0: no split
  auto t3 = [](const Config& c) { return std::tuple{c.get("BLOCK_M"), c.get("BLOCK_N"), c.num_warps}; };
  using T3 = std::tuple<int64_t, int64_t, int>;
  CHECK(t3(tk::scaled_matmul_heuristic(1024, 1024, 1024, true, false, 132)) == T3{64, 128, 4});
  CHECK(t3(tk::scaled_matmul_heuristic(8192, 8192, 1024, true, false, 132)) == T3{128, 256, 8});
  CHECK(tk::scaled_matmul_heuristic(1024, 1024, 1024, true, false, 132).get("BLOCK_K") == 128);
  CHECK(t3(tk::scaled_matmul_heuristic(512, 4096, 4096, true, false, 132)) == T3{128, 128, 8});
  // 8-bit: a partial last wave keeps the large tiles whole (its split measured slower).
  CHECK(tile(tk::scaled_matmul_heuristic(640, 4096, 4096, true, false, 132)) == T5{128, 256, 8, 4, 1});
  CHECK(!tk::scaled_matmul_heuristic(1100, 4096, 4096, true, false, 132).has("SPLIT_TAIL"));
  // The 8-bit GEMM shares the rule, split-K included (its operands are half the bytes).
  CHECK(tile(tk::scaled_matmul_heuristic(64, 4096, 4096, true, false, 132)) == T5{64, 64, 4, 6, 4});
  CHECK(!tk::scaled_matmul_heuristic(64, 4096, 4096, true, true, 132).has("SPLIT_K"));  // precise: no split
  CHECK(tile(tk::scaled_matmul_heuristic(1, 8192, 8192, true, false, 132)) == T5{16, 64, 4, 4, 2});
}

namespace {

// A bf16 GEMM's random operands, bias and f32 residual, and its plain C++ result.
struct GemmCase {
  int64_t m, n, k;
  bool b_trans;
  float alpha;
  tk::Activation act;
  bool bias, res;
};
struct GemmData {
  std::vector<bfloat16> a, b, bias;
  std::vector<float> res;
};
GemmData gemm_data(const GemmCase& c, uint32_t seed) {
  return {ref::random_vec<bfloat16>(c.m * c.k, seed, -1.0f, 1.0f), ref::random_vec<bfloat16>(c.k * c.n, seed + 1, -1.0f, 1.0f),
          ref::random_vec<bfloat16>(c.n, seed + 2, -1.0f, 1.0f), ref::random_vec<float>(c.m * c.n, seed + 3, -1.0f, 1.0f)};
}
std::vector<double> gemm_want(const GemmCase& c, const GemmData& d) {
  return ref::matmul(ref::to_float(d.a), ref::to_float(d.b), c.m, c.n, c.k, c.b_trans, c.alpha, static_cast<int>(c.act),
                     c.bias ? ref::to_float(d.bias) : std::vector<float>{}, c.res ? d.res : std::vector<float>{});
}

}  // namespace

// Split-K (gemm_split_k.hpp) on the interpreter, both ways of adding the slices: f32
// partials and a reduction kernel that applies the epilogue (cluster 0), and the slices
// of a tile as one cluster adding their tiles with cluster_sum (cluster 1: 2, 4, 8
// slices; 8 slices of 4 K blocks leave four empty); odd sizes, a short last slice, both
// B layouts.
TEST_CASE("split-K GEMM matches the reference at odd M, N, K with every epilogue") {
  Config tile{{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 16}, {"GROUP_M", 2}, num_warps(4)};
  struct Case { GemmCase g; int64_t splits; int cluster; };
  Case cases[] = {{{37, 45, 203, false, 1.0f, tk::Activation::none, false, false}, 3, 0},
                  {{33, 70, 150, true, 0.5f, tk::Activation::gelu_tanh, true, true}, 4, 0},
                  {{33, 70, 150, true, 0.5f, tk::Activation::gelu_tanh, true, true}, 4, 1},
                  {{5, 31, 64, false, 2.0f, tk::Activation::silu, true, false}, 2, 0},
                  {{5, 31, 64, false, 2.0f, tk::Activation::silu, true, false}, 2, 1},
                  {{5, 31, 64, true, 1.0f, tk::Activation::relu, false, true}, 8, 1},
                  {{37, 45, 203, false, 1.0f, tk::Activation::none, true, false}, 3, 0}};
  for (auto& [c, splits, cluster] : cases) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    CAPTURE(splits);
    CAPTURE(cluster);
    GemmData d = gemm_data(c, 57);
    std::vector<float> out(c.m * c.n, 7.0f);
    tk::MatmulOptions o{c.b_trans, c.alpha, c.act};
    Config epi = tk::matmul_config(tile, o, c.bias, c.res);
    tk::detail::matmul_split_k<bfloat16>(out, d.a, d.b, d.bias, d.res, c.m, c.n, c.k, c.k, c.b_trans ? c.k : c.n, c.alpha,
                                         c.b_trans, tile, epi, tk::SplitK{splits, cluster});
    CHECK(ref::max_rel_err(out, gemm_want(c, d), 1e-4, 1e-4) <= 1.0);
  }
  // The rule: split where 128x256 tiles fill under half the SMs, K is long and the
  // partials' traffic is small against the operands'.
  auto slices = [](int64_t m, int64_t n, int64_t k) {
    return tk::split_k_slices(m, n, k, tk::matmul_heuristic(m, n, k, true, 0), 132, 2);
  };
  CHECK(slices(256, 4096, 14336) == 4);
  CHECK(slices(128, 8192, 8192) == 4);
  CHECK(slices(64, 4096, 4096) == 8);
  CHECK(slices(4096, 4096, 4096) == 1);  // tiles fill the GPU
  CHECK(slices(1024, 1024, 1024) == 1);  // partials 8x the operands
  CHECK(slices(512, 4096, 4096) == 1);   // partials about the operands' bytes
  CHECK(slices(128, 8192, 512) == 1);    // K too short for slices of 8 blocks
  // The reduction: about two programs per SM, rows of up to 128 columns, the slices
  // unrolled (SPLITS).
  auto red = [](int64_t m, int64_t n, int64_t s) {
    Config c = tk::split_k_reduce_config(m, n, s, 132);
    return std::tuple{c.get("BLOCK_M"), c.get("BLOCK_N"), c.get("SPLITS"), c.num_warps};
  };
  using R4 = std::tuple<int64_t, int64_t, int64_t, int>;
  CHECK(red(64, 4096, 8) == R4{4, 128, 8, 2});
  CHECK(red(16, 4096, 8) == R4{1, 128, 8, 1});
  CHECK(red(256, 4096, 4) == R4{16, 128, 4, 4});
  CHECK(red(5, 31, 2) == R4{1, 32, 2, 1});
}

// The last partial wave's tiles split (SPLIT_TAIL, gemm_split_tail.hpp) on the
// interpreter, whose waves are 132 programs: 16x16 tiles, so that the whole tiles (the
// GEMM's kernel) and the split ones (the tail kernel) mix; odd M, N, K (the last row of
// tiles shifted up without a residual, the tail rounded up to whole columns of the last
// group), 2-4 slices with a short last one, every epilogue, both B layouts; no tail (a
// full wave) and every tile split (fewer tiles than a wave).
TEST_CASE("split-tail GEMM matches the reference, whole and split tiles mixed") {
  Config tile{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 16}, {"GROUP_M", 4}, num_warps(4)};
  struct Case { GemmCase g; int64_t splits, per_sm; };
  Case cases[] = {{{200, 199, 203, false, 1.0f, tk::Activation::none, false, false}, 3, 1},     // 169 tiles: 132 + 37
                  {{190, 180, 150, true, 0.5f, tk::Activation::gelu_tanh, true, false}, 4, 1},  // 144: 132 + 12
                  {{190, 180, 77, false, 2.0f, tk::Activation::silu, true, true}, 2, 1},        // a residual: no shift
                  {{176, 192, 64, true, 1.0f, tk::Activation::relu, false, true}, 2, 1},        // 132: a full wave
                  {{200, 199, 96, false, 1.0f, tk::Activation::none, true, false}, 4, 2}};      // 169 < 264: all split
  for (auto& [c, splits, per_sm] : cases) {
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.k);
    CAPTURE(splits);
    GemmData d = gemm_data(c, 61);
    std::vector<float> out(c.m * c.n, 7.0f);
    tk::MatmulOptions o{c.b_trans, c.alpha, c.act};
    Config cfg = Config(tile).set("SPLIT_K", splits).set("SPLIT_TAIL", per_sm);
    if (c.bias && c.res) tk::matmul(out, d.a, d.b, c.m, c.n, c.k, o, d.bias, d.res, cfg);
    else if (c.bias) tk::matmul(out, d.a, d.b, c.m, c.n, c.k, o, d.bias, nullptr, cfg);
    else if (c.res) tk::matmul(out, d.a, d.b, c.m, c.n, c.k, o, nullptr, d.res, cfg);
    else tk::matmul(out, d.a, d.b, c.m, c.n, c.k, o, nullptr, nullptr, cfg);
    CHECK(ref::max_rel_err(out, gemm_want(c, d), 1e-4, 1e-4) <= 1.0);
  }
  // Which tiles split.
  CHECK(tk::detail::split_tail_tiles(169, 13, 16, 132) == 39);  // 37 past the wave, columns of 13
  CHECK(tk::detail::split_tail_tiles(160, 5, 16, 132) == 30);   // 28, columns of 5
  CHECK(tk::detail::split_tail_tiles(264, 12, 16, 132) == 0);   // full waves
  CHECK(tk::detail::split_tail_tiles(40, 5, 16, 132) == 40);    // no full wave: all
  CHECK(tk::detail::split_tail_tiles(300, 20, 16, 132) == 36);  // 36 past 2 waves; the last group's 4 rows
  // The plan: split where a full wave comes first and the split saves time (here a
  // fix-up of 16 + 2.5 S blocks, the 128x128 tiles' on an H200).
  auto plan = [](int64_t tiles_m, int64_t tiles_n, int64_t kb) {
    auto p = tk::plan_tail_split(tiles_m, tiles_n, 16, kb, 132, [](int64_t s) { return 16.0 + 2.5 * s; });
    return std::pair{p.tail_tiles, p.slices};
  };
  using P2 = std::pair<int64_t, int64_t>;
  CHECK(plan(5, 32, 64) == P2{30, 4});  // 640 x 4096: 28 past the wave, whole columns of 5, 4 slices of 16
  CHECK(plan(9, 32, 64) == P2{27, 4});  // 1100 x 4096: 24 past two waves -> 27
  CHECK(plan(12, 12, 24) == P2{0, 1});  // 1536^3: slices of 4 blocks do not repay the fix-up
  CHECK(plan(32, 32, 64) == P2{0, 1});  // 100 past 7 waves: no room to split
  CHECK(plan(5, 16, 64) == P2{0, 1});   // no full wave
  CHECK(plan(11, 12, 64) == P2{0, 1});  // a full wave
}

TEST_CASE("matmul: non-positive sizes are a user error") {
  std::vector<half> a(4), b(4);
  std::vector<float> c(4);
  try {
    tk::matmul(c, a, b, 2, 0, 2);
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("M, N and K must be positive, got 2x0x2") != std::string::npos);
  }
  // A split into fewer than one slice.
  std::vector<float> c4(4);
  try {
    tk::matmul(c4, a, b, 2, 2, 2, {}, nullptr, nullptr, Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 16},
                                                            {"SPLIT_K", 0}, num_warps(1)});
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("matmul: SPLIT_K must be at least 1 (the number of slices K is split into), got 0") !=
          std::string::npos);
    CHECK(std::string(e.what()).find("Use SPLIT_K=1 for no split") != std::string::npos);
  }
  // Slices added in a cluster: 2, 4 or 8 of them.
  auto split_error = [&](int64_t splits, int64_t cluster) {
    try {
      tk::matmul(c4, a, b, 2, 2, 2, {}, nullptr, nullptr,
                 Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 16}, {"SPLIT_K", splits},
                        {"SPLIT_CLUSTER", cluster}, num_warps(1)});
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string e3 = split_error(3, 1);
  CHECK(e3.find("matmul: SPLIT_CLUSTER=1 adds the slices of K within a thread-block cluster, which takes SPLIT_K = 2, "
                "4 or 8; got SPLIT_K=3") != std::string::npos);
  CHECK(e3.find("or SPLIT_CLUSTER=0 (partials added by a second kernel)") != std::string::npos);
  CHECK(split_error(2, 2).find("matmul: SPLIT_CLUSTER must be 0 or 1, got 2") != std::string::npos);
  // The last wave's tiles split: 1-8 programs per SM, with SPLIT_K, not in clusters.
  auto tail_error = [&](int64_t splits, int64_t tail, int64_t cluster) {
    try {
      tk::matmul(c4, a, b, 2, 2, 2, {}, nullptr, nullptr,
                 Config{{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 16}, {"SPLIT_K", splits}, {"SPLIT_TAIL", tail},
                        {"SPLIT_CLUSTER", cluster}, num_warps(1)});
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(tail_error(2, 9, 0).find("matmul: SPLIT_TAIL must be 0 (off) or the programs per SM of a wave, 1 to 8; got 9") !=
        std::string::npos);
  CHECK(tail_error(1, 1, 0).find("matmul: SPLIT_TAIL=1 splits the last wave's tiles into SPLIT_K slices, but SPLIT_K is "
                                 "1") != std::string::npos);
  CHECK(tail_error(2, 1, 1).find("matmul: SPLIT_TAIL and SPLIT_CLUSTER=1 do not combine") != std::string::npos);
  CHECK(tail_error(2, 1, 0) == "no error");
}

TEST_CASE_TEMPLATE("fused and unfused log(relu(x + b)) agree with the reference", T, float, bfloat16) {
  int64_t rows = 7, cols = 301;
  auto x = ref::random_vec<T>(rows * cols, 51);
  auto b = ref::random_vec<T>(cols, 52);
  std::vector<T> y(x.size()), y2(x.size()), t(x.size()), u(x.size());
  Config cfg{{"BLOCK", 256}, num_warps(2)};
  tk::bias_relu_log(y, x, b, rows, cols, cfg);
  tk::bias_relu_log_unfused(y2, x, b, t, u, rows, cols, cfg);
  std::vector<double> want(x.size());
  for (int64_t i = 0; i < rows * cols; ++i) {
    float s = float(T(float(x[i]) + float(b[i % cols])));  // unfused rounds the sum to T
    want[i] = std::log(std::max(double(float(x[i]) + float(b[i % cols])), 0.0));
    (void)s;
  }
  CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
  // The unfused pipeline rounds its temporaries to T, so compare it loosely too.
  CHECK(ref::max_rel_err(y2, want, 1e-2, rtol<T>() * 4) <= 1.0);
}

TEST_CASE("layernorm stays accurate when the mean dwarfs the spread") {
  // One tile with each algorithm, and the looped program.
  for (auto [block, shifted] : {std::pair{256, 0}, std::pair{256, 1}, std::pair{64, 1}}) {
    int64_t rows = 4, cols = 200;
    auto x = ref::random_vec<float>(rows * cols, 61, 1000.0f, 1002.0f);  // mean ~1001, std ~0.6
    auto w = ref::random_vec<float>(cols, 62, 0.5f, 1.5f);
    auto b = ref::random_vec<float>(cols, 63);
    std::vector<float> y(x.size());
    tk::layernorm(y, x, w, b, rows, cols, 1e-5f, Config{{"BLOCK", block}, {"SHIFTED", shifted}, num_warps(2)});
    std::vector<double> want;
    ref::layernorm(want, x, w, b, rows, cols, 1e-5);
    CHECK(ref::max_rel_err(y, want, 1e-3, 1e-3) <= 1.0);
  }
}

TEST_CASE_TEMPLATE("softmax with several rows per program (tail programs masked)", T, float, bfloat16) {
  for (auto [rows, cols, per] : {std::tuple{7, 37, 2}, std::tuple{9, 300, 4}, std::tuple{5, 1, 8}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    auto x = ref::random_vec<T>(rows * cols, 71 + cols, -10.0f, 10.0f);
    std::vector<T> y(x.size());
    int64_t block = tk::next_pow2(cols);
    tk::softmax(y, x, rows, cols, -1, -1, Config{{"BLOCK", block}, {"ROWS", per}, num_warps(2)});
    std::vector<double> want;
    ref::softmax(want, ref::to_float(x), rows, cols);
    CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
  }
}

// A row split over the C programs of a thread-block cluster: BLOCK columns each, the
// row statistics combined across the cluster. 600 columns over 8 x 128 leaves the
// last three programs of every cluster without a column. RELOAD=1 (norms) reads the
// row again after the reductions instead of keeping it.
TEST_CASE_TEMPLATE("rows split over a thread-block cluster match the reference", T, float, bfloat16) {
  struct Split { int64_t rows, cols, block; int cluster; };
  for (auto [s, reload] : {std::pair{Split{3, 1000, 256, 4}, 0}, std::pair{Split{2, 600, 128, 8}, 1},
                           std::pair{Split{4, 97, 64, 2}, 0}, std::pair{Split{4, 97, 64, 2}, 1},
                           std::pair{Split{3, 77, 128, 1}, 1}}) {
    CAPTURE(s.cols);
    CAPTURE(s.cluster);
    CAPTURE(reload);
    Config cfg{{"BLOCK", s.block}, {"RELOAD", reload}, num_warps(2), cluster(s.cluster)};
    int64_t n = s.rows * s.cols;
    auto x = ref::random_vec<T>(n, 81 + s.cols, -30.0f, 30.0f);
    for (int64_t c = 0; c < s.cols; c += 5) x[c] = T(-inf);  // -inf entries in row 0
    auto w = ref::random_vec<T>(s.cols, 82, 0.5f, 1.5f);
    auto b = ref::random_vec<T>(s.cols, 83);
    std::vector<T> y(n);
    std::vector<double> want;

    Config softmax_cfg = cfg;
    softmax_cfg.meta.erase("RELOAD");  // the norms' option
    tk::softmax(y, x, s.rows, s.cols, -1, -1, softmax_cfg);
    ref::softmax(want, ref::to_float(x), s.rows, s.cols);
    CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);

    auto xf = ref::random_vec<T>(n, 84 + s.cols, 1.0f, 5.0f);  // finite, non-zero mean
    tk::rmsnorm(y, xf, w, s.rows, s.cols, 1e-6f, cfg);
    ref::rmsnorm(want, ref::to_float(xf), ref::to_float(w), s.rows, s.cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);

    for (int shifted : {0, 1}) {
      tk::layernorm(y, xf, w, b, s.rows, s.cols, 1e-5f, Config(cfg).set("SHIFTED", shifted));
      ref::layernorm(want, ref::to_float(xf), ref::to_float(w), ref::to_float(b), s.rows, s.cols, 1e-5);
      CHECK(ref::max_rel_err(y, want, 1e-4, rtol<T>() * 2) <= 1.0);
    }

    auto r = ref::random_vec<T>(n, 85 + s.cols);
    std::vector<T> sum_out(n);
    tk::add_rmsnorm(y, sum_out, xf, r, w, s.rows, s.cols, 1e-6f, cfg);
    std::vector<float> summed(n);
    for (int64_t i = 0; i < n; ++i) summed[i] = static_cast<float>(T(float(xf[i]) + float(r[i])));
    ref::rmsnorm(want, summed, ref::to_float(w), s.rows, s.cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
  }
}

TEST_CASE("the row heuristic splits long rows over clusters where they exist") {
  auto check = [](int64_t cols, bool clusters, int64_t block, int warps, int cl) {
    CAPTURE(cols);
    Config c = tk::row_heuristic(cols, DType::bf16, clusters);
    CHECK(c.get("BLOCK") == block);
    CHECK(c.num_warps == warps);
    CHECK(c.cluster == cl);
  };
  check(5000, true, 8192, 8, 1);
  check(16384, true, 8192, 8, 2);
  check(16384, false, 16384, 16, 1);  // no clusters: one tile
  check(20000, true, 8192, 8, 4);
  check(65536, true, 8192, 8, 8);
  check(131072, true, 8192, 8, 16);
  check(262144, true, 16384, 16, 16);
  check(200000, true, 16384, 16, 16);
  check(65536, false, 16384, 16, 1);   // no clusters: the looped program
  check(400000, true, 16384, 16, 1);   // past 16 x 16K columns: looped
}

TEST_CASE("cluster configs that do not cover the row, or mix ROWS with clusters, are user errors") {
  std::vector<float> x(2 * 1000, 1.0f), y(x.size()), w(1000, 1.0f);
  auto msg = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const UserError& e) {
      return e.what();
    }
    return "<no error>";
  };
  std::string m = msg([&] { tk::rmsnorm(y, x, w, 2, 1000, 1e-6f, Config{{"BLOCK", 128}, cluster(4)}); });
  CHECK(m.find("rmsnorm: the config {BLOCK=128 RESIDUAL=0 num_warps=4 num_stages=1 cluster=4} covers 512 columns per row "
               "((BLOCK x CHUNKS + TAIL) x cluster), but rows have 1000") != std::string::npos);
  CHECK(m.find("Raise BLOCK, CHUNKS, TAIL or cluster") != std::string::npos);
  m = msg([&] { tk::softmax(y, x, 2, 1000, -1, -1, Config{{"BLOCK", 1024}, {"ROWS", 2}, cluster(2)}); });
  CHECK(m.find("combines ROWS with clusters") != std::string::npos);
}

TEST_CASE("the default config splits rows longer than 16K columns over a cluster") {
  int64_t rows = 2, cols = 20000;  // 2 programs x 16384 columns per row
  auto x = ref::random_vec<float>(rows * cols, 91, -5.0f, 5.0f);
  std::vector<float> y(x.size());
  tk::softmax(y, x, rows, cols);
  std::vector<double> want;
  ref::softmax(want, x, rows, cols);
  CHECK(ref::max_rel_err(y, want, 1e-6, 1e-5) <= 1.0);
}
