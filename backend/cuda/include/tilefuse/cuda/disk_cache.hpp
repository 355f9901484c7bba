#pragma once
// The on-disk kernel cache: compiled PTX (and the cubin built from it for one device)
// keyed by a SHA-256 of everything that affects code generation. Needs no GPU, so the
// compile path can skip LLVM on a warm start anywhere.
//
// Files live in <cache dir>/kernels/<key hex>.tfk; the cache dir is TILEFUSE_CACHE_DIR,
// else $XDG_CACHE_HOME/tilefuse, else ~/.cache/tilefuse. TILEFUSE_NO_CACHE disables it.
// Each file: header (magic, format version, key, payload length, SHA-256 of the payload)
// then the payload. Writes go to a temporary file in the same directory, then rename(),
// so readers see a whole old or a whole new entry. An entry that fails any check is
// reported once (stderr), deleted and treated as a miss: never trusted.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "tilefuse/cuda/hash.hpp"
#include "tilefuse/nvptx/compiled_kernel.hpp"

namespace tilefuse::cuda {

struct CacheKey {
  Digest256 digest{};
  std::string hex() const { return to_hex(digest); }
  bool operator==(const CacheKey&) const = default;
  auto operator<=>(const CacheKey&) const = default;
};

// The key of a compiled kernel: the IR text (after tracing; it names the kernel and its
// specialization), the target, the compile options (num_warps, num_stages, ...
// serialized by the caller), the compiler version, and the cache-affecting knobs
// (cache_affecting_knobs(), read here).
CacheKey make_cache_key(std::string_view ir_text, const nvptx::Target& target, std::string_view options,
                        std::string_view compiler_version);

struct CacheEntry {
  nvptx::CompiledKernel kernel;  // name, PTX, target, launch ABI
  std::string cubin;             // SASS for one device (may be empty)
  int cubin_cc = 0;              // compute capability the cubin is for (90 = 9.0), 0 if none
  int cubin_driver = 0;          // driver version that built it (cuDriverGetVersion)
  std::string info;              // free text (e.g. compile or JIT info log)
};

// Default cache directory (see above); does not create it.
std::filesystem::path default_cache_dir();

class DiskCache {
 public:
  // A cache in `root` (entries go to root/kernels). The directory is created on store.
  explicit DiskCache(std::filesystem::path root, bool enabled = true);
  // The process-wide cache at default_cache_dir(), disabled by TILEFUSE_NO_CACHE.
  static DiskCache& global();

  bool enabled() const { return enabled_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path path_for(const CacheKey& key) const;

  // The entry for key, or nullopt (miss, disabled, or a bad entry: reported once,
  // deleted). Never throws for file problems.
  std::optional<CacheEntry> load(const CacheKey& key);
  // Atomically writes the entry. Returns false (with a one-time warning) when the
  // directory is not writable; never throws for file problems.
  bool store(const CacheKey& key, const CacheEntry& entry);
  // Deletes the entry if present.
  void erase(const CacheKey& key);

  struct Stats {
    uint64_t hits = 0, misses = 0, bad = 0, stores = 0, store_failures = 0;
  };
  Stats stats() const;

  // Serialized form (header + payload), exposed for tests.
  static std::string encode(const CacheKey& key, const CacheEntry& entry);
  // Parses and validates a file image; on failure returns nullopt and sets *why.
  static std::optional<CacheEntry> decode(const CacheKey& key, std::string_view bytes, std::string* why);

  static constexpr uint32_t kFormatVersion = 7;  // 2: cluster size; 3: tensor maps; 4: persistent; 5: waits for prior grids; 6: up to a grid size; 7: clusters in memory

 private:
  std::filesystem::path dir_;
  bool enabled_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, bad_{0}, stores_{0}, store_failures_{0};
};

}  // namespace tilefuse::cuda
