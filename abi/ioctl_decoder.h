// Strict decoder for RDMA_VERBS_IOCTL: the 24-byte header and the attribute array the ioctl
// argument points to, validated against the schema the way ib_uverbs_ioctl() /
// uverbs_process_attr() validate them, plus the proxy's own stricter rules. It reads only the
// bytes it is given; pointer attributes are reported (address, length, direction), never
// dereferenced -- their contents are decoded separately once copied in (payload_decoder.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "abi/result.h"
#include "abi/schema.h"

namespace rxp::abi {

// The attribute flags of the 6.12 UAPI. Others are ignored by that kernel and never forwarded,
// so a newer kernel cannot read a meaning into them that the proxy did not check.
inline constexpr uint16_t kKnownAttrFlags = UVERBS_ATTR_F_MANDATORY | UVERBS_ATTR_F_VALID_OUTPUT;

// The most attributes one ioctl may carry. The kernel only bounds the header length by
// PAGE_SIZE (254 attributes); rdma-core never sends more than ~20 and no method declares more
// than 16, so a longer array is refused (EINVAL) before anything is looked at.
inline constexpr uint16_t kMaxIoctlAttrs = 32;

// One decoded attribute.
struct IoctlAttr {
  const Attr* spec = nullptr;  // nullptr: an unknown optional attribute, dropped by the proxy
  uint16_t index = 0;          // position in the app's attribute array
  uint16_t id = 0;
  uint16_t len = 0;
  uint16_t flags = 0;
  uint8_t elem_id = 0;         // ENUM_IN: the selected element
  uint64_t data = 0;           // the raw data word: inline value, pointer, handle or fd

  // True when `data` is an address in the app (PTR_OUT always; PTR_IN / ENUM_IN / IDRS when
  // len > 8) -- uverbs_attr_ptr_is_inline() inverted. Inline (as are Find and InlineValue):
  // the command path asks several times per command.
  bool IsPointer() const {
    if (spec == nullptr) return false;
    switch (spec->type) {
      case AttrType::kPtrOut: return true;
      case AttrType::kPtrIn:
      case AttrType::kConstIn:
      case AttrType::kFlagsIn:
      case AttrType::kEnumIn:
      case AttrType::kIdrsArray: return len > sizeof(data);
      case AttrType::kIdr:
      case AttrType::kFd:
      case AttrType::kRawFd: return false;
    }
    return false;
  }
  // The lengths the attribute's data is held to: the spec's own, or for ENUM_IN the
  // element elem_id selects (uverbs_process_attr's val_spec). Valid once decoded.
  PtrSpec Ptr() const;
  // The inline value of a PTR_IN / CONST_IN / FLAGS_IN of len <= 8 (little-endian, zero
  // extended), as the kernel reads it (uverbs_get_const, uverbs_copy_from).
  uint64_t InlineValue() const {
    uint64_t v = 0;
    std::memcpy(&v, &data, len < sizeof(v) ? len : sizeof(v));
    return v;
  }
};

struct IoctlRequest {
  IoctlHeader header{};
  const Method* method = nullptr;
  const WriteCommand* write_command = nullptr;  // INVOKE_WRITE: the wrapped legacy command
  std::array<IoctlAttr, kMaxIoctlAttrs> attrs{};
  uint16_t num_attrs = 0;   // attributes the app sent (including dropped ones)
  uint16_t num_dropped = 0; // unknown optional attributes (the kernel ignores them too)

  std::span<const IoctlAttr> Attrs() const { return {attrs.data(), num_attrs}; }
  // The attribute with `attr_id`, or nullptr if absent.
  const IoctlAttr* Find(uint16_t attr_id) const {
    for (uint16_t i = 0; i < num_attrs; ++i)
      if (attrs[i].id == attr_id && attrs[i].spec != nullptr) return &attrs[i];
    return nullptr;
  }
  // The attribute whose spec means `meaning`, or nullptr if absent.
  const IoctlAttr* FindMeaning(AttrMeaning meaning) const {
    for (uint16_t i = 0; i < num_attrs; ++i)
      if (attrs[i].spec != nullptr && attrs[i].spec->meaning == meaning) return &attrs[i];
    return nullptr;
  }
};

// Decodes `bytes` (exactly the header plus header.length - 24 bytes of attributes, as copied
// from the app) for a file whose device is `device`, into `out`. Errors carry the errno the
// kernel would return where it would reject the same input (EINVAL, EPROTONOSUPPORT,
// EOPNOTSUPP, ENOSPC) and EINVAL for inputs only the proxy refuses.
Result<void> DecodeIoctl(std::span<const std::byte> bytes, const DeviceAbi& device,
                         IoctlRequest& out);

// The facts of a QP / CQ / SRQ creation that choose the driver request layout (mlx5
// create_qp variants), from the method's attributes and the driver request bytes; for
// INVOKE_WRITE, from the legacy request it wraps (`core_in`, its CORE_IN bytes), as the write
// handler reads them (ib_uverbs_create_qp: qp_type, create_flags, the RSS table).
PayloadContext DriverContext(const IoctlRequest& request, std::span<const std::byte> core_in,
                             std::span<const std::byte> driver_in);

// The driver payload spec of the method (or of the legacy command INVOKE_WRITE wraps) for
// `device`, or nullptr when the method carries no driver data the schema models.
const DriverPayload* DriverPayloadFor(const IoctlRequest& request, const DeviceAbi& device);

// Why DecodeIoctlHeader refuses `bytes` (`header`: what of it was read).
Error IoctlHeaderError(std::span<const std::byte> bytes, const IoctlHeader& header);

// Reads just the header (24 bytes) so a caller can learn header.length before copying the rest.
// Inline: the command path reads every header twice (for its length, then with the request).
inline Result<IoctlHeader> DecodeIoctlHeader(std::span<const std::byte> bytes) {
  IoctlHeader hdr{};
  if (bytes.size() >= sizeof(hdr)) std::memcpy(&hdr, bytes.data(), sizeof(hdr));
  // ib_uverbs_ioctl(): hdr.length > PAGE_SIZE or != the attributes it announces -> EINVAL;
  // non-zero reserved fields -> EPROTONOSUPPORT.
  if (bytes.size() < sizeof(hdr) || hdr.length > 4096 ||
      hdr.length != sizeof(hdr) + sizeof(ib_uverbs_attr) * hdr.num_attrs || hdr.reserved1 != 0 ||
      hdr.reserved2 != 0)
    return IoctlHeaderError(bytes, hdr);
  return hdr;
}

}  // namespace rxp::abi
