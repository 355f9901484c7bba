#pragma once
// Canonicalization passes over the tile IR and the pass pipeline with dump points.
//
// Each transformation returns whether it changed the function. All of them keep the
// IR valid for verify(); none of them changes observable behaviour (stores, atomics,
// loaded values, and exact integer and IEEE float results).
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "tilefuse/ir/ir.hpp"

namespace tilefuse::ir {

// Constant folding and algebraic simplification, in every region:
// - Binary/Unary/Compare/Cast/Select/Fma of constants (scalars or uniform tiles) become
//   Constants with the target's semantics: integers wrap to their bit width, division
//   and remainder are C's (never folded by zero or on signed overflow), shifts fold
//   only for amounts below the bit width; float results are rounded to the result
//   dtype (f32 as float, f16/bf16 via tilefuse::half/bfloat16). Approximate math
//   (`approx`) is not folded.
// - identities: x+0, x-0, x*1, x/1, x*0 (integers only), x&0, x|0, x^0, x^x, x-x
//   (integers), shifts by 0, min/max(x, x), cast to the same type, select with a
//   constant condition or equal arms; for floats only the exact ones (x + -0.0, x - 0.0).
// - shapes: splat/broadcast/expand_dims/reshape/trans of a constant -> constant tile;
//   of a splat -> splat; broadcast of broadcast -> broadcast.
// - control flow: If with a constant condition is replaced by the taken branch; an If
//   result that both branches yield alike is that value; For iteration values that the
//   body yields unchanged (or yields as their init) become invariant.
bool fold_constants(Function& f);

// Common subexpression elimination: identical pure ops (same kind, attributes, operands
// and result types) are merged into the first one when it dominates (same block or an
// enclosing one). Loads, stores, atomics, control flow and custom reductions are never
// merged; a value defined inside a region never replaces one outside it.
bool cse(Function& f);

// Dead code elimination: removes ops without side effects whose results are unused
// (loads included), recursively; unused For iteration values whose updates feed
// nothing else; unused If results; whole For/If ops with no side effects inside and no
// used results. Stores, atomics and yields are always kept.
bool dce(Function& f);

// fold -> CSE -> DCE until nothing changes.
void canonicalize(Function& f);

// Sibling-reduction scheduling: a reduction (sum/max/min) that does not depend on an
// earlier one of the same kind of op (Reduce with the same axis and operand shape, or
// ClusterReduce) moves right after it, together with the pure ops only it needs, so
// consecutive reductions can share one exchange between threads (or programs). Loads,
// stores and control flow never move. Returns whether anything moved.
bool group_sibling_reductions(Function& f);

// --- pass pipeline -------------------------------------------------------------------

// The header line of a dump: "// -----// IR after <pass> //----- //".
std::string dump_header(const std::string& pass);
// True when `knob` (TILEFUSE_DUMP_IR by default) selects this function's kernel.
bool dump_selected(const Function& f, const char* knob = "TILEFUSE_DUMP_IR");
// Unconditionally writes the header and the printed function.
void dump_ir(std::ostream& os, const Function& f, const std::string& after_pass);

// A flat list of named passes; each pass is followed by a dump point. Dumps go to
// std::cerr (as read at run time) when the dump knob selects the function's name.
//
//   PassManager pm("trace");
//   pm.add("verify", verify);
//   pm.add("canonicalize", canonicalize);
//   pm.run(f);
class PassManager {
 public:
  using PassFn = std::function<void(Function&)>;

  // `input` labels the dump of the function before the first pass ("" for none).
  explicit PassManager(std::string input = "", const char* dump_knob = "TILEFUSE_DUMP_IR")
      : input_(std::move(input)), knob_(dump_knob) {}

  PassManager& add(std::string name, PassFn fn);
  void run(Function& f) const;
  std::vector<std::string> pass_names() const;

 private:
  struct Entry {
    std::string name;
    PassFn fn;
  };
  std::string input_;
  const char* knob_;
  std::vector<Entry> passes_;
};

// The front-end pipeline right after tracing: verify, canonicalize, verify (dumping the
// traced IR as "trace" and the IR after each pass under TILEFUSE_DUMP_IR).
void run_frontend_passes(Function& f);

}  // namespace tilefuse::ir
