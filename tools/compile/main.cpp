// tilefuse-compile: compiles a gallery kernel offline for a target and config and
// writes its tile IR, GPU plan, LLVM IR, PTX or SASS (ptxas + nvdisasm: the listing, or
// its instruction count by opcode); --ptxas also assembles the PTX and prints registers,
// shared memory and spills.
//
//   tilefuse-compile --list
//   tilefuse-compile softmax --target sm_90a --dtype bf16 --set BLOCK=1024 --set num_warps=4 --emit ptx -o softmax.ptx
//   tilefuse-compile softmax --dtype bf16 --emit sass-summary
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
#include "tilefuse/tools/cli.hpp"
#include "tilefuse/tools/ptxas.hpp"
#include "tilefuse/tools/sass.hpp"

using namespace tilefuse;

namespace {

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
  CLI::App app("", "tilefuse-compile");
  tools::style_app(app, "  Without --set a kernel compiles with its default config (see --list).\n");
  bool list_only = false, run_ptxas = false, no_specialize = false, timing = false;
  std::string kernel, dtype_name, target_name = "sm_90a", emit = "ptx", out_path;
  std::vector<std::string> set_args, div_args;
  app.add_flag("--list", list_only, "list the gallery kernels, their meta-parameters and default configs");
  app.add_option("KERNEL", kernel, "the gallery kernel to compile");
  app.add_option("--dtype", dtype_name, "f32, f16 or bf16 (default: the kernel's last dtype)");
  app.add_option("--target", target_name, "sm_80, sm_90 or sm_90a")->capture_default_str();
  app.add_option("--set", set_args, "NAME=VALUE: a meta-parameter, num_warps or num_stages; repeatable")->allow_extra_args(false);
  app.add_option("--emit", emit, "what to write")
      ->check(CLI::IsMember({"ir", "plan", "llvm", "llvm-opt", "ptx", "sass", "sass-summary"}))
      ->capture_default_str();
  app.add_option("-o", out_path, "output file (default: stdout)");
  app.add_flag("--ptxas", run_ptxas, "assemble the PTX and print registers, shared memory and spills");
  app.add_flag("--no-specialize", no_specialize,
               "drop the assumption that pointers are 16-byte aligned and sizes divisible by 16");
  app.add_flag("--time", timing, "print the time each compiler stage takes");
  app.add_option("--divisibility", div_args,
                 "INDEX=D: runtime parameter INDEX (0-based) is known to be divisible by D (default 16, or 1 with "
                 "--no-specialize); repeatable")
      ->allow_extra_args(false);
  if (argc == 1) {
    std::fputs(app.help().c_str(), stdout);
    return 2;
  }
  if (auto status = tools::parse_args(app, argc, argv, 1)) return *status;
  if (list_only) {
    list();
    return 0;
  }
  if (kernel.empty()) return tools::usage_error(app, "name a KERNEL or give --list", 1);

  const kernels::GalleryKernel& g = kernels::gallery_kernel(kernel);
  DType dtype = g.dtypes.back();
  if (!dtype_name.empty() && !parse_dtype(dtype_name, dtype))
    user_error("unknown dtype '" + dtype_name + "'", SourceLoc{}, "Use f32, f16 or bf16");
  nvptx::Target target = nvptx::parse_target(target_name);
  Config cfg = g.default_config;
  for (auto& kv : set_args) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) user_error("--set expects NAME=VALUE, got '" + kv + "'", SourceLoc{});
    cfg.set(kv.substr(0, eq), std::stoll(kv.substr(eq + 1)));
  }
  bool specialize = !no_specialize;
  const KernelBase& k = g.get(dtype);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> div;
  for (int i = 0; i < k.num_runtime_params(); ++i) div.push_back(specialize ? 16 : 1);
  for (auto& kv : div_args) {
    auto eq = kv.find('=');
    size_t index = eq == std::string::npos ? div.size() : std::stoul(kv.substr(0, eq));
    if (index >= div.size())
      user_error("--divisibility expects INDEX=D with INDEX below " + std::to_string(div.size()) + ", got '" + kv + "'",
                 SourceLoc{});
    div[index] = std::stoll(kv.substr(eq + 1));
  }
  auto f = k.specialize(cfg, div);
  auto t1 = std::chrono::steady_clock::now();
  std::string text;
  if (emit == "ir") {
    text = ir::to_string(*f);
  } else {
    // Text forms only where they are written: --time then measures what a launch compiles.
    bool keep_text = emit == "plan" || emit == "llvm" || emit == "llvm-opt";
    nvptx::CompileArtifacts art = nvptx::compile_with_artifacts(*f, nvptx::CompileOptions{target}, keep_text);
    auto t2 = std::chrono::steady_clock::now();
    if (emit == "plan") text = art.plan;
    else if (emit == "llvm") text = art.llvm_ir;
    else if (emit == "llvm-opt") text = art.llvm_ir_opt;
    else text = art.kernel.ptx;  // --emit ptx; CLI11 checked the choice
    if (emit == "sass" || emit == "sass-summary") {
      tools::SassResult sass = tools::disassemble(art.kernel.ptx, target.name());
      if (!sass.ok) {
        std::fprintf(stderr, "tilefuse-compile: --emit %s: %s\n", emit.c_str(), sass.log.c_str());
        return 1;
      }
      text = emit == "sass" ? sass.text : tools::to_string(tools::summarize_sass(sass.text));
    }
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
