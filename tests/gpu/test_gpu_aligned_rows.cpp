// Rows indexed from their 16-byte-aligned start (align_down, ALIGN_ROWS) on the GPU:
// whole 128-bit runs whose mask is tested at run time (runs with nothing, part or all of
// them valid), at every width remainder and at a misaligned base, against plain C++;
// the gallery's row kernels with ALIGN_ROWS against the interpreter. Label: gpu.
#include <tilefuse/kernels/kernels.hpp>

#include "aligned_rows_kernels.hpp"
#include "differential.hpp"
#include "../kernels/reference.hpp"

using namespace tilefuse;
namespace tk = tilefuse::kernels;
using difftest::gpu_matches_interp;

TEST_CASE_TEMPLATE("gpu: rows read and written from their aligned start, every width remainder (partly masked runs "
                   "read whole where readable)", T, float, bfloat16) {
  if (!difftest::have_gpu()) return;
  for (int64_t n : {1, 7, 9, 10, 12, 15, 100, 1001, 4099}) {
    for (int64_t offset : {0, 1, 3}) {  // elements from the buffer's (aligned) start
      for (int warps : {1, 4})
      for (bool readable : {false, true}) {
        CAPTURE(n);
        CAPTURE(offset);
        CAPTURE(warps);
        CAPTURE(readable);
        int64_t rows = 13, stride = n + (n % 2 ? 0 : 1);
        auto x = ref::random_vec<T>(size_t(rows * stride + offset), 7 + n, -3, 3);
        DeviceBuffer<T> xd = to_device(std::span<const T>(x)), yd(x.size());
        DeviceBuffer<float> sums(rows);
        DeviceBuffer<int32_t> heads(rows);
        DevicePtr<T> xv = xd.view().subview(offset, x.size() - offset), yv = yd.view().subview(offset, x.size() - offset);
        int64_t B = std::max<int64_t>(aligned_rows::positions_for<T>(n), 32 * warps * (16 / int64_t(sizeof(T))));
        aligned_rows::scale_rows_kernel<T>().launch(Grid(rows), Config{{"B", B}, {"READABLE", readable}, num_warps(warps)}, yv, sums, heads,
                                                    DevicePtr<const T>(xv.data(), xv.size()), int32_t(n), stride);
        auto y = yd.to_host();
        auto s = sums.to_host();
        auto h = heads.to_host();
        int bad = 0;
        for (int64_t r = 0; r < rows; ++r) {
          CHECK(h[r] == aligned_rows::head_of(xv.data() + r * stride));
          double want = -1.0 * double(B - n);
          for (int64_t c = 0; c < n; ++c) {
            float v = float(x[offset + r * stride + c]);
            want += v;
            bad += float(y[offset + r * stride + c]) != float(T(v * 2.0f + float(c)));
          }
          CHECK(s[r] == doctest::Approx(want).epsilon(1e-4));
          // Nothing outside the row was written (the gaps between rows hold zeros).
          for (int64_t c = n; c < stride; ++c) bad += float(y[offset + r * stride + c]) != 0.0f;
        }
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE_TEMPLATE("gpu: gallery row kernels with ALIGN_ROWS at odd widths and on clusters", T, float, bfloat16) {
  difftest::Tolerance tol = std::is_same_v<T, float> ? difftest::Tolerance{1e-6, 1e-5} : difftest::Tolerance{1e-3, 1.6e-2};
  struct Case { int64_t rows, cols; Config cfg; };
  for (auto& s : {Case{5, 4099, Config{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(4)}},
                  Case{4, 3001, Config{{"BLOCK", 512}, {"CHUNKS", 3}, num_warps(4), cluster(2)}},
                  Case{3, 16383, Config{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(4), cluster(4)}},
                  Case{6, 302, Config{{"BLOCK", 64}, {"CHUNKS", 5}, num_warps(1)}},
                  // 4+ runs per thread: checked runs finished after one warp vote per op
                  Case{3, 30011, Config{{"BLOCK", 8192}, num_warps(8), cluster(4)}},
                  Case{5, 4097, Config{{"BLOCK", 4096}, {"CHUNKS", 2}, num_warps(4)}},
                  // Tail tiles holding the rows' last runs: 2 x (8192 + 8), 4 x (2 x 1024 + 64).
                  Case{3, 16387, Config{{"BLOCK", 8192}, {"TAIL", 8}, num_warps(8), cluster(2)}},
                  Case{4, 8401, Config{{"BLOCK", 1024}, {"CHUNKS", 2}, {"TAIL", 64}, num_warps(4), cluster(4)}}}) {
    CAPTURE(s.cols);
    CAPTURE(s.cfg.str());
    Config cfg = Config(s.cfg).set("ALIGN_ROWS", 1);
    auto x = ref::random_vec<T>(s.rows * s.cols, 3 + s.cols, -5, 5), r = ref::random_vec<T>(s.rows * s.cols, 4);
    auto w = ref::random_vec<T>(s.cols, 5, 0.5, 1.5), b = ref::random_vec<T>(s.cols, 6);
    std::vector<T> y(x.size()), so(x.size());
    Grid g(s.rows * s.cfg.cluster);
    int32_t n = static_cast<int32_t>(s.cols);
    gpu_matches_interp(tk::softmax_row_kernel<T>(), g, cfg, tol, y, x, int32_t(s.rows), n, s.cols, s.cols);
    for (int res : {0, 1})
      gpu_matches_interp(tk::rmsnorm_row_kernel<T>(), g, Config(cfg).set("RESIDUAL", res), tol, y, so, x, r, w, n,
                         s.cols, 1e-6f);
    std::vector<float> mean(s.rows), rstd(s.rows);  // written with STATS
    for (int shifted : {0, 1})
      gpu_matches_interp(tk::layernorm_row_kernel<T>(), g, Config(cfg).set("SHIFTED", shifted).set("STATS", 1), tol, y,
                         mean, rstd, x, w, b, n, s.cols, 1e-5f);
  }
}

// The host functions on device buffers whose rows start off 16 bytes: rows indexed from
// their aligned start, the weight and bias read from their shifted copies (WEIGHT_COPIES=1)
// or realigned per run (0), at odd widths, a base off 4 bytes, on clusters; against plain
// C++.
TEST_CASE_TEMPLATE("gpu: norms on misaligned rows, the weight and bias from their shifted copies", T, float,
                   bfloat16) {
  if (!difftest::have_gpu()) return;
  difftest::Tolerance tol = std::is_same_v<T, float> ? difftest::Tolerance{1e-9, 2e-4} : difftest::Tolerance{1e-9, 1.6e-2};
  struct Case { int64_t rows, cols, offset; Config cfg; };
  for (auto& s : {Case{7, 4099, 0, Config{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(4)}},
                  Case{5, 16385, 0, Config{{"BLOCK", 1024}, {"CHUNKS", 5}, num_warps(4), cluster(4)}},
                  Case{9, 1024, 1, Config{{"BLOCK", 256}, {"CHUNKS", 5}, num_warps(1)}},  // base off 4 bytes
                  Case{6, 2053, 3, Config{{"BLOCK", 512}, {"CHUNKS", 3}, num_warps(2), cluster(2)}}}) {
    for (int copies : {1, 0}) {
      CAPTURE(s.cols);
      CAPTURE(s.offset);
      CAPTURE(copies);
      Config cfg = Config(s.cfg).set("ALIGN_ROWS", 1).set("WEIGHT_COPIES", copies);
      size_t n = size_t(s.rows * s.cols), off = size_t(s.offset);
      auto x = ref::random_vec<T>(n + off, 31 + s.cols, -5, 5), r = ref::random_vec<T>(n + off, 32 + s.cols);
      auto w = ref::random_vec<T>(s.cols, 33, 0.5, 1.5), b = ref::random_vec<T>(s.cols, 34);
      auto gx = to_device(x), gr = to_device(r), gw = to_device(w), gb = to_device(b);
      DeviceBuffer<T> gy(n + off), gs(n + off);
      auto view = [&](auto& buf) { return DevicePtr<T>(buf.data() + off, n); };
      auto cview = [&](auto& buf) { return DevicePtr<const T>(buf.data() + off, n); };
      std::vector<float> xs(n), summed(n);
      for (size_t i = 0; i < n; ++i) {
        xs[i] = float(x[i + off]);
        summed[i] = float(T(xs[i] + float(r[i + off])));
      }
      auto got = [&](DeviceBuffer<T>& buf) {
        auto h = buf.to_host();
        return std::vector<T>(h.begin() + s.offset, h.begin() + s.offset + s.rows * s.cols);
      };
      std::vector<double> want;
      tk::rmsnorm(view(gy), cview(gx), gw, s.rows, s.cols, 1e-6f, cfg);
      ref::rmsnorm(want, xs, ref::to_float(w), s.rows, s.cols, 1e-6);
      difftest::compare(got(gy), std::vector<T>(want.begin(), want.end()), tol, 0);
      tk::add_rmsnorm(view(gy), view(gs), cview(gx), cview(gr), gw, s.rows, s.cols, 1e-6f, cfg);
      CHECK(ref::max_rel_err(got(gs), std::vector<double>(summed.begin(), summed.end()), 0, 0) == 0.0);
      ref::rmsnorm(want, summed, ref::to_float(w), s.rows, s.cols, 1e-6);
      difftest::compare(got(gy), std::vector<T>(want.begin(), want.end()), tol, 1);
      tk::layernorm(view(gy), cview(gx), gw, gb, s.rows, s.cols, 1e-5f, cfg);
      ref::layernorm(want, xs, ref::to_float(w), ref::to_float(b), s.rows, s.cols, 1e-5);
      difftest::Tolerance ln_tol = tol;
      ln_tol.atol = std::is_same_v<T, float> ? 1e-4 : 2e-2;
      difftest::compare(got(gy), std::vector<T>(want.begin(), want.end()), ln_tol, 2);
    }
  }
}
