// JSON text for tuning::Json through llvm::json: llvm::json parses and escapes; the
// layout (which containers stay on one line) is the tuning cache's file format.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "tilefuse/autotune/json.hpp"

namespace tilefuse::tuning {
namespace {

constexpr int kMaxDepth = 64;

std::string position(std::string_view text, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t k = 0; k < offset && k < text.size(); ++k) {
    if (text[k] == '\n') ++line, col = 1;
    else ++col;
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

// llvm::json's parser recurses without a limit; a corrupt cache file of many '[' must
// fail here rather than exhaust the stack.
void check_depth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t k = 0; k < text.size(); ++k) {
    char c = text[k];
    if (in_string) {
      if (c == '\\') ++k;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        throw std::runtime_error(position(text, k) + ": nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

// llvm::json reports "[LINE:COLUMN, byte=OFFSET]: Message". The cache's warnings keep
// their wording across LLVM versions: the usual messages are said in tilefuse's words,
// at the offending character (LLVM's offset is just past it), others as LLVM says them.
std::string describe(llvm::Error err, std::string_view text) {
  std::string msg = llvm::toString(std::move(err));
  size_t byte = msg.find("byte="), close = msg.find("]: ");
  if (msg.rfind('[', 0) != 0 || byte == std::string::npos || close == std::string::npos) return msg;
  size_t offset = std::stoul(msg.substr(byte + 5, close - byte - 5));
  std::string what = msg.substr(close + 3);
  char last = offset > 0 && offset <= text.size() ? text[offset - 1] : '?';
  struct Wording {
    const char* llvm;
    std::string ours;
    bool at_last;  // reported at the character before LLVM's offset
  };
  const Wording words[] = {
      {"Invalid JSON value", std::string("unexpected character '") + last + "'", true},
      {"Expected : after object key", "expected ':'", true},
      {"Expected , or ] after array element", "expected ',' or ']'", true},
      {"Expected , or } after object property", "expected ',' or '}'", true},
      {"Expected object key", "expected a member name", true},
      {"Unexpected EOF", "unexpected end of input", false},
      {"Text after end of document", "unexpected text after the document", false},
      {"Unterminated string", "unterminated string", false},
      {"Invalid escape sequence", std::string("unknown escape '\\") + last + "'", false},
      {"Control character in string", "control character in a string", false},
  };
  if (what == "Invalid JSON value (number?)") {  // LLVM stops past the number; point at its start
    size_t start = std::min(offset, text.size());
    while (start > 0 && std::string_view("0123456789.eE+-").find(text[start - 1]) != std::string_view::npos) --start;
    return position(text, start) + ": malformed number";
  }
  for (const Wording& w : words)
    if (what == w.llvm) return position(text, w.at_last && offset > 0 ? offset - 1 : offset) + ": " + w.ours;
  return position(text, offset) + ": " + what;
}

Json from_llvm(const llvm::json::Value& v) {
  switch (v.kind()) {
    case llvm::json::Value::Null: return Json();
    case llvm::json::Value::Boolean: return Json(*v.getAsBoolean());
    case llvm::json::Value::Number: return Json(*v.getAsNumber());
    case llvm::json::Value::String: return Json(v.getAsString()->str());
    case llvm::json::Value::Array: {
      Json a = Json::array();
      for (const auto& item : *v.getAsArray()) a.push(from_llvm(item));
      return a;
    }
    case llvm::json::Value::Object: {
      Json o = Json::object();
      for (const auto* member : llvm::json::sortedElements(*v.getAsObject()))
        o.set(member->first.str(), from_llvm(member->second));
      return o;
    }
  }
  return Json();
}

void write_string(std::string& out, const std::string& s) {
  llvm::raw_string_ostream os(out);
  llvm::json::OStream(os).value(llvm::StringRef(s));
}

void write_number(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);  // the shortest form that reads back exactly
  out.append(buf, r.ptr);
}

bool is_container(const Json& v) { return v.is_array() || v.is_object(); }

void write(const Json& v, std::string& out, int indent, int depth) {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (v.kind()) {
    case Json::Kind::Null: out += "null"; return;
    case Json::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Json::Kind::Number: write_number(out, v.as_number()); return;
    case Json::Kind::String: write_string(out, v.as_string()); return;
    case Json::Kind::Array: {
      // Arrays of scalars stay on one line; arrays of containers get one item per line.
      const auto& items = v.as_array();
      bool flat = std::none_of(items.begin(), items.end(), is_container);
      out += '[';
      for (size_t k = 0; k < items.size(); ++k) {
        if (k) out += flat || indent < 0 ? ", " : ",";
        if (!flat) newline(depth + 1);
        write(items[k], out, indent, depth + 1);
      }
      if (!flat && !items.empty()) newline(depth);
      out += ']';
      return;
    }
    case Json::Kind::Object: {
      // Objects of scalars (a config record) stay on one line too.
      const auto& members = v.as_object();
      bool flat = indent < 0 || std::none_of(members.begin(), members.end(),
                                             [](const auto& kv) { return is_container(kv.second); });
      out += '{';
      for (size_t k = 0; k < members.size(); ++k) {
        if (k) out += flat ? ", " : ",";
        if (!flat) newline(depth + 1);
        write_string(out, members[k].first);
        out += ": ";
        write(members[k].second, out, indent, depth + 1);
      }
      if (!flat && !members.empty()) newline(depth);
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string Json::dump(int indent) const {
  std::string out;
  write(*this, out, indent, 0);
  return out;
}

Json Json::parse(std::string_view text) {
  check_depth(text);
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(llvm::StringRef(text.data(), text.size()));
  if (!v) throw std::runtime_error(describe(v.takeError(), text));
  return from_llvm(*v);
}

}  // namespace tilefuse::tuning
