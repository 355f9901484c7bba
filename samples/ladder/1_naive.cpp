// Ladder, step 1: log(relu(x + b)) the naive way, one small kernel per operation.
// Each kernel reads its input from memory and writes its result back: three kernels,
// six passes over the tensor. Step 2 fuses them.
#include <tilefuse/tilefuse.hpp>

#include "ladder.hpp"

using namespace tilefuse;

// Every program handles BLOCK consecutive elements; the mask covers the tail.
auto add_bias = kernel("add_bias", [](Ptr<float> t, Ptr<const float> x, Ptr<const float> b, I32 n, I32 n_cols,
                                      Meta<"BLOCK"> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(t + offs, load(x + offs, mask) + load(b + offs % n_cols, mask), mask);
});
auto relu = kernel("relu", [](Ptr<float> u, Ptr<const float> t, I32 n, Meta<"BLOCK"> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(u + offs, maximum(load(t + offs, mask), 0.0f), mask);
});
auto log_kernel = kernel("log", [](Ptr<float> y, Ptr<const float> u, I32 n, Meta<"BLOCK"> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(y + offs, log(load(u + offs, mask, 1.0f)), mask);
});

int main() {
  const int rows = 100, cols = 300, n = rows * cols;
  auto x = random_floats(n, 1), b = random_floats(cols, 2);
  std::vector<float> t(n), u(n), y(n);

  Config cfg{{"BLOCK", 256}};
  auto g = grid(cdiv(n, 256));
  add_bias.launch(g, cfg, t, x, b, n, cols);
  relu.launch(g, cfg, u, t, n);
  log_kernel.launch(g, cfg, y, u, n);

  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = std::log(std::max(x[i] + b[i % cols], 0.0f));
  return check("step 1, three kernels", y, want) ? 0 : 1;
}
