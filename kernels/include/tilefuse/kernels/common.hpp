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
#include "tilefuse/ir/kernel_args.hpp"

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

// Heuristic of the row kernels (measured on H200, bench/NOTES.md): the whole row in one
// tile up to 16K columns (8K for f64), about 32 elements per thread; longer rows loop
// over the largest tile (re-read from L2).
inline Config row_heuristic(int64_t n_cols, DType dtype) {
  int64_t max_block = dtype == DType::f64 ? 8192 : 16384;
  int64_t block = next_pow2(n_cols);
  if (block <= max_block) return Config{{"BLOCK", block}, num_warps(warps_for_block(block))};
  return Config{{"BLOCK", max_block}, num_warps(16)};
}

// Launches the one-tile program when BLOCK covers the row, the looped one otherwise.
template <class Row, class Looped, class... Args>
void launch_rows(const Row& row, const Looped& looped, const Config& c, int64_t rows, int64_t cols,
                 const Args&... args) {
  if (c.get("BLOCK") < cols) looped.launch(Grid(rows), c, args...);
  else row.launch(Grid(rows), c, args...);
}

// Optional launch config; when empty the kernel's heuristic picks one.
using ConfigOverride = std::optional<Config>;

}  // namespace tilefuse::kernels
