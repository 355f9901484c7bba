#include "tilefuse/dsl/kernel.hpp"

#include <atomic>
#include <cctype>

#include "tilefuse/ir/passes.hpp"

namespace tilefuse {

std::string Config::str() const {
  std::string r;
  for (auto& [k, v] : meta) r += k + "=" + std::to_string(v) + " ";
  r += "num_warps=" + std::to_string(num_warps) + " num_stages=" + std::to_string(num_stages);
  if (cluster != 1) r += " cluster=" + std::to_string(cluster);
  if (warp_specialize) r += " warp_specialize=" + std::to_string(warp_specialize);
  if (persistent) r += " persistent=" + std::to_string(persistent);  // the value: 2 is no cache hit for 1
  if (min_programs_per_sm) r += " min_programs_per_sm=" + std::to_string(min_programs_per_sm);
  return r;
}

std::string ParamInfo::type_str() const {
  switch (kind) {
    case Kind::Pointer: return std::string("Ptr<") + (is_const ? "const " : "") + tilefuse::name(dtype) + ">";
    case Kind::Meta: return "Meta<" + name + ">";
    case Kind::Scalar: break;
  }
  std::string n = tilefuse::name(dtype);
  for (auto& c : n) c = static_cast<char>(std::toupper(c));
  return n;
}

namespace {
uint64_t next_kernel_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

KernelBase::KernelBase(std::string name, std::vector<ParamInfo> params, SourceLoc defined_at)
    : name_(std::move(name)), id_(next_kernel_id()), params_(std::move(params)), defined_at_(std::move(defined_at)) {}

std::vector<std::string> KernelBase::meta_names() const {
  std::vector<std::string> r;
  for (auto& p : params_)
    if (p.kind == ParamInfo::Kind::Meta) r.push_back(p.name);
  return r;
}

int KernelBase::num_runtime_params() const {
  int n = 0;
  for (auto& p : params_) n += p.kind != ParamInfo::Kind::Meta;
  return n;
}

void KernelBase::check_config(const Config& cfg, const SourceLoc& loc) const {
  std::string metas;
  for (auto& m : meta_names()) metas += (metas.empty() ? "" : ", ") + m;
  for (auto& p : params_)
    if (p.kind == ParamInfo::Kind::Meta && !p.default_value && !cfg.has(p.name))
      user_error("kernel '" + name_ + "' needs meta-parameter " + p.name + ", but the launch config {" + cfg.str() +
                     "} does not set it",
                 loc, "Add {\"" + p.name + "\", <value>} to the config");
  for (auto& [k, v] : cfg.meta) {
    bool known = false;
    for (auto& m : meta_names()) known |= m == k;
    if (!known)
      user_error("the launch config sets '" + k + "', which is not a meta-parameter of kernel '" + name_ + "'", loc,
                 metas.empty() ? "This kernel has no meta-parameters" : "Its meta-parameters are: " + metas);
  }
  if (cfg.num_warps < 1 || cfg.num_warps > 32 || (cfg.num_warps & (cfg.num_warps - 1)))
    user_error("num_warps = " + std::to_string(cfg.num_warps) + " for kernel '" + name_ +
                   "' is not a power of two from 1 to 32",
               loc, "Use num_warps(w) with w = 1, 2, 4, 8, 16 or 32");
  if (cfg.num_stages < 1)
    user_error("num_stages = " + std::to_string(cfg.num_stages) + " for kernel '" + name_ + "' is less than 1", loc,
               "Use num_stages(1) (no pipelining) or more");
  if (cfg.cluster < 1 || cfg.cluster > kMaxClusterPrograms || (cfg.cluster & (cfg.cluster - 1)))
    user_error("cluster = " + std::to_string(cfg.cluster) + " for kernel '" + name_ +
                   "' is not a power of two from 1 to " + std::to_string(kMaxClusterPrograms),
               loc, "Use cluster(c) with c = 1, 2, 4, ..., " + std::to_string(kMaxClusterPrograms) +
                        " (programs per cluster; up to 16 the GPU's thread-block clusters, more exchange through memory)");
  if (cfg.warp_specialize != 0 && cfg.warp_specialize != 1)
    user_error("warp_specialize = " + std::to_string(cfg.warp_specialize) + " for kernel '" + name_ + "' is not 0 or 1",
               loc, "Use warp_specialize(true) or leave it out");
  if (cfg.min_programs_per_sm < 0 || cfg.min_programs_per_sm > 32)
    user_error("min_programs_per_sm = " + std::to_string(cfg.min_programs_per_sm) + " for kernel '" + name_ +
                   "' is outside 0..32",
               loc, "Use min_programs_per_sm(n) with n from 1 to 32 (an SM holds at most 32 programs), or leave it out");
  if (cfg.min_programs_per_sm > 1 && cfg.warp_specialize)
    user_error("kernel '" + name_ + "' is configured with warp_specialize and min_programs_per_sm = " +
                   std::to_string(cfg.min_programs_per_sm) +
                   "; a warp-specialized program splits the registers of a whole SM between its roles",
               loc, "Leave min_programs_per_sm out with warp_specialize");
  if (cfg.persistent != 0 && cfg.persistent != 1)
    user_error("persistent = " + std::to_string(cfg.persistent) + " for kernel '" + name_ + "' is not 0 or 1", loc,
               "Use persistent(true) or leave it out");
  if (cfg.persistent && cfg.cluster != 1)
    user_error("kernel '" + name_ + "' is configured persistent with cluster = " + std::to_string(cfg.cluster) +
                   "; persistent programs do not run in thread-block clusters",
               loc, "Use persistent(true) with cluster(1), or leave persistent out");
}

static std::string describe(const ArgValue& a) {
  switch (a.kind) {
    case ArgValue::Kind::HostBuffer: return std::string("a host buffer of ") + name(a.dtype);
    case ArgValue::Kind::DevicePtr: return std::string("a device buffer of ") + name(a.dtype);
    case ArgValue::Kind::Int: return std::string("an integer (") + name(a.dtype) + ")";
    case ArgValue::Kind::Float: return std::string("a float (") + name(a.dtype) + ")";
  }
  return "?";
}

void KernelBase::check_args(std::vector<ArgValue>& args, const SourceLoc& loc) const {
  std::string sig;
  for (auto& p : params_)
    if (p.kind != ParamInfo::Kind::Meta) sig += (sig.empty() ? "" : ", ") + p.name + ": " + p.type_str();
  int n = num_runtime_params();
  if (static_cast<int>(args.size()) != n)
    user_error("kernel '" + name_ + "' takes " + std::to_string(n) + " arguments (" + sig + ") but the launch passes " +
                   std::to_string(args.size()),
               loc, "Pass one argument per non-Meta parameter, in order");
  int i = 0;
  for (auto& p : params_) {
    if (p.kind == ParamInfo::Kind::Meta) continue;
    ArgValue& a = args[i];
    std::string which = "argument " + std::to_string(i + 1) + " ('" + p.name + "') of kernel '" + name_ + "'";
    if (p.kind == ParamInfo::Kind::Pointer) {
      if (!a.is_buffer() || a.dtype != p.dtype)
        user_error(which + " must be a buffer of " + tilefuse::name(p.dtype) + " (" + p.type_str() + "), got " + describe(a), loc,
                   std::string("Pass a std::span/std::vector of ") + tilefuse::name(p.dtype) + " or a DeviceBuffer of it");
    } else if (is_float(p.dtype)) {
      if (a.kind != ArgValue::Kind::Float && a.kind != ArgValue::Kind::Int)
        user_error(which + " must be a number (" + p.type_str() + "), got " + describe(a), loc,
                   "Pass a float or integer value");
      if (a.kind == ArgValue::Kind::Int) a = ArgValue::real(static_cast<double>(a.i), p.dtype);
      a.dtype = p.dtype;
    } else {
      if (a.kind != ArgValue::Kind::Int)
        user_error(which + " must be an integer (" + p.type_str() + "), got " + describe(a), loc,
                   "Pass an integer value");
      int bits = bit_width(p.dtype);
      bool fits = bits >= 64 || (is_unsigned(p.dtype) ? (a.i >= 0 && a.i < (int64_t(1) << bits))
                                                      : (a.i >= -(int64_t(1) << (bits - 1)) && a.i < (int64_t(1) << (bits - 1))));
      if (!fits)
        user_error(which + " is " + std::to_string(a.i) + ", which does not fit " + p.type_str(), loc,
                   "Declare the parameter wider (e.g. I64) or pass a smaller value");
      a.dtype = p.dtype;
    }
    ++i;
  }
}

std::unique_ptr<ir::Function> KernelBase::trace(const Config& cfg, const std::vector<int64_t>& divisibility) const {
  check_config(cfg, defined_at_);
  auto f = std::make_unique<ir::Function>();
  f->name = name_;
  f->meta = cfg.meta;
  f->num_warps = cfg.num_warps;
  f->num_stages = cfg.num_stages;
  f->cluster_size = cfg.cluster;
  f->warp_specialize = cfg.warp_specialize != 0;
  f->persistent = cfg.persistent != 0;
  f->min_programs_per_sm = cfg.min_programs_per_sm;
  ir::Builder b(*f);
  b.set_loc(defined_at_);
  std::vector<ir::Value*> rt;
  int i = 0;
  for (auto& p : params_) {
    if (p.kind == ParamInfo::Kind::Meta) continue;
    ir::Type t = p.kind == ParamInfo::Kind::Pointer ? ir::Type::pointer(p.dtype) : ir::Type::scalar(p.dtype);
    rt.push_back(b.param(p.name, t, p.is_const));
    if (i < static_cast<int>(divisibility.size())) f->params.back().divisibility = divisibility[i];
    ++i;
  }
  detail::TraceContext ctx;
  ctx.builder = &b;
  detail::TraceContext* outer = detail::TraceContext::current();
  detail::TraceContext::set_current(&ctx);
  try {
    trace_body(cfg, rt);
  } catch (...) {
    detail::TraceContext::set_current(outer);
    throw;
  }
  detail::TraceContext::set_current(outer);
  return f;
}

std::shared_ptr<const ir::Function> KernelBase::specialize(const Config& cfg,
                                                           const std::vector<int64_t>& divisibility) const {
  std::string key = cfg.str() + "|";
  for (auto d : divisibility) key += std::to_string(d) + ",";
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  std::shared_ptr<ir::Function> f = trace(cfg, divisibility);
  ir::run_frontend_passes(*f);
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.emplace(key, std::move(f)).first->second;
}

void KernelBase::launch_args(const LaunchGrid& g, const Config& cfg, std::vector<ArgValue> args, void* stream) const {
  check_config(cfg, g.loc);
  check_args(args, g.loc);
  if (g.grid.x < 1 || g.grid.y < 1 || g.grid.z < 1)
    user_error("launch of kernel '" + name_ + "' with an empty grid (" + std::to_string(g.grid.x) + ", " +
                   std::to_string(g.grid.y) + ", " + std::to_string(g.grid.z) + ")",
               g.loc, "Every grid dimension must be at least 1");
  if (g.grid.x % cfg.cluster != 0)
    user_error("launch of kernel '" + name_ + "' with grid x = " + std::to_string(g.grid.x) +
                   ", which is not a multiple of its cluster size " + std::to_string(cfg.cluster),
               g.loc, "Launch whole clusters: make grid x a multiple of " + std::to_string(cfg.cluster));
  detail::execute(*this, cfg, g.grid, args, stream, g.loc);
}

int64_t KernelBase::resident_clusters_args(const Config& cfg, std::vector<ArgValue> args, const SourceLoc& loc) const {
  if (cfg.cluster <= 1) return 0;
  bool device = false;
  for (auto& a : args) device |= a.kind == ArgValue::Kind::DevicePtr;
  if (!device) return 0;
  check_config(cfg, loc);
  check_args(args, loc);
  return detail::gpu_resident_clusters(*this, cfg, args, loc);
}

}  // namespace tilefuse
