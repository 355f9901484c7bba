#pragma once
// What tilefuse-tune prints and writes: a table per shape, JSON and CSV reports, an
// SVG plot of the best throughput per shape against the copy bandwidth, and the
// progress bar.
#include <cstdio>
#include <string>
#include <vector>

#include "tilefuse/autotune/json.hpp"
#include "tilefuse/autotune/tuner.hpp"

namespace tilefuse::tune_tool {

struct ShapeReport {
  std::string kernel, shape, key;
  DType dtype = DType::bf16;
  double bytes = 0, flops = 0;  // per launch
  std::vector<tuning::Trial> trials;
  int best = -1;                // index into trials; -1 for dry runs
  double seconds = 0;           // tuning wall time
  double gbs(const tuning::Trial& t) const { return t.timed() ? bytes / (t.ms * 1e-3) / 1e9 : 0; }
  double tflops(const tuning::Trial& t) const { return t.timed() && flops > 0 ? flops / (t.ms * 1e-3) / 1e12 : 0; }
};

struct RunInfo {
  std::string device;  // or the offline target for dry runs
  double copy_gbs = 0; // device-to-device copy bandwidth measured in the same run (0: none)
  bool dry_run = false;
};

void print_table(std::FILE* out, const ShapeReport& r, bool dry_run);
tuning::Json to_json(const std::vector<ShapeReport>& reports, const RunInfo& info);
std::string to_csv(const std::vector<ShapeReport>& reports);
// Self-contained SVG: one bar per (kernel, dtype, shape) with the best GB/s, and the
// copy bandwidth as a dashed line.
std::string to_svg(const std::vector<ShapeReport>& reports, const RunInfo& info);

// A one-line progress bar on stderr (redrawn in place on a terminal, else silent).
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  void update(const std::string& what, const tuning::Progress& p);
  void clear();

 private:
  bool on_;
  size_t width_ = 0;
};

}  // namespace tilefuse::tune_tool
