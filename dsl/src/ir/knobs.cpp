#include "tilefuse/ir/knobs.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "tilefuse/ir/errors.hpp"

namespace tilefuse {

const std::vector<Knob>& knobs() {
  static const std::vector<Knob> all = {
      {"TILEFUSE_DUMP_IR", "print the tile IR after tracing and after each pass (1 or kernel names)", false},
      {"TILEFUSE_DUMP_LLVM", "print the LLVM IR before and after optimization (1 or kernel names)", false},
      {"TILEFUSE_DUMP_PTX", "print the generated PTX (1 or kernel names)", false},
      {"TILEFUSE_DEBUG", "explain backend decisions, e.g. why a load was not vectorized", false},
      {"TILEFUSE_CACHE_DIR", "directory of the on-disk kernel and autotuning caches", false},
      {"TILEFUSE_NO_CACHE", "disable the on-disk kernel cache", false},
      {"TILEFUSE_EXECUTOR", "force the executor: interp or cuda", false},
      {"TILEFUSE_AUTOTUNE", "autotuning mode: off, cached or always", false},
      {"TILEFUSE_PRINT_AUTOTUNING", "print the autotuner's choice and tuning time", false},
      {"TILEFUSE_PRINT_RESOURCES", "print each kernel's registers, spills, shared memory and programs per SM as the GPU loads it (1 or kernel names)", false},
      {"TILEFUSE_PTX_OPT", "LLVM optimization level for device code (0-3)", true},
      {"TILEFUSE_FAST_MATH", "allow approximate exp/log/div for all math ops", true},
      {"TILEFUSE_LLVM_OPTIONS", "LLVM command-line options for the device compiler, e.g. -time-passes (read once per process)", true},
      {"TILEFUSE_TMA", "0: tensor-view blocks read by warpgroup MMAs are copied by cp.async instead of TMA (sm_90a)", true},
      {"TILEFUSE_GEMM_COPY", "GEMMs on operands in rows off 16 bytes: 0 never copies them to aligned rows first (nor transposes an 8-bit B [K, N]), 1 always (default: unless the GEMM is tiny)", false},
      {"TILEFUSE_SPLIT_K", "n: the wgmma GEMM heuristic splits K into n slices (SPLIT_K in its config); 0 or 1 never (default: where the output tiles leave most SMs idle)", false},
      {"TILEFUSE_TMA_STORE", "0: tensor-view stores are plain stores instead of TMA stores through shared memory (sm_90)", true},
      {"TILEFUSE_WARP_SPECIALIZE", "1: a producer warpgroup issues the TMA copies of a pipelined loop (sm_90a, experimental)", true},
      {"TILEFUSE_PINGPONG", "warp-specialized kernels with two consumer warpgroups alternate their MMA issues: 1 always, 0 never (default: where a loop iteration has two or more dots and each warpgroup owns its rows, e.g. attention on 128 rows)", true},
      {"TILEFUSE_PRODUCER_COPIES", "0: a warp-specialized kernel's view loads outside loops are copied by its consumers (cp.async), not by the producer warpgroup (TMA)", true},
      {"TILEFUSE_PRODUCER_REGS", "n (24-256, a multiple of 8): the registers a warp-specialized kernel's producer warpgroup keeps with setmaxnreg, the rest going to the consumers (default 40, consumers at most 232)", true},
      {"TILEFUSE_WHOLE_PROGRAM_JIT", "0: kernels without setmaxnreg load through the driver's linker (relocatable code, its cubin kept in the disk cache) instead of its whole-program JIT (default: every kernel through cuModuleLoadDataEx, the driver's JIT cache keeping the SASS)", false},
      {"TILEFUSE_PDL", "0: no programmatic dependent launch (default on sm_90+: a kernel whose grid has at most TILEFUSE_PDL_BLOCKS blocks may start while the previous one in its stream finishes, and waits for it before touching memory; it lets the next one start after its loop over the grid, or when it exits)", true},
      {"TILEFUSE_PDL_BLOCKS", "n: the largest grid, in blocks, launched with programmatic dependent launch (default: any)", true},
      {"TILEFUSE_ROW_TAIL", "0: the 16-bit norm heuristics (RMSNorm, its residual variant, LayerNorm) give rows a little past a power of two the next power of two's cluster instead of the power of two's programs with a small tail tile each", false},
      {"TILEFUSE_NORM_BWD_TAIL", "0: the norm backward heuristic gives rows a little past a power of two the chunked or doubled cluster instead of the power of two's programs with a small tail tile each", false},
      {"TILEFUSE_NORM_BWD_CHUNKS", "0: the norm backward heuristic gives cluster programs one tile of the next power of two instead of chunks covering their share of the row", false},
      {"TILEFUSE_MEMORY_CLUSTERS", "1: row heuristics put rows longer than a 16-program thread-block cluster holds on clusters of more programs, exchanging through memory (default: the split schedule)", false},
      {"TILEFUSE_PERSISTENT_PROGRAMS", "n: persistent kernels start at most n programs (default: as many as are resident at once)", false},
      {"TILEFUSE_READABLE", "0: loads ignore their readable lanes (runs partly masked move element by element, not whole)", true},
      {"TILEFUSE_UNIFORM_RUNS", "0: runs whose mask is tested at run time always finish run by run (default: ops of 4 or more runs per thread first take one warp vote, and warps whose runs are all whole or empty skip the finishing)", true},
      {"TILEFUSE_APPROX_FTZ", "0: approximate f32 math (exp, log, sqrt, rsqrt, sin, cos, sigmoid, fast-math division) keeps subnormal inputs and results (default: flushed to zero, as --use_fast_math does: fewer instructions)", true},
      {"TILEFUSE_CHECKED", "0: no runs whose mask is tested at run time (aligned runs with a changing mask move element by element)", true},
      {"TILEFUSE_UNALIGNED", "how contiguous runs of unknown alignment move: scalar (default: consecutive lanes, consecutive elements), realign (16-byte chunks) or narrow", true},
  };
  return all;
}

static const Knob* find(const char* name) {
  for (auto& k : knobs())
    if (std::strcmp(k.name, name) == 0) return &k;
  return nullptr;
}

std::string knob(const char* name) {
  if (!find(name)) internal_error(std::string("unregistered knob ") + name);
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool knob_on(const char* name) {
  std::string v = knob(name);
  return !v.empty() && v != "0" && v != "off" && v != "false";
}

bool knob_selects(const char* name, const std::string& kernel) {
  std::string v = knob(name);
  if (v.empty() || v == "0" || v == "off") return false;
  if (v == "1" || v == "on" || v == "all") return true;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ','))
    if (item == kernel) return true;
  return false;
}

long knob_count(const char* name) {
  std::string v = knob(name);
  if (v.empty()) return 0;
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (*end != '\0' || n < 1 || errno == ERANGE)
    throw UserError(std::string(name) + " = '" + v + "' is not a positive integer. Unset it or set a count, e.g. " +
                    name + "=132");
  return n;
}

std::string cache_affecting_knobs() {
  std::string r;
  for (auto& k : knobs())
    if (k.invalidates_cache) r += std::string(k.name) + "=" + knob(k.name) + ";";
  return r;
}

}  // namespace tilefuse
