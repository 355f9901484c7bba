#include "tilefuse/nvptx/linear_layout.hpp"

#include <array>

#include "tilefuse/ir/errors.hpp"

namespace tilefuse::nvptx {
namespace {

// An incrementally built basis of a GF(2) vector space (pivot = highest set bit).
class Span {
 public:
  // Adds v; returns false when v is already in the span (including v == 0).
  bool insert(uint32_t v) {
    for (int b = 31; b >= 0 && v; --b) {
      if (!(v >> b & 1)) continue;
      if (!pivot_[b]) {
        pivot_[b] = v;
        ++rank_;
        return true;
      }
      v ^= pivot_[b];
    }
    return false;
  }
  int rank() const { return rank_; }

 private:
  std::array<uint32_t, 32> pivot_{};
  int rank_ = 0;
};

}  // namespace

int log2_exact(int64_t v) {
  TF_ASSERT(v > 0 && (v & (v - 1)) == 0, "expected a power of two, got " + std::to_string(v));
  return 63 - __builtin_clzll(static_cast<uint64_t>(v));
}

LinearLayout::LinearLayout(Shape shape, std::vector<uint32_t> regs, std::vector<uint32_t> lanes,
                           std::vector<uint32_t> warps)
    : shape_(std::move(shape)), regs_(std::move(regs)), lanes_(std::move(lanes)), warps_(std::move(warps)) {
  int r = rank();
  shifts_.assign(r, 0);
  bits_.assign(r, 0);
  int shift = 0;
  for (int d = r - 1; d >= 0; --d) {
    bits_[d] = log2_exact(shape_[d]);
    shifts_[d] = shift;
    shift += bits_[d];
  }
  total_bits_ = shift;
  TF_ASSERT(total_bits_ <= 30, "tile too large for a layout");
  for (auto* v : {&regs_, &lanes_, &warps_})
    for (uint32_t b : *v) TF_ASSERT(b < numel(), "layout basis outside the tile");
}

const std::vector<uint32_t>& LinearLayout::bases(HwDim d) const {
  switch (d) {
    case HwDim::Reg: return regs_;
    case HwDim::Lane: return lanes_;
    case HwDim::Warp: return warps_;
  }
  return regs_;
}

std::vector<int64_t> LinearLayout::coords(uint32_t flat) const {
  std::vector<int64_t> c(rank());
  for (int d = 0; d < rank(); ++d) c[d] = coord(flat, d);
  return c;
}

uint32_t LinearLayout::flatten(const std::vector<int64_t>& c) const {
  uint32_t f = 0;
  for (int d = 0; d < rank(); ++d) f |= static_cast<uint32_t>(c[d]) << shifts_[d];
  return f;
}

uint32_t LinearLayout::thread_bits(int d) const {
  uint32_t m = 0;
  for (uint32_t b : lanes_) m |= static_cast<uint32_t>(coord(b, d));
  for (uint32_t b : warps_) m |= static_cast<uint32_t>(coord(b, d));
  return m;
}

template <class Fn>
LinearLayout LinearLayout::remap(const Shape& s, Fn fn, bool dedupe_regs, std::vector<int>* kept) const {
  LinearLayout shape_only(s, {}, {}, {});
  auto map = [&](uint32_t b) { return shape_only.flatten(fn(coords(b))); };
  std::vector<uint32_t> r, l, w;
  Span span;
  if (kept) kept->clear();
  for (size_t i = 0; i < regs_.size(); ++i) {
    uint32_t nb = map(regs_[i]);
    if (dedupe_regs && !span.insert(nb)) continue;
    r.push_back(nb);
    if (kept) kept->push_back(static_cast<int>(i));
  }
  for (uint32_t b : lanes_) l.push_back(map(b));
  for (uint32_t b : warps_) w.push_back(map(b));
  return LinearLayout(s, std::move(r), std::move(l), std::move(w));
}

LinearLayout LinearLayout::project_to(const Shape& s) const {
  TF_ASSERT(static_cast<int>(s.size()) == rank(), "project_to: rank mismatch");
  for (int d = 0; d < rank(); ++d)
    TF_ASSERT(s[d] == shape_[d] || s[d] == 1, "project_to: not a broadcast source shape");
  return remap(
      s,
      [&](std::vector<int64_t> c) {
        for (int d = 0; d < rank(); ++d)
          if (s[d] == 1) c[d] = 0;
        return c;
      },
      true, nullptr);
}

LinearLayout LinearLayout::drop_dim(int axis, std::vector<int>* kept) const {
  Shape s = shape_;
  s.erase(s.begin() + axis);
  return remap(
      s,
      [&](std::vector<int64_t> c) {
        c.erase(c.begin() + axis);
        return c;
      },
      true, kept);
}

LinearLayout LinearLayout::insert_dim(int axis) const {
  Shape s = shape_;
  s.insert(s.begin() + axis, 1);
  return remap(
      s,
      [&](std::vector<int64_t> c) {
        c.insert(c.begin() + axis, 0);
        return c;
      },
      false, nullptr);
}

LinearLayout LinearLayout::reshape(const Shape& s) const {
  LinearLayout out(s, regs_, lanes_, warps_);
  TF_ASSERT(out.numel() == numel(), "reshape changes the number of elements");
  return out;
}

LinearLayout LinearLayout::permute(const std::vector<int>& perm) const {
  Shape s(rank());
  for (int i = 0; i < rank(); ++i) s[i] = shape_[perm[i]];
  return remap(
      s,
      [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> o(c.size());
        for (int i = 0; i < rank(); ++i) o[i] = c[perm[i]];
        return o;
      },
      false, nullptr);
}

LinearLayout::Redundancy LinearLayout::redundancy() const {
  Redundancy red;
  Span span;
  for (size_t i = 0; i < regs_.size(); ++i)
    if (!span.insert(regs_[i])) red.reg |= 1u << i;
  for (size_t i = 0; i < lanes_.size(); ++i)
    if (!span.insert(lanes_[i])) red.lane |= 1u << i;
  for (size_t i = 0; i < warps_.size(); ++i)
    if (!span.insert(warps_[i])) red.warp |= 1u << i;
  return red;
}

bool LinearLayout::covers_tile() const {
  Span span;
  for (auto* v : {&regs_, &lanes_, &warps_})
    for (uint32_t b : *v) span.insert(b);
  return span.rank() == total_bits_;
}

int LinearLayout::contiguous_regs(int d) const {
  if (d < 0 || d >= rank()) return 1;
  int k = 0;
  while (k < static_cast<int>(regs_.size()) && k < bits_[d] && regs_[k] == (1u << (shifts_[d] + k))) ++k;
  return 1 << k;
}

std::string LinearLayout::basis_str(uint32_t b) const {
  std::string s = "(";
  for (int d = 0; d < rank(); ++d) s += (d ? "," : "") + std::to_string(coord(b, d));
  return s + ")";
}

std::string LinearLayout::str() const {
  auto list = [&](const std::vector<uint32_t>& bs) {
    std::string s = "[";
    for (size_t i = 0; i < bs.size(); ++i) s += (i ? "," : "") + basis_str(bs[i]);
    return s + "]";
  };
  return "reg=" + list(regs_) + " lane=" + list(lanes_) + " warp=" + list(warps_);
}

std::vector<std::vector<std::vector<int64_t>>> owned_coords(const LinearLayout& l) {
  int threads = l.num_lanes() * l.num_warps();
  std::vector<std::vector<std::vector<int64_t>>> out(threads);
  for (int t = 0; t < threads; ++t) {
    uint32_t lane = t % l.num_lanes(), warp = t / l.num_lanes();
    for (int r = 0; r < l.num_regs(); ++r) out[t].push_back(l.coords(l.apply(r, lane, warp)));
  }
  return out;
}

// ---------------------------------------------------------------------------------
// Blocked layouts

std::vector<int> row_major_order(int rank) {
  std::vector<int> o(rank);
  for (int i = 0; i < rank; ++i) o[i] = rank - 1 - i;
  return o;
}

std::string Blocked::str() const {
  auto v = [](const std::vector<int>& x) {
    std::string s = "[";
    for (size_t i = 0; i < x.size(); ++i) s += (i ? "," : "") + std::to_string(x[i]);
    return s + "]";
  };
  return "blocked{spt=" + v(size_per_thread) + ", tpw=" + v(threads_per_warp) + ", wpc=" + v(warps_per_cta) +
         ", order=" + v(order) + "}";
}

LinearLayout to_linear(const Blocked& b, const Shape& shape) {
  int r = static_cast<int>(shape.size());
  TF_ASSERT(static_cast<int>(b.order.size()) == r, "blocked layout rank mismatch");
  LinearLayout ref(shape, {}, {}, {});
  std::vector<int64_t> covered(r, 1);
  auto unit = [&](int d, int64_t v) {
    std::vector<int64_t> c(r, 0);
    c[d] = v;
    return ref.flatten(c);
  };
  std::vector<uint32_t> regs, lanes, warps;
  for (int d : b.order)
    for (int i = 1; i < b.size_per_thread[d]; i *= 2)
      if (covered[d] < shape[d]) {
        regs.push_back(unit(d, covered[d]));
        covered[d] *= 2;
      }
  auto hw = [&](const std::vector<int>& per_dim, std::vector<uint32_t>& out) {
    for (int d : b.order)
      for (int i = 1; i < per_dim[d]; i *= 2) {
        if (covered[d] < shape[d]) {
          out.push_back(unit(d, covered[d]));
          covered[d] *= 2;
        } else {
          out.push_back(0);  // replicated
        }
      }
  };
  hw(b.threads_per_warp, lanes);
  hw(b.warps_per_cta, warps);
  for (int d : b.order)
    while (covered[d] < shape[d]) {
      regs.push_back(unit(d, covered[d]));
      covered[d] *= 2;
    }
  return LinearLayout(shape, std::move(regs), std::move(lanes), std::move(warps));
}

Blocked make_blocked(const Shape& shape, int num_warps, const std::vector<int>& order, int vec) {
  int r = static_cast<int>(shape.size());
  Blocked b;
  b.order = order;
  b.size_per_thread.assign(r, 1);
  b.threads_per_warp.assign(r, 1);
  b.warps_per_cta.assign(r, 1);
  if (r == 0) return b;
  int fast = order[0];
  b.size_per_thread[fast] = static_cast<int>(std::min<int64_t>(std::max(vec, 1), shape[fast]));
  int lanes = 32;
  for (int d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / b.size_per_thread[d]);
    b.threads_per_warp[d] = static_cast<int>(std::min<int64_t>(lanes, room));
    lanes /= b.threads_per_warp[d];
  }
  b.threads_per_warp[fast] *= lanes;
  int warps = num_warps;
  for (int d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / (int64_t(b.size_per_thread[d]) * b.threads_per_warp[d]));
    b.warps_per_cta[d] = static_cast<int>(std::min<int64_t>(warps, room));
    warps /= b.warps_per_cta[d];
  }
  b.warps_per_cta[fast] *= warps;
  return b;
}

}  // namespace tilefuse::nvptx
