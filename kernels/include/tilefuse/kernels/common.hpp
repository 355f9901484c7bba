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
namespace detail {
template <class B>
auto buffer_elem() {
  using U = std::remove_cvref_t<B>;
  if constexpr (requires { typename U::value_type; }) return std::type_identity<std::remove_cv_t<typename U::value_type>>{};
  else return std::type_identity<std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<const U&>().data())>>>{};
}
}  // namespace detail
template <class B>
using buffer_elem_t = typename decltype(detail::buffer_elem<B>())::type;

constexpr int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Warps for a row tile of `block` elements: about 32 elements per thread, 1 to 16
// warps. Fewer, fuller threads keep more rows in flight per SM and skip cross-warp
// reduction steps (measured: bench/NOTES.md).
inline int warps_for_block(int64_t block) {
  int64_t w = block / (32 * 32);
  return static_cast<int>(w < 1 ? 1 : w > 16 ? 16 : w);
}

// Optional launch config; when empty the kernel's heuristic picks one.
using ConfigOverride = std::optional<Config>;

}  // namespace tilefuse::kernels
