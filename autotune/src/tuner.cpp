#include "tilefuse/autotune/tuner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#include "compile.hpp"
#include "tilefuse/cuda/kernel_cache.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::tuning {
namespace {

std::atomic<int> g_mode{-1};  // -1: not read from the knob yet
std::atomic<uint64_t> g_tunes{0}, g_hits{0}, g_timed{0}, g_compiled{0}, g_fallbacks{0};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  return l.size() > 160 ? l.substr(0, 157) + "..." : l;
}

std::string threads_reason(const Config& c, int max_threads) {
  if (32 * c.num_warps <= max_threads) return "";
  return "num_warps " + std::to_string(c.num_warps) + ": " + std::to_string(32 * c.num_warps) + " threads > " +
         std::to_string(max_threads) + " per block";
}

std::string shared_reason(int bytes, int limit) {
  if (bytes <= limit) return "";
  return "shared memory " + detail::kb(bytes) + " > " + detail::kb(limit) + " per block";
}

std::string spill_reason(int bytes) { return bytes > 0 ? "spills " + std::to_string(bytes) + " bytes" : ""; }

// When no config is left and the new ones at `idx` were all pruned for spilling,
// keeps those with a note.
void keep_spills_if_nothing_else(std::vector<Trial>& trials, const std::vector<size_t>& idx) {
  for (auto& t : trials)
    if (t.pruned.empty()) return;
  for (size_t i : idx)
    if (trials[i].pruned.rfind("spills ", 0) != 0) return;
  for (size_t i : idx) trials[i].note = std::move(trials[i].pruned), trials[i].pruned.clear();
}

// Copies of the memory the launches write, restored before each config's runs and at
// the end, so tuning never changes the caller's data.
class Snapshot {
 public:
  Snapshot(const Problem& p) {
    for (auto& a : p.outputs) {
      if (a.kind != ArgValue::Kind::DevicePtr || a.bytes == 0)
        user_error("autotuning '" + p.name + "': an output is not a device buffer of known size", SourceLoc{},
                   "Declare outputs that are DeviceBuffer/DevicePtr arguments");
      saved_.emplace_back(a, DeviceBuffer<uint8_t>(a.bytes));
      cuda::memcpy_dtod(saved_.back().second.data(), a.ptr, a.bytes);
    }
  }
  void restore() const {
    for (auto& [a, buf] : saved_) cuda::memcpy_dtod(a.ptr, buf.data(), a.bytes);
  }

 private:
  std::vector<std::pair<ArgValue, DeviceBuffer<uint8_t>>> saved_;
};

// Prunes the configs at `todo` by what their compiled and loaded kernels need.
void compile_and_check(const Problem& p, std::vector<Trial>& trials, const std::vector<size_t>& todo,
                       const TuneSettings& st, TuneResult& r) {
  const auto& dev = cuda::device_info();
  std::vector<Config> cfgs;
  for (size_t i : todo) cfgs.push_back(trials[i].config);
  auto t0 = std::chrono::steady_clock::now();
  auto comp = detail::compile_all(p, cfgs, dev.target(), st.compile_threads);
  for (size_t j = 0; j < todo.size(); ++j) {
    Trial& t = trials[todo[j]];
    if (!comp[j].ok) {
      t.pruned = "compile error: " + comp[j].error;
      continue;
    }
    ++r.compiled;
    t.shared_bytes = comp[j].kernel.shared_bytes;
    t.pruned = shared_reason(t.shared_bytes, dev.shared_per_block_optin);
    if (!t.pruned.empty()) continue;
    try {
      const auto& lk = cuda::KernelCache::global().get(comp[j].key, [&] { return comp[j].kernel; });
      t.registers = lk.num_regs();
      t.pruned = spill_reason(lk.local_bytes());
    } catch (const std::exception& e) {
      t.pruned = "load failed: " + first_line(e.what());
    }
  }
  keep_spills_if_nothing_else(trials, todo);
  g_compiled += r.compiled;
  r.compile_seconds = seconds_since(t0);
}

}  // namespace

Mode parse_mode(const std::string& s) {
  if (s.empty() || s == "cached") return Mode::Cached;
  if (s == "off" || s == "0") return Mode::Off;
  if (s == "always") return Mode::Always;
  user_error("TILEFUSE_AUTOTUNE=" + s + " is not a tuning mode", SourceLoc{}, "Use off, cached or always");
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Off: return "off";
    case Mode::Cached: return "cached";
    case Mode::Always: return "always";
  }
  return "?";
}

Mode mode() {
  int v = g_mode.load(std::memory_order_relaxed);
  if (v >= 0) return static_cast<Mode>(v);
  Mode m = parse_mode(knob("TILEFUSE_AUTOTUNE"));
  g_mode.store(static_cast<int>(m), std::memory_order_relaxed);
  return m;
}

void set_mode(std::optional<Mode> m) { g_mode.store(m ? static_cast<int>(*m) : -1); }

TuneSettings default_settings() {
  TuneSettings s;
  s.mode = mode();
  s.print = knob_on("TILEFUSE_PRINT_AUTOTUNING");
  return s;
}

std::recursive_mutex& tune_mutex() {
  static std::recursive_mutex m;
  return m;
}

std::string signature_of(const KernelBase& k) {
  std::string s = "(";
  for (auto& p : k.params())
    if (p.kind != ParamInfo::Kind::Meta) s += (s.size() > 1 ? ", " : "") + p.type_str();
  return s + ")";
}

int default_shared_limit(const nvptx::Target& t) {
  if (t.sm == 80 || t.sm == 87) return 163 * 1024;
  if (t.sm == 86 || t.sm == 89) return 99 * 1024;
  return 227 * 1024;  // sm_90 and later
}

TuneResult tune(const Problem& p, const Space& s, const TuneSettings& st) {
  std::string why;
  if (!gpu_available(&why))
    user_error("autotuning '" + p.name + "' needs a GPU, but " + why, SourceLoc{},
               "Set TILEFUSE_AUTOTUNE=off to launch with the heuristic configs");
  std::lock_guard lock(tune_mutex());
  auto t0 = std::chrono::steady_clock::now();
  const auto& dev = cuda::device_info();
  TuneResult r;
  r.id = EntryId{p.name, p.signature, p.key.str(p.key_names), dev.name, dev.compute_capability(),
                 compiler_version(), kBenchMethod};
  std::optional<Entry> cached;
  if (st.cache && st.mode != Mode::Always) cached = st.cache->load(r.id);

  std::vector<size_t> todo;
  std::vector<Config> candidates = s.configs();
  const size_t in_space = candidates.size();
  for (const Config& e : p.extra)
    if (std::find(candidates.begin(), candidates.end(), e) == candidates.end()) candidates.push_back(e);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Config& cfg = candidates[i];
    Trial t;
    t.config = cfg;
    // The heuristic's configs are named wherever they are (in the space or added), and
    // timed even where the space's predicates would prune them.
    const bool extra = std::find(p.extra.begin(), p.extra.end(), cfg) != p.extra.end();
    if (i < in_space && !extra) t.pruned = s.check(cfg, p.view());
    if (extra && cfg == p.extra.front()) t.note = "the heuristic's config";
    else if (extra)
      t.note = "the heuristic's config with min_programs_per_sm = " + std::to_string(cfg.min_programs_per_sm);
    if (t.pruned.empty()) t.pruned = threads_reason(cfg, dev.max_threads_per_block);
    const Record* rec = t.pruned.empty() && cached ? cached->find(cfg) : nullptr;
    if (rec) {
      t.ms = rec->ms, t.reps = rec->reps, t.pruned = rec->pruned, t.cached = true;
      ++r.from_cache;
    } else if (t.pruned.empty()) {
      todo.push_back(r.trials.size());
    }
    r.trials.push_back(std::move(t));
  }

  if (!todo.empty()) {
    if (p.plan) compile_and_check(p, r.trials, todo, st, r);
    std::vector<size_t> run;
    for (size_t i : todo)
      if (r.trials[i].pruned.empty()) run.push_back(i);
    Snapshot snap(p);
    auto t1 = std::chrono::steady_clock::now();
    for (size_t k = 0; k < run.size(); ++k) {
      Trial& t = r.trials[run[k]];
      if (st.progress) st.progress(Progress{k, run.size(), &t.config, seconds_since(t1)});
      snap.restore();
      try {
        Measurement m = measure([&] { p.run(t.config); }, st.bench);
        t.ms = m.ms, t.reps = m.reps;
        ++r.timed;
      } catch (const std::exception& e) {
        t.pruned = "launch failed: " + first_line(e.what());
      }
    }
    snap.restore();
    if (st.progress) st.progress(Progress{run.size(), run.size(), nullptr, seconds_since(t1)});
    g_timed += r.timed;
    ++g_tunes;
    if (st.cache) {
      Entry e{r.id, {}, {}};
      for (size_t i : todo) e.records.push_back(Record{r.trials[i].config, r.trials[i].ms, r.trials[i].reps, r.trials[i].pruned});
      st.cache->store(e);
    }
  } else {
    ++g_hits;
  }

  std::string reasons;
  for (auto& t : r.trials) {
    if (t.timed() && (r.best_ms < 0 || t.ms < r.best_ms)) r.best = t.config, r.best_ms = t.ms;
    if (!t.pruned.empty()) {
      ++r.pruned;
      if (reasons.size() < 300) reasons += "\n  " + t.config.str() + ": " + t.pruned;
    }
  }
  r.seconds = seconds_since(t0);
  if (r.best_ms < 0)
    user_error("autotuning '" + p.name + "' (" + r.id.key + "): no config of the space is valid:" + reasons,
               SourceLoc{}, "Widen the space or relax its predicates");
  if (st.print) detail::print_choice(r);
  return r;
}

std::vector<Trial> plan_offline(const Problem& p, const Space& s, const OfflineOptions& o) {
  int limit = o.shared_limit > 0 ? o.shared_limit : default_shared_limit(o.target);
  std::vector<Trial> trials;
  std::vector<Config> cfgs;
  std::vector<size_t> todo;
  for (auto& cfg : s.configs()) {
    Trial t;
    t.config = cfg;
    t.pruned = s.check(cfg, p.view());
    if (t.pruned.empty()) t.pruned = threads_reason(cfg, o.max_threads);
    if (t.pruned.empty()) todo.push_back(trials.size()), cfgs.push_back(cfg);
    trials.push_back(std::move(t));
  }
  if (!p.plan || todo.empty()) return trials;
  auto comp = detail::compile_all(p, cfgs, o.target, o.threads);
  // Spill checks (ptxas) take longer than compiling: run them on the pool too.
  detail::parallel_for(todo.size(), o.threads, [&](size_t j) {
    Trial& t = trials[todo[j]];
    if (!comp[j].ok) {
      t.pruned = "compile error: " + comp[j].error;
      return;
    }
    t.shared_bytes = comp[j].kernel.shared_bytes;
    t.pruned = shared_reason(t.shared_bytes, limit);
    if (t.pruned.empty() && o.spills) {
      int n = 0;
      try {
        n = o.spills(comp[j].kernel, &t.registers);
      } catch (const std::exception& e) {
        t.pruned = "spill check failed: " + first_line(e.what());
      }
      if (t.pruned.empty()) t.pruned = spill_reason(n);
    }
  });
  keep_spills_if_nothing_else(trials, todo);
  return trials;
}

Stats stats() { return Stats{g_tunes, g_hits, g_timed, g_compiled, g_fallbacks}; }

namespace detail {

void count_fallback() { ++g_fallbacks; }

void print_choice(const TuneResult& r) {
  std::fprintf(stderr, "[tilefuse autotune] %s %s: %s (%.4f ms; %d timed, %d cached, %d pruned; %.2f s)\n",
               r.id.kernel.c_str(), r.id.key.c_str(), r.best.str().c_str(), r.best_ms, r.timed, r.from_cache,
               r.pruned, r.seconds);
}

}  // namespace detail
}  // namespace tilefuse::tuning
