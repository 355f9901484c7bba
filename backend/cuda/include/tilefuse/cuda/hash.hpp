#pragma once
// SHA-256, for cache keys and cache-entry checksums: llvm::SHA256 (linked into
// libtilefuse) behind a header that names no LLVM type.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tilefuse::cuda {

using Digest256 = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256& update(const void* data, size_t n);
  Sha256& update(std::string_view s) { return update(s.data(), s.size()); }
  // Length-prefixed field, so ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view s);
  Digest256 finish();  // the object must not be updated afterwards

 private:
  struct State;
  std::unique_ptr<State> state_;
};

Digest256 sha256(std::string_view data);
std::string to_hex(const Digest256& d);

}  // namespace tilefuse::cuda
