#include "rdmaproxy/forward_image.h"

#include <algorithm>
#include <cstring>

namespace rxp::proxy {

void ForwardImage::Grow(size_t size) { bytes_.resize(std::max(size, 2 * bytes_.size())); }

std::vector<std::byte> ForwardImage::Relocated(uint64_t base) const {
  std::vector<std::byte> out(bytes_.begin(), bytes_.begin() + static_cast<long>(size_));
  for (const auto& p : pointers_) {
    const uint64_t address = base + p.target;
    std::memcpy(out.data() + p.at, &address, sizeof(address));
  }
  return out;
}

void ForwardImage::RelocateInto(std::span<std::byte> out, uint64_t base) const {
  std::memcpy(out.data(), bytes_.data(), size_);
  for (const auto& p : pointers_) {
    const uint64_t address = base + p.target;
    std::memcpy(out.data() + p.at, &address, sizeof(address));
  }
}

std::span<std::byte> ForwardImage::RelocateInPlace() {
  const auto base = reinterpret_cast<uint64_t>(bytes_.data());
  for (const auto& p : pointers_) {
    const uint64_t address = base + p.target;
    std::memcpy(bytes_.data() + p.at, &address, sizeof(address));
  }
  return bytes();
}

void ForwardImage::WriteU64(size_t at, uint64_t value) {
  std::memcpy(bytes_.data() + at, &value, sizeof(value));
}

uint64_t ForwardImage::ReadU64(size_t at) const {
  uint64_t v;
  std::memcpy(&v, bytes_.data() + at, sizeof(v));
  return v;
}

}  // namespace rxp::proxy
