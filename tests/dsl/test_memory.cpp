// Pointer arithmetic, masked loads (with `other`) and stores, and atomics, on the
// interpreter against plain C++.
#include <algorithm>
#include <set>

#include "dsl_test_util.hpp"

using namespace tilefuse;
using dsltest::first_mismatch;

TEST_CASE("pointer + offset tiles: strided 2-D access, pointer - offset, i64 offsets") {
  // out[r, c] = in[r * in_stride + c] * 2 for an odd [m, n] sub-matrix of a padded input.
  auto k = kernel("strided", {"out", "in", "m", "n", "in_stride"},
                  [](Ptr<f32> out, Ptr<const f32> in, I32 m, I32 n, I64 in_stride, Meta<"BM"> BM, Meta<"BN"> BN) {
                    auto r = program_id(0) * BM + arange(0, BM);
                    auto c = program_id(1) * BN + arange(0, BN);
                    auto mask = (r < m).col() && (c < n).row();
                    auto row_ptrs = in + r.col() * in_stride;  // [BM, 1] pointers (i64 offsets)
                    static_assert(std::is_same_v<decltype(row_ptrs), Tile<PtrTo<const f32>, 2>>);
                    auto ptrs = row_ptrs + c.row();  // [BM, BN]
                    auto x = load(ptrs, mask);
                    auto back = (ptrs + 5) - 5;  // pointer - offset
                    auto y = load(back, mask);
                    store(out + r.col() * n + c.row(), x + y, mask);
                  });
  int m = 29, n = 22;
  int64_t stride = 31;
  auto in = dsltest::rand_f(m * stride, 50);
  std::vector<float> out(m * n, 0.0f);
  k.launch(grid(2, 2), {{"BM", 16}, {"BN", 16}}, out, in, m, n, stride);
  std::vector<float> want(m * n);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) want[r * n + c] = in[r * stride + c] * 2.0f;
  CHECK(first_mismatch(out, want) == "");
}

TEST_CASE("load with mask and other fills masked lanes, store with mask leaves memory alone") {
  // Every program copies its whole BLOCK (unmasked) into `tiles`, so masked lanes
  // show `other`; the masked store into `out` must not touch the tail.
  auto k = kernel("masked", {"tiles", "out", "in", "n"},
                  [](Ptr<f32> tiles, Ptr<f32> out, Ptr<const f32> in, I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto x = load(in + offs, m, -7.5f);
                    store(tiles + offs, x);
                    auto z = load(in + offs, m);  // no other: masked lanes read 0
                    store(tiles + num_programs(0) * B + offs, z);
                    auto even = (offs % 2) == 0;
                    store(out + offs, x * 3.0f, m && even);
                  });
  int n = 45;
  int64_t B = 16, G = 3;
  auto in = dsltest::rand_f(n, 51);
  std::vector<float> tiles(2 * G * B, 1e9f), out(n + 5, 42.0f);
  k.launch(grid(G), {{"B", B}}, tiles, out, in, n);
  std::vector<float> tw(2 * G * B), ow(n + 5, 42.0f);
  for (int64_t i = 0; i < G * B; ++i) {
    tw[i] = i < n ? in[i] : -7.5f;
    tw[G * B + i] = i < n ? in[i] : 0.0f;
  }
  for (int i = 0; i < n; i += 2) ow[i] = in[i] * 3.0f;
  CHECK(first_mismatch(tiles, tw) == "");
  CHECK(first_mismatch(out, ow) == "");
}

TEST_CASE("load with a broadcast mask and a tile `other`, cache hints, i8/i64 element types") {
  auto k = kernel("bmask", {"out", "o64", "in", "i8in", "m", "n"},
                  [](Ptr<f32> out, Ptr<i64> o64, Ptr<const f32> in, Ptr<const i8> i8in, I32 m, I32 n, Meta<"BM"> BM,
                     Meta<"BN"> BN) {
                    auto r = arange(0, BM);
                    auto c = arange(0, BN);
                    auto offs = r.col() * BN + c.row();
                    auto other = (r.col() * 100 + c.row()).cast<f32>();  // [BM, BN] fill values
                    auto x = load(in + offs, (c < n).row(), other, Cache::EvictLast);  // [1, BN] mask
                    store(out + offs, x, (r < m).col(), Cache::EvictFirst);            // [BM, 1] mask
                    auto b = load(i8in + offs, (r < m).col(), 1).cast<i64>();
                    store(o64 + offs, b * 1000000000000LL);
                  });
  int64_t BM = 8, BN = 16;
  int m = 5, n = 11;
  auto in = dsltest::rand_f(BM * BN, 52);
  auto i8in = dsltest::rand_i<int8_t>(BM * BN, 53, -128, 127);
  std::vector<float> out(BM * BN, -3.0f);
  std::vector<int64_t> o64(BM * BN, 0);
  k.launch(grid(1), {{"BM", BM}, {"BN", BN}}, out, o64, in, i8in, m, n);
  std::vector<float> want(BM * BN, -3.0f);
  std::vector<int64_t> w64(BM * BN);
  for (int64_t r = 0; r < BM; ++r)
    for (int64_t c = 0; c < BN; ++c) {
      if (r < m) want[r * BN + c] = c < n ? in[r * BN + c] : float(r * 100 + c);
      w64[r * BN + c] = (r < m ? i8in[r * BN + c] : 1) * 1000000000000LL;
    }
  CHECK(first_mismatch(out, want) == "");
  CHECK(first_mismatch(o64, w64) == "");
}

TEST_CASE("atomic_add: many programs build one histogram") {
  auto k = kernel("histogram", {"hist", "fsum", "bins", "vals", "n"},
                  [](Ptr<i32> hist, Ptr<f32> fsum, Ptr<const i32> bins, Ptr<const f32> vals, I32 n, Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto b = load(bins + offs, m);
                    atomic_add(hist + b, 1, m);  // lanes of one tile may hit the same bin
                    auto v = load(vals + offs, m);
                    auto old = atomic_add(fsum + b, v, m);  // per-bin float sums
                    static_assert(std::is_same_v<decltype(old), Tile<f32, 1>>);
                  });
  int n = 1001, nbins = 13;
  auto bins = dsltest::rand_i(n, 54, 1, nbins);
  for (auto& b : bins) b -= 1;  // 0..12
  auto vals = dsltest::rand_f(n, 55);
  std::vector<int32_t> hist(nbins, 0);
  std::vector<float> fsum(nbins, 0.0f);
  k.launch(grid((n + 63) / 64), {{"B", 64}}, hist, fsum, bins, vals, n);
  std::vector<int32_t> hw(nbins, 0);
  std::vector<double> fw(nbins, 0.0), fabs_sum(nbins, 0.0);
  for (int i = 0; i < n; ++i) {
    hw[bins[i]]++;
    fw[bins[i]] += vals[i];
    fabs_sum[bins[i]] += std::fabs(vals[i]);
  }
  CHECK(first_mismatch(hist, hw) == "");
  for (int b = 0; b < nbins; ++b) {
    CAPTURE(b);
    CHECK(std::fabs(fsum[b] - fw[b]) <= 1e-5 * fabs_sum[b]);
  }
}

TEST_CASE("atomic_max returns old values and finds the global maximum") {
  auto k = kernel("amax", {"gmax", "imax", "olds", "x", "xi", "n"},
                  [](Ptr<f32> gmax, Ptr<i32> imax, Ptr<f32> olds, Ptr<const f32> x, Ptr<const i32> xi, I32 n,
                     Meta<"B"> B) {
                    auto offs = program_id(0) * B + arange(0, B);
                    auto m = offs < n;
                    auto v = load(x + offs, m, -inf);
                    auto old = atomic_max(gmax, max(v, 0));  // one scalar per program
                    store(olds + program_id(0), old);
                    atomic_max(imax + (offs % 4), load(xi + offs, m), m);  // 4 slots, many lanes each
                  });
  int n = 300;
  int64_t B = 32, G = (n + B - 1) / B;
  auto x = dsltest::rand_f(n, 56, -100.0f, 100.0f);
  auto xi = dsltest::rand_i(n, 57, -100000, 100000);
  std::vector<float> gmax(1, -1e30f), olds(G, 0.0f);
  std::vector<int32_t> imax(4, INT32_MIN);
  k.launch(grid(G), {{"B", B}}, gmax, imax, olds, x, xi, n);
  CHECK(gmax[0] == *std::max_element(x.begin(), x.end()));
  std::vector<int32_t> iw(4, INT32_MIN);
  for (int i = 0; i < n; ++i) iw[i % 4] = std::max(iw[i % 4], xi[i]);
  CHECK(first_mismatch(imax, iw) == "");
  // The interpreter runs programs in order: each old value is the running maximum before it.
  float run = -1e30f;
  for (int64_t g = 0; g < G; ++g) {
    CHECK(olds[g] == run);
    for (int64_t i = g * B; i < std::min<int64_t>(n, (g + 1) * B); ++i) run = std::max(run, x[i]);
  }
}

TEST_CASE("atomic_cas: one winner per slot, and lane-wise compare-and-swap") {
  auto k = kernel("cas", {"lock", "olds", "buf", "prev"},
                  [](Ptr<i32> lock, Ptr<i32> olds, Ptr<i32> buf, Ptr<i32> prev, Meta<"B"> B) {
                    auto pid = program_id(0);
                    auto old = atomic_cas(lock, 0, pid + 1);  // only the first program sees 0
                    store(olds + pid, old);
                    if_(pid == 0, [&] {
                      auto offs = arange(0, B);
                      auto cur = load(buf + offs);
                      auto cmp = where(offs % 2 == 0, cur, cur + 1);  // even lanes match
                      auto o = atomic_cas(buf + offs, cmp, offs * 10);
                      store(prev + offs, o);
                    });
                  });
  int64_t G = 5, B = 16;
  std::vector<int32_t> lock(1, 0), olds(G, -1), prev(B, 0);
  auto buf = dsltest::rand_i(B, 58);
  auto buf0 = buf;
  k.launch(grid(G), {{"B", B}}, lock, olds, buf, prev);
  CHECK(lock[0] != 0);
  int winners = 0;
  for (int64_t g = 0; g < G; ++g) {
    if (olds[g] == 0) {
      ++winners;
      CHECK(lock[0] == g + 1);
    } else {
      CHECK(olds[g] == lock[0]);
    }
  }
  CHECK(winners == 1);
  for (int64_t i = 0; i < B; ++i) {
    CAPTURE(i);
    CHECK(prev[i] == buf0[i]);
    CHECK(buf[i] == (i % 2 == 0 ? int32_t(i * 10) : buf0[i]));
  }
}
