// The on-disk kernel cache and hashing, on the CPU.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "tilefuse/cuda/disk_cache.hpp"
#include "tilefuse/cuda/kernel_cache.hpp"

using namespace tilefuse;
using namespace tilefuse::cuda;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("tilefuse-cache-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

CacheEntry sample_entry(int variant = 0) {
  CacheEntry e;
  e.kernel.name = "softmax_kernel";
  e.kernel.ptx = "// PTX variant " + std::to_string(variant) + "\n.version 8.0\n.target sm_90a\n" +
                 std::string(1000 + variant * 37, 'x');
  e.kernel.target = {90, true};
  e.kernel.num_warps = 4 + variant % 4;
  e.kernel.shared_bytes = 1024 * variant;
  e.kernel.params = {{true, DType::bf16}, {true, DType::bf16}, {false, DType::i32}, {false, DType::i64}};
  if (variant % 2 == 1) {  // odd variants carry TMA tensor maps: one with runtime extents, one constant
    nvptx::TensorMapSpec a;
    a.dtype = DType::bf16;
    a.base_param = 0;
    a.dims = {{2, 0}, {3, 0}};
    a.strides = {{3, 0}, {-1, 1}};
    a.box = {128, 64};
    a.swizzle_bytes = 128;
    nvptx::TensorMapSpec b;
    b.dtype = DType::f32;
    b.base_param = 1;
    b.dims = {{-1, 4}, {-1, int64_t(1) << 33}, {2, 0}};
    b.strides = {{-1, -7}, {-1, 4096}, {-1, 1}};
    b.box = {1, 16, 32 + variant};
    e.kernel.tensor_maps = {a, b};
  }
  e.kernel.persistent = variant % 3 == 1;  // programs looping over the grid
  e.kernel.early_launch_max_blocks = variant % 2 == 1 ? 4096u + variant : 0;  // launched early (sm_90+)
  e.cubin = std::string("\x7f" "ELF\0\0\x01\x02", 8) + std::string(500, char(variant));
  e.cubin_cc = 90;
  e.cubin_driver = 13000;
  e.info = "ptxas info: Used 32 registers";
  return e;
}

void check_same(const CacheEntry& a, const CacheEntry& b) {
  CHECK(a.kernel.name == b.kernel.name);
  CHECK(a.kernel.ptx == b.kernel.ptx);
  CHECK(a.kernel.target == b.kernel.target);
  CHECK(a.kernel.num_warps == b.kernel.num_warps);
  CHECK(a.kernel.shared_bytes == b.kernel.shared_bytes);
  REQUIRE(a.kernel.params.size() == b.kernel.params.size());
  for (size_t i = 0; i < a.kernel.params.size(); ++i) {
    CHECK(a.kernel.params[i].is_pointer == b.kernel.params[i].is_pointer);
    CHECK(a.kernel.params[i].dtype == b.kernel.params[i].dtype);
  }
  CHECK(a.kernel.tensor_maps == b.kernel.tensor_maps);
  CHECK(a.kernel.persistent == b.kernel.persistent);
  CHECK(a.kernel.early_launch_max_blocks == b.kernel.early_launch_max_blocks);
  CHECK(a.cubin == b.cubin);
  CHECK(a.cubin_cc == b.cubin_cc);
  CHECK(a.cubin_driver == b.cubin_driver);
  CHECK(a.info == b.info);
}

CacheKey key_of(const std::string& s) { return make_cache_key(s, {90, true}, "num_warps=4", "tilefuse-test-1"); }

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_all(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << s;
}

size_t count_files(const fs::path& dir) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("sha256 matches the FIPS 180-4 test vectors") {
  CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(to_hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 h;  // a million 'a', fed in odd-sized pieces
  std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left) {
    size_t n = std::min(left, chunk.size());
    h.update(chunk.data(), n);
    left -= n;
  }
  CHECK(to_hex(h.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("cache keys depend on every input") {
  nvptx::Target t90a{90, true}, t80{80, false};
  CacheKey base = make_cache_key("ir", t90a, "opts", "v1");
  CHECK(base == make_cache_key("ir", t90a, "opts", "v1"));
  CHECK(base != make_cache_key("ir2", t90a, "opts", "v1"));
  CHECK(base != make_cache_key("ir", t80, "opts", "v1"));
  CHECK(base != make_cache_key("ir", t90a, "opts2", "v1"));
  CHECK(base != make_cache_key("ir", t90a, "opts", "v2"));
  CHECK(make_cache_key("ab", t90a, "c", "v") != make_cache_key("a", t90a, "bc", "v"));
  ::setenv("TILEFUSE_FAST_MATH", "1", 1);  // a cache-invalidating knob
  CacheKey with_knob = make_cache_key("ir", t90a, "opts", "v1");
  ::unsetenv("TILEFUSE_FAST_MATH");
  CHECK(base != with_knob);
  CHECK(base.hex().size() == 64);
}

TEST_CASE("default cache dir follows TILEFUSE_CACHE_DIR, then XDG_CACHE_HOME, then HOME") {
  const char* old = std::getenv("TILEFUSE_CACHE_DIR");
  std::string saved = old ? old : "";
  ::setenv("TILEFUSE_CACHE_DIR", "/some/where", 1);
  CHECK(default_cache_dir() == fs::path("/some/where"));
  ::unsetenv("TILEFUSE_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  std::string saved_xdg = xdg ? xdg : "";
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  CHECK(default_cache_dir() == fs::path("/xdg/tilefuse"));
  ::unsetenv("XDG_CACHE_HOME");
  if (const char* home = std::getenv("HOME")) CHECK(default_cache_dir() == fs::path(home) / ".cache" / "tilefuse");
  if (old) ::setenv("TILEFUSE_CACHE_DIR", saved.c_str(), 1);
  if (xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
}

TEST_CASE("disk cache round trip") {
  TempDir tmp;
  DiskCache cache(tmp.path);
  CacheKey k = key_of("kernel A");
  CHECK_FALSE(cache.load(k).has_value());
  REQUIRE(cache.store(k, sample_entry(3)));
  CHECK(fs::exists(cache.path_for(k)));
  CHECK(cache.path_for(k).parent_path() == tmp.path / "kernels");
  auto e = cache.load(k);
  REQUIRE(e.has_value());
  check_same(*e, sample_entry(3));
  // Overwrite with another entry.
  REQUIRE(cache.store(k, sample_entry(5)));
  e = cache.load(k);
  REQUIRE(e.has_value());
  check_same(*e, sample_entry(5));
  // A different key is a different file.
  CHECK_FALSE(cache.load(key_of("kernel B")).has_value());
  auto s = cache.stats();
  CHECK(s.hits == 2);
  CHECK(s.misses == 2);
  CHECK(s.stores == 2);
  CHECK(s.bad == 0);
  CHECK(count_files(tmp.path / "kernels") == 1);  // no temporary files left behind
  cache.erase(k);
  CHECK_FALSE(cache.load(k).has_value());
}

TEST_CASE("tensor maps survive the disk cache encoding") {
  CacheEntry in = sample_entry(1);
  REQUIRE(in.kernel.tensor_maps.size() == 2);
  CacheKey k = key_of("tma kernel");
  std::string why;
  auto out = DiskCache::decode(k, DiskCache::encode(k, in), &why);
  REQUIRE_MESSAGE(out.has_value(), why);
  check_same(*out, in);
  const auto& b = out->kernel.tensor_maps[1];
  CHECK(b.dtype == DType::f32);
  CHECK(b.base_param == 1);
  CHECK(b.dims[1].param == -1);
  CHECK(b.dims[1].constant == int64_t(1) << 33);  // 64-bit constants
  CHECK(b.strides[0].constant == -7);              // negative values round-trip
  CHECK(b.box == std::vector<int>{1, 16, 33});
  CHECK(out->kernel.tensor_maps[0].swizzle_bytes == 128);
  // Without tensor maps the list stays empty.
  auto plain = DiskCache::decode(k, DiskCache::encode(k, sample_entry(2)), &why);
  REQUIRE(plain.has_value());
  CHECK(plain->kernel.tensor_maps.empty());
  CHECK(out->kernel.persistent);          // variant 1 is persistent,
  CHECK_FALSE(plain->kernel.persistent);  // variant 2 is not
  CHECK(out->kernel.early_launch_max_blocks == 4097);  // variant 1 waits for prior grids,
  CHECK(plain->kernel.early_launch_max_blocks == 0);   // variant 2 does not
}

TEST_CASE("a corrupt cache entry is detected, deleted and rebuilt") {
  TempDir tmp;
  DiskCache cache(tmp.path);
  CacheKey k = key_of("kernel C");
  REQUIRE(cache.store(k, sample_entry(1)));
  fs::path p = cache.path_for(k);
  std::string bytes = read_all(p);

  SUBCASE("flipped payload byte") { bytes[bytes.size() - 10] ^= 0x40; }
  SUBCASE("flipped header byte") { bytes[3] ^= 0x01; }
  SUBCASE("flipped checksum byte") { bytes[60] ^= 0x01; }
  SUBCASE("entry of another key") {
    bytes = DiskCache::encode(key_of("another kernel"), sample_entry(1));
  }
  SUBCASE("garbage") { bytes = std::string(4096, '\x5a'); }
  SUBCASE("empty file") { bytes.clear(); }
  write_all(p, bytes);

  CHECK_FALSE(cache.load(k).has_value());
  CHECK(cache.stats().bad == 1);
  CHECK_FALSE(fs::exists(p));  // deleted, never trusted
  // Rebuilt on the next store.
  REQUIRE(cache.store(k, sample_entry(2)));
  auto e = cache.load(k);
  REQUIRE(e.has_value());
  check_same(*e, sample_entry(2));
}

TEST_CASE("a truncated cache entry is detected") {
  TempDir tmp;
  DiskCache cache(tmp.path);
  CacheKey k = key_of("kernel T");
  REQUIRE(cache.store(k, sample_entry(4)));
  fs::path p = cache.path_for(k);
  const std::string full = read_all(p);
  for (size_t len : {full.size() - 1, full.size() / 2, size_t(100), size_t(60), size_t(8), size_t(1)}) {
    CAPTURE(len);
    write_all(p, full.substr(0, len));
    CHECK_FALSE(cache.load(k).has_value());
    CHECK_FALSE(fs::exists(p));
  }
  // Appended garbage is as bad as missing bytes.
  write_all(p, full + "junk");
  CHECK_FALSE(cache.load(k).has_value());
  std::string why;
  CHECK_FALSE(DiskCache::decode(k, full.substr(0, full.size() - 5), &why).has_value());
  CHECK(why.find("truncated") != std::string::npos);
  CHECK(DiskCache::decode(k, full, &why).has_value());
}

TEST_CASE("a disabled or unwritable cache neither throws nor stores") {
  TempDir tmp;
  DiskCache off(tmp.path, /*enabled=*/false);
  CacheKey k = key_of("kernel D");
  CHECK_FALSE(off.store(k, sample_entry()));
  CHECK_FALSE(off.load(k).has_value());
  CHECK_FALSE(fs::exists(off.path_for(k)));

  write_all(tmp.path / "a-file", "not a directory");
  DiskCache bad(tmp.path / "a-file" / "sub");
  CHECK_FALSE(bad.store(k, sample_entry()));
  CHECK(bad.stats().store_failures == 1);
  CHECK_FALSE(bad.load(k).has_value());
}

TEST_CASE("concurrent writers and readers in several threads never see a partial entry") {
  TempDir tmp;
  DiskCache cache(tmp.path);
  CacheKey k = key_of("kernel contended");
  const int kThreads = 8, kIters = 60;
  std::atomic<int> bad_reads{0}, good_reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        if (!cache.store(k, sample_entry((t * kIters + i) % 7))) bad_reads++;
        if (auto e = cache.load(k)) {
          // Whatever we read must be one of the complete entries.
          int v = e->kernel.num_warps - 4;
          bool ok = false;
          for (int variant = v; variant < 7 && !ok; variant += 4) ok = e->kernel.ptx == sample_entry(variant).kernel.ptx;
          ok ? good_reads++ : bad_reads++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad_reads == 0);
  CHECK(good_reads == kThreads * kIters);
  CHECK(cache.stats().bad == 0);
  CHECK(count_files(tmp.path / "kernels") == 1);
}

TEST_CASE("concurrent writers in two processes never see a partial entry") {
  TempDir tmp;
  CacheKey k = key_of("kernel two processes");
  const int kIters = 150;
  auto work = [&](int offset) {
    DiskCache cache(tmp.path);
    int bad = 0;
    for (int i = 0; i < kIters; ++i) {
      if (!cache.store(k, sample_entry((i + offset) % 7))) ++bad;
      auto e = cache.load(k);
      if (!e) {
        ++bad;
        continue;
      }
      bool ok = false;
      for (int variant = 0; variant < 7 && !ok; ++variant) ok = e->kernel.ptx == sample_entry(variant).kernel.ptx;
      bad += ok ? 0 : 1;
    }
    return bad + static_cast<int>(cache.stats().bad);
  };
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(work(3) == 0 ? 0 : 1);  // child: no doctest macros
  int parent_bad = work(0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(parent_bad == 0);
  CHECK(count_files(tmp.path / "kernels") == 1);
}

TEST_CASE("KernelCache::compiled compiles once and then reads the disk") {
  TempDir tmp;
  DiskCache disk(tmp.path);
  CacheKey k = key_of("kernel E");
  int compiles = 0;
  auto compile = [&] {
    ++compiles;
    return sample_entry(6).kernel;
  };
  bool from_disk = true;
  {
    KernelCache kc(&disk);
    auto c = kc.compiled(k, compile, &from_disk);
    CHECK(c.name == "softmax_kernel");
    CHECK_FALSE(from_disk);
  }
  KernelCache warm(&disk);  // a new process, as far as the cache can tell
  auto c = warm.compiled(k, compile, &from_disk);
  CHECK(from_disk);
  CHECK(compiles == 1);
  CHECK(c.ptx == sample_entry(6).kernel.ptx);
  CHECK(c.params.size() == 4);
}

TEST_CASE("8-bit float parameters and tensor maps survive the disk cache encoding") {
  CacheEntry in = sample_entry(1);
  in.kernel.params = {{true, DType::bf16}, {true, DType::f8e4m3}, {true, DType::f8e5m2}, {false, DType::i32}};
  in.kernel.tensor_maps[0].dtype = DType::f8e4m3;
  in.kernel.tensor_maps[1].dtype = DType::f8e5m2;
  CacheKey k = key_of("fp8 kernel");
  std::string why;
  auto out = DiskCache::decode(k, DiskCache::encode(k, in), &why);
  REQUIRE_MESSAGE(out.has_value(), why);  // was "malformed payload": dtypes past f64 refused
  check_same(*out, in);
  CHECK(out->kernel.params[2].dtype == DType::f8e5m2);
  CHECK(out->kernel.tensor_maps[0].dtype == DType::f8e4m3);
}
