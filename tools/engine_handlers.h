// The proxy engine (rdmaproxy/) behind the ptrace harness (tools/harness/): one handler per
// proxied open file, driving the engine's two-phase pipeline around the syscall the traced
// program issues itself.
//
//   ioctl(RDMA_VERBS_IOCTL)  context-free commands (no pin, no fd, not GET_CONTEXT): issued
//                            at entry by the tracer on its pidfd_getfd copy of the file
//                            (UverbsFile::IoctlAsForwarder) and answered without running.
//                            The others: entry: UverbsFile::BeginIoctl decodes, checks and builds the
//                            forward image; it goes into a kernel-writable scratch slot of the
//                            program (its other threads are frozen until the exit has been
//                            handled) and the syscall is pointed at it (WithArg). exit: the
//                            image is read back and UverbsFile::Complete settles the command
//                            (object tracking, new fds adopted into the reserved range, the
//                            app's attribute array updated).
//   write()                  the same, with a read-only scratch slot (the kernel only reads a
//                            write buffer; responses go to the program's own buffers).
//   mmap()                   the offset is checked at entry (mlx5 encoding, rxe cookies).
//   anything else            refused with the kernel's errno, or run as issued where the kernel
//                            itself answers without looking at the buffer.
//
// Identity translation: the program issues the syscalls, so its addresses and fd numbers are
// what the kernel sees; the engine still checks that pinned ranges are mapped and that fds
// named in commands are what the command needs.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "rdmaproxy/embedder.h"
#include "rdmaproxy/engine.h"
#include "tools/harness/device_map.h"
#include "tools/harness/handler.h"
#include "tools/harness/harness_log.h"

namespace rxp::tools {

// What every handler of this factory is: the FileKind the engine asks about when a command
// names the fd, and the engine id of the uverbs file it belongs to.
class EngineFileHandler : public harness::ProxiedFileHandler {
 public:
  virtual proxy::FileKind kind() const = 0;
  virtual uint64_t owner() const = 0;
};

class EngineFactory final : public harness::FileHandlerFactory {
 public:
  // `devices`: the sandbox's devices (label = sandbox uverbs name), with their driver ids.
  // `tracer_issues`: verbs ioctls that need nothing of the program's own context are issued
  // by the tracer (UverbsFile::IoctlAsForwarder); false: the program issues every one itself.
  EngineFactory(proxy::EngineOptions options, std::vector<harness::DeviceMapping> devices,
                harness::Log& log, bool tracer_issues = true);

  Result<std::unique_ptr<harness::ProxiedFileHandler>> OnOpen(const harness::OpenedPath& opened,
                                                              harness::TraceeAccess& tracee) override;

  // `call` is a write() or writev() the kernel refuses before reading anything, and so does
  // the proxy (the tracer's own descriptor would not be refused):
  //   - on a file not opened for writing (`open_flags`, as the program opened it): EBADF,
  //     vfs_write()'s answer, before the file's own write;
  //   - on a file whose opener had the credentials `opener`, from a thread with others
  //     (SyscallView::credentials, which the tracer keeps as the kernel keeps struct cred:
  //     ib_safe_file_access compares the pointers, so a fork child, a new program and a
  //     thread that committed new credentials differ): EACCES.
  // nullopt for any other call.
  std::optional<harness::EntryDecision> RefuseWrite(const harness::SyscallView& call,
                                                    uint64_t opener, int open_flags,
                                                    const std::string& label);

  proxy::Engine& engine() { return engine_; }
  harness::Log& log() { return log_; }
  // One line of counters: "proxied opens N, closes N; engine: commands N, forwarded N,
  // refused N (decode N, policy N, quota N, state N), kernel errors N, mmaps N; issued by the
  // tracer N".
  std::string CountersLine() const;
  void NoteClose() { ++closes_; }
  bool tracer_issues() const { return tracer_issues_; }
  void NoteTracerIssued() { ++tracer_issued_; }

 private:
  bool tracer_issues_;
  uint64_t tracer_issued_ = 0;
  uint64_t opens_ = 0;
  uint64_t closes_ = 0;
  proxy::Engine engine_;
  std::map<std::string, uint32_t> driver_ids_;  // sandbox uverbs name -> rdma_driver_id
  harness::Log& log_;
};

}  // namespace rxp::tools
