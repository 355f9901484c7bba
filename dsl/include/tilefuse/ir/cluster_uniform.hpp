#pragma once
// Which values every program of a thread-block cluster computes alike, and so where a
// cluster reduction may sit: each program must reach it the same number of times, or the
// cluster waits forever for the peers' values.
#include <string>

#include "tilefuse/ir/ir.hpp"

namespace tilefuse::ir {

// Whether every program of a cluster of `cluster_size` programs along grid x computes the
// same value `v`: constants, kernel arguments, num_programs, program_id along y and z,
// program_id(0) shifted right by at least log2(cluster_size) (cluster_id), results of
// cluster reductions, induction variables of loops with such bounds, and scalar
// arithmetic, casts and comparisons of those.
bool cluster_uniform(const Value* v, int cluster_size);

// Whether every program of a cluster reaches the ops of `block` equally often: each
// region around it is a for loop with cluster-uniform bounds or an if_ branch on a
// cluster-uniform condition. Otherwise `why` (when given) says which region is not.
bool reached_by_whole_cluster(const Block& block, int cluster_size, std::string* why = nullptr);

}  // namespace tilefuse::ir
