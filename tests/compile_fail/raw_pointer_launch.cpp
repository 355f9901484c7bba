// A raw pointer carries no size, so the interpreter could not bounds-check it.
// expect: launch: raw pointers carry no size
#include <tilefuse/tilefuse.hpp>
using namespace tilefuse;

void run(float* data, int n) {
  auto k = kernel("raw_pointer_launch", [](Ptr<f32> out, I32 n) { store(out, scalar<f32>(1.0)); });
  k.launch(grid(1), {}, data, n);  // <- error
}
