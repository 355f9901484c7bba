#pragma once
// A small JSON value for the tuning cache and the tools' reports. The text is parsed
// and escaped by llvm::json (linked into libtilefuse, not exposed by this header).
// Objects keep their insertion order when written so the files read well and diff
// cleanly; parsed objects list their members sorted by name.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilefuse::tuning {

class Json {
 public:
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : kind_(Kind::Bool), b_(b) {}
  Json(double d) : kind_(Kind::Number), d_(d) {}
  Json(int v) : Json(static_cast<double>(v)) {}
  Json(int64_t v) : Json(static_cast<double>(v)) {}  // exact up to 2^53
  Json(const char* s) : kind_(Kind::String), s_(s) {}
  Json(std::string s) : kind_(Kind::String), s_(std::move(s)) {}
  Json(Array a) : kind_(Kind::Array), a_(std::move(a)) {}
  static Json object() { Json j; j.kind_ = Kind::Object; return j; }
  static Json array() { return Json(Array{}); }

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_number() const { return kind_ == Kind::Number; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }

  // Typed access; a wrong kind throws std::runtime_error naming what was expected.
  bool as_bool() const;
  double as_number() const;
  int64_t as_int() const;  // a number with no fraction
  const std::string& as_string() const;
  const Array& as_array() const;
  Array& as_array();
  const Object& as_object() const;

  // Object members: find returns nullptr when absent; at() throws; set() replaces or appends.
  const Json* find(std::string_view key) const;
  const Json& at(std::string_view key) const;
  Json& set(std::string key, Json v);
  // Array append.
  Json& push(Json v);

  // Two-space indented text (indent < 0: one line). Numbers print in their shortest
  // exact form; non-finite numbers print as null.
  std::string dump(int indent = 2) const;
  // Parses a whole document; throws std::runtime_error "line L, column C: ..." on bad input.
  static Json parse(std::string_view text);

  // Objects compare equal whatever their member order.
  bool operator==(const Json& o) const;

 private:
  Kind kind_ = Kind::Null;
  bool b_ = false;
  double d_ = 0;
  std::string s_;
  Array a_;
  Object o_;
};

}  // namespace tilefuse::tuning
