#pragma once
// The columns a row program holds: CHUNKS tiles of BLOCK columns (meta-parameters),
// after those of the lower-ranked programs of its cluster. Several equal chunks cover
// a width that is not a power of two with few masked lanes (5000 columns as 5 x 1024,
// not one 8192 tile); their values are combined elementwise before each reduction, so
// a reduction still exchanges one value per thread between warps.
#include <string>
#include <vector>

#include "tilefuse/kernels/common.hpp"
#include "tilefuse/tilefuse.hpp"

namespace tilefuse::kernels {

struct RowChunks {
  std::vector<Tile<int32_t, 1>> cols;  // column indices of chunk i
  std::vector<Tile<bool, 1>> mask;     // cols[i] < n_cols

  RowChunks(const I32& rank, int64_t block, int64_t chunks, const I32& n_cols, TF_HERE) {
    if (chunks < 1) (void)row_cover(Config{{"BLOCK", block}, {"CHUNKS", chunks}});  // the user error
    auto first = rank * (block * chunks);
    for (int64_t i = 0; i < chunks; ++i) {
      cols.push_back(first + i * block + arange(0, block, loc));
      mask.push_back(cols.back() < n_cols);
    }
  }
};

// a[0] op a[1] op ... (elementwise), e.g. the sum of the chunks before a row reduction.
template <class V, class Op>
auto combine(const std::vector<V>& a, Op op) {
  V acc = a.front();
  for (size_t i = 1; i < a.size(); ++i) acc = op(acc, a[i]);
  return acc;
}

}  // namespace tilefuse::kernels
