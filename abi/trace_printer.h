// The trace printer: one strace-like line per command, named from the schema, e.g.
//   ioctl(uverbs0, QP.CREATE{pd=3 send_cq=1 recv_cq=1 cap={...} type=RC}) = 0 {handle=5 qpn=0x11}
//   ioctl(uverbs0, INVOKE_WRITE REG_MR{start=0x7f.. length=4096 ...}) = 0 {mr_handle=2 ...}
//   write(uverbs0, POST_SEND{qp_handle=3 wr_count=0 sge_count=0 wqe_size=56}) = 32 {bad_wr=0}
//   write(rdma_cm, CREATE_ID{uid=0x.. ps=TCP qp_type=RC}) = 24 {id=0}
// This is the harness's --trace output.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "abi/ioctl_decoder.h"
#include "abi/payload.h"
#include "abi/result.h"
#include "abi/ucma_decoder.h"
#include "abi/write_decoder.h"

namespace rxp::abi {

// What happened to a command, for the part after " = ".
struct CallOutcome {
  int64_t ret = 0;          // the syscall result (>= 0) when errnum == 0
  int errnum = 0;           // the errno when it failed (the kernel's or the proxy's)
  std::string_view reason;  // the proxy's one-line reason when it refused the command
  // ioctl only: the attribute array after the call (NEW handles and fds, VALID_OUTPUT flags).
  std::span<const std::byte> attrs_after;
  // App memory after the call: PTR_OUT buffers, write responses. May be null.
  const PayloadSource* out = nullptr;
};

std::string FormatIoctl(std::string_view file, const IoctlRequest& request,
                        const DeviceAbi& device, const PayloadSource& in,
                        const CallOutcome* outcome);
std::string FormatWrite(std::string_view file, const WriteRequest& request,
                        const DeviceAbi& device, const CallOutcome* outcome);
std::string FormatUcma(std::string_view file, const UcmaRequest& request,
                       const CallOutcome* outcome);
// A command the decoder refused: "ioctl(uverbs0, <object/method>) = -1 EINVAL (reason)".
std::string FormatRefused(std::string_view syscall, std::string_view file,
                          std::string_view what, const Error& error);

}  // namespace rxp::abi
