// The autotuner's JSON: round trips (random documents, escapes, numbers), error
// positions, and the tuning cache's document form.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "tilefuse/autotune/bench.hpp"
#include "tilefuse/autotune/cache.hpp"
#include "tilefuse/autotune/json.hpp"

using namespace tilefuse;
using tuning::Json;

namespace {

std::string random_string(std::mt19937& g) {
  static const std::string pieces[] = {"a", "Z", " ", "\"", "\\", "\n", "\t", "\x01", "/", "\xc3\xa9", "\xf0\x9f\x98\x80",
                                       "{", "]", ":", ","};
  std::string s;
  for (int n = g() % 8; n > 0; --n) s += pieces[g() % std::size(pieces)];
  return s;
}

double random_number(std::mt19937& g) {
  switch (g() % 5) {
    case 0: return static_cast<double>(static_cast<int64_t>(g()) - (1ll << 31));
    case 1: return std::ldexp(static_cast<double>(g()), static_cast<int>(g() % 200) - 100);
    case 2: return -std::uniform_real_distribution<double>(0, 1)(g);
    case 3: return 0.1 * (g() % 1000);
    default: return static_cast<double>(g() % 10);
  }
}

Json random_json(std::mt19937& g, int depth) {
  int kind = depth > 3 ? g() % 4 : g() % 6;
  switch (kind) {
    case 0: return Json();
    case 1: return Json(g() % 2 == 0);
    case 2: return Json(random_number(g));
    case 3: return Json(random_string(g));
    case 4: {
      Json a = Json::array();
      for (int n = g() % 5; n > 0; --n) a.push(random_json(g, depth + 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (int n = g() % 5; n > 0; --n) o.set(random_string(g) + std::to_string(n), random_json(g, depth + 1));
      return o;
    }
  }
}

std::string parse_error(const std::string& text) {
  try {
    Json::parse(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(parsed)";
}

}  // namespace

TEST_CASE("json: random documents survive dump and parse, indented and compact") {
  std::mt19937 g(1234);
  for (int i = 0; i < 300; ++i) {
    Json doc = random_json(g, 0);
    CAPTURE(doc.dump(-1));
    CHECK(Json::parse(doc.dump()) == doc);
    CHECK(Json::parse(doc.dump(-1)) == doc);
  }
}

TEST_CASE("json: numbers print in their shortest exact form") {
  for (double d : {0.1, 1e-300, 123456789012.0, -2.5, 0.3333333333333333, 6.02214076e23}) {
    Json j(d);
    CHECK(Json::parse(j.dump()).as_number() == d);
  }
  CHECK(Json(0.1).dump() == "0.1");
  CHECK(Json(int64_t{9007199254740992}).dump() == "9007199254740992");
  CHECK(Json(std::nan("")).dump() == "null");
  CHECK(Json::parse("[1e3, -0.5E-1, 7]").dump(-1) == "[1000, -0.05, 7]");
}

TEST_CASE("json: an unpaired surrogate reads as U+FFFD (llvm::json's rule)") {
  CHECK(Json::parse("\"\\ud83d\"").as_string() == "\xef\xbf\xbd");
}

TEST_CASE("json: escapes and unicode") {
  Json j = Json::parse(R"(["\u00e9", "\ud83d\ude00", "a\"b\\c\/d\n\t", "\u0001"])");
  auto& a = j.as_array();
  CHECK(a[0].as_string() == "\xc3\xa9");
  CHECK(a[1].as_string() == "\xf0\x9f\x98\x80");
  CHECK(a[2].as_string() == "a\"b\\c/d\n\t");
  CHECK(a[3].dump() == "\"\\u0001\"");
}

TEST_CASE("json: malformed input is rejected with line and column") {
  CHECK(parse_error("{\"a\": }") == "line 1, column 7: unexpected character '}'");
  CHECK(parse_error("{\n  \"a\": 1,\n  \"b\" 2\n}") == "line 3, column 7: expected ':'");
  CHECK(parse_error("[1, 2] x") == "line 1, column 8: unexpected text after the document");
  CHECK(parse_error("\"abc") == "line 1, column 5: unterminated string");
  CHECK(parse_error("\"\\q\"") == "line 1, column 4: unknown escape '\\q'");
  CHECK(parse_error("[1.2.3]") == "line 1, column 2: malformed number");
  CHECK(parse_error("") == "line 1, column 1: unexpected end of input");
  CHECK(parse_error(std::string(100, '[') + std::string(100, ']')).find("nesting deeper than 64") != std::string::npos);
}

TEST_CASE("json: typed access names what was expected") {
  Json o = Json::parse(R"({"n": 1.5, "s": "x"})");
  CHECK_THROWS_WITH(o.at("s").as_number(), "expected a number, found a string");
  CHECK_THROWS_WITH(o.at("n").as_int(), "expected an integer, found 1.5");
  CHECK_THROWS_WITH(o.at("missing"), "missing member \"missing\"");
  CHECK(o.find("missing") == nullptr);
}

TEST_CASE("tuning cache document: entries round-trip through JSON text") {
  tuning::Entry e;
  e.id = {"softmax", "(bf16*, bf16*, i64, i64)", "n_rows=8192 n_cols=4096 dtypes=bf16,bf16", "NVIDIA H100 80GB HBM3",
          90, "tilefuse 0.1.0", tuning::kBenchMethod};
  e.updated = "2026-11-22T00:00:00Z";
  e.records.push_back({Config{{"BLOCK", 4096}, num_warps(8)}, 0.0421, 57, ""});
  e.records.push_back({Config{{"BLOCK", 1024}, num_warps(4)}, -1, 0, "spills 64 bytes"});
  e.records.push_back({Config{{"BLOCK", 4096}, num_warps(16), num_stages(2)}, 0.0399, 61, ""});
  std::string text = tuning::TuningCache::encode({e}).dump();
  CHECK(text.find("\"schema\": \"tilefuse-tuning\"") != std::string::npos);
  CHECK(text.find("\"best\": \"BLOCK=4096 num_warps=16 num_stages=2\"") != std::string::npos);
  auto back = tuning::TuningCache::decode(Json::parse(text));
  REQUIRE(back.size() == 1);
  CHECK(back[0].id == e.id);
  CHECK(back[0].updated == e.updated);
  REQUIRE(back[0].records.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(back[0].records[i].config == e.records[i].config);
    CHECK(back[0].records[i].ms == e.records[i].ms);
    CHECK(back[0].records[i].reps == e.records[i].reps);
    CHECK(back[0].records[i].pruned == e.records[i].pruned);
  }
}

TEST_CASE("parse_config reads Config::str() back and rejects junk") {
  Config c{{"BLOCK_M", 128}, {"CAUSAL", 1}, num_warps(8), num_stages(3)};
  CHECK(tuning::parse_config(c.str()) == c);
  CHECK_THROWS_WITH(tuning::parse_config("BLOCK=12x"), "bad config value in 'BLOCK=12x'");
  CHECK_THROWS_WITH(tuning::parse_config("BLOCK"), "bad config item 'BLOCK' in \"BLOCK\"");
  CHECK_THROWS_WITH(tuning::parse_config(""), "empty config");
}
