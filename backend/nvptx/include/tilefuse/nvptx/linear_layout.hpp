#pragma once
// Linear layouts over GF(2): the one representation of how a tile is distributed over
// the hardware. A layout maps a hardware index (register r, lane l, warp w) to a tile
// element: the row-major flat index of the element is the XOR of the bases of the bits
// set in r, l and w. Tile dimensions are powers of two, so a flat index is a bit vector
// and each tile dimension owns a contiguous range of its bits.
//
// Blocked, slice, MMA-accumulator, dot-operand and swizzled shared layouts are all
// constructors of this one type; conversions, broadcasts, reshapes and transposes are
// computed on it rather than written case by case. A zero basis means replication (the
// hardware index bit does not change the element).
#include <cstdint>
#include <string>
#include <vector>

#include "tilefuse/ir/type.hpp"

namespace tilefuse::nvptx {

using ir::Shape;

enum class HwDim : uint8_t { Reg, Lane, Warp };

class LinearLayout {
 public:
  LinearLayout() = default;
  LinearLayout(Shape shape, std::vector<uint32_t> regs, std::vector<uint32_t> lanes, std::vector<uint32_t> warps);

  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  uint32_t numel() const { return 1u << total_bits_; }
  const std::vector<uint32_t>& bases(HwDim d) const;
  const std::vector<uint32_t>& regs() const { return regs_; }
  const std::vector<uint32_t>& lanes() const { return lanes_; }
  const std::vector<uint32_t>& warps() const { return warps_; }
  int num_regs() const { return 1 << regs_.size(); }
  int num_lanes() const { return 1 << lanes_.size(); }
  int num_warps() const { return 1 << warps_.size(); }

  // The flat element index owned by register r of thread (lane, warp), and its parts.
  uint32_t reg_part(uint32_t r) const { return combine(regs_, r); }
  uint32_t thread_part(uint32_t lane, uint32_t warp) const { return combine(lanes_, lane) ^ combine(warps_, warp); }
  uint32_t apply(uint32_t r, uint32_t lane, uint32_t warp) const { return reg_part(r) ^ thread_part(lane, warp); }

  // Bit positions of tile dimension d inside a flat index.
  int dim_shift(int d) const { return shifts_.at(d); }
  int dim_bits(int d) const { return bits_.at(d); }
  int64_t coord(uint32_t flat, int d) const { return (flat >> shifts_[d]) & ((1u << bits_[d]) - 1); }
  std::vector<int64_t> coords(uint32_t flat) const;
  uint32_t flatten(const std::vector<int64_t>& c) const;
  // OR over the lane and warp bases of their coordinate in dimension d: the bits a
  // thread's own part may set there. Registers whose coordinate avoids them add.
  uint32_t thread_bits(int d) const;

  // --- derived layouts (all shape-changing ops of the tile IR are relabelings) ---
  // The source layout of a broadcast to this layout: dimensions that are 1 in `s` are
  // dropped from every basis; registers that become redundant are removed.
  LinearLayout project_to(const Shape& s) const;
  // The layout with dimension `axis` removed (a reduction's result, a slice). When
  // `kept` is given it receives, for each register basis of the result, the index of
  // the basis of this layout it came from.
  LinearLayout drop_dim(int axis, std::vector<int>* kept = nullptr) const;
  LinearLayout insert_dim(int axis) const;           // expand_dims: a new dimension of size 1
  LinearLayout reshape(const Shape& s) const;        // same flat bases, new row-major shape
  LinearLayout permute(const std::vector<int>& perm) const;  // result dim i = this dim perm[i]

  // Bits of each hardware index whose basis is linearly dependent on the bases before
  // it (registers first, then lanes, then warps). Keeping only hardware indices with
  // these bits clear visits every covered element exactly once.
  struct Redundancy {
    uint32_t reg = 0, lane = 0, warp = 0;
    bool any() const { return reg || lane || warp; }
  };
  Redundancy redundancy() const;
  bool covers_tile() const;  // every element of the tile is owned by some (r, lane, warp)
  // 2^k where the first k register bases step 1, 2, 4, ... along dimension d: the number
  // of consecutive elements along d that each thread holds in consecutive registers.
  int contiguous_regs(int d) const;

  bool operator==(const LinearLayout& o) const {
    return shape_ == o.shape_ && regs_ == o.regs_ && lanes_ == o.lanes_ && warps_ == o.warps_;
  }
  bool operator!=(const LinearLayout& o) const { return !(*this == o); }
  // "reg=[(0,1),(0,2)] lane=[...] warp=[...]" with bases as coordinates.
  std::string str() const;
  std::string basis_str(uint32_t b) const;

 private:
  static uint32_t combine(const std::vector<uint32_t>& bs, uint32_t idx) {
    uint32_t r = 0;
    for (size_t i = 0; i < bs.size(); ++i)
      if (idx >> i & 1) r ^= bs[i];
    return r;
  }
  // Re-express every basis through `fn` (old coordinates -> new coordinates) in `s`.
  template <class Fn>
  LinearLayout remap(const Shape& s, Fn fn, bool dedupe_regs, std::vector<int>* kept) const;

  Shape shape_;
  std::vector<uint32_t> regs_, lanes_, warps_;
  std::vector<int> shifts_, bits_;
  int total_bits_ = 0;
};

// For every thread (lane + 32 * warp) and register: the tile coordinates it holds.
// owned[thread][reg] = coordinates. The reference for all index math.
std::vector<std::vector<std::vector<int64_t>>> owned_coords(const LinearLayout& l);

// --- constructors of the named layout families ---

// Triton-style blocked layout: each thread holds sizePerThread contiguous elements,
// lanes then warps tile the shape along `order` (order[0] = fastest-varying dim), and
// the pattern repeats in registers where the shape is larger, or replicates where it is
// smaller.
struct Blocked {
  std::vector<int> size_per_thread, threads_per_warp, warps_per_cta, order;
  std::string str() const;
  bool operator==(const Blocked&) const = default;
};
LinearLayout to_linear(const Blocked& b, const Shape& shape);
// A blocked layout for `shape` with `vec` contiguous elements per thread along order[0]
// and lanes/warps assigned fastest-dimension first.
Blocked make_blocked(const Shape& shape, int num_warps, const std::vector<int>& order, int vec);
std::vector<int> row_major_order(int rank);  // {rank-1, ..., 0}

int log2_exact(int64_t v);  // internal error unless v is a power of two

}  // namespace tilefuse::nvptx
