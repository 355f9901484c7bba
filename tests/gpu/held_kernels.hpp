#pragma once
// Kernels whose loads ask to stay in shared memory (Cache::KeepInShared, OpPlan::held),
// shared by the GPU differential test and the offline PTX test.
#include <tilefuse/tilefuse.hpp>

namespace held {

using namespace tilefuse;

// One row per program, in place: y = (x - max) * sum(exp(x - max)) / n over CHUNKS tiles
// of BLOCK columns, each kept in shared memory and read by three ops (the max, the sum
// and the output); masked lanes read -7.5 (stored into the buffer, not read from memory).
// The output overwrites the row the copies read: the compiler must let them land first.
template <class T>
const auto& held_rows_kernel() {
  static auto k = kernel("held_rows", {"xy", "n_cols"},
      [](Ptr<T> xy, I32 n_cols, Meta<"BLOCK"> BLOCK, Meta<"CHUNKS", int64_t, 1> CHUNKS) {
        auto row = xy + program_id(0).cast<i64>() * n_cols;
        std::vector<Tile<T, 1>> x;
        std::vector<Tile<int32_t, 1>> cols;
        for (int64_t i = 0; i < CHUNKS; ++i) {
          cols.push_back(i * BLOCK + arange(0, BLOCK));
          x.push_back(load(row + cols[i], cols[i] < n_cols, -7.5f, Cache::KeepInShared));
        }
        auto m = max(x[0].template cast<f32>(), 0);
        for (int64_t i = 1; i < CHUNKS; ++i) m = maximum(m, max(x[i].template cast<f32>(), 0));
        auto s = sum(exp(x[0].template cast<f32>() - m), 0);
        for (int64_t i = 1; i < CHUNKS; ++i) s = s + sum(exp(x[i].template cast<f32>() - m), 0);
        auto scale = s / n_cols.template cast<f32>();
        for (int64_t i = 0; i < CHUNKS; ++i)
          store(row + cols[i], ((x[i].template cast<f32>() - m) * scale).template cast<T>(), cols[i] < n_cols);
      });
  return k;
}

// Held loads in the two arms of a branch (even rows: x + 2 max, odd rows: x - min), the
// tiles read inside the arm and, for the even rows, in a loop below it too.
template <class T>
const auto& held_branch_kernel() {
  static auto k = kernel("held_branch", {"out", "x", "n_cols", "reps"},
      [](Ptr<float> out, Ptr<const T> x, I32 n_cols, I32 reps, Meta<"BLOCK"> BLOCK) {
        auto r = program_id(0);
        auto cols = arange(0, BLOCK);
        auto mask = cols < n_cols;
        auto off = r.cast<i64>() * n_cols + cols;
        if_(r % 2 == 0,
            [&] {
              auto v = load(x + off, mask, 0.0f, Cache::KeepInShared);
              auto acc = v.template cast<f32>() + 2.0f * max(v.template cast<f32>(), 0);
              for_range(0, reps, 1, [&](I32) { acc = acc + v.template cast<f32>() * 0.5f; });
              store(out + off, acc, mask);
            },
            [&] {
              auto v = load(x + off, mask, 0.0f, Cache::KeepInShared);
              store(out + off, v.template cast<f32>() - min(v.template cast<f32>(), 0), mask);
            });
      });
  return k;
}

// The held tile's source overwritten before anything reads the tile: x = -1 is stored
// first, then out = 2 * (x as loaded). The store must wait for every copy (of every
// thread) to land.
template <class T>
const auto& held_overwrite_kernel() {
  static auto k = kernel("held_overwrite", {"out", "x", "n"},
      [](Ptr<float> out, Ptr<T> x, I32 n, Meta<"BLOCK"> BLOCK) {
        auto c = program_id(0) * BLOCK + arange(0, BLOCK);
        auto m = c < n;
        auto v = load(x + c, m, 0.0f, Cache::KeepInShared);
        store(x + c, full<f32>({BLOCK}, -1.0f).template cast<T>(), m);
        store(out + c, v.template cast<f32>() * 2.0f, m);
      });
  return k;
}

// A held tile read only inside a branch (flag > 0), then a reduction after the branch
// whose scratch may take the tile's bytes; and a reader of the held tile that also reads
// a load whose runs are checked at run time (n not known to divide 4), which the
// compiler would otherwise defer past the buffer's life.
const auto& held_branch_only_kernel() {
  static auto k = kernel("held_branch_only", {"out", "x", "y", "n", "flag"},
      [](Ptr<float> out, Ptr<const float> x, Ptr<const float> y, I32 n, I32 flag, Meta<"BLOCK"> BLOCK) {
        auto c = arange(0, BLOCK);
        auto base = program_id(0).cast<i64>() * (2 * BLOCK);
        auto v = load(x + base + c, c < BLOCK, 0.0f, Cache::KeepInShared);
        auto d = load(y + base + c, c < n, 0.0f);
        if_(flag > 0, [&] { store(out + base + c, v * 2.0f); });
        auto s = max(load(y + base + BLOCK + c), 0);
        store(out + base + BLOCK + c, v + d + s);
      });
  return k;
}

}  // namespace held
