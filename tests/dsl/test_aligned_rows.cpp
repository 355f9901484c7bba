// align_down on the interpreter: the rounded pointer and the dropped elements follow the
// real address, and a row indexed from there with a mask on its columns reads and writes
// exactly the row (every width remainder, masked-off positions take `other`).
#include <cmath>

#include "../gpu/aligned_rows_kernels.hpp"
#include "../kernels/reference.hpp"
#include "dsl_test_util.hpp"

using namespace tilefuse;

TEST_CASE_TEMPLATE("align_down: rows of any width read and written from their 16-byte-aligned start", T, float,
                   bfloat16) {
  for (int64_t n : {1, 7, 9, 10, 12, 15, 100, 1001})
  for (bool readable : {false, true}) {
    CAPTURE(n);
    CAPTURE(readable);
    int64_t rows = 11, stride = n;
    auto x = ref::random_vec<T>(size_t(rows * stride), 5 + n, -3, 3);
    std::vector<T> y(x.size());
    std::vector<float> sums(rows);
    std::vector<int32_t> heads(rows, -7);
    int64_t B = aligned_rows::positions_for<T>(n);
    aligned_rows::scale_rows_kernel<T>().launch(Grid(rows), Config{{"B", B}, {"READABLE", readable}, num_warps(1)}, y, sums, heads, x,
                                                int32_t(n), stride);
    for (int64_t r = 0; r < rows; ++r) {
      CAPTURE(r);
      int32_t head = aligned_rows::head_of(x.data() + r * stride);
      CHECK(heads[r] == head);
      double want_sum = -1.0 * double(B - n);  // the masked positions' fill
      for (int64_t c = 0; c < n; ++c) {
        float v = float(x[r * stride + c]);
        want_sum += v;
        CHECK(float(y[r * stride + c]) == float(T(v * 2.0f + float(c))));
      }
      CHECK(sums[r] == doctest::Approx(want_sum).epsilon(1e-5));
    }
  }
}

TEST_CASE("align_down: the alignment must be a power of two from the element size to 128 bytes") {
  for (int64_t bytes : {3, 2, 256}) {
    CAPTURE(bytes);
    unsigned line = 0;
    auto k = kernel("align_bad", [bytes, &line](Ptr<f32> out) {
      line = __LINE__; auto a = align_down(out, bytes);
      store(a.base + arange(0, 4), zeros<f32>({4}));
    });
    try {
      k.trace({});
      FAIL("no error");
    } catch (const UserError& e) {
      std::string msg = e.what();
      CHECK(msg.find("align_down to " + std::to_string(bytes) + " bytes for ptr<f32> pointers") != std::string::npos);
      CHECK(msg.find("power of two between the element size (4 bytes) and 128") != std::string::npos);
      CHECK(msg.find("test_aligned_rows.cpp:" + std::to_string(line)) != std::string::npos);  // the user's line
    }
  }
}

TEST_CASE("load's readable lanes: a tile of another shape is a user error naming both shapes and the line") {
  unsigned line = 0;
  auto k = kernel("readable_bad", [&line](Ptr<f32> out, Ptr<const f32> in) {
    auto pos = arange(0, 64);
    auto half = arange(0, 32);
    line = __LINE__; auto v = load(in + pos, pos < 40, 0.0f, Cache::Normal, half < 40);
    store(out + pos, v, pos < 40);
  });
  try {
    k.trace({});
    FAIL("no error");
  } catch (const UserError& e) {
    std::string msg = e.what();
    CHECK(msg.find("load 'readable' shape [32] does not match the pointer tile shape [64]") != std::string::npos);
    CHECK(msg.find("The readable mask must have the pointer tile's shape") != std::string::npos);
    CHECK(msg.find("test_aligned_rows.cpp:" + std::to_string(line)) != std::string::npos);
  }
}
