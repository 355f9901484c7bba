#pragma once
// kernel(name, lambda): a tile program whose signature is the lambda's parameter
// list. Ptr<T>/Scalar parameters are runtime arguments; Meta<"NAME"> parameters are
// trace-time constants bound from the launch Config, so each config is a specialization.
#include <optional>
#include <boost/hana.hpp>
#include <cstddef>
#include <memory>
#include <mutex>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tilefuse/dsl/config.hpp"
#include "tilefuse/dsl/control.hpp"
#include "tilefuse/ir/kernel_args.hpp"

namespace tilefuse {

template <size_t N>
struct fixed_string {
  char s[N]{};
  constexpr fixed_string(const char (&str)[N]) {
    for (size_t i = 0; i < N; ++i) s[i] = str[i];
  }
};

// No default value: a launch config must set the meta-parameter.
struct NoDefault {};
template <auto D>
constexpr int64_t meta_default() {
  if constexpr (std::is_same_v<std::remove_cvref_t<decltype(D)>, NoDefault>) return 0;
  else return static_cast<int64_t>(D);
}

// A named meta-parameter: Meta<"BLOCK"> (an integer), Meta<"CAUSAL", bool>, or with a
// default for configs that leave it out: Meta<"RELOAD", bool, false>.
template <fixed_string Name, class T = int64_t, auto Default = NoDefault{}>
struct Meta {
  T v{};
  static constexpr const char* name() { return Name.s; }
  static constexpr bool has_default = !std::is_same_v<std::remove_cvref_t<decltype(Default)>, NoDefault>;
  static constexpr int64_t default_value() { return meta_default<Default>(); }
  int64_t meta_value() const { return static_cast<int64_t>(v); }
  operator T() const { return v; }
};

template <class T>
struct is_meta : std::false_type {};
template <fixed_string N, class T, auto D>
struct is_meta<Meta<N, T, D>> : std::true_type {};

// What the kernel signature says about one parameter.
struct ParamInfo {
  enum class Kind { Pointer, Scalar, Meta };
  Kind kind = Kind::Scalar;
  std::string name;
  DType dtype = DType::i32;
  bool is_const = false;
  std::optional<int64_t> default_value;  // Meta only: the value when a config leaves it out
  std::string type_str() const;  // "Ptr<const bf16>", "I32", "Meta<BLOCK>"
};

// Where a launch comes from: a Grid plus the caller's source line.
struct LaunchGrid {
  Grid grid;
  SourceLoc loc;
  LaunchGrid(Grid g, std::source_location l = std::source_location::current()) : grid(g), loc(l) {}
  LaunchGrid(int64_t x, std::source_location l = std::source_location::current()) : grid(x), loc(l) {}
};
inline Grid grid(int64_t x, int64_t y = 1, int64_t z = 1) { return Grid(x, y, z); }

// Non-template part of a kernel: signature, specialization cache, launch.
class KernelBase {
 public:
  KernelBase(std::string name, std::vector<ParamInfo> params, SourceLoc defined_at);
  virtual ~KernelBase() = default;

  const std::string& name() const { return name_; }
  // Unique among all kernel objects of the process, never reused: keys caches of what
  // this kernel compiled to (an address may belong to another kernel later).
  uint64_t id() const { return id_; }
  const std::vector<ParamInfo>& params() const { return params_; }
  std::vector<std::string> meta_names() const;
  int num_runtime_params() const;

  // The traced and canonicalized IR for `cfg`; `divisibility` holds one entry per
  // runtime parameter (pointer alignment / integer divisor; empty = nothing known).
  // Cached per (config, divisibility); thread-safe.
  std::shared_ptr<const ir::Function> specialize(const Config& cfg,
                                                 const std::vector<int64_t>& divisibility = {}) const;
  // Traces without caching or passes (tests, tools).
  std::unique_ptr<ir::Function> trace(const Config& cfg, const std::vector<int64_t>& divisibility = {}) const;

  // Checks `args` against the signature and runs on the executor their kind selects.
  void launch_args(const LaunchGrid& g, const Config& cfg, std::vector<ArgValue> args, void* stream = nullptr) const;
  // For a config with clusters and device-buffer `args`: how many clusters the GPU holds
  // at once (compiling and loading the kernel as a launch with these arguments would);
  // 0 where unknown (host buffers, cluster(1), or a driver that cannot say). Programs
  // that loop over the grid size it with this: clusters past it wait for a whole
  // cluster's worth of work to finish.
  int64_t resident_clusters_args(const Config& cfg, std::vector<ArgValue> args,
                                 const SourceLoc& loc = SourceLoc{}) const;

 protected:
  virtual void trace_body(const Config& cfg, const std::vector<ir::Value*>& runtime_params) const = 0;
  void check_config(const Config& cfg, const SourceLoc& loc) const;
  void check_args(std::vector<ArgValue>& args, const SourceLoc& loc) const;  // also converts scalars to the param types

 private:
  std::string name_;
  uint64_t id_;
  std::vector<ParamInfo> params_;
  SourceLoc defined_at_;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, std::shared_ptr<const ir::Function>> cache_;
};

namespace detail {

template <class F>
struct signature : signature<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct signature<R (C::*)(A...) const> {
  static constexpr auto types = boost::hana::tuple_t<std::remove_cvref_t<A>...>;
};

// A runtime kernel parameter: a scalar handle (rank 0), which includes Ptr<T>.
template <class A>
struct is_param_handle : std::false_type {};
template <class T>
struct is_param_handle<Tile<T, 0>> : std::true_type {};

template <class A>
ParamInfo param_info(const std::string& name) {
  ParamInfo p;
  p.name = name;
  static_assert(is_meta<A>::value || is_param_handle<A>::value,
                "kernel parameters must be Ptr<T>, scalars (I32, I64, U32, F32, F64) or Meta<\"NAME\">");
  if constexpr (is_meta<A>::value) {
    p.kind = ParamInfo::Kind::Meta;
    p.name = A::name();
    if constexpr (A::has_default) p.default_value = A::default_value();
  } else if constexpr (is_param_handle<A>::value) {
    using E = typename A::element_type;
    p.kind = is_ptr_elem_v<E> ? ParamInfo::Kind::Pointer : ParamInfo::Kind::Scalar;
    p.dtype = dtype_v<E>;
    p.is_const = std::is_const_v<pointee_t<E>>;
  }
  return p;
}

// Host-side argument conversion. Host memory travels as std::span / std::vector
// (the interpreter needs sizes); device memory as anything with an arg() -> ArgValue.
template <class T>
ArgValue to_arg(const T& v) {
  using U = std::remove_cvref_t<T>;
  if constexpr (requires { { v.arg() } -> std::same_as<ArgValue>; }) {
    return v.arg();  // device memory (DeviceBuffer, DevicePtr) or anything that knows its ArgValue
  } else if constexpr (std::is_same_v<U, bool>) {
    return ArgValue::integer(v, DType::i1);
  } else if constexpr (std::is_integral_v<U>) {
    return ArgValue::integer(static_cast<int64_t>(v), dtype_v<U>);
  } else if constexpr (std::is_floating_point_v<U>) {
    return ArgValue::real(static_cast<double>(v), dtype_v<U>);
  } else if constexpr (std::is_pointer_v<U>) {
    static_assert(!std::is_pointer_v<U>,
                  "launch: raw pointers carry no size; pass host memory as std::span<T>/std::vector<T> or "
                  "device memory as DeviceBuffer<T>/DevicePtr<T>");
  } else {
    using E = std::remove_cvref_t<decltype(*std::data(v))>;
    return ArgValue::host(const_cast<void*>(static_cast<const void*>(std::data(v))), std::size(v) * sizeof(E),
                          dtype_v<E>);
  }
}

}  // namespace detail

template <class F>
class Kernel : public KernelBase {
 public:
  Kernel(std::string name, F fn, std::vector<std::string> names, SourceLoc at)
      : KernelBase(std::move(name), make_params(names), std::move(at)), fn_(std::move(fn)) {}

  // launch(grid, config, args...): runs on the GPU for device buffers, on the
  // interpreter for host spans/vectors.
  template <class... Args>
  void launch(const LaunchGrid& g, const Config& cfg, const Args&... args) const {
    launch_args(g, cfg, std::vector<ArgValue>{detail::to_arg(args)...});
  }
  // resident_clusters(config, args...): see resident_clusters_args.
  template <class... Args>
  int64_t resident_clusters(const Config& cfg, const Args&... args) const {
    return resident_clusters_args(cfg, std::vector<ArgValue>{detail::to_arg(args)...});
  }

 protected:
  void trace_body(const Config& cfg, const std::vector<ir::Value*>& rt) const override {
    constexpr size_t n = decltype(boost::hana::length(detail::signature<F>::types))::value;
    call(cfg, rt, std::make_index_sequence<n>{});
  }

 private:
  static std::vector<ParamInfo> make_params(const std::vector<std::string>& names) {
    std::vector<ParamInfo> out;
    size_t i = 0;
    boost::hana::for_each(detail::signature<F>::types, [&](auto t) {
      using A = typename decltype(t)::type;
      std::string n = i < names.size() ? names[i] : "arg" + std::to_string(i);
      out.push_back(detail::param_info<A>(n));
      ++i;
    });
    return out;
  }
  template <size_t I>
  using param_t = typename decltype(+boost::hana::at_c<I>(detail::signature<F>::types))::type;

  // Position of parameter I among the runtime (non-Meta) parameters.
  template <size_t I>
  static constexpr size_t runtime_index() {
    return []<size_t... J>(std::index_sequence<J...>) {
      return (size_t{0} + ... + (is_meta<param_t<J>>::value ? 0 : 1));
    }(std::make_index_sequence<I>{});
  }

  template <size_t I>
  static auto make_arg(const Config& cfg, const std::vector<ir::Value*>& rt) {
    using A = param_t<I>;
    if constexpr (is_meta<A>::value) {
      A m;
      m.v = static_cast<decltype(m.v)>(cfg.has(A::name()) ? cfg.get(A::name()) : A::default_value());
      return m;
    } else if constexpr (detail::is_param_handle<A>::value) {
      return A(rt.at(runtime_index<I>()));
    } else {
      return A{};  // an invalid parameter type; param_info's static_assert explains
    }
  }

  template <size_t... I>
  void call(const Config& cfg, const std::vector<ir::Value*>& rt, std::index_sequence<I...>) const {
    fn_(make_arg<I>(cfg, rt)...);
  }

  F fn_;
};

// kernel("name", lambda) or kernel("name", {"out", "in", ...}, lambda) to name the parameters.
template <class F>
Kernel<F> kernel(std::string name, F fn, std::source_location loc = std::source_location::current()) {
  return Kernel<F>(std::move(name), std::move(fn), {}, SourceLoc(loc));
}
template <class F>
Kernel<F> kernel(std::string name, std::vector<std::string> param_names, F fn,
                 std::source_location loc = std::source_location::current()) {
  return Kernel<F>(std::move(name), std::move(fn), std::move(param_names), SourceLoc(loc));
}

namespace detail {
// Runs a checked launch on the executor the arguments select (backend/dispatch.cpp).
void execute(const KernelBase& k, const Config& cfg, const Grid& grid, std::vector<ArgValue>& args, void* stream,
             const SourceLoc& loc);
// The GPU part of execute (backend/cuda).
void gpu_execute(const KernelBase& k, const Config& cfg, const Grid& grid, std::vector<ArgValue>& args, void* stream,
                 const SourceLoc& loc);
// The loaded kernel's resident clusters for device-buffer `args` (backend/cuda).
int64_t gpu_resident_clusters(const KernelBase& k, const Config& cfg, std::vector<ArgValue>& args,
                              const SourceLoc& loc);
}  // namespace detail

}  // namespace tilefuse
