#pragma once
// One tuning sweep of tilefuse-tune: a gallery entry point (the same tuner object its
// tuned_* function uses, so the sweep fills the cache entries launches read), a dtype
// and a shape, with its arguments. Without a device the arguments are placeholder
// device addresses: enough to specialize and compile, never dereferenced.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tilefuse/autotune/tuner.hpp"

namespace tilefuse::tune_tool {

struct Sweep {
  std::string kernel, shape;
  DType dtype = DType::bf16;
  double bytes = 0;  // moved per launch (each input read once, each output written once)
  double flops = 0;  // attention and matmul
  tuning::Problem problem;
  const tuning::Space* space = nullptr;
  std::function<tuning::TuneResult(const tuning::TuneSettings&)> tune;  // GPU only
  virtual ~Sweep() = default;
};

std::vector<std::string> sweep_kernels();                           // names tilefuse-tune knows
std::vector<std::string> default_shapes(const std::string& kernel);  // when none are given
// Sizes in the kernel's shape form: 2 (ROWSxCOLS), 3 (MxNxK for matmul), 4 (BxHxNxD).
int shape_dims(const std::string& kernel);
std::vector<DType> default_dtypes(const std::string& kernel);
// UserError for unknown kernels, bad shapes or unsupported dtypes.
std::unique_ptr<Sweep> make_sweep(const std::string& kernel, DType dtype, const std::string& shape, bool on_device);

}  // namespace tilefuse::tune_tool
