#pragma once
// The two error channels of tilefuse: UserError (the user's mistake, with where and
// how to fix it) and InternalError (our bug).
#include <source_location>
#include <stdexcept>
#include <string>

namespace tilefuse {

// A user-facing source position (file:line), captured from std::source_location.
struct SourceLoc {
  std::string file;
  unsigned line = 0;
  unsigned column = 0;

  SourceLoc() = default;
  SourceLoc(const std::source_location& l) : file(l.file_name()), line(l.line()), column(l.column()) {}
  bool known() const { return line != 0; }
  // "file.cpp:42" with the directory stripped, or "<unknown>".
  std::string str() const;
};

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& what) : std::runtime_error(what) {}
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error("tilefuse internal error: " + what) {}
};

// Throws UserError "<what> (at <loc>). <fix>".
[[noreturn]] void user_error(const std::string& what, const SourceLoc& loc, const std::string& fix = "");
[[noreturn]] void internal_error(const std::string& what);

#define TF_ASSERT(cond, msg)                                                        \
  do {                                                                              \
    if (!(cond)) ::tilefuse::internal_error(std::string(msg) + " [" #cond "] at " + \
                                            __FILE__ + ":" + std::to_string(__LINE__)); \
  } while (0)

}  // namespace tilefuse
