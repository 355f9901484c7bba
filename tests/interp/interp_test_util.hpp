#pragma once
// Helpers for the interpreter tests: host arrays of any dtype, random data, and a
// small kernel fixture around ir::Function + ir::Builder.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <source_location>
#include <string>
#include <vector>

#include "tilefuse/interp/interpreter.hpp"
#include "tilefuse/ir/builder.hpp"
#include "tilefuse/ir/half.hpp"

namespace tf_test {

using namespace tilefuse;
using ir::Type;
using ir::Value;

// A host buffer of n elements of one dtype, with element access through doubles
// (floats) or int64 (integers).
struct HostArray {
  DType dtype;
  int64_t n;
  std::vector<unsigned char> bytes;

  HostArray(DType d, int64_t count) : dtype(d), n(count), bytes(static_cast<size_t>(count * byte_size(d))) {}

  ArgValue arg() { return ArgValue::host(bytes.data(), bytes.size(), dtype); }
  unsigned char* at(int64_t i) { return bytes.data() + i * byte_size(dtype); }
  const unsigned char* at(int64_t i) const { return bytes.data() + i * byte_size(dtype); }

  double get(int64_t i) const {
    if (!is_float(dtype)) return static_cast<double>(geti(i));
    switch (dtype) {
      case DType::f16: { half h; std::memcpy(&h.bits, at(i), 2); return static_cast<float>(h); }
      case DType::bf16: { bfloat16 h; std::memcpy(&h.bits, at(i), 2); return static_cast<float>(h); }
      case DType::f32: { float v; std::memcpy(&v, at(i), 4); return v; }
      default: { double v; std::memcpy(&v, at(i), 8); return v; }
    }
  }
  // Stores v rounded to the dtype (floats) or converted with a C cast (ints).
  void set(int64_t i, double v) {
    if (!is_float(dtype)) return seti(i, static_cast<int64_t>(v));
    switch (dtype) {
      case DType::f16: { half h(static_cast<float>(v)); std::memcpy(at(i), &h.bits, 2); return; }
      case DType::bf16: { bfloat16 h(static_cast<float>(v)); std::memcpy(at(i), &h.bits, 2); return; }
      case DType::f32: { float f = static_cast<float>(v); std::memcpy(at(i), &f, 4); return; }
      default: std::memcpy(at(i), &v, 8); return;
    }
  }
  int64_t geti(int64_t i) const {
    switch (dtype) {
      case DType::i1: return *at(i) != 0;
      case DType::i8: return static_cast<int8_t>(*at(i));
      case DType::u8: return *at(i);
      case DType::i16: { int16_t v; std::memcpy(&v, at(i), 2); return v; }
      case DType::i32: { int32_t v; std::memcpy(&v, at(i), 4); return v; }
      case DType::u32: { uint32_t v; std::memcpy(&v, at(i), 4); return v; }
      case DType::i64: { int64_t v; std::memcpy(&v, at(i), 8); return v; }
      default: return static_cast<int64_t>(get(i));
    }
  }
  void seti(int64_t i, int64_t v) {
    switch (dtype) {
      case DType::i1: *at(i) = v != 0; return;
      case DType::i8: case DType::u8: *at(i) = static_cast<unsigned char>(v); return;
      case DType::i16: { int16_t x = static_cast<int16_t>(v); std::memcpy(at(i), &x, 2); return; }
      case DType::i32: case DType::u32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(at(i), &x, 4); return; }
      case DType::i64: std::memcpy(at(i), &v, 8); return;
      default: set(i, static_cast<double>(v));
    }
  }
};

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(12345);
  return g;
}
inline double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng()); }
inline int64_t uniform_int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng()); }

// Random values: floats in [lo, hi) rounded to the dtype, ints in the dtype's range
// (or [lo, hi] when given).
inline HostArray random_array(DType d, int64_t n, double lo = -4, double hi = 4) {
  HostArray a(d, n);
  for (int64_t i = 0; i < n; ++i) {
    if (is_float(d)) a.set(i, uniform(lo, hi));
    else a.seti(i, uniform_int(static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
  }
  return a;
}
inline HostArray full_range_ints(DType d, int64_t n) {
  int64_t lo, hi;
  switch (d) {
    case DType::i1: lo = 0; hi = 1; break;
    case DType::i8: lo = -128; hi = 127; break;
    case DType::u8: lo = 0; hi = 255; break;
    case DType::i16: lo = -32768; hi = 32767; break;
    case DType::i32: lo = INT32_MIN; hi = INT32_MAX; break;
    case DType::u32: lo = 0; hi = UINT32_MAX; break;
    default: lo = INT64_MIN; hi = INT64_MAX; break;
  }
  HostArray a(d, n);
  for (int64_t i = 0; i < n; ++i) a.seti(i, uniform_int(lo, hi));
  return a;
}

// Float values equal bit for bit (NaN equals NaN).
inline bool same_float(double a, double b) { return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)); }

// A kernel under construction. Ops record the location given at construction (or
// the latest set with at()).
struct Kernel {
  ir::Function f;
  ir::Builder b{f};
  explicit Kernel(const std::string& name, std::source_location loc = std::source_location::current()) {
    f.name = name;
    b.set_loc(loc);
  }
  void at(std::source_location loc = std::source_location::current()) { b.set_loc(loc); }
  Value* ptr(const std::string& name, DType d, bool is_const = false) { return b.param(name, Type::pointer(d), is_const); }
  Value* scalar(const std::string& name, DType d) { return b.param(name, Type::scalar(d)); }
  Value* i32(int64_t v) { return b.const_int(v, Type::scalar(DType::i32)); }
  // pid * block + arange(0, block)
  Value* offsets(int64_t block, int axis = 0) {
    Value* pid = b.program_id(axis);
    return b.binary(ir::BinaryOp::Add, b.binary(ir::BinaryOp::Mul, pid, i32(block)), b.arange(0, block));
  }
  Value* lt(Value* x, Value* y) { return b.compare(ir::CmpPred::Lt, x, y); }
  Value* add(Value* x, Value* y) { return b.binary(ir::BinaryOp::Add, x, y); }
  Value* mul(Value* x, Value* y) { return b.binary(ir::BinaryOp::Mul, x, y); }
  Value* at_ptr(Value* p, Value* off) { return b.add_ptr(p, off); }
  void run(Grid g, const std::vector<ArgValue>& args) { interp::run(f, g, args); }
};

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// out[i] = body(in_0[i], in_1[i], ...) for i < n (n = size of the first input), with
// `block` lanes per program and the tail masked.
using MapBody = std::function<Value*(Kernel&, const std::vector<Value*>&)>;
inline HostArray run_map(DType out_dtype, const std::vector<HostArray*>& ins, const MapBody& body,
                         int64_t block = 128) {
  const int64_t n = ins.at(0)->n;
  Kernel k("map");
  Value* out = k.ptr("out", out_dtype);
  std::vector<Value*> in_ptrs;
  for (size_t j = 0; j < ins.size(); ++j) in_ptrs.push_back(k.ptr("in" + std::to_string(j), ins[j]->dtype, true));
  Value* nv = k.scalar("n", DType::i32);
  Value* offs = k.offsets(block);
  Value* mask = k.lt(offs, nv);
  std::vector<Value*> xs;
  for (Value* p : in_ptrs)  // masked-off lanes read 1, a safe divisor
    xs.push_back(k.b.load(k.at_ptr(p, offs), mask, k.b.constant(1, Type::scalar(p->type.dtype))));
  k.b.store(k.at_ptr(out, offs), body(k, xs), mask);
  HostArray res(out_dtype, n);
  std::vector<ArgValue> args{res.arg()};
  for (HostArray* a : ins) args.push_back(a->arg());
  args.push_back(ArgValue::integer(n, DType::i32));
  k.run(Grid(cdiv(n, block)), args);
  return res;
}

// Message of the UserError `fn` throws (fails the test when it throws none).
template <class Fn>
std::string user_error_text(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  FAIL("expected a UserError");
  return "";
}

}  // namespace tf_test
