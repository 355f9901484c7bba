#pragma once
// How a tile is laid out in shared memory, as a linear map over GF(2): the element
// offset of a tile element is the XOR of the images of the set bits of its row-major
// flat index. Storage order (which dimension is contiguous) is a permutation of the
// bits; the swizzle XORs the 16-byte chunk bits of an offset with bits of the other
// dimension, so the 8 rows an ldmatrix (or a column-wise access) touches fall into 8
// different bank groups while 16-byte vectors stay whole.
#include <cstdint>
#include <vector>

#include "tilefuse/nvptx/linear_layout.hpp"

namespace tilefuse::nvptx {

struct SharedEncoding {
  std::vector<uint32_t> image;  // image[i]: offset of the flat index 1 << i
  uint32_t offset(uint32_t flat) const;
  // The layout whose "flat index" is the shared-memory offset of each element: the
  // same registers, lanes and warps holding the same elements, bases mapped through
  // this encoding (a bijection, so redundancy and ownership are unchanged).
  LinearLayout apply(const LinearLayout& l) const;
  bool is_identity() const;
};

// Row-major, unswizzled: offset = flat index.
SharedEncoding identity_encoding(const Shape& shape);
// A rank-2 tile stored with dimension `contig` contiguous, 16-byte chunks XOR-swizzled
// by the other dimension's coordinate: chunk ^= (row / per_phase) % max_phase, where
// max_phase = min(8, chunks per row) and per_phase = 8 / max_phase (rows sharing one
// 128-byte line). With `column_blocks`, rows wider than 128 bytes are stored as 128-byte
// column blocks, one after another, each holding every row: for rows of 32, 64 and 128
// bytes (per block) exactly the 32/64/128-byte swizzle of wgmma descriptors and TMA,
// given a buffer aligned to 1024 bytes. Other ranks, or rows narrower than two chunks:
// no swizzle.
SharedEncoding swizzled_encoding(const Shape& shape, int contig, int elem_bytes, bool column_blocks = false);
// The hardware swizzle width (32, 64 or 128 bytes) swizzled_encoding uses for that
// tile, 0 when it has none a wgmma descriptor could name.
int swizzle_bytes(const Shape& shape, int contig, int elem_bytes);

// The dimension along which layout `l` holds the most consecutive elements per thread
// (the one its stores to shared memory vectorize along); the last dimension on ties.
int contiguous_dim(const LinearLayout& l);

}  // namespace tilefuse::nvptx
