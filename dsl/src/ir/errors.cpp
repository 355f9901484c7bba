#include "tilefuse/ir/errors.hpp"

namespace tilefuse {

std::string SourceLoc::str() const {
  if (!known()) return "<unknown>";
  auto slash = file.find_last_of('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  return base + ":" + std::to_string(line);
}

void user_error(const std::string& what, const SourceLoc& loc, const std::string& fix) {
  std::string msg = what;
  if (loc.known()) msg += " (at " + loc.str() + ")";
  if (!fix.empty()) msg += ". " + fix;
  throw UserError(msg);
}

void internal_error(const std::string& what) { throw InternalError(what); }

}  // namespace tilefuse
