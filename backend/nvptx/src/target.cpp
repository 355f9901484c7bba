#include "target_info.hpp"

#include "tilefuse/ir/errors.hpp"

namespace tilefuse::nvptx {

Target parse_target(const std::string& s) {
  Target t;
  std::string rest = s.rfind("sm_", 0) == 0 ? s.substr(3) : "";
  if (!rest.empty() && rest.back() == 'a') {
    t.arch_specific = true;
    rest.pop_back();
  }
  bool digits = !rest.empty() && rest.size() <= 3 && rest.find_first_not_of("0123456789") == std::string::npos;
  if (digits) t.sm = std::stoi(rest);
  bool ok = digits && (t.sm == 80 || t.sm == 90) && (!t.arch_specific || t.sm == 90);
  if (!ok)
    throw UserError("unsupported GPU target '" + s +
                    "'. Use sm_80 (Ampere and newer), sm_90 (Hopper, portable) or sm_90a (Hopper-specific, e.g. H100)");
  return t;
}

std::string TargetInfo::cpu() const { return t_.name(); }

int TargetInfo::default_ptx() const {
  if (t_.sm >= 90) return t_.arch_specific ? 80 : 78;
  if (t_.sm == 89) return 78;
  if (t_.sm == 86) return 71;
  return 70;
}

std::string TargetInfo::features() const {
  // Each CPU's default PTX ISA version keeps the PTX loadable by the oldest drivers
  // that know the architecture; kernels using newer PTX features raise it.
  if (min_ptx_ <= default_ptx()) return "";
  return "+ptx" + std::to_string(min_ptx_);
}

}  // namespace tilefuse::nvptx
