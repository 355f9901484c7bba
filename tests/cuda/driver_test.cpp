// Driver loading and device targets, on any machine (with or without a GPU).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "test_kernels.hpp"
#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/cuda/module.hpp"
#include "tilefuse/cuda/stream.hpp"

using namespace tilefuse;

static bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

TEST_CASE("compute capabilities map to code generation targets") {
  CHECK(cuda::target_for_compute_capability(9, 0).name() == "sm_90a");
  CHECK(cuda::target_for_compute_capability(8, 0).name() == "sm_80");
  CHECK(cuda::target_for_compute_capability(8, 6).name() == "sm_80");
  CHECK(cuda::target_for_compute_capability(8, 9).name() == "sm_80");
  CHECK(cuda::target_for_compute_capability(10, 0).name() == "sm_90");
  CHECK(cuda::target_for_compute_capability(12, 0).name() == "sm_90");
  try {
    cuda::target_for_compute_capability(7, 5);
    FAIL("expected UserError");
  } catch (const UserError& e) {
    CHECK(contains(e.what(), "compute capability 7.5 is not supported"));
    CHECK(contains(e.what(), "sm_80"));
  }
}

TEST_CASE("a missing driver library is reported with the dlopen reason and the fix") {
  std::string msg = cuda::detail::driver_load_error("libcuda-that-does-not-exist.so.1");
  CHECK(contains(msg, "no CUDA driver found (libcuda-that-does-not-exist.so.1 could not be loaded: "));
  CHECK(contains(msg, "); run on a machine with an NVIDIA driver or use the interpreter"));
}

TEST_CASE("without a driver, GPU operations throw the driver-missing error") {
  std::string why;
  if (cuda::driver_available(&why)) {
    std::printf("[skip] a CUDA driver is present; the driver-missing path is not testable here\n");
    return;
  }
  CHECK_FALSE(why.empty());
  std::printf("driver unavailable: %s\n", why.c_str());
  auto expect_missing = [&](auto&& fn) {
    try {
      fn();
      FAIL("expected UserError");
    } catch (const UserError& e) {
      std::string m = e.what();
      CAPTURE(m);
      if (contains(why, "no CUDA driver found")) {
        CHECK(m == why);
        CHECK(contains(m, "no CUDA driver found (libcuda.so.1 could not be loaded: "));
        CHECK(contains(m, "run on a machine with an NVIDIA driver or use the interpreter"));
      } else {
        CHECK_FALSE(m.empty());  // a driver without a usable device: its own message
      }
    }
  };
  expect_missing([] { DeviceBuffer<float> b(16); });
  expect_missing([] { cuda::device_info(); });
  expect_missing([] { cuda::synchronize(); });
  expect_missing([] { cuda::Stream::create(); });
  expect_missing([] { cuda::LoadedKernel::from_ptx(tf_test::axpb_kernel()); });
  expect_missing([] { cuda::driver_version(); });
  DeviceBuffer<float> empty;  // constructing nothing needs no driver
  CHECK(empty.size() == 0);
}
