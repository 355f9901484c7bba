#pragma once
// Differential testing: run one kernel on the interpreter and on the GPU with the
// same inputs, then compare every buffer. Vectors become device buffers for the GPU
// run; scalars pass through. Without a GPU the check reports a skip and passes.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <tilefuse/cuda/driver.hpp>
#include <tilefuse/cuda/memory.hpp>
#include <tilefuse/tilefuse.hpp>

namespace difftest {

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

inline bool have_gpu() {
  static std::string why;
  static bool ok = tilefuse::gpu_available(&why);
  if (!ok) MESSAGE("GPU test skipped: " << why);
  return ok;
}

template <class T>
auto to_gpu(const T& a) {
  if constexpr (is_vector<T>::value) return tilefuse::to_device(a);
  else return a;
}

struct Tolerance {
  double atol = 1e-6, rtol = 1e-5;
};
// A row kernel's outputs (f32 math, rounded to T): f32 to 1e-5, 16-bit to a bf16 ulp or so.
template <class T>
Tolerance row_tolerance() {
  return std::is_same_v<T, float> ? Tolerance{1e-5, 1e-5} : Tolerance{1e-3, 1.6e-2};
}

template <class T>
void compare(const std::vector<T>& gpu, const std::vector<T>& ref, Tolerance tol, int index) {
  REQUIRE(gpu.size() == ref.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double g, r;
    if constexpr (std::is_same_v<T, bool>) {
      g = gpu[i];
      r = ref[i];
    } else {
      g = static_cast<double>(static_cast<std::conditional_t<std::is_integral_v<T>, T, float>>(gpu[i]));
      r = static_cast<double>(static_cast<std::conditional_t<std::is_integral_v<T>, T, float>>(ref[i]));
    }
    bool ok = (std::isnan(g) && std::isnan(r)) || g == r ||
              (std::is_floating_point_v<decltype(g)> && !std::is_integral_v<T> &&
               std::fabs(g - r) <= tol.atol + tol.rtol * std::fabs(r));
    if (!ok && bad++ == 0) first = i;
  }
  if (bad) {
    double g = static_cast<double>(static_cast<std::conditional_t<std::is_integral_v<T>, T, float>>(gpu[first]));
    double r = static_cast<double>(static_cast<std::conditional_t<std::is_integral_v<T>, T, float>>(ref[first]));
    FAIL_CHECK("buffer argument #" << index << ": " << bad << " of " << ref.size() << " elements differ; first at "
                                   << first << ": gpu " << g << " vs interpreter " << r);
  }
}

// Runs `k` on both executors; every std::vector argument is an input and output.
template <class K, class... Args>
void gpu_matches_interp(const K& k, tilefuse::Grid grid, const tilefuse::Config& cfg, Tolerance tol,
                        const Args&... args) {
  std::tuple<Args...> host(args...);
  std::apply([&](auto&... a) { k.launch(grid, cfg, a...); }, host);  // traces and interprets even without a GPU
  if (!have_gpu()) return;
  auto dev = std::make_tuple(to_gpu(args)...);
  std::apply([&](auto&... a) { k.launch(grid, cfg, a...); }, dev);
  tilefuse::cuda::synchronize();
  int index = 0;
  auto cmp = [&](auto& h, auto& d) {
    using H = std::remove_cvref_t<decltype(h)>;
    if constexpr (is_vector<H>::value) compare(d.to_host(), h, tol, index);
    ++index;
  };
  [&]<size_t... I>(std::index_sequence<I...>) {
    (cmp(std::get<I>(host), std::get<I>(dev)), ...);
  }(std::index_sequence_for<Args...>{});
}

}  // namespace difftest
