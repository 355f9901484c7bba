// The CUDA runtime on a GPU: load, launch, copies, caches, error messages. Each case
// prints a skip reason and passes when no CUDA driver is available.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_kernels.hpp"
#include "tilefuse/cuda/cuda.hpp"

using namespace tilefuse;
using namespace tilefuse::cuda;
using tf_test::P;
namespace fs = std::filesystem;

namespace {

bool gpu_or_skip() {
  std::string why;
  if (driver_available(&why)) return true;
  std::printf("[skip] GPU test skipped: %s\n", why.c_str());
  return false;
}
#define REQUIRE_GPU() \
  if (!gpu_or_skip()) return

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// y = 2x + a through `k`, checked exactly (2x + a is one correctly rounded fma).
void check_axpb(const LoadedKernel& k, size_t n, CUstream stream = nullptr) {
  auto x = random_floats(n, 7 + static_cast<unsigned>(n));
  auto dx = to_device(x);
  DeviceBuffer<float> dy(n);
  dy.memset(0xff, stream);  // NaN everywhere: untouched elements fail the check
  const float a = 0.375f;
  int64_t blocks = (static_cast<int64_t>(n) + k.threads_per_block() - 1) / k.threads_per_block();
  k.launch(Grid(blocks), {dy.arg(), dx.arg(), ArgValue::real(a, DType::f32), ArgValue::integer(n, DType::u32)},
           stream);
  std::vector<float> y(n);
  dy.copy_to_host(y, stream);  // asynchronous on a stream
  synchronize();
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += y[i] == std::fma(2.f, x[i], a) ? 0 : 1;
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("device info and target") {
  REQUIRE_GPU();
  const DeviceInfo& d = device_info();
  std::printf("device 0: %s, cc %d.%d, %d SMs, L2 %lld KB, smem opt-in %d B, driver %d\n", d.name.c_str(), d.cc_major,
              d.cc_minor, d.sm_count, static_cast<long long>(d.l2_bytes >> 10), d.shared_per_block_optin,
              driver_version());
  CHECK_FALSE(d.name.empty());
  CHECK(d.cc_major >= 8);
  CHECK(d.sm_count > 0);
  CHECK(d.l2_bytes > 0);
  CHECK(d.shared_per_block_optin >= d.shared_per_block);
  CHECK(d.warp_size == 32);
  CHECK(d.target() == target_for_compute_capability(d.cc_major, d.cc_minor));
  if (d.cc_major == 9 && d.cc_minor == 0) CHECK(d.target().name() == "sm_90a");
  CHECK(driver_version() >= 12000);
  CHECK(device_count() >= 1);
  CHECK(context() != nullptr);
  CHECK(driver_symbol("cuLaunchKernel") != nullptr);
  CHECK_THROWS_AS(driver_symbol("cuNoSuchFunction"), UserError);
  CHECK_THROWS_WITH_AS(device_info(4096), doctest::Contains("CUDA device 4096 does not exist"), UserError);
}

TEST_CASE("load PTX, launch, copy back") {
  REQUIRE_GPU();
  LoadedKernel k = LoadedKernel::from_ptx(tf_test::axpb_kernel());
  std::printf("axpb: JIT %.3f ms, %d registers, log: %s\n", k.jit_ms(), k.num_regs(), k.jit_log().c_str());
  CHECK(k.name() == "axpb");
  CHECK(k.jit_ms() > 0);
  CHECK(k.num_regs() > 0);
  CHECK(k.local_bytes() == 0);
  CHECK(k.threads_per_block() == 128);
  for (size_t n : {size_t(1), size_t(127), size_t(128), size_t(1000), size_t(1 << 20) + 3}) check_axpb(k, n);
  // Moving a loaded kernel keeps it usable.
  LoadedKernel moved = std::move(k);
  check_axpb(moved, 513);
}

// Sets an environment variable and captures std::cerr for its lifetime; restores both.
struct EnvAndCerr {
  std::string name;
  std::optional<std::string> before;
  std::stringstream out;
  std::streambuf* old;
  EnvAndCerr(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) before = v;
    setenv(n, value, 1);
    old = std::cerr.rdbuf(out.rdbuf());
  }
  ~EnvAndCerr() {
    std::cerr.rdbuf(old);
    if (before) setenv(name.c_str(), before->c_str(), 1);
    else unsetenv(name.c_str());
  }
};

TEST_CASE("TILEFUSE_PRINT_RESOURCES: a loaded kernel's registers and programs per SM on stderr") {
  REQUIRE_GPU();
  std::string out;
  int regs = 0, threads = 0;
  {
    EnvAndCerr guard("TILEFUSE_PRINT_RESOURCES", "other_kernel,axpb");
    LoadedKernel k = LoadedKernel::from_ptx(tf_test::axpb_kernel());
    regs = k.num_regs(), threads = k.threads_per_block();
    out = guard.out.str();
  }
  CAPTURE(out);
  CHECK(contains(out, "tilefuse: kernel 'axpb': 4 warps, " + std::to_string(regs) + " registers (0 bytes local"));
  // A few registers per thread: the SM's threads limit the programs, not its registers.
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex(R"(programs per SM ([0-9]+) \(registers allow ([0-9]+)\))")));
  int per_sm = std::stoi(m[1]), by_regs = std::stoi(m[2]);
  CHECK(per_sm >= 8);
  CHECK(per_sm * threads <= 2048);  // threads per SM on sm_80 and sm_90
  CHECK(by_regs >= per_sm);
  // Not selected: nothing printed.
  EnvAndCerr quiet("TILEFUSE_PRINT_RESOURCES", "other_kernel");
  LoadedKernel again = LoadedKernel::from_ptx(tf_test::axpb_kernel());
  CHECK(quiet.out.str().empty());
}

TEST_CASE("launch on a stream, 64-bit scalars, events") {
  REQUIRE_GPU();
  Stream s = Stream::create(/*non_blocking=*/true);
  LoadedKernel axpb = LoadedKernel::from_ptx(tf_test::axpb_kernel());
  check_axpb(axpb, 4099, s);

  auto k = LoadedKernel::from_ptx(
      tf_test::test_kernel("fill64", {P{true, DType::f64}, P{false, DType::f64}, P{false, DType::i64}}, 2));
  const int64_t n = 3000;
  DeviceBuffer<double> y(n + 64);
  y.memset(0, s);
  Event start = Event::create(), stop = Event::create();
  start.record(s);
  k.launch(Grid((n + 63) / 64), {y.arg(), ArgValue::real(1.0 / 3.0, DType::f64), ArgValue::integer(n, DType::i64)}, s);
  stop.record(s);
  stop.synchronize();
  float ms = Event::elapsed_ms(start, stop);
  CHECK(ms >= 0.f);
  std::vector<double> h(n + 64);
  y.copy_to_host(h, s);
  s.synchronize();
  for (int64_t i = 0; i < n; ++i) REQUIRE(h[i] == 1.0 / 3.0);
  for (int64_t i = n; i < n + 64; ++i) REQUIRE(h[i] == 0.0);
}

TEST_CASE("device buffers, views of foreign memory, L2 flush") {
  REQUIRE_GPU();
  std::vector<int32_t> v(1000);
  std::iota(v.begin(), v.end(), -500);
  DeviceBuffer<int32_t> b = to_device(v);
  CHECK(b.size() == 1000);
  CHECK(b.bytes() == 4000);
  CHECK(b.to_host() == v);
  // A non-owning view of the same memory, as another framework would hand it over.
  auto view = DevicePtr<int32_t>::from_address(b.address(), b.size());
  CHECK(view.data() == b.data());
  auto tail = view.subview(900, 100);
  std::vector<int32_t> t(100);
  tail.copy_to_host(t);
  CHECK(t.front() == 400);
  tail.memset(0);
  CHECK(b.to_host()[950] == 0);
  CHECK(b.to_host()[899] == 399);
  CHECK(b.arg().kind == ArgValue::Kind::DevicePtr);
  CHECK(b.arg().dtype == DType::i32);
  CHECK(b.arg().bytes == 4000);
  CHECK_THROWS_WITH_AS(b.copy_from_host(std::vector<int32_t>(1001)), doctest::Contains("1001 elements requested"),
                       UserError);
  DeviceBuffer<int32_t> moved = std::move(b);
  CHECK(b.data() == nullptr);
  CHECK(moved.size() == 1000);
  auto [free_b, total_b] = mem_info();
  CHECK(free_b > 0);
  CHECK(total_b >= free_b);
  L2Flusher f;
  CHECK(f.bytes() >= 2 * static_cast<size_t>(device_info().l2_bytes));
  f.flush();
  flush_l2();
  synchronize();
  CHECK_THROWS_WITH_AS(DeviceBuffer<char>(size_t(1) << 50), doctest::Contains("CUDA_ERROR_OUT_OF_MEMORY"), CudaError);
}

TEST_CASE("PTX to cubin through the driver linker, then load") {
  REQUIRE_GPU();
  auto ck = tf_test::axpb_kernel();
  Cubin c = link_ptx_to_cubin(ck.ptx, ck.name);
  REQUIRE(c.bytes.size() > 4);
  CHECK(c.bytes.substr(0, 4) == std::string("\x7f" "ELF"));
  CHECK(c.jit_ms > 0);
  std::printf("cubin: %zu bytes in %.3f ms\n", c.bytes.size(), c.jit_ms);
  LoadedKernel k = LoadedKernel::from_cubin(ck, c.bytes, c.jit_ms, c.info_log);
  CHECK(k.jit_ms() == c.jit_ms);
  check_axpb(k, 777);
}

TEST_CASE("kernel cache: memory, then disk with cubin, then compile (the linker: TILEFUSE_WHOLE_PROGRAM_JIT=0)") {
  REQUIRE_GPU();
  setenv("TILEFUSE_WHOLE_PROGRAM_JIT", "0", 1);
  fs::path dir = fs::temp_directory_path() / ("tilefuse-gpu-cache-" + std::to_string(std::random_device{}()));
  {
    DiskCache disk(dir);
    CacheKey key = make_cache_key("axpb test IR", device_info().target(), "num_warps=4", "test");
    int compiles = 0;
    auto compile = [&] {
      ++compiles;
      return tf_test::axpb_kernel();
    };
    {
      KernelCache cold(&disk);
      const LoadedKernel& k = cold.get(key, compile);
      CHECK(compiles == 1);
      CHECK(k.jit_ms() > 0);
      CHECK(&cold.get(key, compile) == &k);  // memory hit
      CHECK(compiles == 1);
      CHECK(cold.size() == 1);
      check_axpb(k, 300);
    }
    auto entry = disk.load(key);
    REQUIRE(entry.has_value());
    CHECK_FALSE(entry->cubin.empty());
    CHECK(entry->cubin_cc == device_info().compute_capability());
    KernelCache warm(&disk);
    const LoadedKernel& k2 = warm.get(key, compile);
    CHECK(compiles == 1);        // PTX and cubin came from disk
    CHECK(k2.jit_ms() == 0.0);   // no JIT on a warm start
    check_axpb(k2, 301);
    std::printf("warm load from cubin: %.3f ms\n", k2.load_ms());
  }
  unsetenv("TILEFUSE_WHOLE_PROGRAM_JIT");
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("kernel cache by default: the disk keeps the PTX, a warm start JITs it as a whole program") {
  REQUIRE_GPU();
  fs::path dir = fs::temp_directory_path() / ("tilefuse-gpu-cache-" + std::to_string(std::random_device{}()));
  {
    DiskCache disk(dir);
    CacheKey key = make_cache_key("axpb test IR, whole program", device_info().target(), "num_warps=4", "test");
    int compiles = 0;
    auto compile = [&] {
      ++compiles;
      return tf_test::axpb_kernel();
    };
    {
      KernelCache cold(&disk);
      check_axpb(cold.get(key, compile), 302);
      CHECK(compiles == 1);
    }
    auto entry = disk.load(key);
    REQUIRE(entry.has_value());
    CHECK(entry->cubin.empty());  // the driver's JIT cache keeps the SASS
    CHECK(entry->kernel.ptx == tf_test::axpb_kernel().ptx);
    KernelCache warm(&disk);
    const LoadedKernel& k = warm.get(key, compile);
    CHECK(compiles == 1);  // the PTX came from disk
    check_axpb(k, 303);
    std::printf("warm load from PTX (driver JIT cache): %.3f ms JIT, %.3f ms load\n", k.jit_ms(), k.load_ms());
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("bad PTX reports the JIT error log") {
  REQUIRE_GPU();
  auto k = tf_test::axpb_kernel();
  k.ptx = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry axpb()\n{\n  mov.u32 %r1, 1;\n  ret;\n}\n";
  try {
    LoadedKernel::from_ptx(k);
    FAIL("expected CudaError");
  } catch (const CudaError& e) {
    std::string m = e.what();
    std::printf("bad PTX error: %s\n", m.c_str());
    CHECK(contains(m, "CUDA error CUDA_ERROR_INVALID_PTX"));
    CHECK(contains(m, "cuModuleLoadDataEx"));
    CHECK(contains(m, "kernel 'axpb'"));
    CHECK(contains(m, "JIT log:"));
    CHECK(contains(m, "%r1"));  // ptxas names the undeclared register
  }
  try {
    link_ptx_to_cubin(k.ptx, k.name);
    FAIL("expected CudaError");
  } catch (const CudaError& e) {
    std::string m = e.what();
    CHECK(contains(m, "CUDA_ERROR_INVALID_PTX"));
    CHECK(contains(m, "JIT log:"));
  }
  auto missing = tf_test::axpb_kernel();
  missing.name = "no_such_kernel";
  CHECK_THROWS_WITH_AS(LoadedKernel::from_ptx(missing),
                       doctest::Contains("the module has no kernel named 'no_such_kernel'"), CudaError);
}

TEST_CASE("dynamic shared memory above 48 KB opts in, above the device limit fails clearly") {
  REQUIRE_GPU();
  const DeviceInfo& d = device_info();
  P ptr{true, DType::f32};
  int big = std::min(d.shared_per_block_optin, 100 * 1024);
  REQUIRE(big > 48 * 1024);
  auto k = LoadedKernel::from_ptx(tf_test::test_kernel("reverse_block", {ptr, ptr}, 4, big));
  CHECK(k.shared_bytes() == big);
  const int n = 128 * 8;
  auto x = random_floats(n, 3);
  auto dx = to_device(x);
  DeviceBuffer<float> dy(n);
  k.launch(Grid(n / 128), {dy.arg(), dx.arg()});
  auto y = dy.to_host();
  for (int b = 0; b < n / 128; ++b)
    for (int t = 0; t < 128; ++t) REQUIRE(y[b * 128 + t] == x[b * 128 + 127 - t]);

  int too_much = d.shared_per_block_optin + 1024;
  try {
    LoadedKernel::from_ptx(tf_test::test_kernel("reverse_block", {ptr, ptr}, 4, too_much));
    FAIL("expected UserError");
  } catch (const UserError& e) {
    std::string m = e.what();
    std::printf("too much shared memory: %s\n", m.c_str());
    CHECK(contains(m, "kernel 'reverse_block' needs " + std::to_string(too_much) + " bytes of dynamic shared memory"));
    CHECK(contains(m, "allows at most " + std::to_string(d.shared_per_block_optin) + " bytes per block"));
    CHECK(contains(m, "num_stages"));
  }
}

TEST_CASE("launch errors name the kernel and the configuration") {
  REQUIRE_GPU();
  LoadedKernel k = LoadedKernel::from_ptx(tf_test::axpb_kernel());
  DeviceBuffer<float> buf(16);
  std::vector<float> host(16);
  auto a = ArgValue::real(1.0, DType::f32);
  auto n = ArgValue::integer(16, DType::u32);
  CHECK_THROWS_WITH_AS(k.launch(Grid(1), {buf.arg(), buf.arg(), a}),
                       doctest::Contains("kernel 'axpb' takes 4 arguments but 3 were given"), UserError);
  CHECK_THROWS_WITH_AS(k.launch(Grid(1), {buf.arg(), ArgValue::host(host.data(), 64, DType::f32), a, n}),
                       doctest::Contains("argument 1 must be a device pointer (f32*) but got a host buffer"),
                       UserError);
  CHECK_THROWS_WITH_AS(k.launch(Grid(1), {buf.arg(), buf.arg(), n, n}),
                       doctest::Contains("argument 2 must be a scalar of type f32 but got an integer"), UserError);
  CHECK_THROWS_WITH_AS(k.launch(Grid(1, 70000), {buf.arg(), buf.arg(), a, n}),
                       doctest::Contains("kernel 'axpb' with grid (1, 70000, 1), 128 threads per block"), UserError);
  k.launch(Grid(0), {buf.arg(), buf.arg(), a, n});  // empty grid: nothing to do

  // .reqntid 64 launched with 32 threads: the driver refuses the launch.
  auto r = LoadedKernel::from_ptx(tf_test::test_kernel("needs64", {}, 1));
  try {
    r.launch(Grid(2), {});
    synchronize();
    FAIL("expected CudaError");
  } catch (const CudaError& e) {
    std::string m = e.what();
    std::printf("launch error: %s\n", m.c_str());
    CHECK(contains(m, "CUDA error CUDA_ERROR_"));
    CHECK(contains(m, "launching kernel 'needs64' with grid (2, 1, 1), 32 threads per block, 0 bytes of dynamic "
                      "shared memory"));
  }
  // More warps than the kernel's .maxntid allows is caught at load time (.reqntid is
  // not reflected in MAX_THREADS_PER_BLOCK; the driver rejects that at launch, above).
  CHECK_THROWS_WITH_AS(LoadedKernel::from_ptx(tf_test::test_kernel("max64", {}, 4)),
                       doctest::Contains("kernel 'max64' cannot run with num_warps=4"), UserError);
  auto m = LoadedKernel::from_ptx(tf_test::test_kernel("max64", {}, 2));
  CHECK(m.max_threads_per_block() == 64);
  m.launch(Grid(1), {});
  synchronize();
}
