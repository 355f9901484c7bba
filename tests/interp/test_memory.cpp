// Loads, stores and atomics: masks, 'other', pointer selection, bounds checks and
// argument checking.
#include "interp_test_util.hpp"

using namespace tf_test;
using ir::AtomicOp;
using ir::BinaryOp;

TEST_CASE("interp: masked load with and without 'other', masked store") {
  const int64_t n = 45, B = 64;  // lanes 45..63 are outside the buffers
  Kernel k("masked");
  Value* out = k.ptr("out", DType::f32);
  Value* out0 = k.ptr("out0", DType::f32);
  Value* in = k.ptr("in", DType::f32, true);
  Value* nv = k.scalar("n", DType::i32);
  Value* offs = k.b.arange(0, B);
  Value* mask = k.lt(offs, nv);
  Value* even = k.b.compare(ir::CmpPred::Eq, k.b.binary(BinaryOp::Rem, offs, k.i32(2)), k.i32(0));
  Value* x = k.b.load(k.at_ptr(in, offs), mask, k.b.const_float(-7, Type::scalar(DType::f32)));
  Value* y = k.b.load(k.at_ptr(in, offs), mask);
  // x and y over all lanes land in the first n lanes reversed: (B-1-i) for i >= B-n.
  Value* rev = k.b.binary(BinaryOp::Sub, k.i32(B - 1), offs);
  Value* rmask = k.lt(rev, nv);
  k.b.store(k.at_ptr(out, rev), x, rmask);
  k.b.store(k.at_ptr(out0, rev), y, k.b.binary(BinaryOp::And, rmask, even));
  HostArray a = random_array(DType::f32, n), o(DType::f32, n), o0 = random_array(DType::f32, n);
  HostArray o0_before = o0;
  k.run(Grid(1), {o.arg(), o0.arg(), a.arg(), ArgValue::integer(n, DType::i32)});
  for (int64_t j = 0; j < n; ++j) {  // out[j] came from lane B-1-j
    int64_t lane = B - 1 - j;
    CHECK(o.get(j) == (lane < n ? a.get(lane) : -7.0));
    CHECK(o0.get(j) == (lane % 2 == 0 ? (lane < n ? a.get(lane) : 0.0) : o0_before.get(j)));
  }
}

TEST_CASE("interp: loads and stores of every dtype round-trip their bytes") {
  for (DType d : {DType::i1, DType::i8, DType::u8, DType::i16, DType::i32, DType::u32, DType::i64, DType::f16,
                  DType::bf16, DType::f32, DType::f64}) {
    CAPTURE(name(d));
    HostArray a = is_float(d) ? random_array(d, 100) : full_range_ints(d, 100);
    HostArray o = run_map(d, {&a}, [](Kernel&, auto& x) { return x[0]; }, 32);
    CHECK(o.bytes == a.bytes);
  }
}

TEST_CASE("interp: select between pointers of two buffers") {
  Kernel k("ptrsel");
  Value* out = k.ptr("out", DType::i32);
  Value* pa = k.ptr("a", DType::i32, true);
  Value* pb = k.ptr("b", DType::i32, true);
  Value* offs = k.b.arange(0, 16);
  Value* odd = k.b.compare(ir::CmpPred::Eq, k.b.binary(BinaryOp::And, offs, k.i32(1)), k.i32(1));
  Value* p = k.b.select(odd, k.at_ptr(pa, offs), k.at_ptr(pb, offs));
  k.b.store(k.at_ptr(out, offs), k.b.load(p));
  HostArray a = full_range_ints(DType::i32, 16), b = full_range_ints(DType::i32, 16), o(DType::i32, 16);
  k.run(Grid(1), {o.arg(), a.arg(), b.arg()});
  for (int i = 0; i < 16; ++i) CHECK(o.geti(i) == (i % 2 ? a.geti(i) : b.geti(i)));
}

namespace {

// Every program applies `op` with its values to slots[idx[lane]] (duplicates on
// purpose) for lanes < n and stores the returned old values.
void run_atomic(AtomicOp op, HostArray& slots, HostArray& idx, HostArray& vals, HostArray& olds, int64_t n) {
  Kernel k("atomics");
  Value* s = k.ptr("slots", slots.dtype);
  Value* ip = k.ptr("idx", DType::i32, true);
  Value* vp = k.ptr("vals", vals.dtype, true);
  Value* op_ = k.ptr("olds", olds.dtype);
  Value* nv = k.scalar("n", DType::i32);
  Value* offs = k.offsets(32);
  Value* mask = k.lt(offs, nv);
  Value* i = k.b.load(k.at_ptr(ip, offs), mask);
  Value* v = k.b.load(k.at_ptr(vp, offs), mask);
  k.b.store(k.at_ptr(op_, offs), k.b.atomic_rmw(op, k.at_ptr(s, i), v, mask), mask);
  k.run(Grid(cdiv(n, 32)), {slots.arg(), idx.arg(), vals.arg(), olds.arg(), ArgValue::integer(n, DType::i32)});
}

}  // namespace

TEST_CASE("interp: atomic add/max/min/xchg apply in lane order and return old values") {
  const int64_t n = 101, S = 7;
  for (DType d : {DType::i32, DType::u32, DType::i64, DType::f32, DType::f64}) {
    for (AtomicOp op : {AtomicOp::Add, AtomicOp::Max, AtomicOp::Min, AtomicOp::Xchg}) {
      if (d == DType::f64 && (op == AtomicOp::Max || op == AtomicOp::Min)) continue;  // not supported
      CAPTURE(name(d));
      CAPTURE(ir::name(op));
      HostArray idx = random_array(DType::i32, n, 0, S - 1);
      HostArray vals = is_float(d) ? random_array(d, n, -100, 100) : random_array(d, n, 0, 1000);
      HostArray slots = is_float(d) ? random_array(d, S, -10, 10) : random_array(d, S, 0, 1000);
      HostArray ref = slots, olds(d, n);
      run_atomic(op, slots, idx, vals, olds, n);
      for (int64_t j = 0; j < n; ++j) {  // sequential reference in lane order
        int64_t s = idx.geti(j);
        REQUIRE(olds.get(j) == ref.get(s));
        double old = ref.get(s), v = vals.get(j);
        double nv = op == AtomicOp::Add ? old + v : op == AtomicOp::Max ? std::max(old, v)
                  : op == AtomicOp::Min ? std::min(old, v) : v;
        ref.set(s, nv);  // rounds to the dtype like the f32 add
      }
      for (int64_t s = 0; s < S; ++s) REQUIRE(slots.get(s) == ref.get(s));
    }
  }
}

TEST_CASE("interp: atomic add on i32 wraps, masked-off lanes leave memory alone") {
  HostArray slots(DType::i32, 1), idx(DType::i32, 3), vals(DType::i32, 3), olds(DType::i32, 3);
  slots.seti(0, INT32_MAX);
  vals.seti(0, 1); vals.seti(1, 5); vals.seti(2, 1000);
  run_atomic(AtomicOp::Add, slots, idx, vals, olds, 2);  // lane 2 is masked off
  CHECK(olds.geti(0) == INT32_MAX);
  CHECK(olds.geti(1) == INT32_MIN);
  CHECK(slots.geti(0) == INT32_MIN + 5);
}

TEST_CASE("interp: atomic_cas swaps only where the old value matches") {
  Kernel k("cas");
  Value* s = k.ptr("slots", DType::i32);
  Value* o = k.ptr("olds", DType::i32);
  Value* offs = k.b.arange(0, 8);
  Value* cmp = k.b.binary(BinaryOp::Mul, offs, k.i32(10));  // matches where slots[i] == 10 i
  Value* old = k.b.atomic_cas(k.at_ptr(s, offs), cmp, k.b.binary(BinaryOp::Sub, k.i32(0), offs));
  k.b.store(k.at_ptr(o, offs), old);
  HostArray slots(DType::i32, 8), olds(DType::i32, 8);
  for (int i = 0; i < 8; ++i) slots.seti(i, i % 3 == 0 ? 10 * i : 10 * i + uniform_int(1, 9));
  HostArray before = slots;
  k.run(Grid(1), {slots.arg(), olds.arg()});
  for (int i = 0; i < 8; ++i) {
    CHECK(olds.geti(i) == before.geti(i));
    CHECK(slots.geti(i) == (i % 3 == 0 ? -i : before.geti(i)));
  }
}

TEST_CASE("interp: out-of-bounds load names the op, index, buffer, program id and line") {
  Kernel k("softmax");
  Value* out = k.ptr("out", DType::bf16);
  Value* in = k.ptr("in", DType::bf16, true);
  Value* offs = k.offsets(256);
  Value* x = nullptr;
  k.at(); const int line = __LINE__; x = k.b.load(k.at_ptr(in, offs));
  k.at();
  k.b.store(k.at_ptr(out, offs), x);
  HostArray a = random_array(DType::bf16, 1000), o(DType::bf16, 1024);
  std::string msg = user_error_text([&] { k.run(Grid(4), {o.arg(), a.arg()}); });
  CHECK(msg.find("out-of-bounds load in kernel 'softmax'") != std::string::npos);
  CHECK(msg.find("element index 1000 of buffer 'in' (1000 elements of bf16)") != std::string::npos);
  CHECK(msg.find("program id (3, 0, 0)") != std::string::npos);
  CHECK(msg.find("test_memory.cpp:" + std::to_string(line)) != std::string::npos);
  CHECK(msg.find("Mask the access") != std::string::npos);
}

TEST_CASE("interp: readable lanes keep the mask's values and must lie inside the buffer") {
  // Lanes 0..B-1 over a buffer of n elements; the mask keeps [3, 29), `readable` allows
  // [0, hi): masked lanes still read `other` wherever they are readable.
  const int64_t n = 40, B = 64;
  for (int64_t hi : {32, 40, 48}) {
    CAPTURE(hi);
    Kernel k("readable");
    Value* out = k.ptr("out", DType::f32);
    Value* in = k.ptr("in", DType::f32, true);
    Value* offs = k.b.arange(0, B);
    Value* mask = k.b.binary(BinaryOp::And, k.b.compare(ir::CmpPred::Ge, offs, k.i32(3)), k.lt(offs, k.i32(29)));
    Value* readable = k.lt(offs, k.i32(hi));
    k.at(); const int line = __LINE__;
    Value* x = k.b.load(k.at_ptr(in, offs), mask, k.b.const_float(-7, Type::scalar(DType::f32)), ir::Evict::Normal,
                        readable);
    k.at();
    k.b.store(k.at_ptr(out, offs), x, k.lt(offs, k.i32(n)));
    HostArray a = random_array(DType::f32, n), o(DType::f32, n);
    if (hi > n) {
      std::string msg = user_error_text([&] { k.run(Grid(1), {o.arg(), a.arg()}); });
      CHECK(msg.find("load in kernel 'readable' declares element index 40 of buffer 'in' (40 elements of f32) "
                     "readable, but it lies outside the buffer") != std::string::npos);
      CHECK(msg.find("test_memory.cpp:" + std::to_string(line)) != std::string::npos);
      CHECK(msg.find("Declare readable only lanes inside the buffer") != std::string::npos);
      continue;
    }
    k.run(Grid(1), {o.arg(), a.arg()});
    for (int64_t j = 0; j < n; ++j) CHECK(o.get(j) == (j >= 3 && j < 29 ? a.get(j) : -7.0));
  }
}

TEST_CASE("interp: out-of-bounds store and atomic, negative index") {
  Kernel k("writer");
  Value* out = k.ptr("dst", DType::f32);
  Value* cnt = k.ptr("cnt", DType::i32);
  Value* shift = k.scalar("shift", DType::i32);
  Value* offs = k.add(k.b.arange(0, 16), shift);
  k.at(); const int store_line = __LINE__; k.b.store(k.at_ptr(out, offs), k.b.const_float(1, Type::scalar(DType::f32)));
  k.at(); const int atomic_line = __LINE__; k.b.atomic_rmw(AtomicOp::Add, k.at_ptr(cnt, offs), k.i32(1));
  HostArray o(DType::f32, 16), c(DType::i32, 8);
  std::string msg = user_error_text([&] { k.run(Grid(2), {o.arg(), c.arg(), ArgValue::integer(-3, DType::i32)}); });
  CHECK(msg.find("out-of-bounds store in kernel 'writer': element index -3 of buffer 'dst'") != std::string::npos);
  CHECK(msg.find("program id (0, 0, 0)") != std::string::npos);
  CHECK(msg.find("test_memory.cpp:" + std::to_string(store_line)) != std::string::npos);
  msg = user_error_text([&] { k.run(Grid(2), {o.arg(), c.arg(), ArgValue::integer(0, DType::i32)}); });
  CHECK(msg.find("out-of-bounds atomic_add in kernel 'writer': element index 8 of buffer 'cnt' (8 elements of i32)") !=
        std::string::npos);
  CHECK(msg.find("test_memory.cpp:" + std::to_string(atomic_line)) != std::string::npos);
}

TEST_CASE("interp: a store through a read-only parameter is a user error") {
  Kernel k("ro");
  Value* in = k.ptr("in", DType::f32, true);
  k.at();
  k.b.store(in, k.b.const_float(1, Type::scalar(DType::f32)));
  HostArray a = random_array(DType::f32, 4);
  std::string msg = user_error_text([&] { k.run(Grid(1), {a.arg()}); });
  CHECK(msg.find("store through read-only parameter 'in'") != std::string::npos);
  CHECK(msg.find("test_memory.cpp:") != std::string::npos);
}

TEST_CASE("interp: argument mismatches name the kernel, the parameter and both types") {
  Kernel k("norm");
  Value* out = k.ptr("out", DType::bf16);
  Value* n = k.scalar("n_cols", DType::i32);
  Value* eps = k.scalar("eps", DType::f32);
  (void)out; (void)n; (void)eps;
  HostArray good(DType::bf16, 4), wrong(DType::f32, 4);
  ArgValue ni = ArgValue::integer(4, DType::i32), ef = ArgValue::real(1e-5, DType::f32);
  std::string msg = user_error_text([&] { k.run(Grid(1), {good.arg(), ni}); });
  CHECK(msg.find("kernel 'norm' takes 3 arguments (out: ptr<bf16>, n_cols: i32, eps: f32) but 2 were given") !=
        std::string::npos);
  msg = user_error_text([&] { k.run(Grid(1), {wrong.arg(), ni, ef}); });
  CHECK(msg.find("kernel 'norm': argument 0 for parameter 'out' (ptr<bf16>) is a host buffer of f32") !=
        std::string::npos);
  msg = user_error_text([&] { k.run(Grid(1), {ArgValue::device(nullptr, 8, DType::bf16), ni, ef}); });
  CHECK(msg.find("parameter 'out' (ptr<bf16>) is a device pointer to bf16") != std::string::npos);
  CHECK(msg.find("host") != std::string::npos);
  msg = user_error_text([&] { k.run(Grid(1), {good.arg(), ArgValue::real(4, DType::f32), ef}); });
  CHECK(msg.find("parameter 'n_cols' (i32) is a float (f32)") != std::string::npos);
  msg = user_error_text([&] { k.run(Grid(1), {good.arg(), ArgValue::integer(4, DType::i64), ef}); });
  CHECK(msg.find("parameter 'n_cols' (i32) is an integer (i64)") != std::string::npos);
  msg = user_error_text([&] { k.run(Grid(1), {good.arg(), ni, ArgValue::integer(1, DType::i32)}); });
  CHECK(msg.find("parameter 'eps' (f32) is an integer (i32)") != std::string::npos);
  msg = user_error_text([&] { k.run(Grid(1), {good.arg(), ArgValue::integer(int64_t(1) << 40, DType::i32), ef}); });
  CHECK(msg.find("does not fit in i32") != std::string::npos);
  msg = user_error_text([&] { k.run(Grid(1), {ni, ni, ef}); });
  CHECK(msg.find("parameter 'out' (ptr<bf16>) is an integer (i32)") != std::string::npos);
}
