#include "tilefuse/autotune/space.hpp"

#include <algorithm>

#include "tilefuse/ir/errors.hpp"

namespace tilefuse::tuning {

Key& Key::add(int64_t v) {
  TF_ASSERT(nv_ < kMax, "tuning key holds at most 8 values");
  v_[nv_++] = v;
  return *this;
}

Key& Key::add_dtype(DType d) {
  TF_ASSERT(nd_ < kMax, "tuning key holds at most 8 dtypes");
  d_[nd_++] = d;
  return *this;
}

std::string Key::str(const std::vector<std::string>& names) const {
  std::string s;
  for (int i = 0; i < nv_; ++i) {
    if (!s.empty()) s += ' ';
    s += (i < static_cast<int>(names.size()) ? names[i] : "k" + std::to_string(i)) + "=" + std::to_string(v_[i]);
  }
  if (nd_) {
    if (!s.empty()) s += ' ';
    s += "dtypes=";
    for (int i = 0; i < nd_; ++i) s += (i ? "," : "") + std::string(name(d_[i]));
  }
  return s;
}

int64_t KeyView::operator[](std::string_view n) const {
  for (size_t i = 0; i < names.size() && static_cast<int>(i) < key.size(); ++i)
    if (names[i] == n) return key[static_cast<int>(i)];
  internal_error("tuning key '" + key.str(names) + "' has no value named '" + std::string(n) + "'");
}

Axis values(std::string name, std::vector<int64_t> v) { return Axis{std::move(name), std::move(v)}; }

Axis pow2_range(std::string name, int64_t lo, int64_t hi) {
  if (lo < 1 || pow2(lo) != lo || pow2(hi) != hi || hi < lo)
    user_error("pow2_range(\"" + name + "\", " + std::to_string(lo) + ", " + std::to_string(hi) +
                   "): bounds must be powers of two with lo <= hi",
               SourceLoc{}, "Use e.g. pow2_range(\"BLOCK\", 1024, 16384)");
  Axis a{std::move(name), {}};
  for (int64_t v = lo; v <= hi; v <<= 1) a.values.push_back(v);
  return a;
}

Space Space::product(std::vector<Axis> axes, Config base) {
  std::vector<Config> out{std::move(base)};
  for (auto& ax : axes) {
    if (ax.values.empty())
      user_error("autotune space axis '" + ax.name + "' has no values", SourceLoc{}, "Give each axis at least one value");
    std::vector<Config> next;
    for (auto& c : out)
      for (int64_t v : ax.values) next.push_back(Config(c).set(ax.name, v));
    out = std::move(next);
  }
  return Space(std::move(out));
}

Space& Space::prune_if(Predicate p) {
  rules_.push_back(std::move(p));
  return *this;
}

Space& Space::add(const Config& c) {
  if (std::find(configs_.begin(), configs_.end(), c) == configs_.end()) configs_.push_back(c);
  return *this;
}

std::string Space::check(const Config& cfg, const KeyView& key) const {
  for (auto& r : rules_)
    if (std::string why = r(cfg, key); !why.empty()) return why;
  return "";
}

}  // namespace tilefuse::tuning
