// tilefuse-tune as a user runs it: --dry-run tables and JSON without a GPU, the
// one-line refusal to time without one, and usage errors.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "scratch.hpp"
#include "tilefuse/autotune/json.hpp"
#include "tilefuse/gpu.hpp"
#include "tilefuse/kernels/tuned.hpp"

using namespace tilefuse;
namespace fs = std::filesystem;
using tf_test::temp_dir;

namespace {

struct Run {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The tool: the build tree's, or the one beside this test binary (a relocated bundle).
std::string tune_exe() {
  if (fs::exists(TILEFUSE_TUNE_EXE)) return TILEFUSE_TUNE_EXE;
  return (fs::read_symlink("/proc/self/exe").parent_path() / "tilefuse-tune").string();
}

// Runs tilefuse-tune with `args`, with `dir` as its cache directory and output files.
Run tune(const std::string& args, const fs::path& dir = temp_dir()) {
  std::string cmd = "TILEFUSE_CACHE_DIR='" + dir.string() + "' '" + tune_exe() + "' " + args + " > '" +
                    (dir / "out").string() + "' 2> '" + (dir / "err").string() + "'";
  int rc = std::system(cmd.c_str());
  Run r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

bool has_line(const std::string& text, const std::string& a, const std::string& b) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
  return false;
}

// Configs in the forward row kernels' space (every shape lists each, timed or pruned).
// The forward row kernels' space: chunked rows, HELD added to the cluster configs, rows in batches.
size_t row_configs() {
  namespace tk = tilefuse::kernels;
  return tk::with_row_batches(tk::with_held_chunks(tk::chunked_rowwise_space())).size();
}

}  // namespace

TEST_CASE("tilefuse-tune --dry-run lists what it would time and why the rest is pruned") {
  Run r = tune("softmax --dry-run --shape 8192x4096 --dtype bf16");
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("dry run for sm_90a") != std::string::npos);
  CHECK(r.out.find("softmax bf16 8192x4096  [n_rows=8192 n_cols=4096 dtypes=bf16,bf16]  " +
                   std::to_string(row_configs()) + " configs") !=
        std::string::npos);
  CHECK(has_line(r.out, "prune  BLOCK=1024 num_warps=4 num_stages=1", "BLOCK 1024 < 4096 columns"));
  CHECK(has_line(r.out, "prune  BLOCK=8192 num_warps=8 num_stages=1", "BLOCK 8192 > 4096 columns"));
  CHECK(has_line(r.out, "try", "BLOCK=4096 num_warps=8 num_stages=1"));
  CHECK(has_line(r.out, "prune  BLOCK=8192 num_warps=8 num_stages=1 cluster=2", "a smaller cluster covers the row"));

  // Long rows: one row per thread-block cluster, read once.
  Run l = tune("softmax --dry-run --shape 2048x65536 --dtype bf16");
  CAPTURE(l.out);
  REQUIRE(l.status == 0);
  CHECK(has_line(l.out, "try", "BLOCK=16384 num_warps=16 num_stages=1 cluster=4"));
  CHECK(has_line(l.out, "try", "BLOCK=8192 num_warps=8 num_stages=1 cluster=8"));
  CHECK(has_line(l.out, "try", "BLOCK=8192 HELD=1 num_warps=8 num_stages=1 cluster=8"));  // kept in shared memory
  CHECK(has_line(l.out, "prune  BLOCK=8192 num_warps=16 num_stages=1 cluster=4", "BLOCK x cluster < 65536 columns"));
}

TEST_CASE("tilefuse-tune --dry-run over several kernels writes a JSON report") {
  fs::path dir = temp_dir(), report = dir / "report.json";
  Run r0 = tune("--help");
  CHECK(r0.status == 0);
  CHECK(r0.out.find("usage: tilefuse-tune") == 0);
  for (const char* k : {"cross_entropy,", "softmax_bwd,", "layernorm_bwd_saved,", "scaled_matmul,"}) {
    CAPTURE(k);
    CHECK(r0.out.find(k) != std::string::npos);  // the help lists every kernel it sweeps
  }
  Run r = tune("rmsnorm,attention_fwd --dry-run --shape 64x1000 --shape 1x2x256x64c --dtype f16 --json '" +
                   report.string() + "'",
               dir);
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  CHECK(has_line(r.out, "prune  BLOCK_M=64 BLOCK_N=32 HEAD_SPLIT=1 PV_LAG=0 TMA_STORE=0 num_warps=8",
                 "8 warps x 16 rows > BLOCK_M 64"));
  CHECK(has_line(r.out, "prune  BLOCK_M=64 BLOCK_N=32 HEAD_SPLIT=0 PV_LAG=0 TMA_STORE=0 num_warps=4",
                 "head dim 64: the same blocks as HEAD_SPLIT=1"));
  REQUIRE(fs::exists(report));
  auto doc = tuning::Json::parse(slurp(report));
  CHECK(doc.at("dry_run").as_bool());
  auto& results = doc.at("results").as_array();
  REQUIRE(results.size() == 2);
  CHECK(results[0].at("kernel").as_string() == "rmsnorm");
  CHECK(results[0].at("key").as_string() == "n_rows=64 n_cols=1000 dtypes=f16,f16,f16");
  CHECK(results[0].at("configs").as_array().size() == row_configs());
  CHECK(results[1].at("kernel").as_string() == "attention_fwd");
  CHECK(results[1].at("key").as_string() ==
        "batch_heads=2 seq_len=256 head_dim=64 causal=1 kv_group=1 dtypes=f16,f32,f16,f16,f16");
  int tried = 0;
  for (auto& c : results[1].at("configs").as_array()) tried += c.find("pruned") == nullptr;
  CHECK(tried > 0);
}

TEST_CASE("tilefuse-tune reads shapes from a file and writes CSV") {
  fs::path dir = temp_dir();
  std::ofstream(dir / "shapes.txt") << "# kernel-specific and shared shapes\n"
                                       "softmax 32x300\n"
                                       "\n"
                                       "64x1000   # any row kernel\n";
  Run r = tune("softmax,layernorm --dry-run --dtype f32 --shapes-file '" + (dir / "shapes.txt").string() + "' --csv '" +
                   (dir / "r.csv").string() + "'",
               dir);
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("softmax f32 32x300 ") != std::string::npos);
  CHECK(r.out.find("softmax f32 64x1000 ") != std::string::npos);
  CHECK(r.out.find("layernorm f32 64x1000 ") != std::string::npos);
  CHECK(r.out.find("layernorm f32 32x300") == std::string::npos);
  std::string csv = slurp(dir / "r.csv");
  CHECK(csv.find("kernel,dtype,shape,config,") == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 3 * static_cast<long>(row_configs()));
  Run bad = tune("softmax --dry-run --shapes-file '" + (dir / "missing.txt").string() + "'");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("cannot read the shapes file") != std::string::npos);
}

TEST_CASE("tilefuse-tune --overhead measures the cache-hit path without a GPU") {
  Run r = tune("--overhead");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("autotune() on a cache hit: ") == 0);
  double ns = std::atof(r.out.c_str() + std::string("autotune() on a cache hit: ").size());
  MESSAGE("cache-hit overhead " << ns << " ns");
  CHECK(ns > 0);
  CHECK(ns < 1000);
}

TEST_CASE("tilefuse-tune without a GPU refuses to time, in one line") {
  if (gpu_available()) {
    MESSAGE("a GPU is present: the no-GPU refusal is not exercised here");
    return;
  }
  Run r = tune("softmax --shape 64x1000");
  CHECK(r.status == 3);
  CHECK(r.err.find("tilefuse-tune: cannot time kernels: ") == 0);
  CHECK(r.err.find("--dry-run lists the configs without a GPU") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("tilefuse-tune usage errors") {
  Run r = tune("softmaxx --dry-run --shape 64x1000");
  CHECK(r.status == 1);
  CHECK(r.err.find("tilefuse-tune has no kernel named 'softmaxx'. Known kernels: cross_entropy, softmax, rmsnorm") != std::string::npos);
  r = tune("softmax --dry-run --shape 64by1000");
  CHECK(r.status == 1);
  CHECK(r.err.find("shape '64by1000' is not ROWSxCOLS") != std::string::npos);
  r = tune("softmax --frobnicate");
  CHECK(r.status == 2);
  CHECK(r.err.find("unknown option --frobnicate") != std::string::npos);
}

TEST_CASE("tilefuse-tune --dry-run sweeps the 8-bit GEMM's tilings, and 8-bit floats elsewhere are a usage error") {
  Run r = tune("scaled_matmul --dry-run --shape 4096x4096x4096 --dtype f8e4m3,f8e5m2");
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("scaled_matmul f8e4m3 4096x4096x4096") != std::string::npos);
  CHECK(r.out.find("scaled_matmul f8e5m2 4096x4096x4096") != std::string::npos);
  CHECK(has_line(r.out, "try", "BLOCK_K=128 BLOCK_M=128 BLOCK_N=256 num_warps=8 num_stages=4"));
  CHECK(has_line(r.out, "prune  BLOCK_K=64 BLOCK_M=256 BLOCK_N=256 num_warps=8", "elements per warp > 64x64"));
  Run bad = tune("softmax --dry-run --shape 64x1000 --dtype f8e4m3");
  CHECK(bad.status != 0);
  CHECK(bad.err.find("8-bit floats are scaled_matmul's dtypes; softmax on f8e4m3 is not a sweep") != std::string::npos);
}
