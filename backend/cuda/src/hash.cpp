// Sha256 over llvm::SHA256; the field() framing and the hex form are tilefuse's own
// (cache keys on disk depend on them).
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SHA256.h"
#include "tilefuse/cuda/hash.hpp"

namespace tilefuse::cuda {

struct Sha256::State {
  llvm::SHA256 sha;
};

Sha256::Sha256() : state_(std::make_unique<State>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

Sha256& Sha256::update(const void* data, size_t n) {
  state_->sha.update(llvm::ArrayRef<uint8_t>(static_cast<const uint8_t*>(data), n));
  return *this;
}

Sha256& Sha256::field(std::string_view s) {
  uint8_t len[8];  // little-endian length first
  uint64_t n = s.size();
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(n >> (8 * i));
  update(len, 8);
  return update(s);
}

Digest256 Sha256::finish() { return state_->sha.final(); }

Digest256 sha256(std::string_view data) { return Sha256().update(data).finish(); }

std::string to_hex(const Digest256& d) {
  static const char* hex = "0123456789abcdef";
  std::string s(64, '0');
  for (size_t i = 0; i < 32; ++i) {
    s[2 * i] = hex[d[i] >> 4];
    s[2 * i + 1] = hex[d[i] & 15];
  }
  return s;
}

}  // namespace tilefuse::cuda
