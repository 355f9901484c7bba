#pragma once
// Helpers for the DSL op tests: random inputs (never zeros) and tolerant comparison
// that names the first mismatching element.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tilefuse/tilefuse.hpp>

namespace dsltest {

// Uniform floats in [lo, hi), resampled away from zero (|x| >= 1e-3 unless the range excludes it).
template <class T = float>
std::vector<T> rand_f(size_t n, uint32_t seed, float lo = -4.0f, float hi = 4.0f) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) {
    float f = d(g);
    while (std::fabs(f) < 1e-3f) f = d(g);
    x = T(f);
  }
  return v;
}

// Uniform integers in [lo, hi], never zero.
template <class T = int32_t>
std::vector<T> rand_i(size_t n, uint32_t seed, int64_t lo = -1000, int64_t hi = 1000) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int64_t> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) {
    int64_t i = d(g);
    while (i == 0) i = d(g);
    x = static_cast<T>(i);
  }
  return v;
}

// "" when every |got[i] - want[i]| <= atol + rtol * |want[i]| (NaN never passes),
// else a description of the first mismatch.
template <class G, class W>
std::string first_mismatch(const std::vector<G>& got, const std::vector<W>& want, double rtol = 0, double atol = 0) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    bool ok = g == w || std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (std::isnan(g) || std::isnan(w)) ok = false;
    if (!ok) {
      std::ostringstream s;
      s.precision(10);
      s << "element " << i << ": got " << g << ", want " << w;
      return s.str();
    }
  }
  return "";
}

// Bit-exact comparison for 16-bit float storage types.
template <class T>
std::string bits_mismatch(const std::vector<T>& got, const std::vector<T>& want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i].bits != want[i].bits)
      return "element " + std::to_string(i) + ": bits " + std::to_string(got[i].bits) + ", want " +
             std::to_string(want[i].bits) + " (" + std::to_string(float(got[i])) + " vs " +
             std::to_string(float(want[i])) + ")";
  return "";
}

}  // namespace dsltest
