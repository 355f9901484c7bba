// Control: the same mistakes written correctly compile, which proves the harness
// (include paths, flags) works and that each failure comes from the mistake alone.
// expect: <compiles>
#include <tilefuse/tilefuse.hpp>
#include <vector>
using namespace tilefuse;

auto k = kernel("control_ok", [](Ptr<bf16> out, Ptr<const f32> in, Ptr<const i32> bits, I32 n, Meta<"B"> B) {
  auto offs = arange(0, B);
  auto m = offs < n;
  auto x = load(in + offs, m);
  store(out + offs, (x * 2.0f).cast<bf16>(), m);  // cast before storing into bf16
  auto b = load(bits + offs, m);
  auto y = (b & 0xff) | (b << 2);  // bitwise ops on ints
  auto c = dot(x.col().cast<f16>() * 1, x.row().cast<f16>());  // rank-2 operands
  store(out + offs, (sum(c, 0) + y.cast<f32>()).cast<bf16>(), m);
  auto p = in + 3;  // pointer + integer
  store(out + offs, load(p + offs, m).cast<bf16>(), m);
});

void run(std::vector<bf16>& out, const std::vector<float>& in, const std::vector<int32_t>& bits, int n) {
  k.launch(grid(1), {{"B", 16}}, out, in, bits, n);  // host memory as vectors
}
