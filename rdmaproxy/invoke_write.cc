#include "rdmaproxy/invoke_write.h"

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include <array>
#include <cstring>

#include "abi/uapi.h"

namespace rxp::proxy {

bool IsSendDoorbell(std::span<const std::byte> buffer) {
  constexpr size_t kCore = sizeof(ib_uverbs_cmd_hdr);
  if (buffer.size() < kCore + sizeof(ib_uverbs_post_send)) return false;
  ib_uverbs_cmd_hdr hdr;
  std::memcpy(&hdr, buffer.data(), sizeof(hdr));
  ib_uverbs_post_send cmd;
  std::memcpy(&cmd, buffer.data() + kCore, sizeof(cmd));
  // ib_uverbs_write(): in_words and out_words count 4-byte words, the header included in
  // in_words. No driver data: the doorbell's in_words cover exactly the header and the core.
  return hdr.command == IB_USER_VERBS_CMD_POST_SEND &&
         size_t{hdr.in_words} * 4 == kCore + sizeof(cmd) &&
         size_t{hdr.out_words} * 4 >= sizeof(ib_uverbs_post_send_resp) && cmd.response != 0 &&
         cmd.wr_count == 0 && cmd.sge_count == 0;
}

size_t AppendInvokeWrite(ForwardImage& image, const InvokeWriteParts& parts) {
  constexpr size_t kAttrs = 3;
  abi::IoctlHeader header{};
  header.length = static_cast<uint16_t>(sizeof(header) + kAttrs * sizeof(ib_uverbs_attr));
  header.object_id = UVERBS_OBJECT_DEVICE;
  header.method_id = UVERBS_METHOD_INVOKE_WRITE;
  header.num_attrs = kAttrs;
  header.driver_id = parts.driver_id;

  std::array<ib_uverbs_attr, kAttrs> attrs{};
  attrs[0].attr_id = UVERBS_ATTR_WRITE_CMD;  // fill_attr_const_in(): a u64, inline
  attrs[0].len = sizeof(uint64_t);
  attrs[0].data = parts.command;
  attrs[1].attr_id = UVERBS_ATTR_CORE_IN;
  attrs[1].len = static_cast<uint16_t>(parts.core_len);
  attrs[2].attr_id = UVERBS_ATTR_CORE_OUT;
  attrs[2].len = static_cast<uint16_t>(parts.response_len);
  const bool core_inline = parts.core_len <= sizeof(attrs[1].data);
  if (core_inline && parts.core_len != 0)
    std::memcpy(&attrs[1].data, image.bytes().data() + parts.core_at, parts.core_len);

  // One append: the attributes must follow the header directly (ib_uverbs_ioctl()).
  std::array<std::byte, sizeof(header) + sizeof(attrs)> bytes;
  std::memcpy(bytes.data(), &header, sizeof(header));
  std::memcpy(bytes.data() + sizeof(header), attrs.data(), sizeof(attrs));
  const size_t at = image.Append(bytes);
  const auto data_of = [&](size_t i) {
    return at + sizeof(header) + i * sizeof(ib_uverbs_attr) + offsetof(ib_uverbs_attr, data);
  };
  if (!core_inline) image.PointTo(data_of(1), parts.core_at);
  image.PointTo(data_of(2), parts.response_at);
  return at;
}

}  // namespace rxp::proxy
