#include "tilefuse/autotune/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tilefuse::tuning {
namespace {

const char* kind_name(Json::Kind k) {
  switch (k) {
    case Json::Kind::Null: return "null";
    case Json::Kind::Bool: return "a boolean";
    case Json::Kind::Number: return "a number";
    case Json::Kind::String: return "a string";
    case Json::Kind::Array: return "an array";
    case Json::Kind::Object: return "an object";
  }
  return "?";
}

[[noreturn]] void wrong_kind(Json::Kind have, const char* want) {
  throw std::runtime_error(std::string("expected ") + want + ", found " + kind_name(have));
}

void write_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void write_number(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip form
  out.append(buf, r.ptr);
}

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  Json document() {
    Json v = value(0);
    skip_ws();
    if (i_ != t_.size()) fail("unexpected text after the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t k = 0; k < i_ && k < t_.size(); ++k) {
      if (t_[k] == '\n') ++line, col = 1;
      else ++col;
    }
    throw std::runtime_error("line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
  }
  void skip_ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    skip_ws();
    if (i_ < t_.size() && t_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool literal(std::string_view w) {
    if (t_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }

  Json value(int depth) {
    if (depth > 64) fail("nesting deeper than 64 levels");
    skip_ws();
    if (i_ >= t_.size()) fail("unexpected end of input");
    char c = t_[i_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Json(string());
    if (literal("true")) return Json(true);
    if (literal("false")) return Json(false);
    if (literal("null")) return Json();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail(std::string("unexpected character '") + c + "'");
  }

  Json object(int depth) {
    ++i_;
    Json o = Json::object();
    if (eat('}')) return o;
    do {
      skip_ws();
      if (i_ >= t_.size() || t_[i_] != '"') fail("expected a member name");
      std::string k = string();
      expect(':');
      o.set(std::move(k), value(depth + 1));
    } while (eat(','));
    expect('}');
    return o;
  }

  Json array(int depth) {
    ++i_;
    Json a = Json::array();
    if (eat(']')) return a;
    do a.push(value(depth + 1));
    while (eat(','));
    expect(']');
    return a;
  }

  Json number() {
    size_t start = i_;
    if (t_[i_] == '-') ++i_;
    while (i_ < t_.size() && std::string_view("0123456789.eE+-").find(t_[i_]) != std::string_view::npos) ++i_;
    double d = 0;
    auto r = std::from_chars(t_.data() + start, t_.data() + i_, d);
    if (r.ec != std::errc() || r.ptr != t_.data() + i_) {
      i_ = start;
      fail("malformed number");
    }
    return Json(d);
  }

  unsigned hex4() {
    if (i_ + 4 > t_.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = t_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else fail("bad hex digit in \\u escape");
    }
    return v;
  }

  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++i_;  // opening quote
    std::string out;
    while (true) {
      if (i_ >= t_.size()) fail("unterminated string");
      char c = t_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) fail("unterminated escape");
      char e = t_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair encodes one code point
            if (!literal("\\u")) fail("unpaired surrogate");
            unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default: fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  std::string_view t_;
  size_t i_ = 0;
};

}  // namespace

bool Json::as_bool() const {
  if (kind_ != Kind::Bool) wrong_kind(kind_, "a boolean");
  return b_;
}
double Json::as_number() const {
  if (kind_ != Kind::Number) wrong_kind(kind_, "a number");
  return d_;
}
int64_t Json::as_int() const {
  double d = as_number();
  if (d != std::floor(d) || std::fabs(d) > 9007199254740992.0)
    throw std::runtime_error("expected an integer, found " + dump(-1));
  return static_cast<int64_t>(d);
}
const std::string& Json::as_string() const {
  if (kind_ != Kind::String) wrong_kind(kind_, "a string");
  return s_;
}
const Json::Array& Json::as_array() const {
  if (kind_ != Kind::Array) wrong_kind(kind_, "an array");
  return a_;
}
Json::Array& Json::as_array() {
  if (kind_ != Kind::Array) wrong_kind(kind_, "an array");
  return a_;
}
const Json::Object& Json::as_object() const {
  if (kind_ != Kind::Object) wrong_kind(kind_, "an object");
  return o_;
}

const Json* Json::find(std::string_view key) const {
  if (kind_ != Kind::Object) return nullptr;
  for (auto& [k, v] : o_)
    if (k == key) return &v;
  return nullptr;
}
const Json& Json::at(std::string_view key) const {
  if (kind_ != Kind::Object) wrong_kind(kind_, "an object");
  if (const Json* v = find(key)) return *v;
  throw std::runtime_error("missing member \"" + std::string(key) + "\"");
}
Json& Json::set(std::string key, Json v) {
  if (kind_ != Kind::Object) wrong_kind(kind_, "an object");
  for (auto& [k, old] : o_)
    if (k == key) return old = std::move(v);
  o_.emplace_back(std::move(key), std::move(v));
  return o_.back().second;
}
Json& Json::push(Json v) {
  as_array().push_back(std::move(v));
  return a_.back();
}

bool Json::operator==(const Json& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::Null: return true;
    case Kind::Bool: return b_ == o.b_;
    case Kind::Number: return d_ == o.d_;
    case Kind::String: return s_ == o.s_;
    case Kind::Array: return a_ == o.a_;
    case Kind::Object: return o_ == o.o_;
  }
  return false;
}

void Json::write(std::string& out, int indent, int depth) const {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (kind_) {
    case Kind::Null: out += "null"; return;
    case Kind::Bool: out += b_ ? "true" : "false"; return;
    case Kind::Number: write_number(out, d_); return;
    case Kind::String: write_string(out, s_); return;
    case Kind::Array: {
      // Arrays of scalars stay on one line; arrays of containers get one item per line.
      bool flat = true;
      for (auto& v : a_) flat &= !(v.is_array() || v.is_object());
      out += '[';
      for (size_t k = 0; k < a_.size(); ++k) {
        if (k) out += flat || indent < 0 ? ", " : ",";
        if (!flat) newline(depth + 1);
        a_[k].write(out, indent, depth + 1);
      }
      if (!flat && !a_.empty()) newline(depth);
      out += ']';
      return;
    }
    case Kind::Object: {
      // Objects of scalars (a config record) stay on one line too.
      bool flat = indent < 0;
      if (!flat) {
        flat = true;
        for (auto& [k, v] : o_) flat &= !(v.is_array() || v.is_object());
      }
      out += '{';
      for (size_t k = 0; k < o_.size(); ++k) {
        if (k) out += flat ? ", " : ",";
        if (!flat) newline(depth + 1);
        write_string(out, o_[k].first);
        out += ": ";
        o_[k].second.write(out, indent, depth + 1);
      }
      if (!flat && !o_.empty()) newline(depth);
      out += '}';
      return;
    }
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out;
}

Json Json::parse(std::string_view text) { return Parser(text).document(); }

}  // namespace tilefuse::tuning
