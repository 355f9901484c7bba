// tilefuse-bench: runs gallery kernels on the GPU at given shapes and dtypes, checks
// sampled rows against the interpreter, and prints GB/s (or TFLOP/s) next to the
// device-to-device copy bandwidth measured in the same process.
//
//   tilefuse-bench softmax,rmsnorm --dtype bf16,f32 --shape 16384x4096,8192x16384 [--set BLOCK=4096] [--json]
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "runners.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/tools/cli.hpp"

using namespace tilefuse;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

int run(int argc, char** argv) {
  CLI::App app("", "tilefuse-bench");
  tools::style_app(app, "  KERNELS: comma-separated from: " + bench::runner_names() + " (or 'all')\n"
                        "  shapes are ROWSxCOLS (attention: BATCHxHEADSxSEQxDIM, e.g. 4x16x4096x64; add 'c' for causal:\n"
                        "  4x16x4096x64c, and gG for G query heads per key/value head: 4x32x4096x128cg4; matmul: MxNxK,\n"
                        "  add '+gelu' for the bias + tanh-GELU epilogue)\n");
  std::string kernel_list, dtype_list = "bf16";
  std::vector<std::string> shape_args, set_args;
  bool json = false;
  int reps = 20;
  app.add_option("KERNELS", kernel_list, "kernels to run, comma-separated, or all")->required();
  app.add_option("--dtype", dtype_list, "dtypes, comma-separated (f32, f16, bf16; f8e4m3, f8e5m2 for scaled_matmul)")->capture_default_str();
  app.add_option("--shape", shape_args, "shapes, comma-separated; repeatable")->allow_extra_args(false);
  app.add_option("--set", set_args, "NAME=VALUE overriding the heuristic config (e.g. --set BLOCK=4096); repeatable")->allow_extra_args(false);
  app.add_option("--reps", reps, "timed repetitions")->capture_default_str();
  app.add_flag("--json", json, "print JSON instead of a table");
  if (argc == 1) {
    std::fputs(app.help().c_str(), stdout);
    return 2;
  }
  if (auto status = tools::parse_args(app, argc, argv, 1)) return *status;

  std::vector<std::string> names = kernel_list == "all" ? split(bench::runner_names(), ',') : split(kernel_list, ',');
  std::vector<std::string> dtypes = split(dtype_list, ','), shapes;
  for (auto& arg : shape_args)
    for (auto& s : split(arg, ',')) shapes.push_back(s);
  std::vector<std::pair<std::string, int64_t>> sets;
  for (auto& kv : set_args) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) user_error("--set expects NAME=VALUE", SourceLoc{});
    sets.emplace_back(kv.substr(0, eq), std::stoll(kv.substr(eq + 1)));
  }
  std::string why;
  if (!gpu_available(&why)) {
    std::fprintf(stderr, "tilefuse-bench: needs a GPU: %s\n", why.c_str());
    return 1;
  }
  double copy = bench::copy_bandwidth_gbs();
  const auto& dev = cuda::device_info();
  if (json) std::printf("{\"device\": \"%s\", \"copy_gbs\": %.1f, \"results\": [\n", dev.name.c_str(), copy);
  else std::printf("device: %s   device-to-device copy: %.0f GB/s (read + write, L2 flushed, median)\n\n%-16s %-5s %-18s %10s %10s %8s %7s  %s\n",
                   dev.name.c_str(), copy, "kernel", "dtype", "shape", "time(us)", "GB/s", "%copy", "check", "config");
  bool first = true, all_ok = true;
  for (auto& n : names) {
    for (auto& d : dtypes) {
      DType dt;
      if (!parse_dtype(d, dt)) user_error("unknown dtype " + d, SourceLoc{});
      std::vector<std::string> shp = shapes.empty() ? bench::default_shapes(n) : shapes;
      for (auto& s : shp) {
        bench::Result r = bench::run_one(n, dt, s, sets, reps);
        all_ok &= r.check_ok;
        if (json) {
          std::printf("%s  {\"kernel\": \"%s\", \"dtype\": \"%s\", \"shape\": \"%s\", \"ms\": %.5f, \"gbs\": %.1f, "
                      "\"tflops\": %.1f, \"pct_copy\": %.1f, \"check\": %s, \"max_err\": %.3g, \"config\": \"%s\"}",
                      first ? "" : ",\n", n.c_str(), d.c_str(), s.c_str(), r.ms, r.gbs, r.tflops, 100 * r.gbs / copy,
                      r.check_ok ? "true" : "false", r.max_err, r.config.c_str());
        } else if (r.tflops > 0) {
          std::printf("%-16s %-5s %-18s %10.1f %10.1f %8s %7s  %s  (%.1f TFLOP/s)\n", n.c_str(), d.c_str(), s.c_str(),
                      r.ms * 1e3, r.gbs, "-", r.check_ok ? "ok" : "FAIL", r.config.c_str(), r.tflops);
        } else {
          std::printf("%-16s %-5s %-18s %10.1f %10.1f %7.1f%% %7s  %s\n", n.c_str(), d.c_str(), s.c_str(), r.ms * 1e3,
                      r.gbs, 100 * r.gbs / copy, r.check_ok ? "ok" : "FAIL", r.config.c_str());
        }
        std::fflush(stdout);
        first = false;
      }
    }
  }
  if (json) std::printf("\n]}\n");
  return all_ok ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilefuse-bench: %s\n", e.what());
    return 1;
  }
}
