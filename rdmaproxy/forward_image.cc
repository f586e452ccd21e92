#include "rdmaproxy/forward_image.h"

#include <cstring>

namespace rxp::proxy {

size_t ForwardImage::Append(std::span<const std::byte> bytes, size_t align) {
  const size_t at = Reserve(bytes.size(), align);
  if (!bytes.empty()) std::memcpy(bytes_.data() + at, bytes.data(), bytes.size());
  return at;
}

size_t ForwardImage::Reserve(size_t size, size_t align) {
  const size_t at = (bytes_.size() + align - 1) / align * align;
  bytes_.resize(at + size);
  return at;
}

void ForwardImage::PointTo(size_t at, size_t target) { pointers_.push_back({at, target}); }

std::vector<std::byte> ForwardImage::Relocated(uint64_t base) const {
  std::vector<std::byte> out = bytes_;
  for (const auto& p : pointers_) {
    const uint64_t address = base + p.target;
    std::memcpy(out.data() + p.at, &address, sizeof(address));
  }
  return out;
}

void ForwardImage::RelocateInto(std::span<std::byte> out, uint64_t base) const {
  std::memcpy(out.data(), bytes_.data(), bytes_.size());
  for (const auto& p : pointers_) {
    const uint64_t address = base + p.target;
    std::memcpy(out.data() + p.at, &address, sizeof(address));
  }
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
