#include "tools/engine_handlers.h"

#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "abi/unique_fd.h"
#include "rdmaproxy/cm_file.h"
#include "rdmaproxy/uverbs_file.h"
#include "tools/harness/peer_memory.h"
#include "tools/harness/process_maps.h"
#include "tools/harness/regs.h"
#include "tools/harness/tracee_fd_copy.h"

namespace rxp::tools {
namespace {

using harness::EntryDecision;
using harness::ExitDecision;
using harness::SyscallView;
using harness::TraceeAccess;
using proxy::FileKind;

// The calling program's memory, as the engine's AppMemory. Identity: the program issues the
// syscall, so the addresses it names are the kernel's.
class TraceeAppMemory final : public proxy::AppMemory {
 public:
  TraceeAppMemory(TraceeAccess& tracee, pid_t pid)
      : tracee_(tracee), memory_(tracee.memory()), pid_(pid) {}

  bool IdentityMapped() const override { return true; }
  // The engine reads an ioctl's header, then the attribute array it announces, then what the
  // attributes point to (often the same stack frame): one process_vm_readv of up to a window
  // (never past the first unreadable page: ReadSome stops there) serves most of them. The
  // program is stopped, so the window is one snapshot of its memory; a write drops it.
  Result<void> Read(uint64_t address, std::span<std::byte> out) override {
    if (window_length_ != 0 && address >= window_at_ &&
        address - window_at_ <= window_length_ &&
        out.size() <= window_length_ - (address - window_at_)) {
      std::memcpy(out.data(), window_.data() + (address - window_at_), out.size());
      return Ok();
    }
    if (out.size() <= window_.size()) {
      auto got = memory_.ReadSome(address, window_);
      if (got && *got >= out.size()) {
        window_at_ = address;
        window_length_ = *got;
        std::memcpy(out.data(), window_.data(), out.size());
        return Ok();
      }
      window_length_ = 0;
    }
    return memory_.Read(address, out);
  }
  Result<void> Write(uint64_t address, std::span<const std::byte> in) override {
    window_length_ = 0;
    return memory_.Write(address, in);
  }
  // The kernel will pin or write [address, address + length) itself: it must be the
  // program's memory, or the command is refused before the kernel sees it (EFAULT, as
  // ib_umem_get would answer):
  //  - not the harness's scratch region, whose kernel-writable slots hold the validated copy of
  //    an ioctl during the call: an MR there would let a device (a peer's RDMA write) change it;
  //  - mapped and readable; or mapped, not readable, on a host with a peer-memory client, whose
  //    kernel offers the range to the client after pinning fails (MLNX_OFED ib_umem_get; CUDA
  //    reserves GPU addresses with PROT_NONE mappings, and nvidia-peermem pins those). Without a
  //    client the kernel answers EFAULT, which is given here without forwarding.
  Result<uint64_t> HostAddress(uint64_t address, uint64_t length) override {
    const uint64_t n = length == 0 ? 1 : length;
    const uint64_t end = address + n < address ? UINT64_MAX : address + n;
    if (const auto region = tracee_.ScratchRegion();
        region && address < region->first + region->second && region->first < end)
      return Fail(EFAULT, "[{:#x}, +{}) overlaps the harness's scratch region [{:#x}, +{}) in "
                  "process {}", address, length, region->first, region->second, pid_);
    switch (harness::MappingOf(pid_, address, n)) {
      case harness::RangeMapping::kReadable:
        return address;
      case harness::RangeMapping::kUnreadable:
        if (harness::HostHasPeerMemoryClients()) return address;
        return Fail(EFAULT, "[{:#x}, +{}) is not readable in process {}, and this host has no "
                    "peer-memory client to pin it", address, length, pid_);
      case harness::RangeMapping::kHole:
        break;
    }
    return Fail(EFAULT, "[{:#x}, +{}) is not mapped in process {}", address, length, pid_);
  }

 private:
  TraceeAccess& tracee_;
  harness::TraceeMemory& memory_;
  pid_t pid_;
  std::array<std::byte, 512> window_;
  uint64_t window_at_ = 0;
  size_t window_length_ = 0;
};

class EventHandler;

// The program's fds as the engine's FdBridge: numbers are the program's own (identity); what
// they are comes from the harness's fd model (HandlerOf).
class TraceeFds final : public proxy::FdBridge {
 public:
  TraceeFds(TraceeAccess& tracee, EngineFactory& factory, std::string owner_label, pid_t tid)
      : tracee_(tracee), factory_(factory), owner_label_(std::move(owner_label)), tid_(tid) {}

  Result<proxy::HostFile> Resolve(int app_fd) override {
    if (auto* h = dynamic_cast<EngineFileHandler*>(tracee_.HandlerOf(app_fd)))
      return proxy::HostFile{app_fd, h->kind(), h->owner()};
    // Not a proxied file: whatever it is, the kernel judges it (an XRC domain's inode file);
    // commands that need an RDMA file refuse kOther themselves, and tell a file from no file
    // as the kernel does (ucma_migrate_id: ENOENT for no file, EINVAL for another kind), so an
    // fd the calling thread does not have is EBADF. /proc/<tid>/fd is that thread's table.
    struct stat st;
    const std::string link = fmt::format("/proc/{}/fd/{}", tid_, app_fd);
    if (app_fd < 0 || (::lstat(link.c_str(), &st) != 0 && errno == ENOENT))
      return Fail(EBADF, "the program has no fd {}", app_fd);
    return proxy::HostFile{app_fd, FileKind::kOther, 0};
  }

  // The kernel returned a new fd in a response (async event fd, completion channel): it moves
  // into the reserved range under a handler of its own.
  Result<int> Adopt(int fd, FileKind kind, uint64_t owner) override;

 private:
  TraceeAccess& tracee_;
  EngineFactory& factory_;
  std::string owner_label_;
  pid_t tid_;
};

// Vectored writes run ->write once per segment (do_loop_readv_writev): each segment would be
// a verbs command the proxy never decoded. rdma-core never issues them.
EntryDecision RefuseVectoredWrite(EngineFactory& factory, const std::string& label) {
  const Error e = Fail(EINVAL, "vectored writes of verbs commands are not proxied");
  factory.engine().RefusedCommand(label, e, proxy::Refusal::kDecode);
  return EntryDecision::Emulate(-EINVAL);
}

bool IsVectoredWrite(long nr) { return nr == SYS_writev || nr == SYS_pwritev || nr == SYS_pwritev2; }

Result<UniqueFd> TracerCopyOf(pid_t tgid, int fd);

// The tracer's own descriptor of one of the program's files (TracerCopyOf), taken at first use
// and kept until the program's last fd of the file goes. A file it could not be taken of is
// not asked again: its commands run as the program's own syscalls.
class TracerCopy {
 public:
  // The descriptor of the file program `tgid` has as `fd`; the first failure's reason, then
  // EXDEV.
  Result<int> Get(pid_t tgid, int fd) {
    if (!copy_.valid() && !failed_) {
      auto copy = TracerCopyOf(tgid, fd);
      if (!copy) {
        failed_ = true;
        return std::move(copy).error();
      }
      copy_ = std::move(*copy);
    }
    if (!copy_.valid()) return Fail(EXDEV, "the tracer has no descriptor of fd {}", fd);
    return copy_.get();
  }
  bool failed() const { return failed_; }
  void Reset() { copy_.reset(); }

 private:
  UniqueFd copy_;
  bool failed_ = false;
};

// The tracer's descriptor of a program's uverbs file taken when first used (TracerCopy), for
// an ioctl the engine issues itself: the probe of which methods the device implements.
class LazyTracerDevice final : public proxy::HostDevice {
 public:
  LazyTracerDevice(TracerCopy& copy, pid_t tgid, int fd) : copy_(copy), tgid_(tgid), fd_(fd) {}
  Result<long> Ioctl(unsigned long request, void* arg) override;
  Result<long> Write(const void*, size_t) override {
    return Fail(EACCES, "the tracer does not write verbs commands");
  }
  int fd() const override { return -1; }

 private:
  TracerCopy& copy_;
  pid_t tgid_;
  int fd_;
};

// An async event fd or a completion channel: reads return the kernel's event descriptors, which
// carry the program's own user handles; nothing to translate.
class EventHandler final : public EngineFileHandler {
 public:
  EventHandler(FileKind kind, uint64_t owner) : kind_(kind), owner_(owner) {}
  FileKind kind() const override { return kind_; }
  uint64_t owner() const override { return owner_; }
  EntryDecision OnEntry(const SyscallView&, TraceeAccess&) override {
    return EntryDecision::Allow();  // no write, ioctl or mmap: the kernel refuses them itself
  }
  ExitDecision OnExit(const SyscallView&, long, TraceeAccess&) override {
    return ExitDecision::Keep();
  }
  void OnClose(harness::CloseReason) override { tracer_copy_.Reset(); }
  // A read returns the kernel's event descriptors as they are (ib_uverbs_event_read()); the
  // file has no write, ioctl or mmap (uverbs_event_fops): nothing for a stop to do.
  bool DataSyscallsStop() const override { return false; }

  // The tracer's own descriptor of this file (program `tgid` has it as `fd`), for the commands
  // the tracer issues that name it (TracerEventFds).
  Result<int> TracerFd(pid_t tgid, int fd) { return tracer_copy_.Get(tgid, fd); }

 private:
  FileKind kind_;
  uint64_t owner_;
  TracerCopy tracer_copy_;
};

// The fds a command the tracer issues may name: the program's event files, as the tracer's own
// descriptors of them. rdma-core names the async event fd in every CQ and QP creation
// (UVERBS_ATTR_CREATE_CQ_EVENT_FD, ..._QP_EVENT_FD) and a completion channel in a CQ's; with
// these the tracer issues those commands itself (one stop, no freeze of the program's other
// threads). Any other fd is not resolved, and the command runs as the program's own syscall,
// where the engine judges the fd from the harness's fd model (TraceeFds).
class TracerEventFds final : public proxy::FdBridge {
 public:
  TracerEventFds(TraceeAccess& tracee, pid_t tgid) : tracee_(tracee), tgid_(tgid) {}
  Result<proxy::HostFile> Resolve(int app_fd) override {
    auto* event = dynamic_cast<EventHandler*>(tracee_.HandlerOf(app_fd));
    if (event == nullptr) return Fail(EXDEV, "fd {} is not an event file", app_fd);
    auto mine = event->TracerFd(tgid_, app_fd);
    if (!mine) return std::move(mine).error();
    return proxy::HostFile{*mine, event->kind(), event->owner()};
  }
  Result<int> Adopt(int fd, FileKind, uint64_t) override {
    return Fail(EXDEV, "fd {} is the tracer's", fd);  // not reached: new fds are the program's
  }

 private:
  TraceeAccess& tracee_;
  pid_t tgid_;
};

Result<int> TraceeFds::Adopt(int fd, FileKind kind, uint64_t owner) {
  const std::string label =
      owner_label_ + (kind == FileKind::kAsyncEvent ? "/async_event" : "/comp_channel");
  return tracee_.AdoptFd(fd, std::make_unique<EventHandler>(kind, owner), label);
}

// The tracer's own descriptor of a program's uverbs file, for UverbsFile::IoctlAsForwarder.
class TracerDevice final : public proxy::HostDevice {
 public:
  explicit TracerDevice(int fd) : fd_(fd) {}
  Result<long> Ioctl(unsigned long request, void* arg) override {
    const long r = ::ioctl(fd_, request, arg);
    if (r < 0) return Fail(errno, "ioctl on the program's device file");
    return r;
  }
  Result<long> Write(const void*, size_t) override {
    // ib_uverbs_write refuses a writer whose credentials are not the opener's
    // (ib_safe_file_access): the tracer issues a legacy command as INVOKE_WRITE or not at all.
    return Fail(EACCES, "the tracer does not write verbs commands");
  }
  int fd() const override { return fd_; }

 private:
  int fd_;
};

Result<long> LazyTracerDevice::Ioctl(unsigned long request, void* arg) {
  auto fd = copy_.Get(tgid_, fd_);
  if (!fd) return std::move(fd).error();
  return TracerDevice(*fd).Ioctl(request, arg);
}

// The lines of /proc/<pid>/status that say what a process may do: who it is and its
// effective capabilities.
std::string CredentialLines(const std::string& pid) {
  std::string lines;
  FILE* f = std::fopen(("/proc/" + pid + "/status").c_str(), "re");
  if (f == nullptr) return {};
  char line[512];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    const std::string_view l(line);
    if (l.starts_with("Uid:") || l.starts_with("Gid:") || l.starts_with("Groups:") ||
        l.starts_with("CapEff:"))
      lines += l;
  }
  std::fclose(f);
  return lines;
}

// A descriptor of the same open file as the program's `fd` in process `tgid`, for the tracer
// to issue commands on (CopyTraceeFd). Only when the tracer is no more privileged than the
// program: a few commands check the caller's capabilities (CAP_NET_RAW for raw-packet QPs and
// flows), and those must be judged on the program's credentials.
Result<UniqueFd> TracerCopyOf(pid_t tgid, int fd) {
  static const std::string self = CredentialLines("self");  // the tracer's do not change
  if (self.empty() || self != CredentialLines(std::to_string(tgid)))
    return Fail(EPERM, "the tracer's credentials differ from process {}'s", tgid);
  return harness::CopyTraceeFd(tgid, fd);
}

// /dev/infiniband/uverbsN.
class UverbsHandler final : public EngineFileHandler {
 public:
  UverbsHandler(EngineFactory& factory, std::unique_ptr<proxy::UverbsFile> file, uint64_t opener,
                int open_flags)
      : factory_(factory), file_(std::move(file)), opener_(opener), open_flags_(open_flags) {}

  FileKind kind() const override { return FileKind::kUverbs; }
  uint64_t owner() const override { return file_->id(); }

  EntryDecision OnEntry(const SyscallView& call, TraceeAccess& tracee) override {
    if (auto refused = factory_.RefuseWrite(call, opener_, open_flags_, file_->label()))
      return *refused;
    switch (call.nr) {
      case SYS_ioctl: return Ioctl(call, tracee);
      case SYS_write: return Write(call, tracee);
      case SYS_mmap: return Mmap(call);
      default:
        if (IsVectoredWrite(call.nr)) return RefuseVectoredWrite(factory_, file_->label());
        // read/readv/preadv*: uverbs files have no read; pread/pwrite64: they are
        // stream_open()ed (ESPIPE). The kernel answers without looking at a buffer.
        return EntryDecision::Allow();
    }
  }

  ExitDecision OnExit(const SyscallView& call, long result, TraceeAccess& tracee) override {
    auto it = pending_.find(call.tid);
    if (it == pending_.end()) return ExitDecision::Keep();
    Pending p = std::move(it->second);
    pending_.erase(it);
    TraceeAppMemory memory(tracee, call.tgid);
    TraceeFds fds(tracee, factory_, file_->label(), call.tid);
    // The kernel wrote the attribute array (flags, new ids) back into the ioctl image; a write
    // buffer it only read.
    if (p.kernel_writes) (void)tracee.memory().Read(p.base, p.image);
    const long app = file_->Complete(*p.command, result, p.image, p.base, memory, fds);
    // A restart code: the program issues the syscall again and OnEntry begins it afresh.
    if (harness::IsRestartCode(result) || app == result) return ExitDecision::Keep();
    return ExitDecision::Replace(app);
  }

  void OnClose(harness::CloseReason) override {
    tracer_copy_.Reset();  // the last reference but the tracer's: the kernel releases the file
    // Commands whose threads died before their exit stops (a watched exit holds the file, so
    // none is still running): their reservations end with the file.
    for (auto& [tid, p] : pending_) file_->Forsake(*p.command);
    for (auto& orphan : orphans_) file_->Forsake(*orphan);
    pending_.clear();
    orphans_.clear();
    file_->Closed();
    factory_.NoteClose();
  }

 private:
  struct Pending {
    std::unique_ptr<proxy::UverbsCommand> command;
    uint64_t base = 0;
    std::vector<std::byte> image;
    bool kernel_writes = false;
  };

  EntryDecision Ioctl(const SyscallView& call, TraceeAccess& tracee) {
    if (static_cast<uint32_t>(call.args[1]) != RDMA_VERBS_IOCTL) {
      // ib_uverbs_ioctl answers any other request with ENOIOCTLCMD (ENOTTY).
      const Error e = Fail(ENOTTY, "ioctl request {:#x} is not RDMA_VERBS_IOCTL", call.args[1]);
      factory_.engine().RefusedCommand(file_->label(), e, proxy::Refusal::kDecode);
      return EntryDecision::Emulate(-ENOTTY);
    }
    TraceeAppMemory memory(tracee, call.tgid);
    TracerEventFds event_fds(tracee, call.tgid);
    if (auto issued = IssueFromTracer(call, [&](proxy::HostDevice& device) {
          return file_->IoctlAsForwarder(memory, device, call.args[2], &event_fds);
        }))
      return EntryDecision::Emulate(*issued);
    return Begin(call, tracee, memory, /*ioctl=*/true);
  }

  // Most verbs ioctls (queries, PD/CQ/QP/AH/SRQ creation on queues the kernel allocates,
  // MODIFY_QP, every DESTROY) and rxe's send doorbell write need nothing of the program's own
  // context: the tracer issues them on its own descriptor of the file and answers the
  // program's syscall at its entry -- one stop instead of two, no scratch slot, and nothing
  // the program's other threads could change while the kernel reads it. `issue` runs the
  // engine's forwarder path on that descriptor; the rest (pinning, fds, the ucontext, every
  // other write) come back nullopt.
  template <typename Issue>
  std::optional<long> IssueFromTracer(const SyscallView& call, Issue&& issue) {
    if (!factory_.tracer_issues() || tracer_copy_.failed()) return std::nullopt;
    auto copy = tracer_copy_.Get(call.tgid, call.fd);
    if (!copy) {  // once: the program issues every command of this file itself from now on
      factory_.log().Error("{}: every command runs as the program's own syscall: {}",
                           file_->label(), copy.error().reason);
      return std::nullopt;
    }
    TracerDevice device(*copy);
    std::optional<long> result = issue(device);
    if (result) factory_.NoteTracerIssued();
    return result;
  }
  EntryDecision Write(const SyscallView& call, TraceeAccess& tracee) {
    TraceeAppMemory memory(tracee, call.tgid);
    if (auto issued = IssueFromTracer(call, [&](proxy::HostDevice& device) {
          return file_->WriteAsForwarder(memory, device, call.args[1], call.args[2]);
        }))
      return EntryDecision::Emulate(*issued);
    return Begin(call, tracee, memory, /*ioctl=*/false);
  }

  EntryDecision Begin(const SyscallView& call, TraceeAccess& tracee, TraceeAppMemory& memory,
                      bool ioctl) {
    TraceeFds fds(tracee, factory_, file_->label(), call.tid);
    auto command = std::make_unique<proxy::UverbsCommand>();
    // The engine's question of which methods the device implements (device_methods.h), asked
    // only when it refuses a call, goes to the tracer's own descriptor of the file.
    LazyTracerDevice probe(tracer_copy_, call.tgid, call.fd);
    auto begun =
        ioctl ? file_->BeginIoctl(memory, fds, call.args[2], *command, &probe)
              : file_->BeginWrite(memory, fds, call.args[1], call.args[2], *command, &probe);
    if (!begun) return EntryDecision::Emulate(-begun.error().errnum);  // logged by the engine
    // The kernel reads the image from the program's memory: a private, validated copy in a
    // scratch slot. An ioctl's attribute array is written back by the kernel, so its slot
    // must be writable to the program.
    const size_t size = command->image.size();
    auto base = ioctl ? tracee.KernelScratch(size) : tracee.Scratch(size);
    if (!base) return Abandon(*command, base.error());
    std::vector<std::byte> image = command->image.Relocated(*base);
    // A write()'s slot is read-only to the program: only a forced write reaches it.
    auto put = ioctl ? tracee.memory().Write(*base, image)
                     : tracee.memory().WriteForced(*base, image);
    if (!put) return Abandon(*command, put.error());
    // A write's count is its image's: a short extended request is forwarded zero-extended
    // (abi::PaddedExtendedWrite); the program's write() still returns its own count.
    const uint64_t count = ioctl ? 0 : command->write_raw.size();
    // A command already pending under this thread id is a dead thread's (its id reused): no
    // exit stop will settle it, and what it made may exist, so it holds its reservation till
    // the file closes.
    if (auto dead = pending_.find(call.tid); dead != pending_.end())
      orphans_.push_back(std::move(dead->second.command));
    pending_[call.tid] = Pending{std::move(command), *base, std::move(image), ioctl};
    if (ioctl) return EntryDecision::Allow().WithArg(2, *base);
    return EntryDecision::Allow().WithArg(1, *base).WithArg(2, count);
  }

  EntryDecision Abandon(proxy::UverbsCommand& command, const Error& why) {
    const Error e = Fail(why.errnum == E2BIG ? E2BIG : EAGAIN,
                         "cannot place the command for the kernel: {}", why.reason);
    file_->Abandon(command, e);
    return EntryDecision::Emulate(-e.errnum);
  }

  // mmap(addr, length, prot, flags, fd, offset): the offset must be one the driver handed out.
  // It counts as used from here on (rxe's cookies are one-shot): a program whose mmap then
  // fails cannot retry it -- nor could it natively, the kernel drops a cookie it mapped --
  // and the call needs no second stop.
  EntryDecision Mmap(const SyscallView& call) {
    const uint64_t offset = call.args[5];
    // do_mmap() refuses MAP_FIXED_NOREPLACE over a mapping (EEXIST) before the driver sees the
    // offset: a range the program already uses is its answer whatever the offset.
    static const auto kPageMask = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) - 1;
    if ((call.args[3] & MAP_FIXED_NOREPLACE) != 0 && (call.args[0] & kPageMask) == 0 &&
        call.args[1] != 0 &&
        harness::AnyMapped(call.tgid, call.args[0], (call.args[1] + kPageMask) & ~kPageMask)) {
      const Error e = Fail(EEXIST, "mmap at {:#x} (+{}) with MAP_FIXED_NOREPLACE: the range is "
                           "already mapped", call.args[0], call.args[1]);
      factory_.engine().RefusedCommand(file_->label(), e, proxy::Refusal::kState);
      return EntryDecision::Emulate(-EEXIST);
    }
    if (auto ok = file_->CheckMmap(offset, call.args[1], static_cast<int>(call.args[2])); !ok)
      return EntryDecision::Emulate(-ok.error().errnum);  // logged by the engine
    if (auto mapped = file_->Mapped(offset); !mapped)  // cannot fail after the check
      return EntryDecision::Emulate(-mapped.error().errnum);
    return EntryDecision::Allow();
  }

  EngineFactory& factory_;
  std::unique_ptr<proxy::UverbsFile> file_;
  uint64_t opener_;  // the credentials of the thread that opened the file (OpenedPath)
  int open_flags_;   // the flags it was opened with (OpenedPath): its access mode
  std::map<pid_t, Pending> pending_;  // by thread: commands between entry and exit
  // Commands of threads that died between their entry and exit stops, found when another
  // thread got the same id: given back when the file closes (Forsake).
  std::vector<std::unique_ptr<proxy::UverbsCommand>> orphans_;
  TracerCopy tracer_copy_;  // IssueFromTracer's descriptor of the file
};

// /dev/infiniband/rdma_cm: write() commands only.
class CmHandler final : public EngineFileHandler {
 public:
  CmHandler(EngineFactory& factory, std::unique_ptr<proxy::CmFile> file, uint64_t opener,
            int open_flags)
      : factory_(factory), file_(std::move(file)), opener_(opener), open_flags_(open_flags) {}

  FileKind kind() const override { return FileKind::kRdmaCm; }
  uint64_t owner() const override { return file_->id(); }

  EntryDecision OnEntry(const SyscallView& call, TraceeAccess& tracee) override {
    if (auto refused = factory_.RefuseWrite(call, opener_, open_flags_, file_->label()))
      return *refused;
    if (IsVectoredWrite(call.nr)) return RefuseVectoredWrite(factory_, file_->label());
    if (call.nr != SYS_write) return EntryDecision::Allow();  // no read, ioctl or mmap in ucma
    TraceeAppMemory memory(tracee, call.tgid);
    TraceeFds fds(tracee, factory_, file_->label(), call.tid);
    auto command = file_->BeginWrite(memory, fds, call.args[1], call.args[2]);
    if (!command) return EntryDecision::Emulate(-command.error().errnum);
    const size_t size = (*command)->image.size();
    auto base = tracee.Scratch(size);
    std::vector<std::byte> image;
    if (base) {
      image = (*command)->image.Relocated(*base);
      if (auto put = tracee.memory().WriteForced(*base, image); !put) base = put.error();
    }
    if (!base) {
      const Error e = Fail(EAGAIN, "cannot place the command for the kernel: {}",
                           base.error().reason);
      file_->Abandon(e);
      return EntryDecision::Emulate(-e.errnum);
    }
    const uint64_t count = (*command)->raw.size();  // the header and its `in` bytes
    pending_[call.tid] = Pending{std::move(*command), std::move(image)};
    return EntryDecision::Allow().WithArg(1, *base).WithArg(2, count);
  }

  ExitDecision OnExit(const SyscallView& call, long result, TraceeAccess& tracee) override {
    auto it = pending_.find(call.tid);
    if (it == pending_.end()) return ExitDecision::Keep();
    Pending p = std::move(it->second);
    pending_.erase(it);
    TraceeAppMemory memory(tracee, call.tgid);
    const long app = file_->Complete(*p.command, result, p.image, memory);
    if (harness::IsRestartCode(result) || app == result) return ExitDecision::Keep();
    return ExitDecision::Replace(app);
  }

  void OnClose(harness::CloseReason) override { factory_.NoteClose(); }

 private:
  struct Pending {
    std::unique_ptr<proxy::CmCommand> command;
    std::vector<std::byte> image;
  };
  EngineFactory& factory_;
  std::unique_ptr<proxy::CmFile> file_;
  uint64_t opener_;  // the credentials of the thread that opened the file (OpenedPath)
  int open_flags_;   // the flags it was opened with (OpenedPath): its access mode
  std::map<pid_t, Pending> pending_;
};

}  // namespace

EngineFactory::EngineFactory(proxy::EngineOptions options,
                             std::vector<harness::DeviceMapping> devices, harness::Log& log,
                             bool tracer_issues)
    : tracer_issues_(tracer_issues), engine_(std::move(options)), log_(log) {
  for (const auto& d : devices) driver_ids_[d.sandbox_uverbs] = d.host.driver_id;
}

Result<std::unique_ptr<harness::ProxiedFileHandler>> EngineFactory::OnOpen(
    const harness::OpenedPath& opened, harness::TraceeAccess&) {
  ++opens_;
  const uint64_t opener = opened.credentials;
  if (opened.label == "rdma_cm")
    return std::unique_ptr<harness::ProxiedFileHandler>(
        std::make_unique<CmHandler>(*this, engine_.OpenRdmaCm(opened.label), opener,
                                    opened.flags));
  auto it = driver_ids_.find(opened.label);
  if (it == driver_ids_.end())
    return Fail(ENODEV, "{} ({}) is no device of the sandbox", opened.sandbox_path, opened.label);
  return std::unique_ptr<harness::ProxiedFileHandler>(
      std::make_unique<UverbsHandler>(*this, engine_.OpenUverbs(opened.label, it->second), opener,
                                      opened.flags));
}

std::optional<harness::EntryDecision> EngineFactory::RefuseWrite(const SyscallView& call,
                                                                  uint64_t opener, int open_flags,
                                                                  const std::string& label) {
  if (call.nr != SYS_write && call.nr != SYS_writev) return std::nullopt;
  if (!proxy::OpenedForWriting(open_flags)) {
    const Error e = Fail(EBADF, "write of a file the program opened without write access");
    engine_.RefusedCommand(label, e, proxy::Refusal::kState);
    return EntryDecision::Emulate(-EBADF);
  }
  if (call.credentials == opener) return std::nullopt;
  const Error e = Fail(EACCES,
                       "thread {} of process {} has other credentials than the file's opener (a "
                       "fork child, a new program, or new credentials since): the kernel refuses "
                       "its writes (ib_safe_file_access)",
                       call.tid, call.tgid);
  engine_.RefusedCommand(label, e, proxy::Refusal::kState);
  return EntryDecision::Emulate(-EACCES);
}

std::string EngineFactory::CountersLine() const {
  const proxy::Counters& c = const_cast<proxy::Engine&>(engine_).counters();
  return fmt::format(
      "proxied opens {}, closes {}; engine: commands {}, forwarded {}, refused {} (decode {}, policy {}, quota {}, state {}), "
      "kernel errors {}, mmaps {}; issued by the tracer {}",
      opens_, closes_, c.commands.load(), c.forwarded.load(), c.refused(), c.refused_decode.load(),
      c.refused_policy.load(), c.refused_quota.load(), c.refused_state.load(),
      c.kernel_errors.load(), c.mmaps.load(), tracer_issued_);
}

}  // namespace rxp::tools
