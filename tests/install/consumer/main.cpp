// Traces a small kernel, prints its IR, runs it on the interpreter and checks it; the
// includes reach headers from every installed include folder.
#include <cstdio>
#include <string>
#include <vector>

#include <tilefuse/cuda/cuda.hpp>
#include <tilefuse/kernels/kernels.hpp>
#include <tilefuse/tilefuse.hpp>

using namespace tilefuse;

auto axpy = kernel("axpy", {"y", "x", "a", "n"}, [](Ptr<float> y, Ptr<const float> x, F32 a, I32 n, Meta<"BLOCK"> BLOCK) {
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(y + offs, a * load(x + offs, mask) + load(y + offs, mask), mask);
});

int main() {
  const int n = 100;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = float(i), y[i] = 1.0f;
  Config cfg{{"BLOCK", 32}};
  std::printf("%s", ir::to_string(*axpy.specialize(cfg)).c_str());
  axpy.launch(grid(cdiv(n, 32)), cfg, y, x, 2.0f, n);
  for (int i = 0; i < n; ++i)
    if (y[i] != 2.0f * i + 1.0f) {
      std::printf("axpy: y[%d] = %g, want %g\n", i, y[i], 2.0f * i + 1.0f);
      return 1;
    }

  std::vector<float> in(3 * 5, 1.0f), out(in.size());  // a gallery kernel through its host function
  kernels::softmax(out, in, 3, 5);
  if (out[7] < 0.19f || out[7] > 0.21f) {
    std::printf("softmax: %g, want 0.2\n", out[7]);
    return 1;
  }

  std::string why;
  bool gpu = cuda::driver_available(&why);
  std::printf("consumer OK (GPU driver: %s)\n", gpu ? "yes" : why.c_str());
  return 0;
}
