// Shared-memory encodings (see shared_encoding.hpp).
#include "tilefuse/nvptx/shared_encoding.hpp"

#include <algorithm>

namespace tilefuse::nvptx {

uint32_t SharedEncoding::offset(uint32_t flat) const {
  uint32_t o = 0;
  for (size_t i = 0; i < image.size(); ++i)
    if (flat >> i & 1) o ^= image[i];
  return o;
}

LinearLayout SharedEncoding::apply(const LinearLayout& l) const {
  auto map = [&](const std::vector<uint32_t>& bs) {
    std::vector<uint32_t> out;
    for (uint32_t b : bs) out.push_back(offset(b));
    return out;
  };
  return LinearLayout(l.shape(), map(l.regs()), map(l.lanes()), map(l.warps()));
}

bool SharedEncoding::is_identity() const {
  for (size_t i = 0; i < image.size(); ++i)
    if (image[i] != (1u << i)) return false;
  return true;
}

SharedEncoding identity_encoding(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  SharedEncoding e;
  for (int i = 0; (int64_t{1} << i) < n; ++i) e.image.push_back(1u << i);
  return e;
}

SharedEncoding swizzled_encoding(const Shape& shape, int contig, int elem_bytes, bool column_blocks) {
  if (shape.size() != 2 || elem_bytes > 16 || 16 % elem_bytes) return identity_encoding(shape);
  int other = 1 - contig;
  int cbits = log2_exact(shape[contig]), obits = log2_exact(shape[other]);
  // column_blocks: rows wider than 128 bytes are split into 128-byte column blocks, each
  // holding all rows (the layout wgmma descriptors and TMA boxes address).
  int block_bits = column_blocks ? std::min(cbits, log2_exact(std::max(1, 128 / elem_bytes))) : cbits;
  // Flat index bits: dim 1 is low (bits [0, bits1)), dim 0 high.
  int shift[2] = {log2_exact(shape[1]), 0};
  SharedEncoding e;
  e.image.assign(cbits + obits, 0);
  // Storage order: the contiguous dimension's bits within a block lowest, then the
  // other dimension's, then the block index.
  for (int i = 0; i < block_bits; ++i) e.image[shift[contig] + i] = 1u << i;
  for (int i = 0; i < obits; ++i) e.image[shift[other] + i] = 1u << (block_bits + i);
  for (int i = block_bits; i < cbits; ++i) e.image[shift[contig] + i] = 1u << (obits + i);
  int chunk_elems = 16 / elem_bytes;
  int64_t chunks = (int64_t{1} << block_bits) / chunk_elems;
  if (chunks < 2) return e;
  int phase_bits = log2_exact(std::min<int64_t>(8, chunks));
  int per_phase_bits = 3 - phase_bits;
  int chunk_shift = log2_exact(chunk_elems);
  for (int i = 0; i < phase_bits && per_phase_bits + i < obits; ++i)
    e.image[shift[other] + per_phase_bits + i] ^= 1u << (chunk_shift + i);
  return e;
}

int swizzle_bytes(const Shape& shape, int contig, int elem_bytes) {
  if (shape.size() != 2) return 0;
  int64_t row = std::min<int64_t>(128, shape[contig] * elem_bytes);
  return row >= 32 ? static_cast<int>(row) : 0;
}

int contiguous_dim(const LinearLayout& l) {
  int best = l.rank() - 1;
  for (int d = l.rank() - 1; d >= 0; --d)
    if (l.contiguous_regs(d) > l.contiguous_regs(best)) best = d;
  return best;
}

}  // namespace tilefuse::nvptx
