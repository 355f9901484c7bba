#pragma once
// Random row programs for differential testing of the masked global accesses: each seed
// builds a kernel that reads one row per program — from the row's pointer, or from its
// start rounded down to 16 bytes (align_down) — under an interval mask or a holed one,
// maybe declaring the runs inside the buffer readable, maybe from a second input, and
// writes the row back and its sum. Widths, strides, offsets and the divisibility the
// compiler is told of are drawn per seed, so runs are whole, partly valid, empty,
// unreadable (the buffer's last row) and of unknown alignment. The compiler's checked,
// readable and realigned loads and stores are what this exercises; the interpreter is
// the oracle on the GPU (test_fuzz_gpu.cpp) and plain C++ (`expect_row_program`) is the
// interpreter's (test_fuzz.cpp). Some seeds ask for x's tile to stay in shared memory.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fuzz_programs.hpp"

namespace tftest {

// What a row program does, for the plain C++ reference.
struct RowCase {
  DType dt = DType::f32;
  int64_t rows = 1, n = 1, stride = 1, offset = 0, len = 1, block = 16;
  bool holes = false;      // the mask also drops columns c with c % 4 == 2
  bool second = false;     // y is read too and added
  int64_t per_program = 1;  // rows per program (a [per_program, block] tile; not aligned)
  bool held = false;        // x's load asks to stay in shared memory (Cache::KeepInShared)
  double other = 0, other_y = 0, scale = 1;
};

// Buffers: out (dt, `len` elements, random), sums (f32, rows), x and y (dt, `len`);
// scalars n, stride, offset, len (i32). Row r is x[offset + r * stride, + n); the grid
// is row_grid(): one program per `per_program` rows.
inline FuzzCase random_row_program(uint32_t seed, RowCase* what = nullptr) {
  std::mt19937 rng(seed * 2654435761u + 17);
  auto pick = [&](std::initializer_list<int64_t> xs) {
    std::vector<int64_t> v(xs);
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  auto coin = [&](double p = 0.5) { return std::bernoulli_distribution(p)(rng); };
  RowCase rc;
  rc.dt = std::vector<DType>{DType::f32, DType::f16, DType::bf16}[std::uniform_int_distribution<int>(0, 2)(rng)];
  const int64_t run = 16 / byte_size(rc.dt);
  rc.n = coin(0.7) ? std::uniform_int_distribution<int64_t>(1, 40)(rng) : pick({100, 257, 1000, 1023, 4099});
  rc.stride = rc.n + pick({0, 0, 1, 3, 8, 9});
  rc.rows = std::uniform_int_distribution<int64_t>(1, 9)(rng);
  rc.offset = std::uniform_int_distribution<int64_t>(0, 7)(rng);
  rc.len = rc.offset + (rc.rows - 1) * rc.stride + rc.n + pick({0, 0, 1, 5});  // tight: the last row's tail
  bool aligned = coin(0.6), readable = aligned && coin(0.6);
  rc.holes = coin(0.25);
  rc.second = coin(0.3);
  rc.other = pick({-1, 0, 2});
  rc.other_y = pick({0, 1});
  rc.scale = pick({1, 2, -3});
  int64_t span = rc.n + (aligned ? run - 1 : 0);
  rc.block = 16;
  while (rc.block < span) rc.block *= 2;
  int warps = static_cast<int>(std::min<int64_t>(pick({1, 2, 4, 8}), std::max<int64_t>(1, rc.block / 32)));
  const std::vector<ir::Evict> evicts{ir::Evict::Normal, ir::Evict::First, ir::Evict::Last};
  ir::Evict ev = evicts[std::uniform_int_distribution<size_t>(0, 2)(rng)];
  // Kept in shared memory, from a generator of its own (the other draws stay as they were):
  // the compiler holds it where its runs allow and falls back elsewhere, same values.
  std::mt19937 held_rng(seed ^ 0x9e3779b9u);
  rc.held = std::bernoulli_distribution(0.3)(held_rng);
  if (rc.held) ev = ir::Evict::Shared;
  // Rows per program from a generator of its own, so that the one-row programs of the
  // seeds stay what they were.
  std::mt19937 tile_rng(seed ^ 0x5bd1e995u);
  if (!aligned && std::bernoulli_distribution(0.4)(tile_rng))
    rc.per_program = std::bernoulli_distribution(0.5)(tile_rng) ? 2 : 4;

  FuzzCase c;
  c.f = new_kernel("fuzzrows" + std::to_string(seed), warps);
  Builder b(*c.f);
  const Type i32t = Type::scalar(DType::i32);
  auto i32 = [&](int64_t v) { return b.const_int(v, i32t); };
  auto f32 = [&](double v) { return b.const_float(v, Type::scalar(DType::f32)); };
  Value* out = b.param("out", Type::pointer(rc.dt));
  Value* sums = b.param("sums", Type::pointer(DType::f32));
  Value* x = b.param("x", Type::pointer(rc.dt), true);
  Value* y = b.param("y", Type::pointer(rc.dt), true);
  Value* n = b.param("n", i32t);
  Value* stride = b.param("stride", i32t);
  Value* offset = b.param("offset", i32t);
  Value* len = b.param("len", i32t);
  const int64_t B = rc.block;
  if (rc.per_program > 1) {
    // Rows pid * R + [0, R) as a [R, B] tile (pointer offsets, the row mask a broadcast
    // column): runs along the columns, masks of both dimensions.
    const int64_t R = rc.per_program;
    Value* ri = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, b.program_id(0), i32(R)), b.arange(0, R));
    Value* row_ok = b.compare(ir::CmpPred::Lt, ri, i32(rc.rows));
    Value* rows2 = b.expand_dims(ri, 1);
    Value* col = b.broadcast_to(b.expand_dims(b.arange(0, B), 0), {R, B});
    Value* starts = b.binary(BinaryOp::Add, offset, b.binary(BinaryOp::Mul, rows2, stride));  // [R, 1]
    Value* at = b.binary(BinaryOp::Add, b.broadcast_to(starts, {R, B}), col);
    Value* mask = b.binary(BinaryOp::And, b.broadcast_to(b.expand_dims(row_ok, 1), {R, B}),
                           b.compare(ir::CmpPred::Lt, col, n));
    if (rc.holes)
      mask = b.binary(BinaryOp::And, mask,
                      b.compare(ir::CmpPred::Ne, b.binary(BinaryOp::And, col, i32(3)), i32(2)));
    Value* v = b.load(b.add_ptr(x, at), mask, b.const_float(rc.other, Type::tile(rc.dt, {R, B})), ev);
    Value* vf = b.cast(v, DType::f32);
    Value* t = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, vf, f32(rc.scale)), b.cast(col, DType::f32));
    if (rc.second) {
      Value* w = b.load(b.add_ptr(y, at), mask, b.const_float(rc.other_y, Type::tile(rc.dt, {R, B})));
      t = b.binary(BinaryOp::Add, t, b.cast(w, DType::f32));
    }
    b.store(b.add_ptr(out, at), b.cast(t, rc.dt), mask);
    b.store(b.add_ptr(sums, ri), b.reduce(vf, 1, ir::ReduceKind::Sum), row_ok);
  } else {
    Value* r = b.program_id(0);
    Value* start = b.binary(BinaryOp::Add, offset, b.binary(BinaryOp::Mul, r, stride));
    Value* pos = b.arange(0, B);
    // Each buffer's row: from its pointer, or from the pointer rounded down to 16 bytes
    // (the same head for every buffer: their bases are aligned alike).
    Value* head = aligned ? b.align_ptr(b.add_ptr(x, start), 16, true) : i32(0);
    auto row = [&](Value* p) {
      Value* at = b.add_ptr(p, start);
      return aligned ? b.align_ptr(at, 16, false) : at;
    };
    Value* col = b.binary(BinaryOp::Sub, pos, head);
    Value* mask = b.compare(ir::CmpPred::Lt, col, n);
    if (aligned) mask = b.binary(BinaryOp::And, b.compare(ir::CmpPred::Ge, col, i32(0)), mask);
    if (rc.holes)
      mask = b.binary(BinaryOp::And, mask,
                      b.compare(ir::CmpPred::Ne, b.binary(BinaryOp::And, col, i32(3)), i32(2)));
    Value* rd = nullptr;
    if (readable) {
      // The whole runs of x from the row's rounded-down start that lie inside x.
      Value* first_idx = b.binary(BinaryOp::Sub, start, head);  // x's element at pos 0
      Value* lo = b.binary(BinaryOp::Max,
                           b.binary(BinaryOp::Mul,
                                    b.binary(BinaryOp::Div, b.binary(BinaryOp::Sub, i32(run - 1), first_idx), i32(run)),
                                    i32(run)),
                           i32(0));
      Value* hi = b.binary(BinaryOp::Mul, b.binary(BinaryOp::Div, b.binary(BinaryOp::Sub, len, first_idx), i32(run)),
                           i32(run));
      rd = b.binary(BinaryOp::And, b.compare(ir::CmpPred::Ge, pos, lo), b.compare(ir::CmpPred::Lt, pos, hi));
  }
  Value* v = b.load(b.add_ptr(row(x), pos), mask, b.const_float(rc.other, Type::tile(rc.dt, {B})), ev, rd);
  Value* vf = b.cast(v, DType::f32);
  Value* t = b.binary(BinaryOp::Add, b.binary(BinaryOp::Mul, vf, f32(rc.scale)), b.cast(col, DType::f32));
  if (rc.second) {
    Value* w = b.load(b.add_ptr(row(y), pos), mask, b.const_float(rc.other_y, Type::tile(rc.dt, {B})));
    t = b.binary(BinaryOp::Add, t, b.cast(w, DType::f32));
  }
  b.store(b.add_ptr(row(out), pos), b.cast(t, rc.dt), mask);
  b.store(b.add_ptr(sums, r), b.reduce(vf, 0, ir::ReduceKind::Sum));
  }

  // What the compiler is told: pointers 16-byte aligned, each integer divisible by the
  // largest power of two (up to 16) that divides it — or nothing, half the time.
  auto divisor = [&](int64_t v) {
    int64_t d = 1;
    while (d < 16 && v % (d * 2) == 0) d *= 2;
    return coin() ? d : int64_t{1};
  };
  specialize16(*c.f);
  int64_t ints[] = {rc.n, rc.stride, rc.offset, rc.len};
  for (int k = 0; k < 4; ++k) c.f->params[4 + k].divisibility = divisor(ints[k]);

  // Quarters in [-3, 3]: every sum and product here is exact in f32, in any order.
  std::uniform_int_distribution<int> quarter(-12, 12);
  auto quarters = [&](DType d, size_t k) { return buffer_fn(d, k, [&](size_t) { return quarter(rng) / 4.0; }); };
  c.args.push_back(quarters(rc.dt, size_t(rc.len)));  // out: what no row writes stays
  c.args.push_back(buffer(DType::f32, size_t(rc.rows), 0, 0));
  c.args.push_back(quarters(rc.dt, size_t(rc.len)));
  c.args.push_back(quarters(rc.dt, size_t(rc.len)));
  for (int64_t k : ints) c.args.push_back(Arg::scalar_int(k));
  c.summary = std::string(name(rc.dt)) + " rows=" + std::to_string(rc.rows) + " n=" + std::to_string(rc.n) +
              " stride=" + std::to_string(rc.stride) + " offset=" + std::to_string(rc.offset) +
              " len=" + std::to_string(rc.len) + " B=" + std::to_string(B) + " warps=" + std::to_string(warps) +
              (aligned ? " aligned" : "") + (readable ? " readable" : "") + (rc.holes ? " holes" : "") +
              (rc.second ? " +y" : "") +
              (rc.per_program > 1 ? " rows/program=" + std::to_string(rc.per_program) : "");
  if (what) *what = rc;
  return c;
}

// The grid of a row program.
inline Grid row_grid(const RowCase& rc) { return Grid((rc.rows + rc.per_program - 1) / rc.per_program); }

// Plain C++: `out` and `sums` as the row program leaves them, from the arguments before
// the run (args[0..3] = out, sums, x, y).
inline void expect_row_program(const RowCase& rc, const std::vector<Arg>& args, Arg& out, Arg& sums) {
  out = args[0];
  sums = args[1];
  const Arg& x = args[2];
  const Arg& y = args[3];
  auto rounded = [&](double v) {
    Arg one = buffer(rc.dt, 1, 0, 0);
    one.put(0, v);
    return one.get(0);
  };
  for (int64_t r = 0; r < rc.rows; ++r) {
    int64_t start = rc.offset + r * rc.stride, valid = 0;
    double s = 0;
    for (int64_t c = 0; c < rc.n; ++c) {
      if (rc.holes && c % 4 == 2) continue;
      ++valid;
      double v = x.get(size_t(start + c));
      s += v;
      double t = static_cast<float>(v * rc.scale + double(c));
      if (rc.second) t = static_cast<float>(t + y.get(size_t(start + c)));
      out.put(size_t(start + c), rounded(t));
    }
    sums.put(size_t(r), s + rc.other * double(rc.block - valid));
  }
}

}  // namespace tftest
