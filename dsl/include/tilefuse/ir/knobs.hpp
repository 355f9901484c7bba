#pragma once
// The one registry of environment knobs. Each knob says whether changing it
// invalidates compiled-kernel caches (it is then part of every cache key).
#include <string>
#include <vector>

namespace tilefuse {

struct Knob {
  const char* name;         // environment variable
  const char* help;
  bool invalidates_cache;   // part of the compile cache key
};

// All knobs, for --help texts and the cache key.
const std::vector<Knob>& knobs();

// Raw value of a registered knob ("" when unset). Unregistered names are an internal error.
std::string knob(const char* name);
bool knob_on(const char* name);  // set and not "0"/"off"/"false"
// True when the knob is "1"/"on"/"all" or names `kernel` (comma-separated list).
bool knob_selects(const char* name, const std::string& kernel);
// A knob holding a count: 0 when unset; a UserError naming the knob and its value when
// it is not a positive integer.
long knob_count(const char* name);
// Concatenation of the cache-invalidating knobs' values (for cache keys).
std::string cache_affecting_knobs();

}  // namespace tilefuse
