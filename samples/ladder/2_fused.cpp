// Ladder, step 2: the same log(relu(x + b)) as one kernel. The intermediate values
// stay in registers: x and b are read once, y is written once (two tensor passes
// instead of six). The kernel body is step 1's three bodies run back to back.
#include <tilefuse/tilefuse.hpp>

#include "ladder.hpp"

using namespace tilefuse;

auto bias_relu_log = kernel("bias_relu_log", [](Ptr<float> y, Ptr<const float> x, Ptr<const float> b, I32 n,
                                                I32 n_cols, Meta<"BLOCK"> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask) + load(b + offs % n_cols, mask);
  store(y + offs, log(maximum(v, 0.0f)), mask);
});

int main() {
  const int rows = 100, cols = 300, n = rows * cols;
  auto x = random_floats(n, 1), b = random_floats(cols, 2);
  std::vector<float> y(n);

  Config cfg{{"BLOCK", 256}};
  bias_relu_log.launch(grid(cdiv(n, 256)), cfg, y, x, b, n, cols);

  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = std::log(std::max(x[i] + b[i % cols], 0.0f));
  return check("step 2, one fused kernel", y, want) ? 0 : 1;
}
