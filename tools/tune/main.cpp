// tilefuse-tune: autotuning sweeps of the gallery from the command line. Times every
// config of each kernel's space per shape, prints a table per shape, fills the tuning
// cache the tuned_* entry points read, and writes JSON/CSV/SVG reports. --dry-run
// lists what would be timed and why the rest is pruned, without a GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "report.hpp"
#include "sweeps.hpp"
#include "tilefuse/cuda/memory.hpp"
#include "tilefuse/autotune/autotune.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/tools/cli.hpp"
#include "tilefuse/tools/ptxas.hpp"

using namespace tilefuse;
using namespace tilefuse::tune_tool;

namespace {

const char* kAboutShapes =
    "  Shapes: ROWSxCOLS, BxHxNxD[c] for attention_fwd (c: causal), MxNxK for (scaled_)matmul; a shape applies to\n"
    "  the kernels whose shape form it has. A shapes file has one SHAPE or KERNEL SHAPE per line; # starts\n"
    "  a comment.\n"
    "The cache lives in $TILEFUSE_CACHE_DIR/tuning (see TILEFUSE_CACHE_DIR).\n"
    "Exit status: 0 done, 1 error, 2 bad usage, 3 no GPU (and no --dry-run).\n";

// The help's footer; the kernel list comes from sweep_kernels(), so it cannot go stale.
std::string about() {
  std::string text = "  KERNELS:";
  size_t line_start = 0;
  auto add = [&](const std::string& word) {  // wrapped at 110 columns
    if (text.size() - line_start + 1 + word.size() > 110) line_start = text.size() + 1, text += "\n ";
    text += " " + word;
  };
  for (const std::string& k : sweep_kernels()) add(k + ",");
  for (const char* w : {"a", "comma-separated", "list", "of", "them,", "or", "all", "(the", "default)."}) add(w);
  return text + "\n" + kAboutShapes;
}

struct Options {
  std::vector<std::string> kernels;
  std::vector<std::pair<std::string, std::string>> shapes;  // (kernel or "", shape)
  std::vector<DType> dtypes;
  bool dry_run = false, always = false, progress = true, overhead = false;
  std::string target = "sm_90a", json, csv, plot;
  double ms = 25;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

constexpr int kUsageStatus = 2;

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "tilefuse-tune: %s\nRun 'tilefuse-tune --help' for the options.\n", msg.c_str());
  std::exit(kUsageStatus);
}

void read_shapes_file(const std::string& path, Options& o) {
  std::ifstream in(path);
  if (!in) usage_error("cannot read the shapes file " + path);
  for (std::string line; std::getline(in, line);) {
    auto words = split(line.substr(0, line.find('#')), ' ');
    if (words.size() == 1) o.shapes.emplace_back("", words[0]);
    else if (words.size() == 2) o.shapes.emplace_back(words[0], words[1]);
    else if (!words.empty()) usage_error("bad line in " + path + ": '" + line + "'");
  }
}

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app("", "tilefuse-tune");
  tools::style_app(app, about());
  std::vector<std::string> kernel_args, shape_args, dtype_args;
  std::string shapes_file;
  app.add_option("KERNELS", kernel_args, "kernels to tune (default: all)");
  app.add_option("--shape", shape_args, "a shape to tune; repeatable")->allow_extra_args(false);
  app.add_option("--shapes-file", shapes_file, "shapes from a file");
  app.add_option("--dtype", dtype_args, "f32, f16, bf16, comma-separated (default bf16; f16 for attention_fwd)")
      ->delimiter(',')->allow_extra_args(false);
  app.add_flag("--dry-run", o.dry_run,
               "list the configs that would be timed and why the others are pruned (compiles offline; needs no "
               "GPU; spills checked when ptxas is found)");
  app.add_option("--target", o.target, "dry-run target: sm_80, sm_90 or sm_90a")->capture_default_str();
  app.add_flag("--always", o.always, "re-time configs that are already in the cache");
  app.add_option("--ms", o.ms, "measured time to aim for per config, in ms")->capture_default_str();
  app.add_option("--json", o.json, "write a JSON report");
  app.add_option("--csv", o.csv, "write a CSV report");
  app.add_option("--plot", o.plot, "write an SVG plot of the best GB/s per shape against the copy bandwidth");
  app.add_flag("--no-progress", [&o](int64_t) { o.progress = false; }, "no progress bar on stderr");
  app.add_flag("--overhead", o.overhead, "measure what a launch through autotune() costs on a cache hit, and exit");
  if (auto status = tools::parse_args(app, argc, argv, kUsageStatus)) std::exit(*status);

  for (auto& s : shape_args) o.shapes.emplace_back("", s);
  if (!shapes_file.empty()) read_shapes_file(shapes_file, o);
  for (auto& d : dtype_args) {
    DType t;
    if (!parse_dtype(d, t)) usage_error("unknown dtype '" + d + "'");
    o.dtypes.push_back(t);
  }
  if (!(o.ms > 0)) usage_error("--ms needs a positive number");
  for (auto& a : kernel_args)
    for (auto& k : split(a, ',')) o.kernels.push_back(k);
  if (o.kernels.empty() || std::find(o.kernels.begin(), o.kernels.end(), "all") != o.kernels.end())
    o.kernels = sweep_kernels();
  return o;
}

// The shape form a shape has: 4 (BxHxNxD), 3 (MxNxK) or 2 (ROWSxCOLS, and anything
// else, which the row kernels then reject with a message).
int dims_of(const std::string& s) {
  int d = static_cast<int>(std::count(s.begin(), s.end(), 'x')) + 1;
  return d == 3 || d == 4 ? d : 2;
}

// (kernel, shape) pairs in command-line order.
std::vector<std::pair<std::string, std::string>> plan_shapes(const Options& o) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& k : o.kernels) {
    bool any = false;
    for (auto& [only, s] : o.shapes)
      if (only.empty() ? dims_of(s) == shape_dims(k) : only == k) out.emplace_back(k, s), any = true;
    if (o.shapes.empty())
      for (auto& s : default_shapes(k)) out.emplace_back(k, s), any = true;
    if (!any && o.kernels.size() == 1) usage_error("no shape given fits " + k);
  }
  for (auto& [only, s] : o.shapes)
    if (!only.empty() && std::find(o.kernels.begin(), o.kernels.end(), only) == o.kernels.end())
      usage_error("the shapes file names '" + only + "', which is not being tuned");
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw UserError("cannot write " + path);
  std::fprintf(stderr, "tilefuse-tune: wrote %s\n", path.c_str());
}

double copy_bandwidth_gbs() {
  size_t bytes = size_t(512) << 20;
  DeviceBuffer<uint8_t> a(bytes), b(bytes);
  a.memset(1);
  auto m = tuning::measure([&] { cuda::memcpy_dtod(b.data(), a.data(), bytes); });
  return 2.0 * bytes / (m.ms * 1e-3) / 1e9;
}

// Host time autotune() adds to a launch on a cache hit: key, hash, shared-lock lookup
// (the launched function does nothing here).
int overhead() {
  tuning::set_mode(tuning::Mode::Cached);
  static int64_t sink = 0;
  auto t = autotune([](const Config& c, int64_t rows, int64_t cols) { sink += c.num_warps + rows + cols; },
                    tuning::Space({Config{}}), [](int64_t r, int64_t c) { return tuning::Key{tuning::pow2(r), c}; },
                    TuneOptions{.name = "overhead", .key_names = {"n_rows", "n_cols"}});
  t.remember(Config{{"BLOCK", 4096}, num_warps(8)}, int64_t(16384), int64_t(4096));
  const int n = 10000000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) t(int64_t(16384 - (i & 1023)), int64_t(4096));
  double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
  std::printf("autotune() on a cache hit: %.1f ns per launch (%d launches, key of 2 values)\n", ns, n);
  return sink > 0 ? 0 : 1;
}

int run(const Options& o) {
  if (o.overhead) return overhead();
  std::string why;
  if (!o.dry_run && !gpu_available(&why)) {
    std::fprintf(stderr, "tilefuse-tune: cannot time kernels: %s (--dry-run lists the configs without a GPU)\n",
                 why.c_str());
    return 3;
  }
  if (o.dry_run && !o.plot.empty()) usage_error("--plot needs timings; drop --dry-run");
  auto pairs = plan_shapes(o);
  RunInfo info;
  info.dry_run = o.dry_run;
  tuning::OfflineOptions offline;
  if (o.dry_run) {
    offline.target = nvptx::parse_target(o.target);
    bool have_ptxas = !tools::find_ptxas().empty();
    if (have_ptxas)
      offline.spills = [arch = offline.target.name()](const nvptx::CompiledKernel& k, int* regs) {
        auto r = tools::run_ptxas(k.ptx, arch);
        if (!r.ok) throw std::runtime_error("ptxas failed: " + r.log);
        *regs = r.registers;
        return std::max(0, r.spill_stores) + std::max(0, r.spill_loads);
      };
    info.device = offline.target.name();
    std::printf("dry run for %s (shared memory limit %d bytes; spills %s)\n", info.device.c_str(),
                tuning::default_shared_limit(offline.target), have_ptxas ? "checked with ptxas" : "not checked: no ptxas");
  } else {
    const auto& dev = cuda::device_info();
    info.device = dev.name;
    info.copy_gbs = copy_bandwidth_gbs();
    std::printf("%s (sm_%d), device-to-device copy %.0f GB/s; cache %s\n", dev.name.c_str(), dev.compute_capability(),
                info.copy_gbs, tuning::TuningCache::global().dir().c_str());
  }
  std::fflush(stdout);

  std::vector<ShapeReport> reports;
  ProgressBar bar(o.progress && !o.dry_run);
  for (auto& [kernel, shape] : pairs) {
    for (DType dt : o.dtypes.empty() ? default_dtypes(kernel) : o.dtypes) {
      auto sw = make_sweep(kernel, dt, shape, !o.dry_run);
      ShapeReport r;
      r.kernel = kernel, r.shape = shape, r.dtype = dt, r.bytes = sw->bytes, r.flops = sw->flops;
      r.key = sw->problem.key.str(sw->problem.key_names);
      if (o.dry_run) {
        r.trials = tuning::plan_offline(sw->problem, *sw->space, offline);
      } else {
        tuning::TuneSettings st = tuning::default_settings();
        st.mode = o.always ? tuning::Mode::Always : tuning::Mode::Cached;
        st.bench.target_ms = o.ms;
        std::string what = kernel + " " + name(dt) + " " + shape;
        st.progress = [&](const tuning::Progress& p) { bar.update(what, p); };
        auto res = sw->tune(st);
        bar.clear();
        r.trials = res.trials;
        r.seconds = res.seconds;
        for (size_t i = 0; i < r.trials.size(); ++i)
          if (r.trials[i].config == res.best) r.best = static_cast<int>(i);
      }
      print_table(stdout, r, o.dry_run);
      std::fflush(stdout);
      reports.push_back(std::move(r));
    }
  }
  if (!o.json.empty()) write_file(o.json, to_json(reports, info).dump() + "\n");
  if (!o.csv.empty()) write_file(o.csv, to_csv(reports));
  if (!o.plot.empty()) write_file(o.plot, to_svg(reports, info));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\ntilefuse-tune: %s\n", e.what());
    return 1;
  }
}
