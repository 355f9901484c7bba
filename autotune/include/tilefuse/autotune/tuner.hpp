#pragma once
// The tuning engine behind autotune(): for one problem (a launch, its key and the
// buffers it writes) and a space, prune by the space's predicates, compile the
// remaining configs in parallel, prune by what the compiled kernels need (shared
// memory, registers spilled), time the rest, and merge every result into the cache.
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tilefuse/autotune/bench.hpp"
#include "tilefuse/autotune/cache.hpp"
#include "tilefuse/autotune/space.hpp"
#include "tilefuse/dsl/kernel.hpp"
#include "tilefuse/nvptx/compiled_kernel.hpp"

namespace tilefuse::tuning {

// TILEFUSE_AUTOTUNE: off (heuristics only), cached (use the cache, tune on a miss;
// the default) or always (re-time every config once per process and key).
enum class Mode : uint8_t { Off, Cached, Always };
Mode mode();                          // set_mode()'s value, else the knob (read once)
void set_mode(std::optional<Mode> m);  // nullopt: back to TILEFUSE_AUTOTUNE, re-read
const char* mode_name(Mode m);
Mode parse_mode(const std::string& s);  // UserError for anything but off/cached/always

// The kernel launch a config compiles to: lets the tuner compile and check configs
// before running anything.
struct Specialization {
  const KernelBase* kernel = nullptr;
  Config config;               // as launched (host functions may add meta-parameters)
  std::vector<ArgValue> args;  // runtime arguments in signature order (alignment/divisibility matter)
};
template <class... A>
Specialization specialization(const KernelBase& k, const Config& cfg, const A&... args) {
  return Specialization{&k, cfg, {tilefuse::detail::to_arg(args)...}};
}

// One tuning problem: what to run, what it is keyed by, what it writes.
struct Problem {
  std::string name;       // cache entry name (kernel or tuned function)
  std::string signature;  // its parameter types
  std::vector<std::string> key_names;
  Key key;
  std::function<void(const Config&)> run;             // enqueue one launch with a config
  std::function<Specialization(const Config&)> plan;  // optional: enables compile-time pruning
  std::vector<ArgValue> outputs;                      // device memory the launches write
  // Configs timed besides the space's (not subject to its predicates): the heuristic's
  // first (heuristic_candidates), so that tuning never settles on a config slower than
  // the untuned launch.
  std::vector<Config> extra;
  KeyView view() const { return KeyView{key_names, key}; }
};

// What a tuner times besides its space for the heuristic's config `h`: h first, and
// where h asks ptxas for n programs per SM, n - 1 and n + 1 — the register cap is where
// the row heuristics miss most (bench/NOTES.md: 1 program per SM is worth 1-7 points of
// copy bandwidth either way); a neighbour that spills is pruned like any config.
inline std::vector<Config> heuristic_candidates(const Config& h) {
  std::vector<Config> c{h};
  if (int n = h.min_programs_per_sm; n > 0)
    for (int m : {n - 1, n + 1})
      if (m >= 1 && m <= 32) c.push_back(Config(h).set("min_programs_per_sm", m));
  return c;
}

struct Trial {
  Config config;
  double ms = -1;          // median time (timed or cached)
  int reps = 0;
  std::string pruned;      // why not timed ("" when timed or to be timed)
  std::string note;        // e.g. "spills 64 bytes" on a config kept because every config spills
  bool cached = false;     // result taken from the cache
  int shared_bytes = -1;   // dynamic shared memory, when compiled
  int registers = -1;      // registers per thread, when loaded (or from ptxas offline)
  bool timed() const { return pruned.empty() && ms >= 0; }
};

struct TuneResult {
  EntryId id;
  Config best;
  double best_ms = -1;
  std::vector<Trial> trials;  // one per config of the space, in the space's order
  int timed = 0, compiled = 0, from_cache = 0, pruned = 0;
  double seconds = 0;          // wall time of tune()
  double compile_seconds = 0;  // of which compiling
};

struct Progress {
  size_t done = 0, total = 0;     // configs timed so far / to time
  const Config* current = nullptr;
  double elapsed_s = 0;           // since timing began
};

struct TuneSettings {
  Mode mode = Mode::Cached;  // Always: ignore cached timings and re-time every config
  BenchOptions bench;
  int compile_threads = 0;   // 0: one per hardware thread
  TuningCache* cache = &TuningCache::global();  // nullptr: memory only
  std::function<void(const Progress&)> progress;
  bool print = false;        // one line with the choice (TILEFUSE_PRINT_AUTOTUNING)
};
TuneSettings default_settings();  // mode() and the print knob applied

// Tunes `p` on the current GPU. Holds tune_mutex() throughout (timings from two
// threads at once would be noise). Spilling configs are pruned unless every candidate
// spills: then they are timed (with a note), as slow code beats none. Throws UserError
// when no config of the space is valid (listing the reasons), or when there is no GPU.
TuneResult tune(const Problem& p, const Space& s, const TuneSettings& settings);
std::recursive_mutex& tune_mutex();

// The GPU-free part, for dry runs: predicates, then compilation for `target`, pruning
// configs whose shared memory exceeds the limit, that do not compile, or (when `spills`
// is given, e.g. by running ptxas) that spill registers. A trial with an empty
// `pruned` is one tune() would time.
struct OfflineOptions {
  nvptx::Target target{90, true};
  int shared_limit = 0;  // bytes; 0: the usual limit for the target (default_shared_limit)
  int max_threads = 1024;
  // Spilled bytes (stores + loads) of a compiled kernel, and its registers through *regs.
  std::function<int(const nvptx::CompiledKernel&, int* regs)> spills;
  int threads = 0;
};
std::vector<Trial> plan_offline(const Problem& p, const Space& s, const OfflineOptions& o);
int default_shared_limit(const nvptx::Target& t);  // opt-in shared memory per block of that family

// "(Ptr<bf16>, Ptr<const bf16>, I32)": a kernel's signature as entries record it.
std::string signature_of(const KernelBase& k);

// Counters for tests and tools (process-wide).
struct Stats {
  uint64_t tunes = 0;          // tune() calls that timed at least one config
  uint64_t cache_hits = 0;     // tune() calls answered from the cache alone
  uint64_t configs_timed = 0;
  uint64_t configs_compiled = 0;
  uint64_t fallbacks = 0;      // launches that used the heuristic (off, no GPU, interpreter)
};
Stats stats();
namespace detail {
void count_fallback();
void print_choice(const TuneResult& r);
}  // namespace detail

}  // namespace tilefuse::tuning
