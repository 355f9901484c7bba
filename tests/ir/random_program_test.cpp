// Canonicalization preserves the meaning of random straight-line integer programs:
// a small evaluator runs each program before and after, on random parameter values.
#include <doctest/doctest.h>

#include <limits>
#include <unordered_map>

#include "ir_test_util.hpp"

using namespace tilefuse;
using namespace tilefuse::ir;

namespace {

// Evaluates scalar i32/u32/i1 programs of Constant, Binary, Compare, Select, Cast and
// Store with native C++ arithmetic. Returns false when the program hits undefined
// behaviour (division by zero, signed division overflow, shift out of range).
struct Eval {
  std::unordered_map<const Value*, int64_t> v;
  std::vector<int64_t> stores;

  static int64_t norm(uint64_t x, DType d) {
    if (d == DType::i32) return static_cast<int32_t>(static_cast<uint32_t>(x));
    if (d == DType::u32) return static_cast<uint32_t>(x);
    return x & 1;
  }

  bool run(const Function& f, const std::vector<int64_t>& args) {
    for (size_t i = 0; i < args.size(); ++i) v[f.body.args[i]] = norm(static_cast<uint64_t>(args[i]), f.body.args[i]->type.dtype);
    for (auto& p : f.body.ops) {
      const Op& op = *p;
      DType d = op.results.empty() ? DType::i1 : op.result()->type.dtype;
      auto in = [&](int i) { return v.at(op.operand(i)); };
      int64_t r = 0;
      switch (op.kind) {
        case OpKind::Constant: r = norm(static_cast<uint64_t>(op.ival), d); break;
        case OpKind::Cast: r = norm(static_cast<uint64_t>(in(0)), d); break;
        case OpKind::Select: r = in(0) ? in(1) : in(2); break;
        case OpKind::Compare: {
          int64_t a = in(0), b = in(1);
          switch (op.cmp()) {
            case CmpPred::Eq: r = a == b; break;
            case CmpPred::Ne: r = a != b; break;
            case CmpPred::Lt: r = a < b; break;
            case CmpPred::Le: r = a <= b; break;
            case CmpPred::Gt: r = a > b; break;
            case CmpPred::Ge: r = a >= b; break;
          }
          break;
        }
        case OpKind::Binary: {
          if (d == DType::i32) {
            int32_t a = static_cast<int32_t>(in(0)), b = static_cast<int32_t>(in(1));
            uint32_t ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
            switch (op.bin()) {
              case BinaryOp::Add: r = static_cast<int32_t>(ua + ub); break;
              case BinaryOp::Sub: r = static_cast<int32_t>(ua - ub); break;
              case BinaryOp::Mul: r = static_cast<int32_t>(ua * ub); break;
              case BinaryOp::Div:
              case BinaryOp::Rem:
                if (b == 0 || (a == std::numeric_limits<int32_t>::min() && b == -1)) return false;
                r = op.bin() == BinaryOp::Div ? a / b : a % b;
                break;
              case BinaryOp::Min: r = std::min(a, b); break;
              case BinaryOp::Max: r = std::max(a, b); break;
              case BinaryOp::And: r = a & b; break;
              case BinaryOp::Or: r = a | b; break;
              case BinaryOp::Xor: r = a ^ b; break;
              case BinaryOp::Shl:
                if (b < 0 || b >= 32) return false;
                r = static_cast<int32_t>(ua << b);
                break;
              case BinaryOp::Shr:
                if (b < 0 || b >= 32) return false;
                r = a >> b;
                break;
            }
          } else {
            uint32_t a = static_cast<uint32_t>(in(0)), b = static_cast<uint32_t>(in(1));
            switch (op.bin()) {
              case BinaryOp::Add: r = static_cast<uint32_t>(a + b); break;
              case BinaryOp::Sub: r = static_cast<uint32_t>(a - b); break;
              case BinaryOp::Mul: r = static_cast<uint32_t>(a * b); break;
              case BinaryOp::Div:
              case BinaryOp::Rem:
                if (b == 0) return false;
                r = op.bin() == BinaryOp::Div ? a / b : a % b;
                break;
              case BinaryOp::Min: r = std::min(a, b); break;
              case BinaryOp::Max: r = std::max(a, b); break;
              case BinaryOp::And: r = a & b; break;
              case BinaryOp::Or: r = a | b; break;
              case BinaryOp::Xor: r = a ^ b; break;
              case BinaryOp::Shl:
                if (b >= 32) return false;
                r = static_cast<uint32_t>(a << b);
                break;
              case BinaryOp::Shr:
                if (b >= 32) return false;
                r = a >> b;
                break;
            }
          }
          break;
        }
        case OpKind::Store: stores.push_back(in(1)); continue;
        default: FAIL("unexpected op " << name(op.kind));
      }
      v[op.result()] = r;
    }
    return true;
  }
};

std::unique_ptr<Function> random_program(std::mt19937_64& rng, int n_ops) {
  auto f = test::make_function("rand");
  Builder b(*f);
  Value* out32 = b.param("out_i32", Type::pointer(DType::i32));
  Value* outu = b.param("out_u32", Type::pointer(DType::u32));
  std::vector<Value*> pool{b.param("x", Type::scalar(DType::i32)), b.param("y", Type::scalar(DType::i32)),
                           b.param("z", Type::scalar(DType::u32))};
  auto pick = [&]() { return pool[rng() % pool.size()]; };
  const int64_t interesting[] = {0, 1, -1, 2, 3, 31, 32, std::numeric_limits<int32_t>::min()};
  for (int i = 0; i < n_ops; ++i) {
    switch (rng() % 8) {
      case 0: {
        DType d = rng() % 2 ? DType::i32 : DType::u32;
        int64_t k = rng() % 3 ? interesting[rng() % 8] : static_cast<int32_t>(rng());
        pool.push_back(b.const_int(k, Type::scalar(d)));
        break;
      }
      case 1: {
        Value* a = pick();
        pool.push_back(b.cast(a, a->type.dtype == DType::i32 ? DType::u32 : DType::i32));
        break;
      }
      case 2: {
        Value* c = b.compare(static_cast<CmpPred>(rng() % 6), pick(), pick());
        pool.push_back(b.select(c, pick(), pick()));
        break;
      }
      default: {
        Value* a = pick();
        Value* c = pick();
        if (c->type.dtype != a->type.dtype) c = b.cast(c, a->type.dtype);
        auto op = static_cast<BinaryOp>(rng() % 12);
        if (rng() % 4 == 0) c = a;
        // Mostly keep clear of undefined behaviour so that most programs are compared.
        DType d = a->type.dtype;
        if ((op == BinaryOp::Shl || op == BinaryOp::Shr) && rng() % 8)
          c = b.binary(BinaryOp::And, c, b.const_int(31, Type::scalar(d)));
        if ((op == BinaryOp::Div || op == BinaryOp::Rem) && rng() % 8)
          c = b.binary(BinaryOp::Or, c, b.const_int(1, Type::scalar(d)));
        pool.push_back(b.binary(op, a, c));
      }
    }
    if (rng() % 4 == 0) {
      Value* v = pool.back();
      b.store(v->type.dtype == DType::i32 ? out32 : outu, v);
    }
  }
  return f;
}

}  // namespace

TEST_CASE("ir canonicalize: random integer programs keep their results") {
  uint64_t seed = test::random_seed();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  int compared = 0;
  for (int prog = 0; prog < 200; ++prog) {
    CAPTURE(prog);
    auto f = random_program(rng, 30);
    verify(*f);
    auto g = clone(*f);
    run_frontend_passes(*g);
    CHECK(count_ops(*g) <= count_ops(*f));
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<int64_t> args{0, 0, static_cast<int32_t>(rng() % 3 ? rng() % 64 : rng()),
                                static_cast<int32_t>(rng()), static_cast<int64_t>(rng() % 100)};
      Eval before, after;
      if (!before.run(*f, args)) continue;  // undefined behaviour: any result is right
      REQUIRE(after.run(*g, args));         // folding never introduces undefined behaviour
      INFO(to_string(*f));
      INFO(to_string(*g));
      CHECK(before.stores == after.stores);
      ++compared;
    }
  }
  CHECK(compared > 300);
}
