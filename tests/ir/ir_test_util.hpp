#pragma once
// Small helpers shared by the tile IR tests.
#include <memory>
#include <random>
#include <string>

#include "tilefuse/ir/builder.hpp"
#include "tilefuse/ir/passes.hpp"
#include "tilefuse/ir/printer.hpp"
#include "tilefuse/ir/verifier.hpp"

namespace tilefuse::ir::test {

inline std::unique_ptr<Function> make_function(const std::string& name) {
  auto f = std::make_unique<Function>();
  f->name = name;
  return f;
}

inline int count_kind(const Function& f, OpKind k) {
  int n = 0;
  walk(f.body, [&](Op& op) { n += op.kind == k; });
  return n;
}

inline int count_binary(const Function& f, BinaryOp code) {
  int n = 0;
  walk(f.body, [&](Op& op) { n += op.kind == OpKind::Binary && op.bin() == code; });
  return n;
}

inline Op* first_op(const Function& f, OpKind k) {
  Op* r = nullptr;
  walk(f.body, [&](Op& op) {
    if (!r && op.kind == k) r = &op;
  });
  return r;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A seed for a test's random constants; tests CAPTURE it so a failure can be replayed.
inline uint64_t random_seed() { return std::random_device{}(); }

}  // namespace tilefuse::ir::test
