#pragma once
// Shared helpers of the gallery's host-side functions: element types of buffers,
// the launch-config heuristics, and the `with` option of every gallery call.
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "tilefuse/dsl/config.hpp"
#include "tilefuse/dsl/element.hpp"

namespace tilefuse::kernels {

// Element type of a buffer argument (std::vector, std::span, DeviceBuffer, DevicePtr).
template <class B>
using buffer_elem_t = std::remove_cv_t<typename std::remove_cvref_t<B>::value_type>;

constexpr int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Optional launch config; when empty the kernel's heuristic picks one.
using ConfigOverride = std::optional<Config>;

}  // namespace tilefuse::kernels
