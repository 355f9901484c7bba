// Ladder, step 3: a row reduction. One program per row walks the row BLOCK columns
// at a time; `acc` is assigned inside the for_range body, so it becomes a
// loop-carried value. sum(acc, 0) then reduces the tile to one number.
#include <tilefuse/tilefuse.hpp>

#include "ladder.hpp"

using namespace tilefuse;

auto row_sum = kernel("row_sum", {"out", "in", "n_cols"},
    [](Ptr<float> out, Ptr<const float> in, I32 n_cols, Meta<"BLOCK"> BLOCK) {
      auto row = program_id(0);
      auto in_row = in + row * n_cols;
      auto cols = arange(0, BLOCK);
      auto acc = zeros<f32>({BLOCK});
      for_range(0, n_cols, BLOCK, [&](I32 start) {
        auto c = start + cols;
        acc = acc + load(in_row + c, c < n_cols);
      });
      store(out + row, sum(acc, 0));
    });

int main() {
  const int rows = 50, cols = 1000;  // rows longer than one tile, with a masked tail
  auto x = random_floats(rows * cols, 3);
  std::vector<float> y(rows);

  Config cfg{{"BLOCK", 128}};
  std::printf("%s\n", ir::to_string(*row_sum.specialize(cfg)).c_str());  // the loop and its iter arg
  row_sum.launch(grid(rows), cfg, y, x, cols);

  std::vector<float> want(rows);
  for (int r = 0; r < rows; ++r) {
    double s = 0;
    for (int c = 0; c < cols; ++c) s += x[r * cols + c];
    want[r] = float(s);
  }
  return check("step 3, row sums", y, want, 1e-4, 1e-5) ? 0 : 1;
}
