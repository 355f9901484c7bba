#pragma once
// A launch configuration: meta-parameter values + num_warps + num_stages + the
// thread-block cluster size. {{"BLOCK", 1024}, num_warps(4)} builds one.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>

namespace tilefuse {

struct ConfigItem {
  std::string name;
  int64_t value;
  ConfigItem(const char* n, int64_t v) : name(n), value(v) {}
  ConfigItem(std::string n, int64_t v) : name(std::move(n)), value(v) {}
};
inline ConfigItem num_warps(int w) { return {"num_warps", w}; }
inline ConfigItem num_stages(int s) { return {"num_stages", s}; }
// Programs per thread-block cluster along grid x (sm_90+): they are scheduled together
// and can combine values with cluster_sum/cluster_max/cluster_min.
inline ConfigItem cluster(int c) { return {"cluster", c}; }
// The most programs a cluster may have. Up to 16 (on sm_90+) they form a thread-block
// cluster and exchange through distributed shared memory; larger clusters (and any
// cluster before sm_90) exchange through global memory, and the GPU must hold all of a
// cluster's programs at once (the launch checks).
inline constexpr int kMaxClusterPrograms = 1024;
// sm_90a: a producer warpgroup (4 more warps) issues the TMA copies of the pipelined
// loops while the num_warps warps compute, where the kernel's copies qualify.
inline ConfigItem warp_specialize(bool on = true) { return {"warp_specialize", on ? 1 : 0}; }
// Persistent programs: the launch starts only as many programs as fit on the GPU at
// once and each loops over the grid's programs (program_id and num_programs keep their
// meaning). Where a kernel's one pipelined loop is fed by TMA, the copies of the next
// program's first iterations are issued before the current one's epilogue.
inline ConfigItem persistent(bool on = true) { return {"persistent", on ? 1 : 0}; }
// At least n programs resident per SM (1-32; 0: the compiler's choice): the PTX asks
// ptxas for it (.minnctapersm), which caps the registers per thread at about
// 64K / (n x threads per program). More programs in flight for latency-bound kernels,
// at the risk of spills where the cap is below what the program needs.
inline ConfigItem min_programs_per_sm(int n) { return {"min_programs_per_sm", n}; }

struct Config {
  std::map<std::string, int64_t> meta;
  int num_warps = 4;
  int num_stages = 1;
  int cluster = 1;
  int warp_specialize = 0;
  int persistent = 0;
  int min_programs_per_sm = 0;

  Config() = default;
  Config(std::initializer_list<ConfigItem> items) {
    for (auto& it : items) set(it.name, it.value);
  }
  Config& set(const std::string& name, int64_t v) {
    if (name == "num_warps") num_warps = static_cast<int>(v);
    else if (name == "num_stages") num_stages = static_cast<int>(v);
    else if (name == "cluster") cluster = static_cast<int>(v);
    else if (name == "warp_specialize") warp_specialize = static_cast<int>(v);
    else if (name == "persistent") persistent = static_cast<int>(v);
    else if (name == "min_programs_per_sm") min_programs_per_sm = static_cast<int>(v);
    else meta[name] = v;
    return *this;
  }
  bool has(const std::string& name) const { return meta.count(name) != 0; }
  int64_t get(const std::string& name) const { return meta.at(name); }
  // "BLOCK=1024 num_warps=4 num_stages=1[ cluster=4][ warp_specialize=1][ persistent=1]
  // [ min_programs_per_sm=2]": stable, also
  // the cache-key form.
  std::string str() const;
  bool operator==(const Config& o) const = default;
  bool operator<(const Config& o) const { return str() < o.str(); }
};

}  // namespace tilefuse
