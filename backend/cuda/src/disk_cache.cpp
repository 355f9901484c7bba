// The on-disk kernel cache (format described in disk_cache.hpp).
#include "tilefuse/cuda/disk_cache.hpp"


#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>

#include "tilefuse/cuda/file_io.hpp"
#include "tilefuse/ir/knobs.hpp"

namespace tilefuse::cuda {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'T', 'F', 'K', 'C', 'A', 'C', 'H', 'E'};
// magic(8) version(4) header size(4) key(32) payload length(8) payload SHA-256(32)
constexpr size_t kHeaderSize = 8 + 4 + 4 + 32 + 8 + 32;
constexpr const char* kExt = ".tfk";

// ---- little-endian writer / reader ----
struct Writer {
  std::string out;
  void u8(uint8_t v) { out.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { for (int i = 0; i < 4; ++i) u8(uint8_t(v >> (8 * i))); }
  void u64(uint64_t v) { for (int i = 0; i < 8; ++i) u8(uint8_t(v >> (8 * i))); }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void bytes(const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
  void str(std::string_view s) { u64(s.size()); out.append(s); }
};

struct Reader {
  std::string_view in;
  size_t pos = 0;
  bool ok = true;
  bool need(size_t n) {
    if (!ok || in.size() - pos < n) ok = false;
    return ok;
  }
  uint8_t u8() { return need(1) ? static_cast<uint8_t>(in[pos++]) : 0; }
  uint32_t u32() { uint32_t v = 0; for (int i = 0; i < 4; ++i) v |= uint32_t(u8()) << (8 * i); return v; }
  uint64_t u64() { uint64_t v = 0; for (int i = 0; i < 8; ++i) v |= uint64_t(u8()) << (8 * i); return v; }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  std::string str() {
    uint64_t n = u64();
    if (!need(n)) return {};
    std::string s(in.substr(pos, n));
    pos += n;
    return s;
  }
};

void put_value(Writer& w, const nvptx::TensorMapSpec::Value& v) {
  w.i32(v.param);
  w.i64(v.constant);
  w.i32(v.grid_axis);
}

nvptx::TensorMapSpec::Value get_value(Reader& r) {
  nvptx::TensorMapSpec::Value v;
  v.param = r.i32();
  v.constant = r.i64();
  v.grid_axis = r.i32();
  return v;
}

void put_tensor_map(Writer& w, const nvptx::TensorMapSpec& t) {
  w.u8(static_cast<uint8_t>(t.dtype));
  w.i32(t.base_param);
  w.i32(t.swizzle_bytes);
  w.u32(static_cast<uint32_t>(t.dims.size()));  // dims, strides and box have one entry per dimension
  for (const auto& v : t.dims) put_value(w, v);
  for (const auto& v : t.strides) put_value(w, v);
  for (int b : t.box) w.i32(b);
}

// Counts are checked against the bytes left, so a corrupt count cannot allocate much.
bool get_tensor_map(Reader& r, nvptx::TensorMapSpec& t) {
  uint8_t d = r.u8();
  if (d >= kNumDTypes) return false;
  t.dtype = static_cast<DType>(d);
  t.base_param = r.i32();
  t.swizzle_bytes = r.i32();
  uint32_t rank = r.u32();
  if (!r.ok || rank > r.in.size() - r.pos) return false;
  for (uint32_t i = 0; i < rank; ++i) t.dims.push_back(get_value(r));
  for (uint32_t i = 0; i < rank; ++i) t.strides.push_back(get_value(r));
  for (uint32_t i = 0; i < rank; ++i) t.box.push_back(r.i32());
  return r.ok;
}

std::string encode_payload(const CacheEntry& e) {
  Writer w;
  const auto& k = e.kernel;
  w.str(k.name);
  w.str(k.ptx);
  w.u32(static_cast<uint32_t>(k.target.sm));
  w.u8(k.target.arch_specific ? 1 : 0);
  w.i32(k.num_warps);
  w.i32(k.cluster_size);
  w.u8(k.cluster_in_memory ? 1 : 0);
  w.u64(static_cast<uint64_t>(k.cluster_exchange_bytes));
  w.i32(k.shared_bytes);
  w.u32(static_cast<uint32_t>(k.params.size()));
  for (const auto& p : k.params) {
    w.u8(p.is_pointer ? 1 : 0);
    w.u8(static_cast<uint8_t>(p.dtype));
  }
  w.u32(static_cast<uint32_t>(k.tensor_maps.size()));
  for (const auto& t : k.tensor_maps) put_tensor_map(w, t);
  w.u8(k.persistent ? 1 : 0);
  w.u32(k.early_launch_max_blocks);
  w.str(e.cubin);
  w.i32(e.cubin_cc);
  w.i32(e.cubin_driver);
  w.str(e.info);
  return std::move(w.out);
}

bool decode_payload(std::string_view payload, CacheEntry& e, std::string* why) {
  Reader r{payload};
  auto& k = e.kernel;
  k.name = r.str();
  k.ptx = r.str();
  k.target.sm = static_cast<int>(r.u32());
  k.target.arch_specific = r.u8() != 0;
  k.num_warps = r.i32();
  k.cluster_size = r.i32();
  k.cluster_in_memory = r.u8() != 0;
  k.cluster_exchange_bytes = static_cast<int64_t>(r.u64());
  k.shared_bytes = r.i32();
  uint32_t np = r.u32();
  if (r.ok && np > payload.size()) r.ok = false;
  for (uint32_t i = 0; r.ok && i < np; ++i) {
    nvptx::ParamAbi p;
    p.is_pointer = r.u8() != 0;
    uint8_t d = r.u8();
    if (d >= kNumDTypes) r.ok = false;
    p.dtype = static_cast<DType>(d);
    k.params.push_back(p);
  }
  uint32_t nt = r.u32();
  if (r.ok && nt > payload.size()) r.ok = false;
  for (uint32_t i = 0; r.ok && i < nt; ++i) {
    nvptx::TensorMapSpec t;
    if (!get_tensor_map(r, t)) r.ok = false;
    k.tensor_maps.push_back(std::move(t));
  }
  k.persistent = r.u8() != 0;
  k.early_launch_max_blocks = r.u32();
  e.cubin = r.str();
  e.cubin_cc = r.i32();
  e.cubin_driver = r.i32();
  e.info = r.str();
  if (!r.ok || r.pos != payload.size()) {
    if (why) *why = "malformed payload";
    return false;
  }
  if (k.name.empty() || k.ptx.empty() || k.num_warps < 1 || k.cluster_size < 1) {
    if (why) *why = "entry without a kernel";
    return false;
  }
  return true;
}

// One warning per path and process.
void report_once(const fs::path& path, const std::string& msg) {
  static std::mutex m;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(m);
  if (seen.insert(path.string()).second) std::fprintf(stderr, "tilefuse: warning: %s\n", msg.c_str());
}

}  // namespace

CacheKey make_cache_key(std::string_view ir_text, const nvptx::Target& target, std::string_view options,
                        std::string_view compiler_version) {
  Sha256 h;
  h.field("tilefuse kernel cache key v3");  // v2: tensor maps in the payload; v3: persistent
  h.field(ir_text);
  h.field(target.name());
  h.field(options);
  h.field(compiler_version);
  h.field(cache_affecting_knobs());
  return CacheKey{h.finish()};
}

fs::path default_cache_dir() {
  std::string dir = knob("TILEFUSE_CACHE_DIR");
  if (!dir.empty()) return fs::path(dir);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "tilefuse";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "tilefuse";
  return fs::temp_directory_path() / "tilefuse-cache";
}

DiskCache::DiskCache(fs::path root, bool enabled) : dir_(std::move(root) / "kernels"), enabled_(enabled) {}

DiskCache& DiskCache::global() {
  static DiskCache c(default_cache_dir(), !knob_on("TILEFUSE_NO_CACHE"));
  return c;
}

fs::path DiskCache::path_for(const CacheKey& key) const { return dir_ / (key.hex() + kExt); }

std::string DiskCache::encode(const CacheKey& key, const CacheEntry& entry) {
  std::string payload = encode_payload(entry);
  Digest256 sum = sha256(payload);
  Writer w;
  w.bytes(kMagic, sizeof kMagic);
  w.u32(kFormatVersion);
  w.u32(static_cast<uint32_t>(kHeaderSize));
  w.bytes(key.digest.data(), key.digest.size());
  w.u64(payload.size());
  w.bytes(sum.data(), sum.size());
  w.out += payload;
  return std::move(w.out);
}

std::optional<CacheEntry> DiskCache::decode(const CacheKey& key, std::string_view bytes, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<CacheEntry> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (bytes.size() < kHeaderSize) return fail("truncated header (" + std::to_string(bytes.size()) + " bytes)");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return fail("bad magic");
  Reader r{bytes.substr(0, kHeaderSize), sizeof kMagic};
  uint32_t version = r.u32();
  if (version != kFormatVersion)
    return fail("format version " + std::to_string(version) + ", expected " + std::to_string(kFormatVersion));
  if (r.u32() != kHeaderSize) return fail("bad header size");
  if (std::memcmp(bytes.data() + r.pos, key.digest.data(), 32) != 0) return fail("key mismatch");
  r.pos += 32;
  uint64_t len = r.u64();
  if (len != bytes.size() - kHeaderSize)
    return fail("payload length " + std::to_string(bytes.size() - kHeaderSize) + " bytes, header says " +
                std::to_string(len) + " (truncated or overwritten)");
  std::string_view payload = bytes.substr(kHeaderSize);
  Digest256 sum = sha256(payload);
  if (std::memcmp(bytes.data() + r.pos, sum.data(), 32) != 0) return fail("checksum mismatch");
  CacheEntry e;
  if (!decode_payload(payload, e, why)) return std::nullopt;
  return e;
}

std::optional<CacheEntry> DiskCache::load(const CacheKey& key) {
  if (!enabled_) return std::nullopt;
  fs::path path = path_for(key);
  std::string bytes;
  if (std::error_code ec = read_whole_file(path, bytes)) {
    if (ec != std::errc::no_such_file_or_directory)
      report_once(path, "cannot read kernel cache entry " + path.string() + ": " + ec.message());
    misses_++;
    return std::nullopt;
  }
  std::string why;
  auto e = decode(key, bytes, &why);
  if (!e) {
    bad_++;
    misses_++;
    report_once(path, "kernel cache entry " + path.string() + " is invalid (" + why +
                          "); deleting it, the kernel will be recompiled");
    std::error_code ec;
    fs::remove(path, ec);
    return std::nullopt;
  }
  hits_++;
  return e;
}

bool DiskCache::store(const CacheKey& key, const CacheEntry& entry) {
  if (!enabled_) return false;
  fs::path path = path_for(key);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (std::error_code err = replace_file_atomically(path, encode(key, entry))) {
    store_failures_++;
    report_once(dir_, "cannot write the kernel cache in " + dir_.string() + " (" + err.message() +
                          "); set TILEFUSE_CACHE_DIR to a writable directory or TILEFUSE_NO_CACHE=1");
    return false;
  }
  stores_++;
  return true;
}

void DiskCache::erase(const CacheKey& key) {
  std::error_code ec;
  fs::remove(path_for(key), ec);
}

DiskCache::Stats DiskCache::stats() const {
  return Stats{hits_.load(), misses_.load(), bad_.load(), stores_.load(), store_failures_.load()};
}

}  // namespace tilefuse::cuda
