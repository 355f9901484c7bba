#pragma once
// autotune(kernel_or_function, space, key...): a callable that launches with the best
// config for its arguments' key. On the first call for a key it looks in the cache
// and tunes what is missing (see tuner.hpp); afterwards a call costs a key hash and a
// shared-lock lookup on top of the launch.
//
//   // a kernel: key from named scalar parameters; outputs are its non-const pointers
//   auto sm = autotune(softmax_kernel, space, {{"n_cols", tuning::pow2}},
//                      [](const Config&, auto&, auto&, int64_t rows, auto&&...) { return Grid(rows); });
//   sm(out, in, rows, cols, cols, cols);
//
//   // a host function taking the config first: key from key_fn, outputs declared
//   auto f = autotune([](const Config& c, auto& y, auto& x, int64_t n) { ... }, space,
//                     [](auto&, auto&, int64_t n) { return tuning::Key{tuning::pow2(n)}; },
//                     TuneOptions{.name = "my_op", .key_names = {"n"}, .outputs = {0}});
//
// Buffer dtypes are always part of the key. Host buffers (interpreter runs), mode
// off and machines without a GPU use the fallback config and never tune.
#include <array>
#include <deque>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include "tilefuse/autotune/tuner.hpp"

namespace tilefuse {

struct TuneOptions {
  std::string name;                      // function form: cache entry name (required)
  std::vector<std::string> key_names;    // names of the key's values
  std::vector<int> outputs;              // function form: indices of the arguments it writes
  // The config when not tuning; default: the first config the space's predicates keep.
  std::function<Config(const tuning::KeyView&)> fallback;
  tuning::BenchOptions bench;
};

// One key parameter of the kernel form: a scalar parameter's name and its bucketing.
struct KeyParam {
  std::string name;
  int64_t (*bucket)(int64_t) = tuning::exact;
};

namespace tuning::detail {

struct NoPlan {};
bool gpu_ok();  // gpu_available(), asked once per process

// The argument as a launch sees it, or nullopt for anything that is not a buffer or scalar.
template <class A>
std::optional<ArgValue> arg_of(const A& a) {
  using U = std::remove_cvref_t<A>;
  if constexpr (requires { { a.arg() } -> std::same_as<ArgValue>; }) return a.arg();
  else if constexpr (std::is_arithmetic_v<U>) return tilefuse::detail::to_arg(a);
  else if constexpr (!std::is_pointer_v<U> && requires { std::data(a); std::size(a); }) return tilefuse::detail::to_arg(a);
  else return std::nullopt;
}

std::string signature_of_args(const std::optional<ArgValue>* args, size_t n);
Config first_valid(const Space& s, const KeyView& k);  // UserError for an empty space

// Configs by key. Stored configs never move or die (forced re-tunes append), so a
// reference returned to a launching thread stays valid.
class Choices {
 public:
  const Config* find(const Key& k) const {
    std::shared_lock l(mu_);
    auto it = map_.find(k);
    return it == map_.end() ? nullptr : it->second;
  }
  const Config& remember(const Key& k, Config c) {
    std::unique_lock l(mu_);
    store_.push_back(std::move(c));
    return *(map_[k] = &store_.back());
  }
  void forget() {  // not while other threads launch through the same object
    std::unique_lock l(mu_);
    map_.clear();
    store_.clear();
  }

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<Key, const Config*, KeyHash> map_;
  std::deque<Config> store_;
};

}  // namespace tuning::detail

template <class Fn, class KeyFn, class PlanFn>
class Tuned {
  struct State {
    explicit State(tuning::Space s) : space(std::move(s)) {}
    tuning::Space space;
    tuning::detail::Choices chosen, fallbacks;
  };

 public:
  Tuned(Fn fn, tuning::Space space, KeyFn key_fn, TuneOptions opts, PlanFn plan, std::string signature = {})
      : fn_(std::move(fn)), key_fn_(std::move(key_fn)), plan_(std::move(plan)), opts_(std::move(opts)),
        signature_(std::move(signature)), st_(std::make_shared<State>(std::move(space))) {}

  // Launches with the config chosen for the arguments' key.
  template <class... A>
  void operator()(A&&... a) const {
    fn_(config_for(a...), std::forward<A>(a)...);
  }

  // The config a launch with these arguments uses (tuning on a cache miss).
  template <class... A>
  const Config& config_for(A&&... a) const {
    std::array<std::optional<ArgValue>, sizeof...(A)> av{tuning::detail::arg_of(a)...};
    tuning::Key k = key_of(av, a...);
    bool host = false;
    for (auto& v : av) host |= v && v->kind == ArgValue::Kind::HostBuffer;
    tuning::Mode m = tuning::mode();
    if (host || m == tuning::Mode::Off) return fallback_for(k);
    if (const Config* c = st_->chosen.find(k)) return *c;
    if (!tuning::detail::gpu_ok()) return fallback_for(k);
    std::lock_guard lock(tuning::tune_mutex());
    if (const Config* c = st_->chosen.find(k)) return *c;  // tuned by another thread meanwhile
    tuning::TuneSettings s = tuning::default_settings();
    s.mode = m;
    s.bench = opts_.bench;
    return st_->chosen.remember(k, tuning::tune(problem_for(k, av, a...), st_->space, s).best);
  }

  // Tunes the arguments' key now with explicit settings (tools, tests) and remembers the result.
  template <class... A>
  tuning::TuneResult tune(const tuning::TuneSettings& s, A&&... a) const {
    std::array<std::optional<ArgValue>, sizeof...(A)> av{tuning::detail::arg_of(a)...};
    tuning::Key k = key_of(av, a...);
    auto r = tuning::tune(problem_for(k, av, a...), st_->space, s);
    st_->chosen.remember(k, r.best);
    return r;
  }

  // Pins `c` as the choice for these arguments' key in this process (e.g. a config
  // picked offline); launches then skip the cache and tuning for that key.
  template <class... A>
  void remember(const Config& c, A&&... a) const {
    std::array<std::optional<ArgValue>, sizeof...(A)> av{tuning::detail::arg_of(a)...};
    st_->chosen.remember(key_of(av, a...), c);
  }

  // The tuning problem for these arguments (references them: use while they live).
  template <class... A>
  tuning::Problem problem(A&&... a) const {
    std::array<std::optional<ArgValue>, sizeof...(A)> av{tuning::detail::arg_of(a)...};
    return problem_for(key_of(av, a...), av, a...);
  }

  const tuning::Space& space() const { return st_->space; }
  const TuneOptions& options() const { return opts_; }
  // Drops the in-memory choices (the next launch per key consults the disk cache again).
  void forget() const {
    st_->chosen.forget();
    st_->fallbacks.forget();
  }

 private:
  template <size_t N, class... A>
  tuning::Key key_of(const std::array<std::optional<ArgValue>, N>& av, A&... a) const {
    tuning::Key k = key_fn_(a...);
    for (auto& v : av)
      if (v && v->is_buffer()) k.add_dtype(v->dtype);
    return k;
  }

  const Config& fallback_for(const tuning::Key& k) const {
    if (const Config* c = st_->fallbacks.find(k)) return *c;
    tuning::detail::count_fallback();
    tuning::KeyView kv{opts_.key_names, k};
    return st_->fallbacks.remember(k, opts_.fallback ? opts_.fallback(kv) : tuning::detail::first_valid(st_->space, kv));
  }

  template <size_t N, class... A>
  tuning::Problem problem_for(const tuning::Key& k, const std::array<std::optional<ArgValue>, N>& av, A&... a) const {
    tuning::Problem p;
    p.name = opts_.name;
    p.signature = signature_.empty() ? tuning::detail::signature_of_args(av.data(), N) : signature_;
    p.key_names = opts_.key_names;
    p.key = k;
    p.run = [&fn = fn_, &a...](const Config& c) { fn(c, a...); };
    if constexpr (!std::is_same_v<PlanFn, tuning::detail::NoPlan>)
      p.plan = [&plan = plan_, &a...](const Config& c) { return plan(c, a...); };
    for (int i : opts_.outputs) {
      if (i < 0 || i >= static_cast<int>(N) || !av[i] || !av[i]->is_buffer())
        user_error("autotune '" + opts_.name + "': output index " + std::to_string(i) + " is not a buffer argument",
                   SourceLoc{}, "List in TuneOptions::outputs the positions of the buffers the function writes");
      p.outputs.push_back(*av[i]);
    }
    if (opts_.fallback) p.extra = tuning::heuristic_candidates(opts_.fallback(tuning::KeyView{opts_.key_names, k}));
    return p;
  }

  Fn fn_;
  KeyFn key_fn_;
  PlanFn plan_;
  TuneOptions opts_;
  std::string signature_;
  std::shared_ptr<State> st_;
};

// Function form: fn(const Config&, args...) launches; key_fn(args...) returns the Key;
// plan(const Config&, args...) (optional) returns the Specialization a config launches,
// which lets the tuner compile configs in parallel and prune them before timing.
template <class Fn, class KeyFn, class PlanFn = tuning::detail::NoPlan>
Tuned<Fn, KeyFn, PlanFn> autotune(Fn fn, tuning::Space space, KeyFn key_fn, TuneOptions opts, PlanFn plan = {}) {
  if (opts.name.empty())
    user_error("autotune(function, ...) needs a name for its cache entries", SourceLoc{},
               "Set TuneOptions::name, e.g. {.name = \"my_op\"}");
  return Tuned<Fn, KeyFn, PlanFn>(std::move(fn), std::move(space), std::move(key_fn), std::move(opts), std::move(plan));
}

namespace tuning::detail {
// Runtime positions of the key parameters (with their buckets) and of the outputs.
struct KernelKeyPlan {
  std::vector<std::pair<int, int64_t (*)(int64_t)>> key;
  std::vector<std::string> names;
  std::vector<int> outputs;
};
KernelKeyPlan kernel_key_plan(const KernelBase& k, const std::vector<KeyParam>& key);
}  // namespace tuning::detail

// Kernel form: grid(config, args...) gives the launch grid. `k` must outlive the result.
template <class F, class GridFn>
auto autotune(const Kernel<F>& k, tuning::Space space, std::vector<KeyParam> key, GridFn grid, TuneOptions opts = {}) {
  auto kp = tuning::detail::kernel_key_plan(k, key);
  opts.name = k.name();
  opts.key_names = kp.names;
  opts.outputs = kp.outputs;
  auto fn = [&k, grid](const Config& c, const auto&... a) { k.launch(LaunchGrid(grid(c, a...)), c, a...); };
  auto key_fn = [idx = kp.key, name = k.name()](const auto&... a) {
    std::array<ArgValue, sizeof...(a)> av{tilefuse::detail::to_arg(a)...};
    tuning::Key out;
    for (auto [i, bucket] : idx) {
      if (i >= static_cast<int>(av.size()))
        user_error("kernel '" + name + "' launched through autotune with " + std::to_string(av.size()) + " arguments",
                   SourceLoc{}, "Pass every runtime argument of the kernel");
      out.add(bucket(av[i].i));
    }
    return out;
  };
  auto plan = [&k](const Config& c, const auto&... a) { return tuning::specialization(k, c, a...); };
  return Tuned<decltype(fn), decltype(key_fn), decltype(plan)>(std::move(fn), std::move(space), std::move(key_fn),
                                                               std::move(opts), std::move(plan), tuning::signature_of(k));
}

}  // namespace tilefuse
