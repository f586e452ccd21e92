// Test helpers that build uverbs requests byte by byte, the way rdma-core lays them out
// (libibverbs/cmd_ioctl.h, cmd_write.h). Used by unit tests, fuzz seeds and benchmarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "abi/uapi.h"

namespace rxp::abi::testing {

// One attribute of an RDMA_VERBS_IOCTL request, as the app lays it out.
inline ib_uverbs_attr MakeAttr(uint16_t id, uint16_t len, uint64_t data,
                               uint16_t flags = UVERBS_ATTR_F_MANDATORY) {
  ib_uverbs_attr a{};
  a.attr_id = id;
  a.len = len;
  a.flags = flags;
  a.data = data;
  return a;
}

class IoctlBuilder {
 public:
  IoctlBuilder(uint16_t object, uint16_t method, uint32_t driver_id) {
    header_.object_id = object;
    header_.method_id = method;
    header_.driver_id = driver_id;
  }

  IoctlBuilder& Attr(uint16_t id, uint16_t len, uint64_t data,
                     uint16_t flags = UVERBS_ATTR_F_MANDATORY) {
    attrs_.push_back(MakeAttr(id, len, data, flags));
    return *this;
  }
  // An IDR / FD attribute: len 0, the handle or fd in data.
  IoctlBuilder& Handle(uint16_t id, uint64_t handle, uint16_t flags = UVERBS_ATTR_F_MANDATORY) {
    return Attr(id, 0, handle, flags);
  }
  // A PTR_IN of len <= 8 carried inline.
  IoctlBuilder& Inline(uint16_t id, uint64_t value, uint16_t len,
                       uint16_t flags = UVERBS_ATTR_F_MANDATORY) {
    return Attr(id, len, value, flags);
  }
  // A pointer attribute: `len` bytes at app address `addr`.
  IoctlBuilder& Pointer(uint16_t id, uint64_t addr, uint16_t len,
                        uint16_t flags = UVERBS_ATTR_F_MANDATORY) {
    return Attr(id, len, addr, flags);
  }
  IoctlBuilder& Raw(const ib_uverbs_attr& a) {
    attrs_.push_back(a);
    return *this;
  }
  IoctlBuilder& Header(const IoctlHeader& h) {
    header_ = h;
    header_set_ = true;
    return *this;
  }
  IoctlHeader& MutableHeader() {
    header_set_ = true;
    return header_;
  }

  std::vector<std::byte> Build() const {
    IoctlHeader h = header_;
    if (!header_set_) {
      h.num_attrs = static_cast<uint16_t>(attrs_.size());
      h.length = static_cast<uint16_t>(sizeof(IoctlHeader) + sizeof(ib_uverbs_attr) * attrs_.size());
    }
    std::vector<std::byte> out(sizeof(IoctlHeader) + sizeof(ib_uverbs_attr) * attrs_.size());
    std::memcpy(out.data(), &h, sizeof(h));
    if (!attrs_.empty())
      std::memcpy(out.data() + sizeof(h), attrs_.data(), sizeof(ib_uverbs_attr) * attrs_.size());
    return out;
  }

 private:
  IoctlHeader header_{};
  bool header_set_ = false;
  std::vector<ib_uverbs_attr> attrs_;
};

// A legacy write() buffer: ib_uverbs_cmd_hdr + core struct + driver data.
template <typename Core>
std::vector<std::byte> LegacyWrite(uint32_t command, const Core& core,
                                   const std::vector<std::byte>& driver = {},
                                   uint16_t out_words = 0) {
  std::vector<std::byte> out(sizeof(ib_uverbs_cmd_hdr) + sizeof(Core) + driver.size());
  ib_uverbs_cmd_hdr h{};
  h.command = command;
  h.in_words = static_cast<uint16_t>(out.size() / 4);
  h.out_words = out_words;
  std::memcpy(out.data(), &h, sizeof(h));
  std::memcpy(out.data() + sizeof(h), &core, sizeof(Core));
  if (!driver.empty()) std::memcpy(out.data() + sizeof(h) + sizeof(Core), driver.data(), driver.size());
  return out;
}

// An extended write() buffer: cmd_hdr + ex_cmd_hdr + core + driver data (all in 8-byte words).
template <typename Core>
std::vector<std::byte> ExWrite(uint32_t ex_command, const Core& core, uint64_t response,
                               uint16_t out_words, const std::vector<std::byte>& driver = {},
                               uint16_t provider_out_words = 0) {
  std::vector<std::byte> out(sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_ex_cmd_hdr) +
                             sizeof(Core) + driver.size());
  ib_uverbs_cmd_hdr h{};
  h.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | ex_command;
  h.in_words = static_cast<uint16_t>(sizeof(Core) / 8);
  h.out_words = out_words;
  ib_uverbs_ex_cmd_hdr ex{};
  ex.response = response;
  ex.provider_in_words = static_cast<uint16_t>(driver.size() / 8);
  ex.provider_out_words = provider_out_words;
  std::memcpy(out.data(), &h, sizeof(h));
  std::memcpy(out.data() + sizeof(h), &ex, sizeof(ex));
  std::memcpy(out.data() + sizeof(h) + sizeof(ex), &core, sizeof(Core));
  if (!driver.empty())
    std::memcpy(out.data() + sizeof(h) + sizeof(ex) + sizeof(Core), driver.data(), driver.size());
  return out;
}

template <typename T>
std::vector<std::byte> Bytes(const T& value) {
  std::vector<std::byte> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

}  // namespace rxp::abi::testing
