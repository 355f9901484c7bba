#pragma once
// The tile IR verifier: structural and type invariants of every op.
//
// The Builder already rejects user mistakes while tracing; the verifier is the safety
// net for hand-built IR and for passes. A violation raises UserError naming the op
// (kind, operand and result types), what is wrong and the op's source line, e.g.
//   verifier: store value dtype f32 differs from pointee bf16 in
//   Store(tile<128xptr<bf16>>, tile<128xf32>) (at softmax.cpp:12)
#include <string>

#include "tilefuse/ir/ir.hpp"

namespace tilefuse::ir {

// Checks, for every op (recursively into regions):
// - operand/result/region counts and types per OpKind (see op_kinds.hpp), attributes
//   consistent with the result type (Reduce drops `axis`, Arange is end-start long, Dot
//   is [M,K] x [K,N] + [M,N] f32, Load gives the pointee, ...);
// - For: region args = iv + iter types, yield matches the results; If: both branches
//   yield the result types; every region ends in exactly one Yield;
// - SSA: each value is defined once, before its uses, and used only where visible
//   (a value defined in a region is not visible after it); back-pointers
//   (Value::def/index, Op::parent, Block::parent) are consistent;
// - every tile dimension is a power of two.
void verify(const Function& f);

// One-line description of an op for diagnostics: "Binary.add(f32, f32) -> f32".
std::string describe(const Op& op);

}  // namespace tilefuse::ir
