#pragma once
// One benchmark per gallery kernel: allocate random inputs on the device, time the
// kernel, and check sampled rows against the interpreter (or a C++ reference).
#include <string>
#include <utility>
#include <vector>

#include "tilefuse/ir/dtype.hpp"

namespace tilefuse::bench {

struct Result {
  double ms = 0;       // median kernel time
  double gbs = 0;      // bytes that must move / time
  double tflops = 0;   // attention and matmul
  bool check_ok = false;
  double max_err = 0;  // worst sampled error relative to the tolerance (<= 1 passes)
  std::string config;
};

std::string runner_names();  // comma-separated
std::vector<std::string> default_shapes(const std::string& kernel);
Result run_one(const std::string& kernel, DType dtype, const std::string& shape,
               const std::vector<std::pair<std::string, int64_t>>& sets, int reps);

// runners_training_elementwise.cpp: swiglu, swiglu_bwd, softmax_bwd.
bool is_training_elementwise(const std::string& kernel);
Result run_training_elementwise(const std::string& kernel, DType dtype, const std::string& shape,
                                const std::vector<std::pair<std::string, int64_t>>& sets, int reps);

// runners_norms_backward.cpp: rmsnorm_bwd, add_rmsnorm_bwd, layernorm_bwd (shape ROWSxCOLS).
bool is_norm_backward(const std::string& kernel);
Result run_norm_backward(const std::string& kernel, DType dtype, const std::string& shape,
                         const std::vector<std::pair<std::string, int64_t>>& sets, int reps);

// runners_cross_entropy.cpp: cross_entropy (shape MxV).
Result run_cross_entropy(DType dtype, const std::string& shape, const std::vector<std::pair<std::string, int64_t>>& sets,
                         int reps);
std::vector<std::string> cross_entropy_shapes();

}  // namespace tilefuse::bench
