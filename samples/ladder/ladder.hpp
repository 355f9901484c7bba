// Small helpers shared by the ladder's steps: random inputs and a tolerant comparison.
#pragma once
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

inline std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (auto& e : v) e = dist(gen);
  return v;
}

// Prints the largest error; true when every element is within atol + rtol * |want|
// (equal values, -inf included, always are; NaN never is).
inline bool check(const char* what, const std::vector<float>& got, const std::vector<float>& want, double atol = 1e-6,
                  double rtol = 1e-5) {
  double max_err = 0;
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    double err = std::abs(double(got[i]) - double(want[i]));
    ok = err <= atol + rtol * std::abs(double(want[i]));
    max_err = std::max(max_err, err);
  }
  std::printf("%s: max abs error %.3g %s\n", what, max_err, ok ? "OK" : "FAILED");
  return ok;
}
