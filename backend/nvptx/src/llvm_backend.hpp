#pragma once
// Internal: the LLVM half of the pipeline (target machines, libdevice, O3, PTX).
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <string>

#include "target_info.hpp"

namespace tilefuse::nvptx {

// One target machine per (thread, target, level); created on first use.
llvm::TargetMachine& target_machine(const TargetInfo& ti, int opt_level);
void prepare_module(llvm::Module& m, llvm::TargetMachine& tm);
// True when the module calls __nv_* functions (then libdevice gets linked).
bool needs_libdevice(const llvm::Module& m);
// Links the needed libdevice functions, sets nvvm-reflect-ftz and internalizes all but
// the kernels. Throws UserError when libdevice cannot be found.
void link_libdevice(llvm::Module& m);
void optimize_module(llvm::Module& m, llvm::TargetMachine& tm, int opt_level);
std::string emit_ptx(llvm::Module& m, llvm::TargetMachine& tm);
std::string module_text(const llvm::Module& m);
// Internal error with the verifier's message when the module is malformed.
void verify_module(const llvm::Module& m, const char* stage);

}  // namespace tilefuse::nvptx
