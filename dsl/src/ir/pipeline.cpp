// The canonicalization driver, the pass manager and the front-end pipeline.
#include <iostream>

#include "tilefuse/ir/knobs.hpp"
#include "tilefuse/ir/passes.hpp"
#include "tilefuse/ir/printer.hpp"
#include "tilefuse/ir/verifier.hpp"

namespace tilefuse::ir {

void canonicalize(Function& f) {
  // Each round strictly shrinks or simplifies the function; the cap is a safety net.
  for (int round = 0; round < 100; ++round) {
    bool changed = fold_constants(f);
    changed |= cse(f);
    changed |= dce(f);
    if (!changed) return;
  }
}

std::string dump_header(const std::string& pass) { return "// -----// IR after " + pass + " //----- //"; }

bool dump_selected(const Function& f, const char* knob) { return knob_selects(knob, f.name); }

void dump_ir(std::ostream& os, const Function& f, const std::string& after_pass) {
  os << dump_header(after_pass) << "\n";
  print(os, f);
  os.flush();
}

PassManager& PassManager::add(std::string name, PassFn fn) {
  passes_.push_back(Entry{std::move(name), std::move(fn)});
  return *this;
}

void PassManager::run(Function& f) const {
  bool dump = dump_selected(f, knob_);
  if (dump && !input_.empty()) dump_ir(std::cerr, f, input_);
  for (const Entry& p : passes_) {
    p.fn(f);
    if (dump) dump_ir(std::cerr, f, p.name);
  }
}

std::vector<std::string> PassManager::pass_names() const {
  std::vector<std::string> r;
  for (const Entry& p : passes_) r.push_back(p.name);
  return r;
}

void run_frontend_passes(Function& f) {
  PassManager pm("trace");
  pm.add("verify", verify);
  pm.add("canonicalize", canonicalize);
  pm.add("group-reductions", [](Function& fn) { group_sibling_reductions(fn); });
  pm.add("verify", verify);
  pm.run(f);
}

}  // namespace tilefuse::ir
