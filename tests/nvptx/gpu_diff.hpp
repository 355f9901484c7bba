#pragma once
// Differential check of the GPU compiler on a real device: the same tile-IR function
// runs on the interpreter (the oracle) and, compiled for sm_80 and for the device's
// own target, on the GPU; every buffer must match. Skips without a CUDA driver.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tilefuse/cuda/driver.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/cuda/module.hpp"
#include "tilefuse/interp/interpreter.hpp"
#include "tilefuse/ir/float8.hpp"
#include "tilefuse/ir/half.hpp"
#include "tilefuse/nvptx/compiler.hpp"

namespace tftest {

using namespace tilefuse;

inline bool gpu_present() {
  static std::string why;
  static bool ok = cuda::driver_available(&why) && cuda::device_count() > 0;
  if (!ok) MESSAGE("GPU test skipped: " << why);
  return ok;
}

// One kernel argument: a buffer (elements of the pointee dtype) or a scalar.
struct Arg {
  bool buffer = false;
  DType dtype = DType::f32;
  std::vector<uint8_t> bytes;  // buffer contents
  double f = 0;
  int64_t i = 0;

  static Arg scalar_int(int64_t v, DType d = DType::i32) { Arg a; a.dtype = d; a.i = v; return a; }
  static Arg scalar_float(double v, DType d = DType::f32) { Arg a; a.dtype = d; a.f = v; return a; }
  size_t size() const { return bytes.size() / byte_size(dtype); }
  double get(size_t k) const {
    const uint8_t* p = bytes.data() + k * byte_size(dtype);
    auto rd = [&](auto t) { decltype(t) v; std::memcpy(&v, p, sizeof v); return v; };
    switch (dtype) {
      case DType::i1: return *p != 0;
      case DType::i8: return rd(int8_t{});
      case DType::u8: return rd(uint8_t{});
      case DType::i16: return rd(int16_t{});
      case DType::i32: return rd(int32_t{});
      case DType::u32: return rd(uint32_t{});
      case DType::i64: return static_cast<double>(rd(int64_t{}));
      case DType::f16: return static_cast<float>(rd(half{}));
      case DType::bf16: return static_cast<float>(rd(bfloat16{}));
      case DType::f32: return rd(float{});
      case DType::f64: return rd(double{});
      case DType::f8e4m3: return static_cast<float>(float8_e4m3::from_bits(*p));
      case DType::f8e5m2: return static_cast<float>(float8_e5m2::from_bits(*p));
    }
    return 0;
  }
  void put(size_t k, double v) {
    uint8_t* p = bytes.data() + k * byte_size(dtype);
    auto wr = [&](auto t) { std::memcpy(p, &t, sizeof t); };
    switch (dtype) {
      case DType::i1: *p = v != 0; break;
      case DType::i8: wr(static_cast<int8_t>(v)); break;
      case DType::u8: wr(static_cast<uint8_t>(v)); break;
      case DType::i16: wr(static_cast<int16_t>(v)); break;
      case DType::i32: wr(static_cast<int32_t>(v)); break;
      case DType::u32: wr(static_cast<uint32_t>(v)); break;
      case DType::i64: wr(static_cast<int64_t>(v)); break;
      case DType::f16: wr(half(static_cast<float>(v))); break;
      case DType::bf16: wr(bfloat16(static_cast<float>(v))); break;
      case DType::f32: wr(static_cast<float>(v)); break;
      case DType::f64: wr(v); break;
      case DType::f8e4m3: *p = float8_e4m3(static_cast<float>(v)).bits; break;
      case DType::f8e5m2: *p = float8_e5m2(static_cast<float>(v)).bits; break;
    }
  }
};

// A buffer of n elements filled by gen(k), or by random values in [lo, hi].
inline Arg buffer(DType d, size_t n, double lo = -2, double hi = 2, uint32_t seed = 1) {
  Arg a;
  a.buffer = true;
  a.dtype = d;
  a.bytes.assign(n * byte_size(d), 0);
  std::mt19937 rng(seed * 7919 + n);
  std::uniform_real_distribution<double> u(lo, hi);
  for (size_t k = 0; k < n; ++k) {
    double v = u(rng);
    if (is_int(d)) v = std::floor(v);
    if (d == DType::i1) v = v > (lo + hi) / 2;
    a.put(k, v);
  }
  return a;
}
inline Arg buffer_fn(DType d, size_t n, const std::function<double(size_t)>& gen) {
  Arg a = buffer(d, n, 0, 0);
  for (size_t k = 0; k < n; ++k) a.put(k, gen(k));
  return a;
}

struct Tol {
  double atol = 1e-5, rtol = 1e-5;
};
inline Tol tol_for(DType d) {
  if (d == DType::f16 || d == DType::bf16) return {1e-2, 2e-2};
  if (d == DType::f32) return {1e-5, 1e-4};
  if (d == DType::f64) return {1e-12, 1e-12};  // FMA contraction, libdevice vs libm
  return {0, 0};
}

inline std::vector<ArgValue> values(std::vector<Arg>& args, const std::vector<void*>* dev = nullptr) {
  std::vector<ArgValue> out;
  for (size_t k = 0; k < args.size(); ++k) {
    Arg& a = args[k];
    if (a.buffer) out.push_back(dev ? ArgValue::device((*dev)[k], a.bytes.size(), a.dtype)
                                    : ArgValue::host(a.bytes.data(), a.bytes.size(), a.dtype));
    else if (is_float(a.dtype)) out.push_back(ArgValue::real(a.f, a.dtype));
    else out.push_back(ArgValue::integer(a.i, a.dtype));
  }
  return out;
}

// Runs f on the interpreter and on the GPU (for sm_80, the device's target and `extra`
// targets) and compares every buffer. `tol` overrides the per-dtype tolerance.
inline void gpu_matches_interp(const ir::Function& f, Grid grid, std::vector<Arg> args, const std::string& what,
                               const Tol* tol = nullptr, const std::vector<nvptx::Target>& extra = {}) {
  INFO("case " << what);
  std::vector<Arg> ref = args;
  auto hv = values(ref);
  interp::run(f, grid, hv);  // also without a GPU: checks the case itself
  if (!gpu_present()) return;
  std::vector<nvptx::Target> targets = {nvptx::Target{80, false}, cuda::device_info().target()};
  targets.insert(targets.end(), extra.begin(), extra.end());
  for (const auto& target : targets) {
    INFO("target " << target.name());
    nvptx::CompiledKernel k = nvptx::compile(f, nvptx::CompileOptions{target});
    auto loaded = cuda::LoadedKernel::from_ptx(k);
    std::vector<void*> dev(args.size(), nullptr);
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].buffer) {
        dev[i] = cuda::mem_alloc(args[i].bytes.size());
        cuda::memcpy_htod(dev[i], args[i].bytes.data(), args[i].bytes.size());
      }
    loaded.launch(grid, values(args, &dev));
    cuda::synchronize();
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].buffer) continue;
      Arg got = args[i];
      cuda::memcpy_dtoh(got.bytes.data(), dev[i], got.bytes.size());
      cuda::mem_free(dev[i]);
      Tol t = tol ? *tol : tol_for(got.dtype);
      size_t bad = 0, first = 0;
      for (size_t e = 0; e < got.size(); ++e) {
        double g = got.get(e), r = ref[i].get(e);
        bool ok = g == r || (std::isnan(g) && std::isnan(r)) ||
                  (std::fabs(g - r) <= t.atol + t.rtol * std::fabs(r));
        if (!ok && bad++ == 0) first = e;
      }
      CHECK_MESSAGE(bad == 0,  // counted when it passes too: the summary shows the GPU compared
                    what << " [" << target.name() << "] buffer #" << i << " (" << f.params[i].name << "): " << bad
                        << " of " << got.size() << " elements differ; first at " << first << ": gpu "
                        << got.get(first) << " vs interpreter " << ref[i].get(first));
    }
  }
}

}  // namespace tftest
