#pragma once
// SHA-256, for cache keys and cache-entry checksums (no external dependency).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tilefuse::cuda {

using Digest256 = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, size_t n);
  Sha256& update(std::string_view s) { return update(s.data(), s.size()); }
  // Length-prefixed field, so ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view s);
  Digest256 finish();  // the object must not be updated afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

Digest256 sha256(std::string_view data);
std::string to_hex(const Digest256& d);

}  // namespace tilefuse::cuda
