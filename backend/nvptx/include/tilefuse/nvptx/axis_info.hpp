#pragma once
// Axis-info analysis: for every integer, boolean and pointer value, per dimension,
//  - contiguity: length of runs of consecutive values (x, x+1, ...) along the dimension,
//    runs starting at coordinates that are multiples of the length;
//  - divisibility: a power of two dividing the first value of every such run (for
//    pointers, in bytes: the known alignment);
//  - constancy: length of aligned runs of equal values along the dimension.
// Scalars are treated as tiles of shape [1]. These facts decide vector widths of loads
// and stores (see gpu_plan.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tilefuse/ir/ir.hpp"

namespace tilefuse::nvptx {

struct AxisInfo {
  std::vector<int64_t> contiguity, divisibility, constancy;
  std::optional<int64_t> value;  // known constant (integers only)

  static constexpr int64_t kMaxDivisibility = int64_t(1) << 30;
  static AxisInfo unknown(int rank);
  int rank() const { return static_cast<int>(contiguity.size()); }
  bool operator==(const AxisInfo&) const = default;
  std::string str() const;  // "{contig=[1,64], div=[16,16], const=[1,1]}"
};

class AxisInfoMap {
 public:
  const AxisInfo& get(const ir::Value* v) const;
  void set(const ir::Value* v, AxisInfo ai) { info_[v] = std::move(ai); }
  bool has(const ir::Value* v) const { return info_.count(v) != 0; }

 private:
  std::unordered_map<const ir::Value*, AxisInfo> info_;
};

AxisInfoMap analyze_axis_info(const ir::Function& f);

int64_t highest_pow2_divisor(int64_t v);  // of |v|; kMaxDivisibility for 0

}  // namespace tilefuse::nvptx
