// tilefuse-tune's reports from made-up timings (the GPU run produces the same data):
// the table marks the best, CSV and JSON carry every config, the SVG is well formed.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "report.hpp"

using namespace tilefuse;
using namespace tilefuse::tune_tool;

namespace {

tuning::Trial timed(int64_t block, int warps, double ms, bool cached = false) {
  tuning::Trial t;
  t.config = Config{{"BLOCK", block}, num_warps(warps)};
  t.ms = ms, t.reps = 100, t.cached = cached;
  return t;
}

ShapeReport softmax_report() {
  ShapeReport r;
  r.kernel = "softmax", r.shape = "8192x4096", r.dtype = DType::bf16;
  r.key = "n_rows=8192 n_cols=4096 dtypes=bf16,bf16";
  r.bytes = 2.0 * 8192 * 4096 * 2;
  r.trials = {timed(4096, 4, 0.05), timed(4096, 8, 0.045), timed(4096, 16, 0.06, true)};
  tuning::Trial p;
  p.config = Config{{"BLOCK", 1024}, num_warps(4)};
  p.pruned = "BLOCK 1024 < 4096 columns";
  r.trials.push_back(p);
  r.best = 1;
  r.seconds = 1.5;
  return r;
}

std::string table(const ShapeReport& r) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  print_table(f, r, false);
  std::fclose(f);
  std::string s(buf, len);
  std::free(buf);
  return s;
}

size_t count(const std::string& s, const std::string& sub) {
  size_t n = 0;
  for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report table: times, GB/s, the best marked, pruned reasons") {
  std::string t = table(softmax_report());
  CAPTURE(t);
  CHECK(t.find("softmax bf16 8192x4096  [n_rows=8192 n_cols=4096 dtypes=bf16,bf16]  4 configs: 3 timed, 1 pruned, "
               "1.50 s") != std::string::npos);
  // 134217728 bytes in 0.045 ms = 2982.6 GB/s
  CHECK(t.find("  *  BLOCK=4096 num_warps=8 num_stages=1      0.0450    2982.6  best\n") != std::string::npos);
  CHECK(t.find("BLOCK=4096 num_warps=16 num_stages=1     0.0600    2237.0  cached\n") != std::string::npos);
  CHECK(t.find("pruned: BLOCK 1024 < 4096 columns") != std::string::npos);
  CHECK(t.find("     BLOCK=4096 num_warps=4 num_stages=1      0.0500    2684.4\n") != std::string::npos);
  CHECK(count(t, "*  ") == 1);
}

TEST_CASE("report CSV and JSON carry every config") {
  auto r = softmax_report();
  std::string csv = to_csv({r});
  CHECK(csv.find("kernel,dtype,shape,config,ms,gbs,tflops,cached,best,pruned\n") == 0);
  CHECK(count(csv, "\n") == 5);
  CHECK(csv.find("softmax,bf16,8192x4096,BLOCK=4096 num_warps=8 num_stages=1,0.045000,2982.6,,0,1,\n") !=
        std::string::npos);
  CHECK(csv.find(",,,0,0,BLOCK 1024 < 4096 columns\n") != std::string::npos);
  auto doc = to_json({r}, RunInfo{"Test GPU", 3000, false});
  CHECK(doc.at("device").as_string() == "Test GPU");
  CHECK(doc.at("copy_gbs").as_number() == 3000);
  auto& res = doc.at("results").as_array().at(0);
  CHECK(res.at("best").as_string() == "BLOCK=4096 num_warps=8 num_stages=1");
  CHECK(res.at("configs").as_array().size() == 4);
  CHECK(res.at("configs").as_array()[3].at("pruned").as_string() == "BLOCK 1024 < 4096 columns");
}

TEST_CASE("report SVG: one bar per shape, the copy line, escaped labels") {
  auto a = softmax_report();
  auto b = softmax_report();
  b.kernel = "a<b&c";
  b.best = 0;
  std::string svg = to_svg({a, b}, RunInfo{"GPU \"X\"", 3000, false});
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") == 0);
  CHECK(svg.find("</svg>\n") == svg.size() - 7);
  CHECK(count(svg, "<rect ") == 3);  // background + two bars
  CHECK(svg.find("copy 3000 GB/s") != std::string::npos);
  CHECK(svg.find("stroke-dasharray") != std::string::npos);
  CHECK(svg.find("a&lt;b&amp;c bf16 8192x4096") != std::string::npos);
  CHECK(svg.find("GPU &quot;X&quot;") != std::string::npos);
  CHECK(svg.find("<title>BLOCK=4096 num_warps=8 num_stages=1</title>") != std::string::npos);
  CHECK(count(svg, "<text") == count(svg, "</text>"));
}
