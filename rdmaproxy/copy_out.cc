#include "rdmaproxy/copy_out.h"

#include <algorithm>
#include <vector>

#include <unistd.h>

#include <rdma/rdma_user_ioctl_cmds.h>

namespace rxp::proxy {

Result<void> ProbeWritable(AppMemory& memory, uint64_t address, size_t length) {
  if (length == 0) return Ok();
  std::vector<std::byte> bytes(length);
  RXP_TRY(memory.Read(address, bytes));
  return memory.Write(address, bytes);
}

size_t ReadReadablePrefix(AppMemory& memory, uint64_t address, std::span<std::byte> out) {
  if (memory.Read(address, out)) return out.size();
  static const uint64_t kPage = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t at = address + done;
    const size_t chunk = std::min<uint64_t>(out.size() - done, kPage - at % kPage);
    if (!memory.Read(at, out.subspan(done, chunk))) break;
    done += chunk;
  }
  std::fill(out.begin() + static_cast<long>(done), out.end(), std::byte{0});
  return done;
}

size_t ReserveOutput(ForwardImage& image, size_t room, AppMemory& memory, uint64_t address,
                     size_t length) {
  const size_t at = image.Reserve(std::max(room, length));
  if (length != 0 && address != 0) {
    const auto bounce = image.bytes().subspan(at, length);
    if (!memory.Read(address, bounce)) std::fill(bounce.begin(), bounce.end(), std::byte{0});
  }
  return at;
}

Result<void> CheckAttrWriteBack(const abi::IoctlRequest& request, uint64_t app_arg,
                                std::span<const std::byte> raw, AppMemory& memory,
                                std::string_view command) {
  constexpr size_t kAttr = sizeof(ib_uverbs_attr);
  size_t first = SIZE_MAX, last = 0;
  for (const abi::IoctlAttr& a : request.Attrs()) {
    if (a.spec == nullptr) continue;  // dropped: the kernel never sees it
    const bool new_object = a.spec->access == abi::Access::kNew &&
                            (a.spec->type == abi::AttrType::kIdr ||
                             a.spec->type == abi::AttrType::kFd);
    if (!new_object && a.spec->type != abi::AttrType::kPtrOut) continue;
    first = std::min<size_t>(first, a.index);
    last = std::max<size_t>(last, a.index);
  }
  if (first == SIZE_MAX) return Ok();
  // The app's own bytes go back: one write over the entries the kernel would write.
  const size_t at = sizeof(abi::IoctlHeader) + kAttr * first;
  const size_t length = kAttr * (last - first + 1);
  if (auto w = memory.Write(app_arg + at, raw.subspan(at, length)); !w)
    return Fail(EFAULT,
                "{}: the attribute array at {:#x} is not writable, where the kernel writes the "
                "new object's id and the outputs' flags (uverbs_process_attr, "
                "uverbs_set_output): {}",
                command, app_arg + sizeof(abi::IoctlHeader), w.error().reason);
  return Ok();
}

Result<void> CheckOutputsWritable(std::span<const OutputCopy> outputs, AppMemory& memory,
                                  std::string_view command) {
  for (const OutputCopy& o : outputs)
    if (auto w = ProbeWritable(memory, o.app_address, o.length); !w)
      return Fail(EFAULT, "{}: the response buffer at {:#x} ({} bytes) is not writable: {}",
                  command, o.app_address, o.length, w.error().reason);
  return Ok();
}

}  // namespace rxp::proxy
