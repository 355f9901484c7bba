// The JSON value: typed access, members, equality. Text is read and written by
// json_text.cpp through llvm::json.
#include "tilefuse/autotune/json.hpp"

#include <algorithm>
#include <cmath>
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
    case Kind::Object:
      // Member order carries no meaning in JSON (and llvm::json does not keep it).
      return o_.size() == o.o_.size() && std::all_of(o_.begin(), o_.end(), [&](const auto& kv) {
               const Json* other = o.find(kv.first);
               return other && *other == kv.second;
             });
  }
  return false;
}

}  // namespace tilefuse::tuning
