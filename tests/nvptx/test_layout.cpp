// Linear layouts: every layout covers its tile exactly (each element owned, with the
// replication its zero bases imply), derived layouts agree with the coordinates of
// their sources, and the owner rule visits every element once.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "tilefuse/nvptx/linear_layout.hpp"

using namespace tilefuse;
using namespace tilefuse::nvptx;

namespace {

// Checks that `l` covers its tile with uniform replication; returns the replication.
int check_coverage(const LinearLayout& l) {
  std::map<std::vector<int64_t>, int> count;
  bool in_range = true;
  for (auto& regs : owned_coords(l))
    for (auto& c : regs) {
      for (int d = 0; d < l.rank(); ++d) in_range = in_range && c[d] >= 0 && c[d] < l.shape()[d];
      ++count[c];
    }
  CHECK(in_range);
  CHECK(count.size() == l.numel());
  auto red = l.redundancy();
  int redundant = __builtin_popcount(red.reg) + __builtin_popcount(red.lane) + __builtin_popcount(red.warp);
  int expected = 1 << redundant;
  int uneven = 0;
  for (auto& [c, n] : count) uneven += n != expected;
  CHECK(uneven == 0);
  // Owner rule: (reg, lane, warp) with no redundant bit set sees each element once.
  std::map<uint32_t, int> once;
  for (int w = 0; w < l.num_warps(); ++w)
    for (int ln = 0; ln < l.num_lanes(); ++ln)
      for (int r = 0; r < l.num_regs(); ++r)
        if (!(r & red.reg) && !(ln & red.lane) && !(w & red.warp)) ++once[l.apply(r, ln, w)];
  CHECK(once.size() == l.numel());
  int twice = 0;
  for (auto& [e, n] : once) twice += n != 1;
  CHECK(twice == 0);
  return expected;
}

}  // namespace

TEST_CASE("blocked layouts cover their tiles with the expected replication") {
  std::vector<Shape> shapes = {{16}, {128}, {1024}, {4096}, {1, 1024}, {64, 64}, {16, 16}, {128, 32},
                               {2, 8}, {32, 128}, {1, 1}, {4, 4, 8}, {256, 2}, {8, 1}};
  for (auto& s : shapes)
    for (int warps : {1, 2, 4, 8})
      for (int vec : {1, 2, 4, 8, 16}) {
        int rank = static_cast<int>(s.size());
        std::vector<std::vector<int>> orders = {row_major_order(rank)};
        if (rank == 2) orders.push_back({0, 1});
        for (auto& order : orders) {
          Blocked b = make_blocked(s, warps, order, vec);
          LinearLayout l = to_linear(b, s);
          INFO(ir::shape_str(s) << " " << b.str() << " " << l.str());
          CHECK(l.num_lanes() == 32);
          CHECK(l.num_warps() == warps);
          CHECK(l.covers_tile());
          int rep = check_coverage(l);
          int zero_bases = 0;
          for (auto* bs : {&l.regs(), &l.lanes(), &l.warps()})
            for (uint32_t z : *bs) zero_bases += z == 0;
          CHECK(rep == (1 << zero_bases));
          int64_t threads = 32 * warps;
          int64_t numel = l.numel();
          // Replication only where the tile has fewer elements than threads hold.
          CHECK(rep == std::max<int64_t>(1, threads * l.num_regs() / numel));
          if (vec == 1) CHECK(rep == std::max<int64_t>(1, threads / numel));
          // Registers never hold duplicates.
          CHECK(l.redundancy().reg == 0);
          // The first registers are the requested contiguous run along order[0].
          CHECK(l.contiguous_regs(order[0]) == std::min<int64_t>(b.size_per_thread[order[0]], s[order[0]]));
        }
      }
}

TEST_CASE("owned coordinates of a blocked layout follow its definition") {
  // [4, 16] with spt [1,2], tpw [4,8], one warp: thread t holds (t/8, 2*(t%8) + {0,1}).
  Blocked b{{1, 2}, {4, 8}, {1, 1}, {1, 0}};
  LinearLayout l = to_linear(b, {4, 16});
  auto owned = owned_coords(l);
  for (int t = 0; t < 32; ++t) {
    REQUIRE(owned[t].size() == 2);
    CHECK(owned[t][0] == std::vector<int64_t>{t / 8, 2 * (t % 8)});
    CHECK(owned[t][1] == std::vector<int64_t>{t / 8, 2 * (t % 8) + 1});
  }
  // Larger shape: the pattern repeats in registers (rows + 4 for register bit 1).
  LinearLayout big = to_linear(b, {8, 16});
  CHECK(big.num_regs() == 4);
  CHECK(big.coords(big.apply(2, 5, 0)) == std::vector<int64_t>{4, 10});
}

TEST_CASE("slices, projections, reshapes and transposes relabel consistently") {
  std::vector<std::pair<Shape, Blocked>> cases = {
      {{64, 64}, make_blocked({64, 64}, 4, {1, 0}, 8)},
      {{16, 128}, make_blocked({16, 128}, 8, {1, 0}, 4)},
      {{128, 16}, make_blocked({128, 16}, 4, {0, 1}, 4)},
      {{2, 4, 64}, make_blocked({2, 4, 64}, 2, {2, 1, 0}, 2)}};
  for (auto& [s, b] : cases) {
    LinearLayout l = to_linear(b, s);
    INFO(ir::shape_str(s) << " " << l.str());
    for (int axis = 0; axis < l.rank(); ++axis) {
      std::vector<int> kept;
      LinearLayout sl = l.drop_dim(axis, &kept);
      check_coverage(sl);
      // A slice register holds the parent's element with the axis removed.
      for (size_t j = 0; j < kept.size(); ++j) {
        auto pc = l.coords(l.regs()[kept[j]]);
        pc.erase(pc.begin() + axis);
        CHECK(sl.coords(sl.regs()[j]) == pc);
      }
      Shape ps = s;
      ps[axis] = 1;
      LinearLayout pr = l.project_to(ps);
      check_coverage(pr);
      // Every thread's projected elements are exactly what it needs for a broadcast.
      int missing = 0;
      for (int t = 0; t < 32 * l.num_warps(); ++t) {
        uint32_t lane = t % 32, warp = t / 32;
        std::set<uint32_t> have;
        for (int r = 0; r < pr.num_regs(); ++r) have.insert(pr.apply(r, lane, warp));
        for (int r = 0; r < l.num_regs(); ++r) {
          auto c = l.coords(l.apply(r, lane, warp));
          c[axis] = 0;
          missing += !have.count(pr.flatten(c));
        }
      }
      CHECK(missing == 0);
      LinearLayout ex = sl.insert_dim(axis);
      check_coverage(ex);
    }
    // reshape to 1-D keeps flat indices; transposes move coordinates.
    LinearLayout flat = l.reshape({static_cast<int64_t>(l.numel())});
    check_coverage(flat);
    for (int r = 0; r < l.num_regs(); ++r) CHECK(flat.apply(r, 3, 0) == l.apply(r, 3, 0));
    if (l.rank() == 2) {
      LinearLayout t = l.permute({1, 0});
      check_coverage(t);
      for (int r = 0; r < l.num_regs(); ++r) {
        auto c = l.coords(l.apply(r, 7, 0));
        auto ct = t.coords(t.apply(r, 7, 0));
        CHECK(ct == std::vector<int64_t>{c[1], c[0]});
      }
    }
  }
}

TEST_CASE("a fully reduced layout is one register, replicated everywhere") {
  LinearLayout l = to_linear(make_blocked({1024}, 4, {0}, 8), {1024});
  LinearLayout s = l.drop_dim(0);
  CHECK(s.rank() == 0);
  CHECK(s.num_regs() == 1);
  CHECK(s.numel() == 1);
  check_coverage(s);
}

TEST_CASE("layouts with dependent (non-zero) bases still have a unique owner per element") {
  // A swizzle-like layout: lane bit 0 maps to (0,1) ^ a register basis; lane bit 4 repeats lane bit 0.
  LinearLayout l({4, 8}, {1, 8}, {2, 4, 16, 3, 2}, {});
  CHECK(l.covers_tile());
  auto red = l.redundancy();
  CHECK(red.lane == 0b11000u);
  CHECK(check_coverage(l) == 4);
}
