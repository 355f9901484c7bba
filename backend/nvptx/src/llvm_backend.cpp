// Target machines, the O3 pipeline and PTX emission.
#include "llvm_backend.hpp"

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassTimingInfo.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "tilefuse/ir/errors.hpp"
#include "tilefuse/ir/knobs.hpp"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tilefuse::nvptx {

namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

// LLVM's command-line options for this library's private copy of LLVM: 32-bit
// shared-memory pointers (as nvcc and Triton use), then TILEFUSE_LLVM_OPTIONS, options as
// llc takes them (-time-passes, -print-after=..., -debug-pass-manager): a way to see where
// compile time goes without a debugger. Parsed again, from the defaults, whenever the
// knob's value changes.
void parse_llvm_options() {
  static std::mutex m;
  static std::optional<std::string> parsed;
  std::lock_guard<std::mutex> lock(m);
  std::string value = knob("TILEFUSE_LLVM_OPTIONS");
  if (parsed == value) return;
  std::istringstream words(value);
  std::vector<std::string> args{"tilefuse", "-nvptx-short-ptr"};
  for (std::string w; words >> w;) args.push_back(w);
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  std::string err;
  llvm::raw_string_ostream es(err);
  llvm::cl::ResetAllOptionOccurrences();  // LLVM rejects an option given in two parses
  if (!llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(), "", &es)) {
    llvm::cl::ResetAllOptionOccurrences();
    const char* defaults[] = {"tilefuse", "-nvptx-short-ptr"};
    llvm::cl::ParseCommandLineOptions(2, defaults, "", &llvm::nulls());
    parsed = std::nullopt;
    throw UserError("TILEFUSE_LLVM_OPTIONS: LLVM did not accept '" + value + "': " + es.str() +
                    "Use options that llc accepts, separated by spaces, or unset the variable");
  }
  parsed = value;
}

void init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

}  // namespace

llvm::TargetMachine& target_machine(const TargetInfo& ti, int opt_level) {
  init_once();
  parse_llvm_options();
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> cache;
  std::string key = ti.cpu() + "/" + ti.features() + "/" + std::to_string(opt_level);
  auto& slot = cache[key];
  if (!slot) {
    std::string err;
    const llvm::Target* t = llvm::TargetRegistry::lookupTarget(kTriple, err);
    if (!t) internal_error("NVPTX target unavailable: " + err);
    llvm::TargetOptions o;
    o.AllowFPOpFusion = llvm::FPOpFusion::Fast;
    // Codegen at Default even for opt level 3: Aggressive only swaps NVPTX's EarlyCSE
    // runs for GVN, which the IR pipeline has run already -- the same PTX for every
    // gallery kernel, and ~8 of the ~70 ms of codegen on the d128 attention kernel
    // (bench/NOTES.md, "Compile time").
    auto level = opt_level == 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Default;
    slot.reset(t->createTargetMachine(kTriple, ti.cpu(), ti.features(), o, llvm::Reloc::PIC_, std::nullopt, level));
    if (!slot) internal_error("could not create the NVPTX target machine for " + ti.cpu());
  }
  return *slot;
}

void prepare_module(llvm::Module& m, llvm::TargetMachine& tm) {
  m.setTargetTriple(kTriple);
  m.setDataLayout(tm.createDataLayout());
}

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // No vectorizers: the kernels are straight-line scalar code whose vector accesses the
  // lowering already formed; the SLP vectorizer alone took ~12 of the ~55 ms of O3 on
  // the d128 attention kernel and left its PTX unchanged (bench/NOTES.md).
  llvm::PipelineTuningOptions pto;
  pto.SLPVectorization = false;
  pto.LoopVectorization = false;
  // The standard instrumentations honour LLVM's own options (-time-passes, -print-after).
  llvm::PassInstrumentationCallbacks pic;
  llvm::StandardInstrumentations si(m.getContext(), /*DebugLogging=*/false);
  si.registerCallbacks(pic, &mam);
  llvm::PassBuilder pb(&tm, pto, std::nullopt, &pic);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (opt_level <= 0) {
    // NVVMReflect must still resolve libdevice's __nvvm_reflect queries.
    if (auto err = pb.parsePassPipeline(mpm, "function(nvvm-reflect),globaldce"))
      internal_error("pass pipeline: " + llvm::toString(std::move(err)));
  } else {
    auto level = opt_level == 1 ? llvm::OptimizationLevel::O1
                 : opt_level == 2 ? llvm::OptimizationLevel::O2
                                  : llvm::OptimizationLevel::O3;
    mpm = pb.buildPerModuleDefaultPipeline(level);
  }
  mpm.run(m, mam);
}

std::string emit_ptx(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallString<0> buf;
  {
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    // The module was built and verified by the lowering; codegen need not verify it again.
    if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile, /*DisableVerify=*/true))
      internal_error("the NVPTX target cannot emit assembly");
    pm.run(m);
  }
  if (llvm::TimePassesIsEnabled) llvm::reportAndResetTimings(&llvm::errs());
  return std::string(buf.str());
}

std::string module_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

void verify_module(const llvm::Module& m, const char* stage) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (llvm::verifyModule(m, &os)) internal_error(std::string("invalid LLVM IR ") + stage + ": " + s);
}

}  // namespace tilefuse::nvptx
