// ForwardImage: the bytes the kernel will read for one command, built by the proxy from what
// it copied in and validated -- the header and attribute array (or the write buffer), the
// inputs they point to, and (in sentry mode) room for the outputs. Pointers inside the image
// are stored as image offsets and relocated once the image's address is known: in the
// forwarder's memory (sentry mode) or in scratch memory of the app (ptrace harness), where the
// app cannot change it after validation. This is what defeats time-of-check/time-of-use
// races: the kernel never reads the app's own buffers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace rxp::proxy {

class ForwardImage {
 public:
  // Appends `bytes` at an `align`-aligned offset; returns that offset.
  size_t Append(std::span<const std::byte> bytes, size_t align = 8) {
    const size_t at = Extend(bytes.size(), align);
    if (!bytes.empty()) std::memcpy(bytes_.data() + at, bytes.data(), bytes.size());
    return at;
  }
  // Appends `size` zero bytes (room for an output); returns the offset.
  size_t Reserve(size_t size, size_t align = 8) {
    const size_t at = Extend(size, align);
    std::memset(bytes_.data() + at, 0, size);
    return at;
  }
  // The u64 at `at` is to hold the address of image offset `target` once relocated.
  void PointTo(size_t at, size_t target) { pointers_.push_back({at, target}); }

  // The image with every recorded pointer set to `base + target`.
  std::vector<std::byte> Relocated(uint64_t base) const;
  // The same, written into `out` (at least size() bytes), e.g. the buffer at `base` itself.
  void RelocateInto(std::span<std::byte> out, uint64_t base) const;
  // Relocates the image where it is (base: its own address) and returns it: sentry mode hands
  // the kernel the image itself, with no copy. Relocate last: appending afterwards may move
  // the bytes.
  std::span<std::byte> RelocateInPlace();

  std::span<std::byte> bytes() { return {bytes_.data(), size_}; }
  std::span<const std::byte> bytes() const { return {bytes_.data(), size_}; }
  size_t size() const { return size_; }

  // Empty again, capacity kept.
  void Clear() {
    size_ = 0;
    pointers_.clear();
  }

  void WriteU64(size_t at, uint64_t value);
  uint64_t ReadU64(size_t at) const;

 private:
  struct Pointer {
    size_t at;
    size_t target;
  };
  // Grows the image by `size` bytes at an `align`-aligned offset, which it returns; the padding
  // before it is zeroed, the new bytes are the caller's to fill.
  size_t Extend(size_t size, size_t align) {
    const size_t at = (size_ + align - 1) / align * align;
    const size_t end = at + size;
    if (end > bytes_.size()) Grow(end);
    std::fill(bytes_.begin() + static_cast<long>(size_), bytes_.begin() + static_cast<long>(at),
              std::byte{0});
    size_ = end;
    return at;
  }
  // Makes room for `size` bytes; the first size_ are kept.
  void Grow(size_t size);

  // The image is the first size_ bytes; the rest is capacity kept from earlier commands, so
  // building one in a reused image neither allocates nor zero-fills through vector::resize.
  std::vector<std::byte> bytes_;
  size_t size_ = 0;
  std::vector<Pointer> pointers_;
};

}  // namespace rxp::proxy
