#include "report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace tilefuse::tune_tool {
using tuning::Json;
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

}  // namespace

void print_table(std::FILE* out, const ShapeReport& r, bool dry_run) {
  int pruned = 0;
  for (auto& t : r.trials) pruned += !t.pruned.empty();
  int live = static_cast<int>(r.trials.size()) - pruned;
  std::fprintf(out, "\n%s %s %s  [%s]  %zu configs: %d %s, %d pruned", r.kernel.c_str(), name(r.dtype),
               r.shape.c_str(), r.key.c_str(), r.trials.size(), live, dry_run ? "to time" : "timed", pruned);
  if (!dry_run) std::fprintf(out, ", %.2f s", r.seconds);
  std::fprintf(out, "\n");
  size_t w = 6;
  for (auto& t : r.trials) w = std::max(w, t.config.str().size());
  bool flops = r.flops > 0;
  if (dry_run) {
    for (auto& t : r.trials) {
      std::string extra;
      if (t.pruned.empty() && t.shared_bytes >= 0) extra = "shared " + std::to_string(t.shared_bytes) + " bytes";
      if (t.pruned.empty() && t.registers >= 0) extra += ", " + std::to_string(t.registers) + " registers";
      if (!t.note.empty()) extra += "; " + t.note + " (every config spills)";
      std::fprintf(out, "  %-6s %-*s  %s\n", t.pruned.empty() ? "try" : "prune", int(w), t.config.str().c_str(),
                   t.pruned.empty() ? extra.c_str() : t.pruned.c_str());
    }
    return;
  }
  std::fprintf(out, "     %-*s %10s %9s%s  %s\n", int(w), "config", "ms", "GB/s", flops ? "   TFLOP/s" : "", "notes");
  for (size_t i = 0; i < r.trials.size(); ++i) {
    auto& t = r.trials[i];
    bool best = static_cast<int>(i) == r.best;
    std::string note = !t.pruned.empty() ? "pruned: " + t.pruned : best ? "best" : "";
    if (t.cached && t.pruned.empty()) note += note.empty() ? "cached" : " (cached)";
    if (!t.note.empty()) note += (note.empty() ? "" : "; ") + t.note;
    std::string ms = t.timed() ? fmt("%.4f", t.ms) : "-", gbs = t.timed() ? fmt("%.1f", r.gbs(t)) : "-";
    std::string tf = !flops ? "" : t.timed() ? fmt("%10.1f", r.tflops(t)) : std::string(9, ' ') + "-";
    char line[512];
    std::snprintf(line, sizeof line, "  %s  %-*s %10s %9s%s  %s", best ? "*" : " ", int(w), t.config.str().c_str(),
                  ms.c_str(), gbs.c_str(), tf.c_str(), note.c_str());
    std::string l = line;
    l.erase(l.find_last_not_of(' ') + 1);
    std::fprintf(out, "%s\n", l.c_str());
  }
}

Json to_json(const std::vector<ShapeReport>& reports, const RunInfo& info) {
  Json doc = Json::object();
  doc.set("tool", "tilefuse-tune");
  doc.set(info.dry_run ? "target" : "device", info.device);
  doc.set("dry_run", info.dry_run);
  if (info.copy_gbs > 0) doc.set("copy_gbs", info.copy_gbs);
  Json arr = Json::array();
  for (auto& r : reports) {
    Json j = Json::object();
    j.set("kernel", r.kernel);
    j.set("dtype", name(r.dtype));
    j.set("shape", r.shape);
    j.set("key", r.key);
    j.set("best", r.best >= 0 ? Json(r.trials[r.best].config.str()) : Json());
    if (!info.dry_run) j.set("seconds", r.seconds);
    Json trials = Json::array();
    for (auto& t : r.trials) {
      Json tj = Json::object();
      tj.set("config", t.config.str());
      if (t.timed()) {
        tj.set("ms", t.ms);
        tj.set("gbs", r.gbs(t));
        if (r.flops > 0) tj.set("tflops", r.tflops(t));
        tj.set("cached", t.cached);
      }
      if (!t.pruned.empty()) tj.set("pruned", t.pruned);
      if (!t.note.empty()) tj.set("note", t.note);
      trials.push(std::move(tj));
    }
    j.set("configs", std::move(trials));
    arr.push(std::move(j));
  }
  doc.set("results", std::move(arr));
  return doc;
}

std::string to_csv(const std::vector<ShapeReport>& reports) {
  std::string s = "kernel,dtype,shape,config,ms,gbs,tflops,cached,best,pruned\n";
  for (auto& r : reports)
    for (size_t i = 0; i < r.trials.size(); ++i) {
      auto& t = r.trials[i];
      s += r.kernel + "," + name(r.dtype) + "," + r.shape + "," + csv_field(t.config.str()) + ",";
      s += t.timed() ? fmt("%.6f", t.ms) + "," + fmt("%.1f", r.gbs(t)) + "," : ",,";
      s += r.flops > 0 && t.timed() ? fmt("%.2f", r.tflops(t)) : "";
      s += std::string(",") + (t.cached ? "1" : "0") + "," + (static_cast<int>(i) == r.best ? "1" : "0") + ",";
      s += csv_field(t.pruned) + "\n";
    }
  return s;
}

std::string to_svg(const std::vector<ShapeReport>& reports, const RunInfo& info) {
  const int left = 70, top = 40, plot_h = 300, bar_w = 36, gap = 24, bottom = 140;
  int n = static_cast<int>(reports.size());
  int width = left + std::max(1, n) * (bar_w + gap) + 40, height = top + plot_h + bottom;
  double ymax = info.copy_gbs;
  for (auto& r : reports)
    if (r.best >= 0) ymax = std::max(ymax, r.gbs(r.trials[r.best]));
  ymax = ymax > 0 ? ymax * 1.1 : 1;
  auto y = [&](double v) { return top + plot_h - v / ymax * plot_h; };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
                  std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + std::to_string(left) + "\" y=\"20\" font-size=\"13\">tilefuse-tune: best GB/s per shape on " +
       xml_escape(info.device) + "</text>\n";
  // Axis with five gridlines.
  for (int i = 0; i <= 5; ++i) {
    double v = ymax * i / 5;
    std::string yy = fmt("%.1f", y(v));
    s += "<line x1=\"" + std::to_string(left) + "\" x2=\"" + std::to_string(width - 20) + "\" y1=\"" + yy +
         "\" y2=\"" + yy + "\" stroke=\"#ddd\"/>\n";
    s += "<text x=\"" + std::to_string(left - 6) + "\" y=\"" + yy + "\" text-anchor=\"end\">" + fmt("%.0f", v) +
         "</text>\n";
  }
  s += "<text x=\"14\" y=\"" + std::to_string(top + plot_h / 2) + "\" transform=\"rotate(-90 14 " +
       std::to_string(top + plot_h / 2) + ")\" text-anchor=\"middle\">GB/s</text>\n";
  for (int i = 0; i < n; ++i) {
    auto& r = reports[i];
    int x = left + gap / 2 + i * (bar_w + gap);
    double v = r.best >= 0 ? r.gbs(r.trials[r.best]) : 0;
    s += "<rect x=\"" + std::to_string(x) + "\" y=\"" + fmt("%.1f", y(v)) + "\" width=\"" + std::to_string(bar_w) +
         "\" height=\"" + fmt("%.1f", top + plot_h - y(v)) + "\" fill=\"#4878a8\"><title>" +
         xml_escape(r.best >= 0 ? r.trials[r.best].config.str() : "no result") + "</title></rect>\n";
    s += "<text x=\"" + std::to_string(x + bar_w / 2) + "\" y=\"" + fmt("%.1f", y(v) - 4) +
         "\" text-anchor=\"middle\" font-size=\"9\">" + fmt("%.0f", v) + "</text>\n";
    std::string label = r.kernel + " " + name(r.dtype) + " " + r.shape;
    int lx = x + bar_w / 2, ly = top + plot_h + 12;
    s += "<text x=\"" + std::to_string(lx) + "\" y=\"" + std::to_string(ly) + "\" transform=\"rotate(40 " +
         std::to_string(lx) + " " + std::to_string(ly) + ")\">" + xml_escape(label) + "</text>\n";
  }
  if (info.copy_gbs > 0) {
    std::string yy = fmt("%.1f", y(info.copy_gbs));
    s += "<line x1=\"" + std::to_string(left) + "\" x2=\"" + std::to_string(width - 20) + "\" y1=\"" + yy +
         "\" y2=\"" + yy + "\" stroke=\"#c03030\" stroke-dasharray=\"6 4\"/>\n";
    s += "<text x=\"" + std::to_string(width - 22) + "\" y=\"" + fmt("%.1f", y(info.copy_gbs) - 4) +
         "\" text-anchor=\"end\" fill=\"#c03030\">copy " + fmt("%.0f", info.copy_gbs) + " GB/s</text>\n";
  }
  return s + "</svg>\n";
}

ProgressBar::ProgressBar(bool enabled) : on_(enabled && ::isatty(2)) {}

void ProgressBar::update(const std::string& what, const tuning::Progress& p) {
  if (!on_ || p.total == 0) return;
  const int bar = 24;
  int filled = static_cast<int>(bar * p.done / p.total);
  std::string line = "[" + std::string(filled, '=') + std::string(bar - filled, ' ') + "] " +
                     std::to_string(p.done) + "/" + std::to_string(p.total) + " " + what;
  if (p.current) line += " " + p.current->str();
  if (p.done > 0) line += fmt("  ETA %.0f s", p.elapsed_s / p.done * (p.total - p.done));
  if (line.size() > 150) line.resize(150);
  size_t pad = width_ > line.size() ? width_ - line.size() : 0;
  std::fprintf(stderr, "\r%s%s", line.c_str(), std::string(pad, ' ').c_str());
  std::fflush(stderr);
  width_ = line.size();
}

void ProgressBar::clear() {
  if (!on_ || width_ == 0) return;
  std::fprintf(stderr, "\r%s\r", std::string(width_, ' ').c_str());
  width_ = 0;
}

}  // namespace tilefuse::tune_tool
