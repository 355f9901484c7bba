#pragma once
// What the autotuner searches and what it remembers results by.
//
// Key: the launch arguments a tuning result depends on (shape values, usually bucketed,
// plus the dtypes of the buffers). Fixed-size and allocation-free, because the tuned
// launch path builds and hashes one on every call.
//
// Space: a list of Configs, or the product of axes (BLOCK in {1024..16384} x num_warps
// in {4, 8, 16} ...), with predicates that prune configs for a key before anything is
// compiled, each with its reason ("BLOCK 1024 < 4096 columns").
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "tilefuse/dsl/config.hpp"
#include "tilefuse/ir/dtype.hpp"

namespace tilefuse::tuning {

// Bucketing of key values: exact, or rounded up to a power of two (results for
// 3000 and 4096 columns are then shared).
constexpr int64_t exact(int64_t v) { return v; }
constexpr int64_t pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

class Key {
 public:
  static constexpr int kMax = 8;  // values and dtypes, each

  Key() = default;
  Key(std::initializer_list<int64_t> values) {
    for (int64_t v : values) add(v);
  }
  Key& add(int64_t v);            // throws InternalError past kMax
  Key& add_dtype(DType d);

  int size() const { return nv_; }
  int64_t operator[](int i) const { return v_[i]; }
  int num_dtypes() const { return nd_; }
  DType dtype(int i) const { return d_[i]; }

  uint64_t hash() const {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t(nv_) << 8 | nd_);
    for (int i = 0; i < nv_; ++i) h = (h ^ static_cast<uint64_t>(v_[i])) * 0x100000001B3ull, h ^= h >> 29;
    for (int i = 0; i < nd_; ++i) h = (h ^ static_cast<uint64_t>(d_[i])) * 0x100000001B3ull;
    return h;
  }
  bool operator==(const Key& o) const {
    if (nv_ != o.nv_ || nd_ != o.nd_) return false;
    for (int i = 0; i < nv_; ++i)
      if (v_[i] != o.v_[i]) return false;
    for (int i = 0; i < nd_; ++i)
      if (d_[i] != o.d_[i]) return false;
    return true;
  }

  // "n_cols=4096 dtypes=bf16,bf16" (names of the values; missing names print as k0, k1...).
  std::string str(const std::vector<std::string>& names) const;

 private:
  int64_t v_[kMax]{};
  DType d_[kMax]{};
  uint8_t nv_ = 0, nd_ = 0;
};

struct KeyHash {
  size_t operator()(const Key& k) const { return static_cast<size_t>(k.hash()); }
};

// A key with its value names, as predicates and heuristics see it.
struct KeyView {
  const std::vector<std::string>& names;
  const Key& key;
  // The value named `name`; InternalError when the key has no such value.
  int64_t operator[](std::string_view name) const;
  std::string str() const { return key.str(names); }
};

// One axis of a product space.
struct Axis {
  std::string name;  // a meta-parameter, "num_warps" or "num_stages"
  std::vector<int64_t> values;
};
Axis values(std::string name, std::vector<int64_t> v);
Axis pow2_range(std::string name, int64_t lo, int64_t hi);  // lo, 2 lo, ..., hi (lo and hi powers of 2)

// Returns why `cfg` is invalid for the key, or "" to keep it.
using Predicate = std::function<std::string(const Config& cfg, const KeyView& key)>;

class Space {
 public:
  Space() = default;
  Space(std::vector<Config> configs) : configs_(std::move(configs)) {}  // an explicit list
  // Every combination of the axes, on top of `base` (meta-parameters the axes leave fixed).
  static Space product(std::vector<Axis> axes, Config base = {});

  // Adds a pruning rule; rules run in order and the first reason wins.
  Space& prune_if(Predicate p);
  // Extends the list (the union of two spaces keeps the first copy of a config).
  Space& add(const Config& c);

  const std::vector<Config>& configs() const { return configs_; }
  size_t size() const { return configs_.size(); }
  // The first reason a predicate gives for `cfg`, or "".
  std::string check(const Config& cfg, const KeyView& key) const;

 private:
  std::vector<Config> configs_;
  std::vector<Predicate> rules_;
};

}  // namespace tilefuse::tuning
