// The tuning cache file: store/load/merge, superseded versions, corrupt and foreign
// files (reported once, never trusted), and many threads and processes writing one
// file at once (no lost entries, no torn file).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "scratch.hpp"
#include "tilefuse/autotune/cache.hpp"

using namespace tilefuse;
using namespace tilefuse::tuning;
namespace fs = std::filesystem;
using tf_test::temp_dir;

namespace {

EntryId id_for(const std::string& key, const std::string& compiler = "c1") {
  return EntryId{"softmax", "(bf16*, bf16*, i64, i64)", key, "Test GPU", 90, compiler, "m1"};
}

Record timed(int64_t block, double ms) { return Record{Config{{"BLOCK", block}, num_warps(4)}, ms, 10, ""}; }

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// Runs f with stderr sent to a file; returns what was written.
std::string capture_stderr(const std::function<void()>& f) {
  fs::path p = temp_dir() / "stderr.txt";
  std::fflush(stderr);
  int saved = dup(2);
  FILE* tmp = std::fopen(p.c_str(), "w");
  dup2(fileno(tmp), 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(tmp);
  return read(p);
}

}  // namespace

TEST_CASE("cache: store, load, and merge per config") {
  TuningCache c(temp_dir());
  CHECK_FALSE(c.load(id_for("n=1")));
  REQUIRE(c.store(Entry{id_for("n=1"), {timed(1024, 0.5), timed(2048, 0.4)}, {}}));
  auto e = c.load(id_for("n=1"));
  REQUIRE(e);
  CHECK(e->records.size() == 2);
  CHECK(e->best()->config.get("BLOCK") == 2048);
  // A new config adds to the entry; a re-timed one replaces its record.
  Record pruned{Config{{"BLOCK", 8192}, num_warps(4)}, -1, 0, "spills 64 bytes"};
  REQUIRE(c.store(Entry{id_for("n=1"), {timed(1024, 0.3), pruned}, {}}));
  e = c.load(id_for("n=1"));
  REQUIRE(e);
  CHECK(e->records.size() == 3);
  CHECK(e->find(Config{{"BLOCK", 1024}, num_warps(4)})->ms == 0.3);
  CHECK(e->find(pruned.config)->pruned == "spills 64 bytes");
  CHECK(e->best()->config.get("BLOCK") == 1024);
  // Other compiler versions and keys are other entries.
  CHECK_FALSE(c.load(id_for("n=1", "c2")));
  CHECK_FALSE(c.load(id_for("n=2")));
  std::string text = read(c.file_for("softmax"));
  CHECK(text.find("\"schema\": \"tilefuse-tuning\"") != std::string::npos);
  CHECK(text.find("\"version\": 1") != std::string::npos);
  CHECK(text.find("\"pruned\": \"spills 64 bytes\"") != std::string::npos);
}

TEST_CASE("cache: a newer compiler version supersedes the entry for the same problem only") {
  TuningCache c(temp_dir());
  c.store(Entry{id_for("n=1", "c1"), {timed(1024, 0.5)}, {}});
  c.store(Entry{id_for("n=2", "c1"), {timed(1024, 0.5)}, {}});
  c.store(Entry{id_for("n=1", "c2"), {timed(2048, 0.5)}, {}});
  CHECK_FALSE(c.load(id_for("n=1", "c1")));
  CHECK(c.load(id_for("n=1", "c2")));
  CHECK(c.load(id_for("n=2", "c1")));
  CHECK(c.entries("softmax").size() == 2);
}

TEST_CASE("cache: corrupt, foreign-version and foreign-schema files are reported once and ignored") {
  fs::path dir = temp_dir();
  TuningCache c(dir);
  c.store(Entry{id_for("n=1"), {timed(1024, 0.5)}, {}});
  std::string good = read(c.file_for("softmax"));

  struct Case {
    std::string text, reason;
  };
  std::string foreign = good;
  foreign.replace(foreign.find("\"version\": 1"), 12, "\"version\": 999");
  std::string other = good;
  other.replace(other.find("tilefuse-tuning"), 15, "something-else!");
  std::string negative = good;
  negative.replace(negative.find("\"ms\": 0.5"), 9, "\"ms\": -0.5");
  for (const Case& k : {Case{good.substr(0, good.find("\"entries\": [") + 12), "unexpected end of input"},
                        Case{"\x7f" "ELF garbage", "unexpected character"},
                        Case{foreign, "schema version 999, this build reads version 1"},
                        Case{other, "not a tuning cache"}, Case{negative, "negative time"}}) {
    CAPTURE(k.reason);
    fs::path sub = temp_dir();
    TuningCache bad(sub);
    write(bad.file_for("softmax"), k.text);
    uint64_t before = bad.stats().bad_files;
    std::string err = capture_stderr([&] {
      CHECK_FALSE(bad.load(id_for("n=1")));
      CHECK_FALSE(bad.load(id_for("n=1")));
    });
    CHECK(bad.stats().bad_files == before + 1);  // parsed once (memo), reported once
    CHECK(err.find("ignoring the tuning cache file") != std::string::npos);
    CHECK(err.find(k.reason) != std::string::npos);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    // The next store replaces it with a valid file.
    REQUIRE(bad.store(Entry{id_for("n=1"), {timed(4096, 0.25)}, {}}));
    auto e = bad.load(id_for("n=1"));
    REQUIRE(e);
    CHECK(e->records.size() == 1);
  }
}

TEST_CASE("cache: threads writing one file concurrently lose nothing and never see a torn file") {
  fs::path dir = temp_dir();
  const int threads = 6, per_thread = 15;
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, reads{0};
  // A reader with its own cache object re-parses every version it sees.
  std::thread reader([&] {
    TuningCache r(dir);
    while (!done) {
      auto before = r.stats().bad_files;
      r.entries("softmax");
      torn += static_cast<int>(r.stats().bad_files - before);
      ++reads;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t)
    writers.emplace_back([&, t] {
      TuningCache c(dir);  // as if each were a separate user of the directory
      for (int i = 0; i < per_thread; ++i) {
        c.store(Entry{id_for("t=" + std::to_string(t) + " i=" + std::to_string(i)), {timed(1024, 0.1 * i)}, {}});
        c.store(Entry{id_for("shared"), {timed(1024 * (t * per_thread + i + 1), 1.0)}, {}});
      }
    });
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
  TuningCache c(dir);
  CHECK(c.entries("softmax").size() == threads * per_thread + 1);
  auto shared = c.load(id_for("shared"));
  REQUIRE(shared);
  CHECK(shared->records.size() == threads * per_thread);
  CHECK(torn == 0);
  CHECK(reads > 0);
  int leftovers = 0;
  for (auto& f : fs::directory_iterator(dir)) leftovers += f.path().string().find(".tmp.") != std::string::npos;
  CHECK(leftovers == 0);
}

TEST_CASE("cache: processes writing one file concurrently lose nothing") {
  fs::path dir = temp_dir();
  const int procs = 3, per_proc = 20;
  std::vector<pid_t> kids;
  for (int p = 0; p < procs; ++p) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int rc = 0;
      try {
        TuningCache c(dir);
        for (int i = 0; i < per_proc; ++i) {
          bool a = c.store(Entry{id_for("p=" + std::to_string(p) + " i=" + std::to_string(i)), {timed(1024, 1)}, {}});
          bool b = c.store(Entry{id_for("shared"), {timed(1024 * (p * per_proc + i + 1), 1.0)}, {}});
          if (!a || !b) rc = 1;
        }
      } catch (...) {
        rc = 2;
      }
      _exit(rc);  // no doctest teardown in the child
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  TuningCache c(dir);
  CHECK(c.entries("softmax").size() == procs * per_proc + 1);
  auto shared = c.load(id_for("shared"));
  REQUIRE(shared);
  CHECK(shared->records.size() == procs * per_proc);
}

TEST_CASE("cache: an unwritable directory warns once and keeps going") {
  fs::path dir = temp_dir();
  write(dir / "file", "x");
  TuningCache c(dir / "file" / "tuning");  // a directory below a regular file cannot exist
  std::string err = capture_stderr([&] {
    CHECK_FALSE(c.store(Entry{id_for("n=1"), {timed(1024, 0.5)}, {}}));
    CHECK_FALSE(c.store(Entry{id_for("n=2"), {timed(1024, 0.5)}, {}}));
  });
  CHECK(err.find("cannot write the tuning cache") != std::string::npos);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK_FALSE(c.load(id_for("n=1")));
}
