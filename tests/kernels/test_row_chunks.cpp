// Row programs holding CHUNKS tiles of BLOCK columns (row_chunks.hpp): against the
// plain C++ references at widths that are not powers of two, with clusters, residuals
// and both LayerNorm algorithms; the heuristic's choice of chunks; bad CHUNKS.
#include <doctest/doctest.h>

#include <tilefuse/kernels/kernels.hpp>

#include "reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using ref::error_of;
using ref::rtol;

// The heuristics without tail tiles (TILEFUSE_ROW_TAIL=0), for the rules they apply where
// no tail does (widths past a power of two by more than a tail holds, or with tails off).
struct NoRowTails {
  NoRowTails() { setenv("TILEFUSE_ROW_TAIL", "0", 1); }
  ~NoRowTails() { unsetenv("TILEFUSE_ROW_TAIL"); }
};


TEST_CASE_TEMPLATE("softmax, rmsnorm and layernorm over CHUNKS tiles per program", T, float, bfloat16) {
  struct Case { int64_t rows, cols; Config cfg; };
  for (auto& s : {Case{3, 300, Config{{"BLOCK", 64}, {"CHUNKS", 5}, num_warps(1)}},
                  Case{4, 129, Config{{"BLOCK", 32}, {"CHUNKS", 7}, num_warps(1)}},
                  Case{2, 700, Config{{"BLOCK", 64}, {"CHUNKS", 3}, num_warps(2), cluster(4)}},
                  // A tail tile after each program's chunks (TAIL): 4 x (64 + 8), 4 x (4 x 32 + 16).
                  Case{3, 270, Config{{"BLOCK", 64}, {"TAIL", 8}, num_warps(1), cluster(4)}},
                  Case{2, 530, Config{{"BLOCK", 32}, {"CHUNKS", 4}, {"TAIL", 16}, num_warps(1), cluster(4)}}}) {
    CAPTURE(s.cols);
    CAPTURE(s.cfg.str());
    auto x = ref::random_vec<T>(s.rows * s.cols, 7 + s.cols, -6.0f, 6.0f);
    x[1] = T(-inf);  // softmax: an -inf entry in the first chunk
    auto w = ref::random_vec<T>(s.cols, 8, 0.5f, 1.5f), b = ref::random_vec<T>(s.cols, 9);
    std::vector<T> y(x.size());
    std::vector<double> want;
    tk::softmax(y, x, s.rows, s.cols, -1, -1, s.cfg);
    ref::softmax(want, ref::to_float(x), s.rows, s.cols);
    CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);

    x[1] = T(2.5f);
    tk::rmsnorm(y, x, w, s.rows, s.cols, 1e-6f, s.cfg);
    ref::rmsnorm(want, ref::to_float(x), ref::to_float(w), s.rows, s.cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);

    for (int reload : {0, 1}) {
      auto r = ref::random_vec<T>(x.size(), 10);
      std::vector<T> sum_out(x.size());
      tk::add_rmsnorm(y, sum_out, x, r, w, s.rows, s.cols, 1e-6f, Config(s.cfg).set("RELOAD", reload));
      std::vector<float> summed(x.size());
      for (size_t i = 0; i < x.size(); ++i) summed[i] = static_cast<float>(T(float(x[i]) + float(r[i])));
      CHECK(ref::max_rel_err(sum_out, std::vector<double>(summed.begin(), summed.end()), 0, 0) <= 1.0);
      ref::rmsnorm(want, summed, ref::to_float(w), s.rows, s.cols, 1e-6);
      CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
    }

    for (int shifted : {0, 1}) {
      tk::layernorm(y, x, w, b, s.rows, s.cols, 1e-5f, Config(s.cfg).set("SHIFTED", shifted));
      ref::layernorm(want, ref::to_float(x), ref::to_float(w), ref::to_float(b), s.rows, s.cols, 1e-5);
      CHECK(ref::max_rel_err(y, want, 1e-4, rtol<T>()) <= 1.0);
    }
  }
}

// HELD chunks (Cache::KeepInShared on the GPU): the programs read them again where they
// are used, and the residual sum is formed again from the held x and residual; the
// values are those of the plain programs, against plain C++.
TEST_CASE_TEMPLATE("softmax, rmsnorm, add_rmsnorm and layernorm with HELD chunks", T, float, bfloat16) {
  for (int64_t held : {1, 2, 9}) {
    Config cfg{{"BLOCK", 64}, {"CHUNKS", 3}, {"HELD", held}, num_warps(2), cluster(4)};
    CAPTURE(held);
    int64_t rows = 3, cols = 700;
    auto x = ref::random_vec<T>(rows * cols, 17, -6.0f, 6.0f);
    auto w = ref::random_vec<T>(cols, 18, 0.5f, 1.5f), r = ref::random_vec<T>(x.size(), 19);
    std::vector<T> y(x.size()), sum_out(x.size());
    std::vector<double> want;
    tk::softmax(y, x, rows, cols, -1, -1, cfg);
    ref::softmax(want, ref::to_float(x), rows, cols);
    CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
    tk::rmsnorm(y, x, w, rows, cols, 1e-6f, cfg);
    ref::rmsnorm(want, ref::to_float(x), ref::to_float(w), rows, cols, 1e-6);
    CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
    for (int reload : {0, 1}) {
      tk::add_rmsnorm(y, sum_out, x, r, w, rows, cols, 1e-6f, Config(cfg).set("RELOAD", reload));
      std::vector<float> summed(x.size());
      for (size_t i = 0; i < x.size(); ++i) summed[i] = static_cast<float>(T(float(x[i]) + float(r[i])));
      CHECK(ref::max_rel_err(sum_out, std::vector<double>(summed.begin(), summed.end()), 0, 0) <= 1.0);
      ref::rmsnorm(want, summed, ref::to_float(w), rows, cols, 1e-6);
      CHECK(ref::max_rel_err(y, want, 1e-5, rtol<T>()) <= 1.0);
    }
    auto b = ref::random_vec<T>(cols, 20);
    for (int shifted : {0, 1})
      for (int reload : {0, 1}) {
        tk::layernorm(y, x, w, b, rows, cols, 1e-5f, Config(cfg).set("SHIFTED", shifted).set("RELOAD", reload));
        ref::layernorm(want, ref::to_float(x), ref::to_float(w), ref::to_float(b), rows, cols, 1e-5);
        CHECK(ref::max_rel_err(y, want, 1e-4, rtol<T>()) <= 1.0);
      }
  }
}

TEST_CASE_TEMPLATE("row kernels indexing rows from their aligned start (ALIGN_ROWS), at misaligned bases too", T,
                   float, bfloat16) {
  struct Case { int64_t rows, cols; Config cfg; };
  for (auto& s : {Case{3, 301, Config{{"BLOCK", 64}, {"CHUNKS", 5}, num_warps(1)}},
                  Case{4, 129, Config{{"BLOCK", 32}, {"CHUNKS", 7}, num_warps(1)}},
                  Case{2, 701, Config{{"BLOCK", 64}, {"CHUNKS", 3}, num_warps(2), cluster(4)}},
                  Case{3, 263, Config{{"BLOCK", 64}, {"TAIL", 8}, num_warps(1), cluster(4)}},
                  Case{2, 517, Config{{"BLOCK", 32}, {"CHUNKS", 4}, {"TAIL", 16}, num_warps(1), cluster(4)}}}) {
    // x and y at the same offset from an aligned start (ALIGN_ROWS applies), or at
    // different ones (it must not: the host falls back to the plain rows).
    for (auto [x_off, y_off] : {std::pair{0, 0}, std::pair{1, 1}, std::pair{3, 3}, std::pair{1, 2}}) {
      // 0: plain rows; 1: aligned rows, the weight and bias realigned per run; 2: aligned
      // rows, the weight and bias from their shifted copies.
      for (int align : {0, 1, 2}) {
        CAPTURE(s.cols);
        CAPTURE(x_off);
        CAPTURE(y_off);
        CAPTURE(align);
        Config cfg = Config(s.cfg).set("ALIGN_ROWS", align != 0), norm_cfg = cfg;
        if (align > 0) norm_cfg.set("WEIGHT_COPIES", align == 2);
        size_t n = size_t(s.rows * s.cols);
        auto xs = ref::random_vec<T>(n + 8, 11 + s.cols, -6.0f, 6.0f);
        std::vector<T> ys(n + 8), ss(n + 8);
        std::span<const T> x(xs.data() + x_off, n);
        std::span<T> y(ys.data() + y_off, n), so(ss.data() + y_off, n);
        auto xv = std::vector<T>(x.begin(), x.end());
        auto w = ref::random_vec<T>(s.cols, 8, 0.5f, 1.5f), b = ref::random_vec<T>(s.cols, 9);
        auto r = ref::random_vec<T>(n, 10);
        std::vector<double> want;
        tk::softmax(y, x, s.rows, s.cols, -1, -1, cfg);
        ref::softmax(want, ref::to_float(xv), s.rows, s.cols);
        CHECK(ref::max_rel_err(std::vector<T>(y.begin(), y.end()), want, 1e-6, rtol<T>()) <= 1.0);
        tk::rmsnorm(y, x, w, s.rows, s.cols, 1e-6f, norm_cfg);
        ref::rmsnorm(want, ref::to_float(xv), ref::to_float(w), s.rows, s.cols, 1e-6);
        CHECK(ref::max_rel_err(std::vector<T>(y.begin(), y.end()), want, 1e-5, rtol<T>()) <= 1.0);
        tk::add_rmsnorm(y, so, x, std::span<const T>(r), w, s.rows, s.cols, 1e-6f, norm_cfg);
        std::vector<float> summed(n);
        for (size_t i = 0; i < n; ++i) summed[i] = static_cast<float>(T(float(xv[i]) + float(r[i])));
        CHECK(ref::max_rel_err(std::vector<T>(so.begin(), so.end()), std::vector<double>(summed.begin(), summed.end()),
                               0, 0) <= 1.0);
        ref::rmsnorm(want, summed, ref::to_float(w), s.rows, s.cols, 1e-6);
        CHECK(ref::max_rel_err(std::vector<T>(y.begin(), y.end()), want, 1e-5, rtol<T>()) <= 1.0);
        tk::layernorm(y, x, w, b, s.rows, s.cols, 1e-5f, norm_cfg);
        ref::layernorm(want, ref::to_float(xv), ref::to_float(w), ref::to_float(b), s.rows, s.cols, 1e-5);
        CHECK(ref::max_rel_err(std::vector<T>(y.begin(), y.end()), want, 1e-4, rtol<T>()) <= 1.0);
        // Nothing before or after the matrix was written.
        for (int i = 0; i < y_off; ++i) CHECK(float(ys[i]) == 0.0f);
        for (size_t i = n + y_off; i < ys.size(); ++i) CHECK(float(ys[i]) == 0.0f);
      }
    }
  }
}

TEST_CASE_TEMPLATE("shifted copies of a row parameter: copy h is the parameter behind h zeros, then zeros", T,
                   float, bfloat16) {
  const int64_t r = 16 / int64_t(sizeof(T));
  for (int64_t cols : {1, 7, 9, 130, 1029}) {
    CAPTURE(cols);
    auto w = ref::random_vec<T>(cols, 21 + cols, 0.5f, 1.5f);
    int64_t stride = tk::shifted_copy_stride(cols, sizeof(T));
    CHECK(stride % r == 0);
    CHECK(stride >= cols + r - 1);
    CHECK(stride < cols + 2 * r - 1);
    auto b = ref::random_vec<T>(cols, 22 + cols, -1.0f, 1.0f);
    auto check = [&](std::span<const T> got, const std::vector<T>& param) {
      REQUIRE(got.size() == size_t(r * stride));
      int64_t wrong = 0;
      for (int64_t h = 0; h < r; ++h)
        for (int64_t p = 0; p < stride; ++p) {
          float want = p - h >= 0 && p - h < cols ? float(param[size_t(p - h)]) : 0.0f;
          wrong += float(got[size_t(h * stride + p)]) != want;
        }
      CHECK(wrong == 0);
    };
    int calls = 0;
    tk::with_shifted_copies<T>(cols, [&](std::span<const T> wc) { check(wc, w), ++calls; }, w);
    tk::with_shifted_copies<T>(cols, [&](std::span<const T> wc, std::span<const T> bc) {
      check(wc, w), check(bc, b), ++calls;
    }, w, b);
    CHECK(calls == 2);
  }
}

TEST_CASE("WEIGHT_COPIES: with ALIGN_ROWS where they pay or the config asks, never without ALIGN_ROWS") {
  Config c{{"BLOCK", 1024}, {"ALIGN_ROWS", 1}};
  CHECK(tk::set_weight_copies(c, true));
  CHECK(c.get("WEIGHT_COPIES") == 1);
  Config unpaid{{"BLOCK", 1024}, {"ALIGN_ROWS", 1}};
  CHECK_FALSE(tk::set_weight_copies(unpaid, false));
  CHECK_FALSE(unpaid.has("WEIGHT_COPIES"));
  Config asked = Config(unpaid).set("WEIGHT_COPIES", 1);
  CHECK(tk::set_weight_copies(asked, false));
  Config off = Config(c).set("WEIGHT_COPIES", 0);
  CHECK_FALSE(tk::set_weight_copies(off, true));
  CHECK_FALSE(off.has("WEIGHT_COPIES"));
  Config plain{{"BLOCK", 1024}, {"WEIGHT_COPIES", 1}};
  CHECK_FALSE(tk::set_weight_copies(plain, true));
  CHECK_FALSE(plain.has("WEIGHT_COPIES"));
  CHECK(tk::weight_copies_pay(8192, 4097, DType::bf16, 0));        // odd widths of 16-bit rows
  CHECK(tk::weight_copies_pay(8192, 4096, DType::f16, 2));         // a base off 4 bytes
  CHECK(tk::weight_copies_pay(128, 262145, DType::bf16, 0));
  CHECK_FALSE(tk::weight_copies_pay(8192, 4098, DType::bf16, 0));  // rows on 4 bytes
  CHECK_FALSE(tk::weight_copies_pay(8192, 4097, DType::f32, 0));
  CHECK_FALSE(tk::weight_copies_pay(2048, 4097, DType::bf16, 0));  // too few elements for the extra launch
  CHECK_FALSE(tk::weight_copies_pay(32, 1048577, DType::bf16, 0));  // too few rows to share the copies
}

TEST_CASE("norm heuristics with weight copies plan for the rows' aligned span") {
  // 8191 columns from their aligned start are 8198 positions: more than one 8192 tile.
  CHECK(tk::row_cover(tk::rmsnorm_heuristic(8191, DType::bf16, true, true)) >= 8198);
  CHECK(tk::row_cover(tk::layernorm_heuristic(8191, DType::bf16, true, true)) >= 8198);
  CHECK(tk::rmsnorm_heuristic(8191, DType::bf16, true, false).get("BLOCK") == 8192);
  // Odd widths on clusters keep their register cap (E + 32) with copies too.
  CHECK(tk::rmsnorm_heuristic(16385, DType::bf16, true, true).min_programs_per_sm > 0);
}

TEST_CASE("ALIGN_ROWS: when the rows need it, whether every buffer's rows share the offset, where it pays") {
  using tk::RowBuffer;
  // bf16 rows of 4099 from aligned bases: misaligned rows, same offsets.
  CHECK(tk::rows_need_alignment(DType::bf16, {RowBuffer{4096, 4099}, RowBuffer{8192, 4099}}));
  // Aligned widths from aligned bases need nothing; a misaligned base does.
  CHECK_FALSE(tk::rows_need_alignment(DType::bf16, {RowBuffer{4096, 4104}, RowBuffer{8192, 4104}}));
  CHECK(tk::rows_need_alignment(DType::bf16, {RowBuffer{4098, 4104}, RowBuffer{8194, 4104}}));
  // Rows of the buffers at different offsets (bases, or strides differing by 2 bytes).
  CHECK_FALSE(tk::rows_need_alignment(DType::bf16, {RowBuffer{4096, 4099}, RowBuffer{8194, 4099}}));
  CHECK_FALSE(tk::rows_need_alignment(DType::bf16, {RowBuffer{4096, 4099}, RowBuffer{8192, 4100}}));
  CHECK(tk::rows_need_alignment(DType::bf16, {RowBuffer{4096, 4099}, RowBuffer{8192, 4107}}));  // 16 bytes apart
  CHECK(tk::rows_need_alignment(DType::f32, {RowBuffer{4096, 4099}}));
  // Pays on clusters for rows of 2-byte alignment only.
  Config one{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(4)};
  Config four = Config(one);
  four.cluster = 4;
  CHECK(tk::aligned_rows_pay(four, 16383, DType::bf16));
  CHECK_FALSE(tk::aligned_rows_pay(four, 16386, DType::bf16));
  CHECK_FALSE(tk::aligned_rows_pay(one, 4099, DType::bf16));
  CHECK_FALSE(tk::aligned_rows_pay(four, 16383, DType::f32));
  // ... and in one program where the kernel asks for it (softmax), still of 2-byte alignment.
  CHECK(tk::aligned_rows_pay(one, 4099, DType::bf16, true));
  CHECK_FALSE(tk::aligned_rows_pay(one, 4098, DType::bf16, true));
  CHECK_FALSE(tk::aligned_rows_pay(one, 4099, DType::f32, true));
  // The heuristic covers the aligned span (the row and its head) where it pays.
  auto h = [](int64_t n) { return tk::softmax_heuristic(n, DType::bf16, true); };
  Config c = tk::aligned_rows_heuristic(true, 30011, DType::bf16, h);
  CHECK(tk::row_cover(c) >= tk::aligned_row_span(30011, DType::bf16));
  CHECK(tk::aligned_rows_heuristic(true, 4099, DType::bf16, h) == h(4099));
  CHECK(tk::aligned_rows_heuristic(true, 4099, DType::bf16, h, true) == h(tk::aligned_row_span(4099, DType::bf16)));
}

// Programs per SM for rows indexed from their aligned start are asked about the rows' own
// width, not the span (width + 7 for 16-bit data): every odd width alike. Before, widths of
// 1 mod 8 (span a multiple of 8) went without the cap (H200 bf16 cross-entropy 2047x16385
// 48.4% -> 57.7% of copy once capped).
TEST_CASE("programs per SM of rows from their aligned start follow the width, not the span") {
  auto softmax_config = [](int64_t w) { return tk::softmax_rows_config(w, DType::bf16, true, true); };
  auto ce_config = [](int64_t v) { return tk::cross_entropy_rows_config(v, DType::bf16, true, true); };
  // Rows on a cluster: widths of 1, 3, 5, 7 mod 8 on the same cluster get the same cap.
  for (auto config : {+softmax_config, +ce_config}) {
    Config at1 = config(16393);
    CHECK(at1.cluster > 1);
    CHECK(at1.min_programs_per_sm > 0);
    for (int64_t w : {16395, 16397, 16399}) {
      CAPTURE(w);
      Config c = config(w);
      CHECK(c.cluster == at1.cluster);
      CHECK(c.min_programs_per_sm == at1.min_programs_per_sm);
    }
  }
  CHECK(softmax_config(16384).min_programs_per_sm == 0);  // aligned, cluster of 2
  // One program per row: cross-entropy capped at every odd width, softmax never (measured
  // slower with the cap once approximate math flushed subnormals).
  for (int64_t w : {4097, 4099, 4101}) {
    CAPTURE(w);
    CHECK(ce_config(w).cluster == 1);
    CHECK(ce_config(w).min_programs_per_sm == 8);  // 40 values on 4 warps
    CHECK(softmax_config(w).cluster == 1);
    CHECK(softmax_config(w).min_programs_per_sm == 0);
  }
  CHECK(ce_config(4096).min_programs_per_sm == 0);
}

// 16-bit rows of 2048-4096 columns in one tile: softmax and RMSNorm take 16 values per
// thread (twice the warps); LayerNorm, the residual RMSNorm, f32, chunked rows, odd widths,
// clusters and wider tiles keep 32.
TEST_CASE("softmax and RMSNorm spread one-tile 16-bit rows of 2048-4096 columns over twice the warps") {
  for (DType d : {DType::bf16, DType::f16}) {
    CAPTURE(d);
    CHECK(tk::softmax_heuristic(4096, d, true).num_warps == 8);
    CHECK(tk::softmax_heuristic(2048, d, true).num_warps == 4);
    CHECK(tk::softmax_heuristic(4000, d, true).num_warps == 8);  // one 4096 tile
    CHECK(tk::rmsnorm_heuristic(4096, d, true).num_warps == 8);
    CHECK(tk::rmsnorm_heuristic(2048, d, true).num_warps == 4);
    CHECK(tk::norm_heuristic(4096, d, true).num_warps == 4);
    CHECK(tk::layernorm_heuristic(4096, d, true).num_warps == 4);
    CHECK(tk::add_rmsnorm_heuristic(4096, d, true, false).num_warps == 4);
    CHECK(tk::softmax_heuristic(1024, d, true).num_warps == 1);   // narrower: unchanged
    CHECK(tk::softmax_heuristic(8192, d, true).num_warps == 8);   // wider: unchanged
    CHECK(tk::softmax_heuristic(3000, d, true).num_warps == 2);   // 3 x 1024 chunks
    CHECK(tk::softmax_heuristic(16384, d, true).num_warps == 8);  // a cluster of 2
  }
  CHECK(tk::softmax_heuristic(4096, DType::f32, true).num_warps == 4);
  CHECK(tk::rmsnorm_heuristic(4092, DType::bf16, true).num_warps == 4);  // rows off 16 bytes
}

TEST_CASE("the heuristic covers a width that is not a power of two with few masked columns") {
  NoRowTails no_tails;
  auto check = [](int64_t cols, DType d, int64_t block, int64_t chunks, int warps) {
    CAPTURE(cols);
    Config c = tk::softmax_heuristic(cols, d, true);
    CHECK(c.get("BLOCK") == block);
    CHECK((c.has("CHUNKS") ? c.get("CHUNKS") : 1) == chunks);
    CHECK(c.num_warps == warps);
    Config n = tk::norm_heuristic(cols, d, true);  // the same tiles (warps: see below)
    CHECK(n.get("BLOCK") == block);
    CHECK((n.has("CHUNKS") ? n.get("CHUNKS") : 1) == chunks);
  };
  check(5000, DType::bf16, 1024, 5, 4);   // 5120 columns, not 8192
  check(6000, DType::bf16, 2048, 3, 4);   // 6144
  check(3000, DType::bf16, 1024, 3, 2);   // 3072, not 4096
  check(4096, DType::bf16, 4096, 1, 8);   // powers of two stay one tile (16 values per thread)
  check(1000, DType::bf16, 1024, 1, 1);
  check(5000, DType::f32, 1024, 5, 4);    // f32 vectors are 4 elements: chunks of 512 would do too
  // Clusters: each program covers its share of the row the same way.
  auto cl = [](int64_t cols, int64_t block, int64_t chunks, int cluster) {
    CAPTURE(cols);
    Config c = tk::softmax_heuristic(cols, DType::bf16, true);
    CHECK(c.get("BLOCK") == block);
    CHECK((c.has("CHUNKS") ? c.get("CHUNKS") : 1) == chunks);
    CHECK(c.cluster == cluster);
  };
  cl(20000, 1024, 5, 4);     // 4 x 5120, not 4 x 8192
  cl(65537, 1024, 5, 16);    // 16 x 5120, not 16 x 8192
  cl(65536, 8192, 1, 8);     // powers of two: unchanged
  // 16-bit programs of more than 8192 columns: chunks of 8192 on 8 warps, not one
  // 16384 tile on 16 (and 4 held on 8 programs rather than 2 on 16: hold_64k_per_program);
  // f32 keeps the one tile.
  cl(262144, 8192, 4, 8);
  CHECK(tk::softmax_heuristic(262144, DType::bf16, true).num_warps == 8);
  CHECK(tk::softmax_heuristic(262144, DType::f32, true).get("BLOCK") == 16384);
  CHECK_FALSE(tk::softmax_heuristic(262144, DType::f32, true).has("CHUNKS"));
  Config uneven = tk::softmax_heuristic(200000, DType::bf16, true);  // 12500 per program: 7 x 2048
  CHECK(uneven.get("BLOCK") == 2048);
  CHECK(uneven.get("CHUNKS") == 7);
}

TEST_CASE("rows a little past a power of two take its cluster programs and a tail tile each") {
  // 16385-16392 bf16 positions: 16384's 2 x 8192 on 8 warps and a tail of one 16-byte run,
  // not 4 programs of 5 x 1024; the 16-bit norms take it (also LayerNorm's chunks of 4096),
  // softmax keeps its 4-warp programs of 1024-column chunks (measured faster), with the
  // last chunk as a tail (below).
  for (int64_t n : {int64_t(16385), int64_t(16388), int64_t(16392)}) {
    CAPTURE(n);
    Config c = tk::chunked_row_heuristic(n, DType::bf16, true, tk::RowTails::clusters);
    CHECK((c.cluster == 2 && c.get("BLOCK") == 8192 && c.get("TAIL") == 8 && !c.has("CHUNKS")));
    CHECK(tk::row_cover(c) >= n);
    CHECK(tk::rmsnorm_heuristic(n, DType::bf16, true).get("TAIL") == 8);
    CHECK(tk::add_rmsnorm_heuristic(n, DType::f16, true, false).get("TAIL") == 8);
    c = tk::layernorm_heuristic(n, DType::bf16, true);
    CHECK((c.get("TAIL") == 8 && c.get("BLOCK") == 4096 && c.get("CHUNKS") == 2 && tk::row_cover(c) >= n));
    c = tk::softmax_heuristic(n, DType::bf16, true);
    CHECK((c.cluster == 4 && c.get("BLOCK") == 1024 && c.get("CHUNKS") == 4 && c.get("TAIL") == 8));
    CHECK(!tk::rmsnorm_heuristic(n, DType::f32, true).has("TAIL"));
    CHECK(!tk::chunked_row_heuristic(n, DType::bf16, true).has("TAIL"));
  }
  // The tail grows to a power of two with the overhang (65536 + 200 over 8 programs: 32)
  // and f32's run is 4 elements.
  Config c = tk::chunked_row_heuristic(65736, DType::bf16, true, tk::RowTails::clusters);
  CHECK((c.cluster == 8 && c.get("TAIL") == 32 && tk::row_cover(c) >= 65736));
  c = tk::chunked_row_heuristic(16387, DType::f32, true, tk::RowTails::clusters);
  CHECK((c.cluster == 2 && c.get("TAIL") == 4));
  // Past a 16-byte run per warp, chunks as before (20001: a tail of 2048 per program).
  c = tk::chunked_row_heuristic(20001, DType::bf16, true, tk::RowTails::clusters);
  CHECK((!c.has("TAIL") && tk::row_cover(c) >= 20001));
  // Rows of one program of 2048+ columns where asked (the residual RMSNorm): the power of
  // two and a tail (4099: 4096 + 8); and rows that would need a cluster but whose power of
  // two fits one program (8195: 8192 + 16), for every norm.
  c = tk::chunked_row_heuristic(4099, DType::bf16, true, tk::RowTails::any);
  CHECK((c.cluster == 1 && c.get("BLOCK") == 4096 && c.get("TAIL") == 8 && !c.has("CHUNKS")));
  CHECK(!tk::chunked_row_heuristic(4099, DType::bf16, true, tk::RowTails::clusters).has("TAIL"));
  CHECK(tk::add_rmsnorm_heuristic(4099, DType::bf16, true, false).get("TAIL") == 8);
  CHECK(!tk::rmsnorm_heuristic(4099, DType::bf16, true).has("TAIL"));
  CHECK(!tk::layernorm_heuristic(4099, DType::bf16, true).has("TAIL"));
  c = tk::chunked_row_heuristic(8195, DType::bf16, true, tk::RowTails::clusters);
  CHECK((c.cluster == 1 && c.get("BLOCK") == 8192 && c.get("TAIL") == 8));
  CHECK(tk::layernorm_heuristic(8195, DType::bf16, true).get("TAIL") == 8);
  // Rows past 16 programs' reach without a tail keep the split schedule (262146: none).
  CHECK(!tk::chunked_row_heuristic(262146, DType::bf16, true, tk::RowTails::any).has("TAIL"));
  CHECK(!tk::add_rmsnorm_heuristic(262146, DType::bf16, true, false).has("TAIL"));
  CHECK(!tk::rmsnorm_heuristic(262146, DType::bf16, true).has("TAIL"));
  // ... except the plain norms' 16-bit rows of 8-byte runs (262148, 262660: tails of 8, 64).
  for (auto [n, tail] : {std::pair{int64_t(262148), int64_t(8)}, std::pair{int64_t(262660), int64_t(64)}}) {
    CAPTURE(n);
    for (const Config& k : {tk::rmsnorm_heuristic(n, DType::bf16, true), tk::layernorm_heuristic(n, DType::f16, true)}) {
      CHECK((k.cluster == 16 && k.get("TAIL") == tail && tk::row_cover(k) >= n));
    }
    CHECK(!tk::add_rmsnorm_heuristic(n, DType::bf16, true, false).has("TAIL"));
    CHECK(!tk::softmax_heuristic(n, DType::bf16, true).has("TAIL"));
    CHECK(!tk::rmsnorm_heuristic(n, DType::f32, true).has("TAIL"));
  }
  // Powers of two, short rows, no clusters (sm_80): none.
  CHECK(!tk::chunked_row_heuristic(16384, DType::bf16, true, tk::RowTails::clusters).has("TAIL"));
  CHECK(!tk::chunked_row_heuristic(1025, DType::bf16, true, tk::RowTails::clusters).has("TAIL"));
  CHECK(!tk::chunked_row_heuristic(16385, DType::bf16, false, tk::RowTails::any).has("TAIL"));
  // A TAIL that is not a power of two is a user error naming it.
  std::vector<float> x(2 * 100, 1.0f), y(x.size());
  std::string m = error_of([&] {
    tk::softmax(y, x, 2, 100, -1, -1, Config{{"BLOCK", 16}, {"TAIL", 12}, num_warps(1), cluster(4)});
  });
  CHECK(m.find("TAIL = 12 in a row program: it must be 0 or a power of two") != std::string::npos);
  // A one-program tail config that does not cover the row is a user error (it would not loop).
  m = error_of([&] { tk::rmsnorm(y, x, x, 2, 100, 1e-6f, Config{{"BLOCK", 64}, {"TAIL", 8}, num_warps(1)}); });
  CHECK(m.find("rmsnorm: the config {BLOCK=64 RESIDUAL=0 TAIL=8 num_warps=1 num_stages=1} covers 72 columns per row") !=
        std::string::npos);
}

TEST_CASE("softmax's chunked programs hold the overhang past their last whole chunk as a tail") {
  // 5 chunks where 4 and a run per warp cover the row: 4 chunks and a tail of 8+ on the
  // same programs (4 warps), any dtype, one program or a cluster, own or aligned starts;
  // not where the overhang is wider than a run per warp, on programs of other warps (8:
  // measured slower; short rows' one or two: not measured), or with TILEFUSE_ROW_TAIL=0.
  auto check = [](int64_t n, DType d, int64_t chunks, int64_t tail, int cluster) {
    CAPTURE(n);
    CAPTURE(name(d));
    for (bool align : {false, true}) {
      Config c = tk::softmax_rows_config(n, d, true, align);
      CHECK(c.get("CHUNKS") == chunks);
      CHECK((c.has("TAIL") ? c.get("TAIL") : 0) == tail);
      CHECK(c.cluster == cluster);
      CHECK(tk::row_cover(c) >= (align ? tk::aligned_row_span(n, d) : n));
      CHECK_FALSE(tk::row_uses_loop(c, n));
    }
  };
  check(4097, DType::bf16, 4, 8, 1);
  check(4097, DType::f32, 4, 8, 1);
  check(16385, DType::f32, 4, 8, 4);
  check(16388, DType::f16, 4, 8, 4);
  check(65537, DType::bf16, 4, 8, 16);
  check(16417, DType::bf16, 4, 16, 4);  // 33 columns past 16384 over 4 programs: 9 each
  check(20000, DType::bf16, 5, 0, 4);   // 904 past 4 x 4096 per program: chunks
  check(1025, DType::bf16, 5, 0, 1);    // one warp
  check(2049, DType::bf16, 5, 0, 1);    // two warps
  check(131073, DType::bf16, 5, 0, 16); // 8 warps (5 x 2048)
  // The host function on the heuristic's tail config (4 x 1024 + 8; rows 1 and 2 start
  // off 16 bytes, so from their aligned start) against plain C++, bf16 and f32.
  const int64_t rows = 3, cols = 4097;
  auto xb = ref::random_vec<bfloat16>(rows * cols, 17, -6.0f, 6.0f);
  auto xf = ref::random_vec<float>(rows * cols, 18, -6.0f, 6.0f);
  std::vector<bfloat16> yb(xb.size());
  std::vector<float> yf(xf.size());
  std::vector<double> want;
  tk::softmax(yb, xb, rows, cols);
  ref::softmax(want, ref::to_float(xb), rows, cols);
  CHECK(ref::max_rel_err(yb, want, 1e-6, 1e-2) <= 1.0);
  tk::softmax(yf, xf, rows, cols);
  ref::softmax(want, ref::to_float(xf), rows, cols);
  CHECK(ref::max_rel_err(yf, want, 1e-6, 1e-5) <= 1.0);
  NoRowTails no_tails;
  check(16385, DType::bf16, 5, 0, 4);
}

TEST_CASE("LayerNorm's 16-bit cluster programs of 8192+ columns hold chunks of 4096, 64 values per thread") {
  // (cols, chunks, warps, programs per SM, RELOAD, cluster)
  auto check = [](int64_t cols, int64_t chunks, int warps, int per_sm, bool reload, int cluster) {
    CAPTURE(cols);
    Config c = tk::layernorm_heuristic(cols, DType::bf16, true);
    CHECK(c.get("BLOCK") == 4096);
    CHECK(c.get("CHUNKS") == chunks);
    CHECK(c.num_warps == warps);
    CHECK(c.min_programs_per_sm == per_sm);
    CHECK(c.has("RELOAD") == reload);
    CHECK(c.cluster == cluster);
    CHECK(tk::row_values_per_thread(c) == 64);
    CHECK(tk::row_cover(c) >= cols);
  };
  // Held programs of 8192 columns cover 16384 (32 KB) on half the cluster.
  check(32768, 4, 8, 3, false, 2);
  check(65536, 4, 8, 3, false, 4);
  // Held programs of 16384 on 8+ programs: 64 KB as 4 x 8192 on half the cluster
  // (held_64k_programs), 128 values per thread held in shared memory.
  for (auto [cols, cluster] : {std::pair{int64_t(131072), 4}, std::pair{int64_t(262144), 8}}) {
    CAPTURE(cols);
    for (DType d : {DType::bf16, DType::f16}) {
      Config c = tk::layernorm_heuristic(cols, d, true);
      CHECK(c.get("BLOCK") == 8192);
      CHECK(c.get("CHUNKS") == 4);
      CHECK(c.get("HELD") == 4);
      CHECK(c.num_warps == 8);
      CHECK(c.min_programs_per_sm == 3);
      CHECK(c.cluster == cluster);
      CHECK(tk::row_cover(c) >= cols);
      CHECK(tk::holds_64k(c, d));
    }
  }
  CHECK_FALSE(tk::holds_64k(tk::layernorm_heuristic(65536, DType::bf16, true), DType::bf16));  // 32 KB
  // A held row on one program (the heuristic's 2 of 8192 made one of 16384): 2 chunks of
  // 8192 on 16 warps, no register cap; rows of 8-byte runs are not held and keep theirs.
  for (int64_t cols : {16384, 15000, 14344}) {
    CAPTURE(cols);
    for (DType d : {DType::bf16, DType::f16}) {
      Config c = tk::layernorm_heuristic(cols, d, true);
      CHECK(c.cluster == 1);
      CHECK(c.get("BLOCK") == 8192);
      CHECK(c.get("CHUNKS") == 2);
      CHECK(c.get("HELD") == 2);
      CHECK(c.num_warps == 16);
      CHECK(c.min_programs_per_sm == 0);
      CHECK(tk::row_cover(c) >= cols);
    }
  }
  CHECK(!tk::layernorm_heuristic(16380, DType::bf16, true).has("HELD"));
  CHECK(tk::layernorm_heuristic(16384, DType::f32, true).num_warps != 16);
  Config unheld = tk::layernorm_heuristic(262140, DType::bf16, true);  // 8-byte rows: not held
  CHECK_FALSE(unheld.has("HELD"));
  CHECK(unheld.cluster == 16);
  // Not held (rows off 16 bytes, or the parameters' shifted copies): 8192 columns per program.
  for (const Config& c : {tk::layernorm_heuristic(32764, DType::bf16, true),               // 8-byte rows
                          tk::layernorm_heuristic(65528, DType::bf16, true, true)}) {  // copies
    CAPTURE(c.str());
    CHECK_FALSE(c.has("HELD"));
    CHECK(c.get("CHUNKS") == 2);
    CHECK(c.num_warps == 4);
  }
  CHECK(tk::layernorm_heuristic(32764, DType::bf16, true).cluster == 4);
  CHECK(tk::layernorm_heuristic(65528, DType::bf16, true, true).cluster == 8);
  // Narrower programs, chunked widths and rows in one program keep the norm heuristic.
  for (int64_t cols : {4096, 8192, 100000})
    CHECK(tk::layernorm_heuristic(cols, DType::bf16, true) == tk::norm_heuristic(cols, DType::bf16, true));
  CHECK(tk::layernorm_heuristic(65536, DType::bf16, false) == tk::norm_heuristic(65536, DType::bf16, false));
}

TEST_CASE("f32 norms on clusters: LayerNorm's held chunks of 4096, RMSNorm's of 8192 past 8192 columns") {
  // LayerNorm: bf16's chunks, held on rows of whole 16-byte runs, without a register cap.
  auto ln = [](int64_t cols) { return tk::layernorm_heuristic(cols, DType::f32, true); };
  for (auto [cols, chunks, warps] : {std::tuple<int64_t, int64_t, int>{16384, 2, 4}, {65536, 2, 4}, {131072, 2, 4},
                                     {262144, 4, 8}}) {
    CAPTURE(cols);
    Config c = ln(cols);
    CHECK(c.get("BLOCK") == 4096);
    CHECK(c.get("CHUNKS") == chunks);
    CHECK(c.get("HELD") == chunks);
    CHECK(c.num_warps == warps);
    CHECK(c.min_programs_per_sm == 0);
    CHECK_FALSE(c.has("RELOAD"));
    CHECK(tk::row_cover(c) >= cols);
  }
  CHECK_FALSE(ln(65534).has("HELD"));  // rows off 16 bytes: not held
  CHECK(ln(65534).get("CHUNKS") == 2);
  // RMSNorm: 16 programs of 16384 columns as 2 held chunks of 8192 on 8 warps; the residual
  // one with RELOAD at 2 per SM instead of holding them.
  Config r = tk::rmsnorm_heuristic(262144, DType::f32, true);
  CHECK(r.cluster == 16);
  CHECK(r.get("BLOCK") == 8192);
  CHECK(r.get("CHUNKS") == 2);
  CHECK(r.get("HELD") == 2);
  CHECK(r.num_warps == 8);
  CHECK(r.min_programs_per_sm == 0);
  Config a = tk::add_rmsnorm_heuristic(262144, DType::f32, true, false);
  CHECK(a.get("CHUNKS") == 2);
  CHECK(a.get("RELOAD") == 1);
  CHECK_FALSE(a.has("HELD"));
  CHECK(a.min_programs_per_sm == 2);
  CHECK_FALSE(tk::rmsnorm_heuristic(262142, DType::f32, true).has("HELD"));  // rows off 16 bytes
  CHECK(tk::rmsnorm_heuristic(262142, DType::f32, true).get("CHUNKS") == 2);
  // Programs of 8192 columns or narrower chunks keep the norm heuristic; so does softmax.
  CHECK(tk::rmsnorm_heuristic(65536, DType::f32, true) == tk::norm_heuristic(65536, DType::f32, true));
  CHECK_FALSE(tk::rmsnorm_heuristic(65536, DType::f32, true).has("HELD"));
  CHECK(tk::rmsnorm_heuristic(200000, DType::f32, true).get("BLOCK") == 2048);
  CHECK_FALSE(tk::rmsnorm_heuristic(200000, DType::f32, true).has("HELD"));
  CHECK(tk::softmax_heuristic(262144, DType::f32, true).get("BLOCK") == 16384);
  // Few long rows go on clusters where the programs hold their chunks (or are 16-bit).
  CHECK(tk::layernorm_few_rows_on_clusters(ln(262144), DType::f32));
  CHECK_FALSE(tk::layernorm_few_rows_on_clusters(ln(200000), DType::f32));
  CHECK(tk::layernorm_few_rows_on_clusters(tk::layernorm_heuristic(200000, DType::bf16, true), DType::bf16));
  // Not with the parameters' shifted copies (the programs then read aligned spans).
  REQUIRE(tk::rmsnorm_heuristic(262140, DType::f32, true, false).has("HELD"));
  CHECK_FALSE(tk::rmsnorm_heuristic(262140, DType::f32, true, true).has("HELD"));
}

TEST_CASE("16-bit LayerNorm and residual RMSNorm programs of 1024-column chunks on clusters of 4+: half the programs") {
  NoRowTails no_tails;
  // (cols, the heuristic's cluster of 5 x 1024 programs): each program now holds 5 x 2048.
  for (auto [cols, cluster] : {std::pair<int64_t, int>{16385, 4}, {16388, 4}, {65538, 16}, {65540, 16}}) {
    CAPTURE(cols);
    Config before = tk::norm_heuristic(cols, DType::bf16, true);
    REQUIRE(before.cluster == cluster);
    REQUIRE(before.get("BLOCK") == 1024);
    for (const Config& c : {tk::layernorm_heuristic(cols, DType::bf16, true),
                            tk::add_rmsnorm_heuristic(cols, DType::bf16, true, false)}) {
      CHECK(c.cluster == cluster / 2);
      CHECK(c.get("BLOCK") == 2048);
      CHECK(c.get("CHUNKS") == 5);
      CHECK(c.num_warps == 8);
      CHECK(c.min_programs_per_sm == 3);
      CHECK(tk::row_cover(c) >= tk::aligned_row_span(cols, DType::bf16));
    }
    CHECK(tk::add_rmsnorm_heuristic(cols, DType::bf16, true, false).get("RELOAD") == 1);
    CHECK_FALSE(tk::layernorm_heuristic(cols, DType::bf16, true).has("RELOAD"));
    // Rows from their aligned start (odd widths) cover the aligned span.
    CHECK(tk::row_cover(tk::add_rmsnorm_heuristic(cols, DType::bf16, true, true)) >=
          tk::aligned_row_span(cols, DType::bf16));
  }
  // LayerNorm at aligned widths too; not the residual RMSNorm there (it lost), the plain
  // RMSNorm, f32, rows in one program or programs of wider chunks.
  CHECK(tk::layernorm_heuristic(20000, DType::bf16, true).cluster == 2);
  CHECK(tk::add_rmsnorm_heuristic(20000, DType::bf16, true, false).cluster == 4);
  CHECK(tk::rmsnorm_heuristic(65538, DType::bf16, true).cluster == 16);
  CHECK(tk::layernorm_heuristic(65538, DType::f32, true) == tk::norm_heuristic(65538, DType::f32, true));
  CHECK(tk::layernorm_heuristic(5000, DType::bf16, true).cluster == 1);
  CHECK(tk::layernorm_heuristic(65536, DType::bf16, true).cluster == 4);
  CHECK(tk::half_cluster_programs(tk::norm_heuristic(16385, DType::bf16, false), 16385, DType::bf16) == std::nullopt);
}

TEST_CASE("f32 residual RMSNorm programs of chunks on a cluster: 4 per SM") {
  NoRowTails no_tails;
  for (int64_t cols : {16385, 16387, 20001, 24577}) {
    CAPTURE(cols);
    for (bool align : {false, true}) {
      Config c = tk::add_rmsnorm_heuristic(cols, DType::f32, true, align);
      REQUIRE(c.cluster > 1);
      CHECK(c.get("CHUNKS") > 1);
      CHECK(c.min_programs_per_sm == 4);
    }
  }
  // Not 8-warp programs (f32 rows past 128K columns: 64 registers at 4 per SM), one-program
  // rows, 16-bit rows (their own caps), nor the plain RMSNorm.
  for (int64_t cols : {140000, 200000}) {
    CAPTURE(cols);
    Config c = tk::add_rmsnorm_heuristic(cols, DType::f32, true, false);
    CHECK(c.num_warps == 8);
    CHECK(c.min_programs_per_sm == 0);
  }
  CHECK(tk::add_rmsnorm_heuristic(5000, DType::f32, true, false).min_programs_per_sm == 0);
  CHECK(tk::add_rmsnorm_heuristic(16385, DType::bf16, true, false).min_programs_per_sm == 3);
  CHECK(tk::rmsnorm_heuristic(16385, DType::f32, true).min_programs_per_sm == 0);
}

TEST_CASE("programs per SM asked of ptxas: 16-bit rows on clusters of 4+ or of unaligned widths, not f32 or norms") {
  NoRowTails no_tails;
  auto n = [](Config c) { return c.min_programs_per_sm; };
  // Softmax: 8 warps x 32 values -> 48 registers: 5 programs; 40 values -> 4; 64 -> 3
  // (128256 on 8 x 2 x 8192).
  CHECK(n(tk::softmax_heuristic(65536, DType::bf16, true)) == 5);
  CHECK(n(tk::softmax_heuristic(128256, DType::bf16, true)) == 3);
  CHECK(n(tk::softmax_heuristic(151936, DType::bf16, true)) == 4);
  CHECK(n(tk::softmax_heuristic(16383, DType::bf16, true)) == 5);  // unaligned, cluster of 2
  // 4 warps x 40 values (5 x 1024): 8 programs (60 registers wanted, 64 there).
  CHECK(n(tk::softmax_heuristic(4099, DType::bf16, true)) == 0);  // unaligned, one program: none
  CHECK(n(tk::cross_entropy_heuristic(4099, DType::bf16, true)) == 8);  // ... but cross-entropy's
  CHECK(n(tk::softmax_heuristic(20001, DType::bf16, true)) == 8);
  CHECK(n(tk::softmax_heuristic(20000, DType::bf16, true)) == 8);
  // 4 warps x 48 values: 7 (8 spills; 24000 on 4 x 3 x 2048).
  CHECK(n(tk::softmax_heuristic(24000, DType::bf16, true)) == 7);
  // 4 warps x 56 values: 7 on clusters of 8+ (50304 on 8 x 7 x 1024), 6 on 4 (28000).
  CHECK(n(tk::softmax_heuristic(50304, DType::bf16, true)) == 7);
  CHECK(n(tk::softmax_heuristic(100000, DType::bf16, true)) == 7);
  CHECK(n(tk::softmax_heuristic(28000, DType::bf16, true)) == 6);
  CHECK(n(tk::softmax_heuristic(16384, DType::bf16, true)) == 0);  // aligned, cluster of 2
  CHECK(n(tk::softmax_heuristic(4096, DType::bf16, true)) == 0);
  CHECK(n(tk::softmax_heuristic(128256, DType::f32, true)) == 0);
  CHECK(n(tk::softmax_heuristic(128256, DType::bf16, false)) == 0);  // looped without clusters
  // Cross-entropy, the same rule with 4 registers more: 4 warps x 64 values -> 6
  // (128256 on 16 x 8192), 32 values -> 8 (32000 on 8 x 4096), 48 -> 7 (24000 on 4 x 3 x
  // 2048), 56 on a cluster of 8 -> 6 where softmax takes 7 (50304 on 8 x 7 x 1024); 8
  // warps x 40 values -> 4, x 64 -> 3 (256000 on 16 x 16384).
  CHECK(n(tk::cross_entropy_heuristic(128256, DType::bf16, true)) == 6);
  CHECK(n(tk::cross_entropy_heuristic(32000, DType::bf16, true)) == 8);
  CHECK(n(tk::cross_entropy_heuristic(24000, DType::bf16, true)) == 7);
  CHECK(n(tk::cross_entropy_heuristic(50304, DType::bf16, true)) == 6);
  CHECK(n(tk::cross_entropy_heuristic(100000, DType::bf16, true)) == 6);
  CHECK(n(tk::cross_entropy_heuristic(28000, DType::bf16, true)) == 6);
  CHECK(n(tk::cross_entropy_heuristic(151936, DType::bf16, true)) == 4);
  CHECK(n(tk::cross_entropy_heuristic(256000, DType::bf16, true)) == 3);
  // f32 cross-entropy on clusters: programs of 8+ warps at E + 24 registers (32 and 40
  // values -> 4, 52 -> 3, 16 warps x 32 -> 2), 4-warp programs uncapped.
  CHECK(n(tk::cross_entropy_heuristic(128256, DType::f32, true)) == 4);
  CHECK(n(tk::cross_entropy_heuristic(151936, DType::f32, true)) == 4);
  CHECK(n(tk::cross_entropy_heuristic(200000, DType::f32, true)) == 3);
  CHECK(n(tk::cross_entropy_heuristic(256000, DType::f32, true)) == 2);
  CHECK(n(tk::cross_entropy_heuristic(50304, DType::f32, true)) == 0);
  CHECK(n(tk::cross_entropy_heuristic(32000, DType::f32, true)) == 0);
  // Row programs of 16 warps, any dtype: 2 where E + 16 registers fit in 64 (softmax f32
  // 256000 on 16 x 16384: 32 values), none past that.
  CHECK(n(tk::softmax_heuristic(256000, DType::f32, true)) == 2);
  CHECK(n(tk::softmax_heuristic(151936, DType::f32, true)) == 0);
  CHECK(tk::row_programs_per_sm(Config{{"BLOCK", 1024}, {"CHUNKS", 32}, num_warps(16), cluster(16)}, DType::f32,
                                300000) == 0);  // 64 values: no two fit
  // RMSNorm keeps 16 more registers for its weight, and only on unaligned cluster rows.
  CHECK(n(tk::rmsnorm_heuristic(16383, DType::bf16, true)) == 4);
  CHECK(n(tk::rmsnorm_heuristic(65536, DType::bf16, true)) == 0);
  // ... and on 16-bit programs of 16384 columns (2 x 8192 on 8 warps): 3, as softmax's.
  CHECK(n(tk::rmsnorm_heuristic(262144, DType::bf16, true)) == 3);
  CHECK(n(tk::softmax_heuristic(262144, DType::bf16, true)) == 3);
  CHECK(n(tk::rmsnorm_heuristic(262144, DType::f32, true)) == 0);
  CHECK(n(tk::norm_heuristic(16383, DType::bf16, true)) == 0);  // LayerNorm's
  // The residual RMSNorm: capped where its rows are indexed from their aligned start (2-byte
  // aligned rows on a cluster: the weight's realigned runs), not on aligned or 4-byte rows;
  // on half the programs (half_cluster_programs) at 3 either way.
  CHECK(n(tk::add_rmsnorm_heuristic(24001, DType::bf16, true, true)) == 6);
  CHECK(n(tk::add_rmsnorm_heuristic(24001, DType::bf16, true, false)) == 0);
  CHECK(n(tk::add_rmsnorm_heuristic(24002, DType::bf16, true, true)) == 0);
  CHECK(n(tk::add_rmsnorm_heuristic(16383, DType::bf16, true, true)) == 3);
  CHECK(n(tk::add_rmsnorm_heuristic(16386, DType::bf16, true, true)) == 3);
  CHECK(n(tk::add_rmsnorm_heuristic(4099, DType::bf16, true, true)) == 0);  // one program
}

TEST_CASE("bad CHUNKS, and ROWS with CHUNKS, are user errors") {
  std::vector<float> x(2 * 300, 1.0f), y(x.size()), w(300, 1.0f);
  std::string m = error_of([&] { tk::rmsnorm(y, x, w, 2, 300, 1e-6f, Config{{"BLOCK", 512}, {"CHUNKS", 0}}); });
  CHECK(m.find("CHUNKS = 0 in a row program: it must be at least 1") != std::string::npos);
  CHECK(m.find("Set CHUNKS to the number of BLOCK-column tiles each program holds") != std::string::npos);
  m = error_of([&] { tk::softmax(y, x, 2, 300, -1, -1, Config{{"BLOCK", 128}, {"ROWS", 2}, {"CHUNKS", 3}}); });
  CHECK(m.find("combines ROWS with CHUNKS") != std::string::npos);
}

TEST_CASE_TEMPLATE("softmax with persistent clusters looping over the rows (PERSISTENT)", T, float, bfloat16) {
  // 1, 2 or 9 clusters (PROGRAMS_PER_SM counts programs in all on the interpreter) over 9
  // rows of 700 columns, CHUNKS tiles per program, an -inf entry, staged or not.
  int64_t rows = 9, cols = 700;
  auto x = ref::random_vec<T>(rows * cols, 31, -6.0f, 6.0f);
  x[5] = T(-inf);
  std::vector<double> want;
  ref::softmax(want, ref::to_float(x), rows, cols);
  for (int programs : {4, 8, 64})
    for (int stages : {1, 2}) {
      Config cfg{{"BLOCK", 64}, {"CHUNKS", 3}, {"PERSISTENT", 1}, {"PROGRAMS_PER_SM", programs}, num_warps(2),
                 num_stages(stages), cluster(4)};
      CAPTURE(cfg.str());
      std::vector<T> y(x.size());
      tk::softmax(y, x, rows, cols, -1, -1, cfg);
      CHECK(ref::max_rel_err(y, want, 1e-6, rtol<T>()) <= 1.0);
    }
}

TEST_CASE("16-bit rows that would take clusters of 16 take 8 programs of up to 20480 columns") {
  auto cfg = [](int64_t cols, auto heuristic) {
    CAPTURE(cols);
    return heuristic(cols);
  };
  auto rms = [](int64_t n) { return tk::rmsnorm_heuristic(n, DType::bf16, true); };
  auto ln = [](int64_t n) { return tk::layernorm_heuristic(n, DType::f16, true); };
  auto add = [](int64_t n) { return tk::add_rmsnorm_heuristic(n, DType::bf16, true, false); };
  auto sm = [](int64_t n) { return tk::softmax_heuristic(n, DType::bf16, true); };
  // The norms: any chunking, RELOAD, 3 programs per SM (LayerNorm at 131072: 4 held
  // programs of 64 KB, held_64k_programs).
  CHECK(cfg(131072, ln).cluster == 4);
  for (int64_t cols : {100000, 131072, 151936, 163840}) {
    for (const Config& c : {cfg(cols, rms), cfg(cols, ln), cfg(cols, add)}) {
      if (cols == 131072 && c == cfg(cols, ln)) continue;
      CHECK(c.cluster == 8);
      CHECK(c.num_warps == 8);
      CHECK(c.min_programs_per_sm == 3);
      CHECK(c.get("RELOAD") == 1);
      CHECK(tk::row_cover(c) / 8 >= (cols + 7) / 8);
      CHECK(tk::row_cover(c) / 8 <= 20480);
    }
  }
  Config r = rms(151936);  // 18992 per program: 5 x 4096
  CHECK(r.get("BLOCK") == 4096);
  CHECK(r.get("CHUNKS") == 5);
  // Softmax only where the 8 programs hold 2 whole chunks of 8192 (which then hold 4 on
  // half the cluster: hold_64k_per_program).
  for (int64_t cols : {128256, 131072}) {
    Config c = cfg(cols, sm);
    CHECK(c.cluster == 4);
    CHECK(c.get("BLOCK") == 8192);
    CHECK(c.get("CHUNKS") == 4);
    CHECK(c.min_programs_per_sm == 3);
  }
  for (int64_t cols : {100000, 151936}) CHECK(cfg(cols, sm).cluster == 16);
  // Unchanged: past 8 x 20480 columns, rows that fit 8 programs of 8192, f32, cross-entropy.
  CHECK(rms(163841).cluster == 16);
  CHECK(rms(262144).cluster == 16);
  CHECK(sm(262144).cluster == 8);  // 4 held chunks of 8192 (hold_64k_per_program)
  CHECK((rms(65537).cluster == 8 && rms(65537).get("TAIL") == 8));  // 65536's programs and a tail each
  CHECK(tk::layernorm_heuristic(100002, DType::bf16, true).cluster == 8);  // half_cluster_programs
  CHECK(tk::add_rmsnorm_heuristic(151937, DType::bf16, true, true).cluster == 16);  // rows from their aligned start
  CHECK(tk::add_rmsnorm_heuristic(151936, DType::bf16, true, false).cluster == 8);
  CHECK(rms(65536).cluster == 8);
  CHECK_FALSE(rms(65536).has("RELOAD"));
  CHECK(tk::rmsnorm_heuristic(131072, DType::f32, true).cluster == 16);
  CHECK(tk::cross_entropy_heuristic(131072, DType::bf16, true).cluster == 16);
  // Without clusters nothing changes.
  CHECK(tk::rmsnorm_heuristic(131072, DType::bf16, false).cluster == 1);
}

TEST_CASE("16-bit softmax programs of 2 held chunks of 8192 hold 4 on half the cluster") {
  for (DType d : {DType::bf16, DType::f16}) {
    for (int64_t cols : {int64_t(128256), int64_t(131072), int64_t(262144), int64_t(262136)}) {
      CAPTURE(cols);
      Config c = tk::softmax_heuristic(cols, d, true);
      CHECK(c.get("BLOCK") == 8192);
      CHECK(c.get("CHUNKS") == 4);
      CHECK(c.get("HELD") == 4);
      CHECK(c.num_warps == 8);
      CHECK(c.min_programs_per_sm == 3);
      CHECK(c.cluster == (cols > 131072 ? 8 : 4));
      CHECK(tk::row_cover(c) >= cols);
      CHECK_FALSE(c.has("TAIL"));
    }
  }
  // Not: one held chunk on 8 programs (65536), f32, widths off 16 bytes, rows past 16 x
  // 16384 (split), nor without clusters.
  Config one = tk::softmax_heuristic(65536, DType::bf16, true);
  CHECK((one.cluster == 8 && !one.has("CHUNKS") && one.get("HELD") == 1));
  CHECK(tk::softmax_heuristic(262144, DType::f32, true).cluster == 16);
  CHECK_FALSE(tk::softmax_heuristic(262144, DType::f32, true).has("HELD"));
  for (int64_t odd : {int64_t(262143), int64_t(262142), int64_t(131073)}) {
    CAPTURE(odd);
    Config c = tk::softmax_heuristic(odd, DType::bf16, true);
    CHECK_FALSE((c.has("CHUNKS") && c.get("CHUNKS") == 4 && c.get("BLOCK") == 8192));
  }
  CHECK(tk::softmax_heuristic(262144, DType::bf16, false).cluster == 1);
  // Nor rows not known to start on 16 bytes (a base or stride off 16 bytes: their chunks would
  // stay in registers), whatever the width.
  CHECK_FALSE(tk::holds_64k(tk::softmax_rows_config(262144, DType::bf16, true, true), DType::bf16));
  CHECK(tk::holds_64k(tk::softmax_rows_config(262144, DType::bf16, true, false), DType::bf16));
  CHECK_FALSE(tk::holds_64k(tk::layernorm_heuristic(262144, DType::bf16, true, false, false), DType::bf16));
  CHECK(tk::holds_64k(tk::layernorm_heuristic(262144, DType::bf16, true, false, true), DType::bf16));
  // Odd rows indexed from their aligned start (a span that is a multiple of 8) neither.
  for (int64_t odd : {int64_t(262137), int64_t(131065)}) {
    CAPTURE(odd);
    CHECK_FALSE(tk::holds_64k(tk::softmax_rows_config(odd, DType::bf16, true, true), DType::bf16));
  }
}

TEST_CASE("persistent clusters within those resident at once") {
  CHECK(tk::within_resident(16, 14) == 14);
  CHECK(tk::within_resident(8, 14) == 8);
  CHECK(tk::within_resident(16, 0) == 16);  // unknown: as asked
}
