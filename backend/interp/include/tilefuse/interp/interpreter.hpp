#pragma once
// The CPU interpreter: reference semantics of every tile IR op, run over a whole grid
// on host memory. It is the oracle for the GPU backend and the default executor when
// no GPU is present.
#include <vector>

#include "tilefuse/ir/ir.hpp"
#include "tilefuse/ir/kernel_args.hpp"

namespace tilefuse::interp {

// Runs `f` once per program id in `grid`, in order (x fastest, then y, then z).
// Pointer parameters take ArgValue::host buffers; every access through them is
// bounds-checked against the buffer it was derived from. An unmasked out-of-bounds
// access raises UserError naming the op, the program id, the offending element index
// and the user's source line.
void run(const ir::Function& f, Grid grid, const std::vector<ArgValue>& args);

}  // namespace tilefuse::interp
