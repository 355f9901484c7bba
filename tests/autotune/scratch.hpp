#pragma once
// Scratch directories for the autotuner tests: all under one directory per test
// process, removed when the process exits (forked children leave through _exit).
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace tf_test {

inline std::filesystem::path scratch_root() {
  static const struct Root {
    std::filesystem::path path;
    Root() {
      std::string t = (std::filesystem::temp_directory_path() / "tilefuse-autotune-test-XXXXXX").string();
      if (!mkdtemp(t.data())) std::abort();
      path = t;
    }
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } root;
  return root.path;
}

// A new empty directory.
inline std::filesystem::path temp_dir() {
  std::string t = (scratch_root() / "d-XXXXXX").string();
  if (!mkdtemp(t.data())) std::abort();
  return t;
}

// Points TILEFUSE_CACHE_DIR at a scratch directory (before any cache is first used).
inline bool private_cache_dir() {
  setenv("TILEFUSE_CACHE_DIR", temp_dir().c_str(), 1);
  return true;
}

}  // namespace tf_test
