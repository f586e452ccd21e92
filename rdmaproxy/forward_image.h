// ForwardImage: the bytes the kernel will read for one command, built by the proxy from what
// it copied in and validated -- the header and attribute array (or the write buffer), the
// inputs they point to, and (in sentry mode) room for the outputs. Pointers inside the image
// are stored as image offsets and relocated once the image's address is known: in the
// forwarder's memory (sentry mode) or in scratch memory of the app (ptrace harness), where the
// app cannot change it after validation. This is what defeats time-of-check/time-of-use
// races: the kernel never reads the app's own buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rxp::proxy {

class ForwardImage {
 public:
  // Appends `bytes` at an `align`-aligned offset; returns that offset.
  size_t Append(std::span<const std::byte> bytes, size_t align = 8);
  // Appends `size` zero bytes (room for an output); returns the offset.
  size_t Reserve(size_t size, size_t align = 8);
  // The u64 at `at` is to hold the address of image offset `target` once relocated.
  void PointTo(size_t at, size_t target);

  // The image with every recorded pointer set to `base + target`.
  std::vector<std::byte> Relocated(uint64_t base) const;
  // The same, written into `out` (at least size() bytes), e.g. the buffer at `base` itself.
  void RelocateInto(std::span<std::byte> out, uint64_t base) const;

  std::span<std::byte> bytes() { return bytes_; }
  std::span<const std::byte> bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

  // Empty again, capacity kept.
  void Clear() {
    bytes_.clear();
    pointers_.clear();
  }

  void WriteU64(size_t at, uint64_t value);
  uint64_t ReadU64(size_t at) const;

 private:
  struct Pointer {
    size_t at;
    size_t target;
  };
  std::vector<std::byte> bytes_;
  std::vector<Pointer> pointers_;
};

}  // namespace rxp::proxy
