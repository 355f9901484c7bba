// tilefuse-compile: compiles a gallery kernel offline for a target and config and
// writes its tile IR, GPU plan, LLVM IR or PTX; --ptxas also assembles the PTX and
// prints registers, shared memory and spills.
//
//   tilefuse-compile --list
//   tilefuse-compile softmax --target sm_90a --dtype bf16 --set BLOCK=1024 --set num_warps=4 --emit ptx -o softmax.ptx
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "tilefuse/ir/printer.hpp"
#include "tilefuse/kernels/registry.hpp"
#include "tilefuse/nvptx/compiler.hpp"
#include "tilefuse/tools/ptxas.hpp"

using namespace tilefuse;

namespace {

void usage() {
  std::cout << "usage: tilefuse-compile --list\n"
               "       tilefuse-compile KERNEL [--dtype f32|f16|bf16] [--target sm_80|sm_90|sm_90a]\n"
               "                        [--set NAME=VALUE]... [--emit ir|plan|llvm|llvm-opt|ptx]\n"
               "                        [-o FILE] [--ptxas] [--no-specialize] [--time]\n"
               "  --set sets a meta-parameter, num_warps or num_stages (defaults: the kernel's default config)\n"
               "  --no-specialize drops the assumption that pointers are 16-byte aligned and sizes divisible by 16\n";
}

void list() {
  for (auto& g : kernels::gallery()) {
    std::string dtypes;
    for (auto d : g.dtypes) dtypes += std::string(dtypes.empty() ? "" : ",") + name(d);
    const KernelBase& k = g.get(g.dtypes.front());
    std::string metas;
    for (auto& m : k.meta_names()) metas += (metas.empty() ? "" : " ") + m;
    std::printf("%-18s %-50s meta: %-36s dtypes: %s\n", g.name.c_str(), g.summary.c_str(), metas.c_str(),
                dtypes.c_str());
    std::printf("%-18s default config: %s\n", "", g.default_config.str().c_str());
  }
}

int run(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.empty() || a[0] == "-h" || a[0] == "--help") {
    usage();
    return a.empty() ? 2 : 0;
  }
  if (a[0] == "--list") {
    list();
    return 0;
  }
  const kernels::GalleryKernel& g = kernels::gallery_kernel(a[0]);
  DType dtype = g.dtypes.back();
  nvptx::Target target = nvptx::parse_target("sm_90a");
  Config cfg = g.default_config;
  std::string emit = "ptx", out_path;
  bool run_ptxas = false, specialize = true, timing = false;
  for (size_t i = 1; i < a.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= a.size()) user_error("option " + a[i] + " needs a value", SourceLoc{}, "See --help");
      return a[++i];
    };
    if (a[i] == "--dtype") {
      std::string d = value();
      if (!parse_dtype(d, dtype)) user_error("unknown dtype '" + d + "'", SourceLoc{}, "Use f32, f16 or bf16");
    } else if (a[i] == "--target") {
      target = nvptx::parse_target(value());
    } else if (a[i] == "--set") {
      std::string kv = value();
      auto eq = kv.find('=');
      if (eq == std::string::npos) user_error("--set expects NAME=VALUE, got '" + kv + "'", SourceLoc{});
      cfg.set(kv.substr(0, eq), std::stoll(kv.substr(eq + 1)));
    } else if (a[i] == "--emit") {
      emit = value();
    } else if (a[i] == "-o") {
      out_path = value();
    } else if (a[i] == "--ptxas") {
      run_ptxas = true;
    } else if (a[i] == "--no-specialize") {
      specialize = false;
    } else if (a[i] == "--time") {
      timing = true;
    } else {
      user_error("unknown option '" + a[i] + "'", SourceLoc{}, "See --help");
    }
  }
  const KernelBase& k = g.get(dtype);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> div;
  if (specialize)
    for (int i = 0; i < k.num_runtime_params(); ++i) div.push_back(16);
  auto f = k.specialize(cfg, div);
  auto t1 = std::chrono::steady_clock::now();
  std::string text;
  if (emit == "ir") {
    text = ir::to_string(*f);
  } else {
    nvptx::CompileArtifacts art = nvptx::compile_with_artifacts(*f, nvptx::CompileOptions{target});
    auto t2 = std::chrono::steady_clock::now();
    if (emit == "plan") text = art.plan;
    else if (emit == "llvm") text = art.llvm_ir;
    else if (emit == "llvm-opt") text = art.llvm_ir_opt;
    else if (emit == "ptx") text = art.kernel.ptx;
    else user_error("unknown --emit '" + emit + "'", SourceLoc{}, "Use ir, plan, llvm, llvm-opt or ptx");
    if (timing)
      std::fprintf(stderr, "trace+passes %.2f ms, plan %.2f ms, lower %.2f ms, O3 %.2f ms, PTX %.2f ms, total %.2f ms%s\n",
                   std::chrono::duration<double, std::milli>(t1 - t0).count(), art.ms_plan, art.ms_lower, art.ms_opt,
                   art.ms_ptx, std::chrono::duration<double, std::milli>(t2 - t0).count(),
                   art.linked_libdevice ? " (libdevice linked)" : "");
    if (run_ptxas) {
      tools::PtxasResult r = tools::run_ptxas(art.kernel.ptx, target.name());
      if (!r.found) {
        std::fprintf(stderr, "ptxas not found: %s\n", r.log.c_str());
        return 1;
      }
      std::fprintf(stderr, "%s", r.log.c_str());
      if (!r.ok) return 1;
    }
  }
  if (out_path.empty() || out_path == "-") {
    std::cout << text;
  } else {
    std::ofstream os(out_path);
    os << text;
    if (!os) user_error("cannot write " + out_path, SourceLoc{});
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilefuse-compile: %s\n", e.what());
    return 1;
  }
}
