#include "tilefuse/autotune/cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>
#include <sstream>
#include <stdexcept>

#include "tilefuse/cuda/disk_cache.hpp"
#include "tilefuse/cuda/file_io.hpp"

namespace tilefuse::tuning {
namespace fs = std::filesystem;
namespace {

std::mutex g_warn_mu;
std::set<std::string> g_warned;

// One stderr line per (file, problem kind) and process.
void warn_once(const std::string& what, const std::string& msg) {
  std::lock_guard lock(g_warn_mu);
  if (g_warned.insert(what).second) std::fprintf(stderr, "tilefuse: %s\n", msg.c_str());
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Json encode_entry(const Entry& e) {
  Json j = Json::object();
  j.set("kernel", e.id.kernel);
  j.set("signature", e.id.signature);
  j.set("key", e.id.key);
  j.set("device", e.id.device);
  j.set("cc", e.id.cc);
  j.set("compiler", e.id.compiler);
  j.set("method", e.id.method);
  j.set("updated", e.updated);
  const Record* b = e.best();
  j.set("best", b ? Json(b->config.str()) : Json());
  Json recs = Json::array();
  for (auto& r : e.records) {
    Json rj = Json::object();
    rj.set("config", r.config.str());
    if (r.timed()) {
      rj.set("ms", r.ms);
      rj.set("reps", r.reps);
    } else {
      rj.set("pruned", r.pruned);
    }
    recs.push(std::move(rj));
  }
  j.set("configs", std::move(recs));
  return j;
}

Entry decode_entry(const Json& j) {
  Entry e;
  e.id.kernel = j.at("kernel").as_string();
  e.id.signature = j.at("signature").as_string();
  e.id.key = j.at("key").as_string();
  e.id.device = j.at("device").as_string();
  e.id.cc = static_cast<int>(j.at("cc").as_int());
  e.id.compiler = j.at("compiler").as_string();
  e.id.method = j.at("method").as_string();
  if (const Json* u = j.find("updated")) e.updated = u->as_string();
  for (auto& rj : j.at("configs").as_array()) {
    Record r;
    r.config = parse_config(rj.at("config").as_string());
    if (const Json* p = rj.find("pruned")) {
      r.pruned = p->as_string();
      if (r.pruned.empty()) throw std::runtime_error("empty \"pruned\" reason");
    } else {
      r.ms = rj.at("ms").as_number();
      r.reps = static_cast<int>(rj.at("reps").as_int());
      if (r.ms < 0) throw std::runtime_error("negative time");
    }
    e.records.push_back(std::move(r));
  }
  return e;
}

// Releases the flock and closes the lock file on every path out of store().
// flock() rather than llvm::sys::fs::lockFile: that one takes fcntl() record locks, which
// belong to the process, so two threads of one process storing at once would not
// exclude each other (and closing any descriptor of the file drops them).
struct FileLock {
  int fd = -1;
  explicit FileLock(const fs::path& p) {
    fd = ::open(p.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) return;
    while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() {
    if (fd >= 0) ::close(fd);  // closing drops the lock
  }
};

}  // namespace

Config parse_config(const std::string& s) {
  Config c;
  std::istringstream in(s);
  std::string item;
  bool any = false;
  while (in >> item) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::runtime_error("bad config item '" + item + "' in \"" + s + "\"");
    std::string num = item.substr(eq + 1);
    int64_t v = 0;
    auto r = std::from_chars(num.data(), num.data() + num.size(), v);
    if (r.ec != std::errc() || r.ptr != num.data() + num.size())
      throw std::runtime_error("bad config value in '" + item + "'");
    c.set(item.substr(0, eq), v);
    any = true;
  }
  if (!any) throw std::runtime_error("empty config");
  return c;
}

const Record* Entry::find(const Config& c) const {
  for (auto& r : records)
    if (r.config == c) return &r;
  return nullptr;
}

const Record* Entry::best() const {
  const Record* b = nullptr;
  for (auto& r : records)
    if (r.timed() && (!b || r.ms < b->ms)) b = &r;
  return b;
}

TuningCache::TuningCache(fs::path dir) : dir_(std::move(dir)) {}

TuningCache& TuningCache::global() {
  static TuningCache c(cuda::default_cache_dir() / "tuning");
  return c;
}

fs::path TuningCache::file_for(const std::string& kernel) const {
  std::string n;
  for (char ch : kernel) n += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' ? ch : '_';
  return dir_ / ((n.empty() ? std::string("kernel") : n) + ".json");
}

Json TuningCache::encode(const std::vector<Entry>& entries) {
  Json doc = Json::object();
  doc.set("schema", kSchema);
  doc.set("version", kSchemaVersion);
  Json arr = Json::array();
  for (auto& e : entries) arr.push(encode_entry(e));
  doc.set("entries", std::move(arr));
  return doc;
}

std::vector<Entry> TuningCache::decode(const Json& doc) {
  const Json* schema = doc.find("schema");
  if (!schema || !schema->is_string() || schema->as_string() != kSchema)
    throw std::runtime_error(std::string("not a tuning cache (no \"schema\": \"") + kSchema + "\")");
  const Json* ver = doc.find("version");
  if (!ver || !ver->is_number() || ver->as_number() != kSchemaVersion)
    throw std::runtime_error("schema version " + (ver ? ver->dump(-1) : std::string("missing")) +
                             ", this build reads version " + std::to_string(kSchemaVersion));
  std::vector<Entry> out;
  for (auto& j : doc.at("entries").as_array()) out.push_back(decode_entry(j));
  return out;
}

std::vector<Entry> TuningCache::read_file(const fs::path& p) {
  struct stat st{};
  if (::stat(p.c_str(), &st) != 0) return {};
  int64_t mtime = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  {
    // A rename() gives a new inode, so (inode, mtime, size) identifies one version.
    std::lock_guard lock(mu_);
    auto it = memo_.find(p);
    if (it != memo_.end() && it->second.inode == st.st_ino && it->second.mtime_ns == mtime &&
        it->second.size == st.st_size)
      return it->second.entries;
  }
  std::string text;
  std::vector<Entry> entries;
  try {
    if (std::error_code ec = cuda::read_whole_file(p, text)) throw std::runtime_error(ec.message());
    entries = decode(Json::parse(text));
  } catch (const std::exception& e) {
    ++bad_;
    warn_once(p.string(), "ignoring the tuning cache file " + p.string() + " (" + e.what() +
                              "); it will be replaced when a kernel is tuned");
    entries.clear();  // remembered as empty, so this version is parsed once
  }
  std::lock_guard lock(mu_);
  memo_[p] = Memo{st.st_ino, mtime, st.st_size, entries};
  return entries;
}

std::optional<Entry> TuningCache::load(const EntryId& id) {
  ++loads_;
  for (auto& e : read_file(file_for(id.kernel)))
    if (e.id == id) {
      ++hits_;
      return e;
    }
  return std::nullopt;
}

std::vector<Entry> TuningCache::entries(const std::string& kernel) { return read_file(file_for(kernel)); }

bool TuningCache::store(const Entry& e) {
  fs::path file = file_for(e.id.kernel);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  FileLock lock(fs::path(file).concat(".lock"));
  if (lock.fd < 0) {
    warn_once(dir_.string() + "#write", "cannot write the tuning cache in " + dir_.string() + " (" +
                                           std::strerror(errno) + "); tuning results are kept in memory only");
    return false;
  }
  // Read-merge-write under the lock: whatever another writer stored stays.
  std::vector<Entry> all = read_file(file), kept;
  Entry merged = e;
  for (auto& old : all) {
    if (old.id == e.id) {
      for (auto& r : old.records)
        if (!merged.find(r.config)) merged.records.push_back(r);
    } else if (!old.id.same_problem(e.id)) {
      kept.push_back(std::move(old));  // other problems; superseded versions are dropped
    }
  }
  merged.updated = utc_now();
  kept.push_back(std::move(merged));
  if (std::error_code err = cuda::replace_file_atomically(file, encode(kept).dump() + "\n")) {
    warn_once(dir_.string() + "#write", "cannot write the tuning cache file " + file.string() + " (" + err.message() +
                                           "); tuning results are kept in memory only");
    return false;
  }
  ++stores_;
  return true;
}

}  // namespace tilefuse::tuning
