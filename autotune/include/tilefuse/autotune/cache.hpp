#pragma once
// The tuning cache on disk: one human-readable JSON file per kernel name under
// <cache dir>/tuning/ (cache dir: TILEFUSE_CACHE_DIR, see cuda::default_cache_dir()).
//
// A file holds entries; an entry is one (kernel, signature, key, device, compute
// capability, compiler version, benchmark method) and records the outcome of EVERY
// config tried: its median time, or why it was pruned. Adding a config to a space
// then times only that config.
//
// Writers read, merge and replace the file under an exclusive flock() on a side lock
// file, writing a temporary file and rename()-ing it over the old one: readers never
// see a torn file, and concurrent writers (threads or processes) lose no entries.
// A file that does not parse or carries another schema version is reported once on
// stderr, ignored, and replaced by the next write: never trusted.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tilefuse/autotune/json.hpp"
#include "tilefuse/dsl/config.hpp"

namespace tilefuse::tuning {

struct EntryId {
  std::string kernel;     // kernel or tuned function name: names the file
  std::string signature;  // parameter types: tells apart specializations sharing a name
  std::string key;        // Key::str()
  std::string device;     // "NVIDIA H100 80GB HBM3"
  int cc = 0;             // compute capability, 90 for 9.0
  std::string compiler;   // compiler_version()
  std::string method;     // benchmark method version (kBenchMethod)
  bool operator==(const EntryId&) const = default;
  // The same problem on the same device, whatever the compiler and method.
  bool same_problem(const EntryId& o) const {
    return kernel == o.kernel && signature == o.signature && key == o.key && device == o.device && cc == o.cc;
  }
};

struct Record {
  Config config;
  double ms = -1;      // median time; < 0 when pruned
  int reps = 0;        // repetitions behind the median
  std::string pruned;  // why it was not timed ("" when timed)
  bool timed() const { return pruned.empty() && ms >= 0; }
};

struct Entry {
  EntryId id;
  std::vector<Record> records;
  std::string updated;  // UTC time of the last write (informational)
  const Record* find(const Config& c) const;
  const Record* best() const;  // the fastest timed record, or nullptr
};

// "BLOCK=1024 num_warps=4 num_stages=1" (Config::str()) back to a Config; throws
// std::runtime_error on malformed text.
Config parse_config(const std::string& s);

class TuningCache {
 public:
  static constexpr int kSchemaVersion = 1;
  static constexpr const char* kSchema = "tilefuse-tuning";

  explicit TuningCache(std::filesystem::path dir);  // files live directly in dir
  static TuningCache& global();                      // default_cache_dir()/tuning

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path file_for(const std::string& kernel) const;

  // The stored entry for id, or nullopt. Never throws for file problems.
  std::optional<Entry> load(const EntryId& id);
  // Merges e's records into the stored entry (a record for the same config is
  // replaced), dropping entries for the same problem from other compiler versions or
  // methods (superseded). Returns false, with a one-time warning, when the directory is
  // not writable.
  bool store(const Entry& e);
  // Every valid entry in the file for `kernel` (empty for a missing or bad file).
  std::vector<Entry> entries(const std::string& kernel);

  // Serialized form, exposed for tests and tools.
  static Json encode(const std::vector<Entry>& entries);
  static std::vector<Entry> decode(const Json& doc);  // throws std::runtime_error with the reason

  struct Stats {
    uint64_t loads = 0, hits = 0, stores = 0, bad_files = 0;
  };
  Stats stats() const { return {loads_, hits_, stores_, bad_}; }

 private:
  std::vector<Entry> read_file(const std::filesystem::path& p);
  std::filesystem::path dir_;
  std::mutex mu_;  // guards the parsed-file memo
  struct Memo {
    uint64_t inode = 0;
    int64_t mtime_ns = -1, size = -1;
    std::vector<Entry> entries;
  };
  std::map<std::filesystem::path, Memo> memo_;
  std::atomic<uint64_t> loads_{0}, hits_{0}, stores_{0}, bad_{0};
};

}  // namespace tilefuse::tuning
