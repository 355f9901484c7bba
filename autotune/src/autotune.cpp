// Non-template parts of the autotune() front end.
#include "tilefuse/autotune/autotune.hpp"

#include "tilefuse/gpu.hpp"

namespace tilefuse::tuning::detail {

bool gpu_ok() {
  static const bool ok = gpu_available();
  return ok;
}

std::string signature_of_args(const std::optional<ArgValue>* args, size_t n) {
  std::string s = "(";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    if (!args[i]) s += "?";
    else s += std::string(name(args[i]->dtype)) + (args[i]->is_buffer() ? "*" : "");
  }
  return s + ")";
}

Config first_valid(const Space& s, const KeyView& k) {
  if (s.configs().empty())
    user_error("autotune space is empty", SourceLoc{}, "Give the space at least one config");
  for (auto& c : s.configs())
    if (s.check(c, k).empty()) return c;
  return s.configs().front();
}

KernelKeyPlan kernel_key_plan(const KernelBase& k, const std::vector<KeyParam>& key) {
  KernelKeyPlan kp;
  std::string scalars;
  int ri = 0;
  std::vector<std::pair<std::string, int>> runtime;  // scalar name -> runtime position
  for (auto& p : k.params()) {
    if (p.kind == ParamInfo::Kind::Meta) continue;
    if (p.kind == ParamInfo::Kind::Pointer && !p.is_const) kp.outputs.push_back(ri);
    if (p.kind == ParamInfo::Kind::Scalar && is_int(p.dtype)) {
      runtime.emplace_back(p.name, ri);
      scalars += (scalars.empty() ? "" : ", ") + p.name;
    }
    ++ri;
  }
  for (auto& kparam : key) {
    int pos = -1;
    for (auto& [n, i] : runtime)
      if (n == kparam.name) pos = i;
    if (pos < 0)
      user_error("autotune key '" + kparam.name + "' is not an integer parameter of kernel '" + k.name() + "'",
                 SourceLoc{}, scalars.empty() ? "The kernel has no integer parameters" : "Key on one of: " + scalars);
    kp.key.emplace_back(pos, kparam.bucket);
    kp.names.push_back(kparam.name);
  }
  return kp;
}

}  // namespace tilefuse::tuning::detail
