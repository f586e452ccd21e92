#include "tools/harness/passthrough_handler.h"

#include <sys/syscall.h>

#include <cstring>

#include "tools/harness/seccomp_filter.h"

namespace rxp::harness {

class PassthroughHandler final : public ProxiedFileHandler {
 public:
  PassthroughHandler(PassthroughFactory& factory, std::string name)
      : factory_(factory), name_(std::move(name)) {}

  EntryDecision OnEntry(const SyscallView& call, TraceeAccess&) override {
    ++factory_.calls_[SyscallName(call.nr)];
    // Only ask for the exit stop when there is a line to print: it costs a second stop.
    return factory_.log_.tracing() ? EntryDecision::AllowAndInspect() : EntryDecision::Allow();
  }

  ExitDecision OnExit(const SyscallView& call, long result, TraceeAccess&) override {
    factory_.log_.Trace("[pid {}] {}({}<{}>{}) = {}", call.tid, SyscallName(call.nr), call.fd,
                        name_, FormatArgs(call), FormatResult(result));
    return ExitDecision::Keep();
  }

  void OnClose(CloseReason reason) override {
    ++factory_.closes_;
    factory_.log_.Trace("{}: closed ({})", name_, CloseReasonName(reason));
  }

 private:
  // The arguments after the fd, in hex; how many matter depends on the syscall.
  static std::string FormatArgs(const SyscallView& call) {
    static constexpr struct {
      long nr;
      int count;
    } kArity[] = {
        {SYS_ioctl, 3}, {SYS_read, 3},   {SYS_write, 3},   {SYS_pread64, 4},  {SYS_pwrite64, 4},
        {SYS_readv, 3}, {SYS_writev, 3}, {SYS_preadv, 5},  {SYS_pwritev, 5},  {SYS_preadv2, 6},
        {SYS_pwritev2, 6}, {SYS_mmap, 6},     {SYS_getdents64, 3}, {SYS_getdents, 3},
        {SYS_sendto, 6},   {SYS_bind, 3},   {SYS_connect, 3}, {SYS_setsockopt, 5},
        {SYS_sendfile, 4}, {SYS_splice, 6},
    };
    int count = 6;
    for (const auto& row : kArity)
      if (row.nr == call.nr) count = row.count;
    std::string out;
    for (int i = 0; i < count; ++i) {
      if (call.nr == SYS_mmap ? i == 4 : i == 0) continue;  // the fd, printed already
      out += fmt::format(", {:#x}", call.args[static_cast<size_t>(i)]);
    }
    return out;
  }

  static std::string FormatResult(long result) {
    if (result < 0 && result >= -4095)
      return fmt::format("-1 {} ({})", strerrorname_np(static_cast<int>(-result)),
                         std::strerror(static_cast<int>(-result)));
    return result > 0xffff ? fmt::format("{:#x}", result) : std::to_string(result);
  }

  PassthroughFactory& factory_;
  std::string name_;
};

Result<std::unique_ptr<ProxiedFileHandler>> PassthroughFactory::OnOpen(const OpenedPath& opened,
                                                                       TraceeAccess&) {
  ++opens_;
  log_.Trace("[pid {}] proxied {} (host {}) as fd {}", opened.tid, opened.sandbox_path,
             opened.host_path, opened.fd);
  return std::unique_ptr<ProxiedFileHandler>(
      std::make_unique<PassthroughHandler>(*this, opened.label.empty() ? opened.sandbox_path
                                                                       : opened.label));
}

void PassthroughFactory::PrintCounters(FILE* out) const {
  fmt::print(out, "rdmaproxy: proxied opens {}, closes {}", opens_, closes_);
  for (const auto& [name, count] : calls_) fmt::print(out, ", {} {}", name, count);
  fmt::print(out, "\n");
}

}  // namespace rxp::harness
