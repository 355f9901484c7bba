#pragma once
// Internal interfaces between the planning passes (no LLVM here).
#include <unordered_map>

#include "tilefuse/nvptx/gpu_plan.hpp"

namespace tilefuse::nvptx {

// Layouts fixed by the op itself (coalesced memory accesses, the dot accumulator).
using AnchorMap = std::unordered_map<const ir::Op*, LayoutRef>;

// Coalescing: a blocked layout per memory op over a tile pointer, with as many
// contiguous elements per thread as axis info allows (up to 16 bytes).
void choose_memory_anchors(const ir::Function& f, GpuPlan& plan, AnchorMap& anchors);
// After layouts are assigned: the vector width of every load/store, explaining losses
// on stderr when TILEFUSE_DEBUG is set.
void choose_vector_widths(const ir::Function& f, GpuPlan& plan);

bool is_memory_op(ir::OpKind k);
// The dimension along which a pointer tile is most contiguous (ties: the row-major
// preference), and the elements one access can move along `dim` as far as the pointer's
// contiguity and proven alignment allow (at most 16 bytes; no realigning).
int contiguous_dim(const AxisInfo& ai, int rank);
int aligned_pointer_vec(const ir::Value* ptr, const AxisInfo& ai, int dim);
// How contiguous runs of unknown alignment move (knob TILEFUSE_UNALIGNED): as realigned
// 16-byte chunks, element by element in a layout where consecutive lanes hold
// consecutive elements (scalar), or in the widest layout of related accesses (narrow).
enum class UnalignedMode { Realign, Scalar, Narrow };
UnalignedMode unaligned_mode();
bool realign_enabled();
bool checked_runs_enabled();
bool is_elementwise(ir::OpKind k);
// A constant +0 (a tile of zeros): a dot's accumulator the MMA need not read.
bool is_zero_constant(const ir::Value* v);
// The kernel argument a pointer value is computed from (through pointer arithmetic and
// shape ops), or null when not known (a loaded pointer, a select between two).
const ir::Value* base_argument(const ir::Value* v);

}  // namespace tilefuse::nvptx

namespace tilefuse::nvptx {
// Element type reductions and scans accumulate in (f32 for f16/bf16 sums).
DType accumulate_dtype(const ir::Op& reduce_or_scan);
}  // namespace tilefuse::nvptx
