// The fd model and proxied-file dispatch: the seccomp stops of intercept_rules.h that name a
// reserved-range fd, or RDMA_VERBS_IOCTL on any fd.
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/close_range.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "rdmaproxy/host_rdma_netlink.h"
#include "tools/harness/netlink_rdma.h"
#include "tools/harness/tracee_fd_copy.h"
#include "tools/harness/nofile_limit.h"
#include "tools/harness/tracer.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {

std::optional<unsigned long> TraceeFdFlags(pid_t tid, long fd) {
  const std::string path = "/proc/" + std::to_string(tid) + "/fdinfo/" + std::to_string(fd);
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return std::nullopt;
  unsigned long flags = 0;
  char line[128];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f) != nullptr)
    found = std::sscanf(line, "flags: %lo", &flags) == 1;
  std::fclose(f);
  if (!found) return std::nullopt;
  return flags;
}

namespace {

int FdOf(uint64_t raw) { return static_cast<int>(static_cast<uint32_t>(raw)); }

// The close-on-exec flag of a tracee fd. False when unreadable.
bool FdIsCloexec(pid_t tid, int fd) {
  const std::optional<unsigned long> flags = TraceeFdFlags(tid, fd);
  return flags && (*flags & O_CLOEXEC) != 0;
}

// The fds a message passes with SCM_RIGHTS (unix(7)), read from the tracee's struct msghdr.
// The layouts are the x86-64 ABI's: msghdr is 56 bytes, its control pointer and length at 32
// and 40; each cmsghdr is {size_t len; int level; int type;} followed by data, 8-aligned.
Result<std::vector<int>> PassedFds(TraceeMemory& memory, uint64_t msghdr) {
  auto control = memory.ReadValue<uint64_t>(msghdr + 32);
  auto length = memory.ReadValue<uint64_t>(msghdr + 40);
  if (!control.ok()) return std::move(control).error();
  if (!length.ok()) return std::move(length).error();
  std::vector<int> fds;
  // The kernel refuses more than sysctl_optmem_max (20 KiB by default) of control data.
  const uint64_t len = std::min<uint64_t>(*length, 64 * 1024);
  if (*control == 0 || len < sizeof(cmsghdr)) return fds;
  std::vector<std::byte> buf(len);
  RXP_TRY(memory.Read(*control, buf));
  for (uint64_t pos = 0; pos + sizeof(cmsghdr) <= len;) {
    cmsghdr header{};
    std::memcpy(&header, buf.data() + pos, sizeof header);
    if (header.cmsg_len < sizeof(cmsghdr) || header.cmsg_len > len - pos) break;  // EINVAL
    if (header.cmsg_level == SOL_SOCKET && header.cmsg_type == SCM_RIGHTS) {
      for (uint64_t off = sizeof(cmsghdr); off + sizeof(int) <= header.cmsg_len; off += sizeof(int)) {
        int fd = -1;
        std::memcpy(&fd, buf.data() + pos + off, sizeof fd);
        fds.push_back(fd);
      }
    }
    pos += (header.cmsg_len + 7) & ~uint64_t{7};  // CMSG_ALIGN
  }
  return fds;
}

// An event file's data syscalls need no stop: it lives in the range's quiet half.
bool IsQuiet(const OpenFile& file) { return !file.handler().DataSyscallsStop(); }

}  // namespace

Result<uint64_t> Tracer::Access::Scratch(size_t size) {
  if (exit_ != nullptr) return Fail(EINVAL, "scratch memory is only handed out at syscall entry");
  if (size > kScratchSlotSize)
    return Fail(E2BIG, "scratch request of {} bytes exceeds the {}-byte slot", size,
                kScratchSlotSize);
  auto slot = task_.mm->AcquireSlot(task_.tid);
  if (slot.ok()) used_scratch_ = true;
  return slot;
}

Result<uint64_t> Tracer::Access::KernelScratch(size_t size) {
  auto slot = Scratch(size);
  if (!slot.ok()) return slot;
  // The slot is writable by every task of this mm: none of the others may run until this
  // syscall's exit stop has been handled (tracer_freeze.cc; released by EndFreeze).
  RXP_TRY(tracer_.FreezeOthers(task_, "a kernel-read copy"));
  return AddressSpace::KernelSlotOf(*slot);
}

std::optional<std::pair<uint64_t, uint64_t>> Tracer::Access::ScratchRegion() {
  const auto base = task_.mm->scratch_base();
  if (!base) return std::nullopt;
  return std::pair{*base, static_cast<uint64_t>(AddressSpace::region_size())};
}

ProxiedFileHandler* Tracer::Access::HandlerOf(int fd) {
  if (fd < 0 || !tracer_.options_.range.Contains(static_cast<uint64_t>(fd))) return nullptr;
  auto file = task_.fds->Find(fd);
  return file != nullptr ? &file->handler() : nullptr;
}

Result<int> Tracer::Access::AdoptFd(int fd, std::unique_ptr<ProxiedFileHandler> handler,
                                    std::string label) {
  if (exit_ == nullptr) return Fail(EINVAL, "an fd can only be adopted at syscall exit");
  if (handler == nullptr) return Fail(EINVAL, "AdoptFd needs a handler");
  auto filtered = tracer_.EnsureDeviceFilter(*exit_);
  auto moved = filtered.ok() ? tracer_.MoveIntoRange(*exit_, fd, FdIsCloexec(task_.tid, fd),
                                                     !handler->DataSyscallsStop())
                             : Result<int>(std::move(filtered).error());
  if (!moved.ok()) {
    if (!exit_->death_status())
      (void)exit_->Inject(SYS_close, {static_cast<uint64_t>(fd), 0, 0, 0, 0, 0});
    return std::move(moved).error();
  }
  task_.fds->Insert(*moved, std::make_shared<OpenFile>(std::move(handler), std::move(label)));
  return *moved;
}

// Where a proxied file may sit: a file whose data syscalls must stop in the range's stopping
// half (FdRange::StoppingHalf); an event file anywhere in the range (it goes to the quiet half
// first, and a copy that spills into the other half only stops).
FdRange Tracer::ItsPlace(bool quiet) const {
  return quiet ? options_.range : options_.range.StoppingHalf();
}

bool Tracer::InItsHalf(uint64_t fd, bool quiet) const { return ItsPlace(quiet).Contains(fd); }

// Moves tracee fd `fd` into its half of the reserved range: fcntl(fd, F_DUPFD[_CLOEXEC], base)
// picks the lowest free number >= base atomically (fcntl(2)), so an unrelated fd that already
// sits in the range is never clobbered; then the old number is closed.
Result<int> Tracer::MoveIntoRange(ExitStop& stop, int fd, bool cloexec, bool quiet) {
  const FdRange& range = options_.range;
  if (InItsHalf(static_cast<uint64_t>(fd), quiet)) return fd;
  const uint32_t base = ItsPlace(quiet).base();
  auto dup_into_range = [&] {
    return stop.Inject(SYS_fcntl, {static_cast<uint64_t>(fd),
                                   static_cast<uint64_t>(cloexec ? F_DUPFD_CLOEXEC : F_DUPFD),
                                   base, 0, 0, 0});
  };
  auto moved = dup_into_range();
  if (!moved.ok()) return std::move(moved).error();
  if (*moved == -EINVAL) {
    // The program lowered its RLIMIT_NOFILE below the range (f_dupfd: from >= the limit):
    // raise it for this one move and put it back (nofile_limit.h).
    auto raise = NofileRaise::To(stop.task().tgid, range.end());
    if (!raise.ok()) return std::move(raise).error();
    if (raise->raised()) {
      moved = dup_into_range();
      if (!moved.ok()) return std::move(moved).error();
    }
  }
  if (*moved < 0)
    return Fail(static_cast<int>(-*moved), "moving fd {} into the reserved range {}: {}", fd,
                range.ToString(), std::strerror(static_cast<int>(-*moved)));
  if (!InItsHalf(static_cast<uint64_t>(*moved), quiet)) {
    (void)stop.Inject(SYS_close, {static_cast<uint64_t>(*moved), 0, 0, 0, 0, 0});
    return Fail(EMFILE, "the reserved fd range {} is full ({} half)", range.ToString(),
                quiet ? "event files'" : "devices'");
  }
  (void)stop.Inject(SYS_close, {static_cast<uint64_t>(fd), 0, 0, 0, 0, 0});
  ++stats_.fds_moved;
  return static_cast<int>(*moved);
}

// The process's first proxied fd brings the device filter (intercept_rules.h); then the fd
// moves into the range. On failure the fd the kernel returned is closed (unless the tracee
// died meanwhile) and the caller reports the error in its place.
Result<int> Tracer::AdoptIntoRange(ExitStop& stop, int fd, bool cloexec) {
  auto filtered = EnsureDeviceFilter(stop);
  Result<int> moved =
      filtered.ok() ? MoveIntoRange(stop, fd, cloexec) : Result<int>(std::move(filtered).error());
  if (!moved.ok() && !stop.death_status())
    (void)stop.Inject(SYS_close, {static_cast<uint64_t>(fd), 0, 0, 0, 0, 0});
  return moved;
}

// The kernel gives a new fd the lowest free number (alloc_fd), or for a copy the lowest at or
// above the one asked for, which spills above the range's stopping half when that is full.
// From the kernel's fd_install until the exit stop moves it (MoveIntoRange) or closes it
// (TrackDuplicate), every task sharing the fd table could reach the file under that number,
// where its write() and mmap() do not stop. So those tasks are held for the call's duration,
// as for a kernel-read copy. A program whose fd table and mm are its caller's alone pays
// nothing. Event files need no freeze: their data syscalls do not stop even in the range.
std::optional<Tracer::Verdict> Tracer::FreezeAroundNewFd(const Stop& stop, std::string_view what) {
  auto frozen = FreezeOthers(stop.task, what);
  if (frozen.ok()) return std::nullopt;
  ++stats_.denied;  // FreezeOthers has logged why
  return Verdict::Skip(-static_cast<long>(frozen.error().errnum));
}

// A host file the harness proxies (or hides) when it is opened by path: anything under
// /dev/infiniband, and whatever the resolver maps a proxied or hidden sandbox path to.
bool Tracer::IsDeviceFile(const std::string& host_path) const {
  if (PathIsUnder(host_path, "/dev/infiniband")) return true;
  if (options_.resolver == nullptr) return false;
  auto sandbox = options_.resolver->HostToSandbox(host_path);
  return !sandbox || options_.resolver->Resolve(*sandbox, PathOp::kOpen).proxy;
}

Tracer::Verdict Tracer::OnFdSyscall(const Stop& stop) {
  // The device filter is newer than the base filter, so an mmap of a reserved-range fd is
  // reported with its tag, not the scratch guard's (seccomp_run_filters: among equal actions
  // the newest filter's data): a MAP_FIXED mapping of a device over the scratch region's fixed
  // window must meet the guard here (tracer_bypasses.cc).
  if (stop.nr == SYS_mmap && options_.scratch_window) {
    Verdict guard = OnScratchGuard(stop);
    if (guard.kind != Verdict::Kind::kContinue) return guard;
  }
  const FdSyscall* row = FindFdSyscall(stop.nr);
  const uint64_t raw_fd = stop.args[static_cast<size_t>(row != nullptr ? row->fd_arg : 0)];
  const int fd = FdOf(raw_fd);
  std::shared_ptr<OpenFile> file;
  if (options_.range.Contains(raw_fd)) file = stop.task.fds->Find(fd);
  if (file == nullptr) {
    // Not a proxied fd. RDMA_VERBS_IOCTL still stops for every fd: refuse it when the fd is an
    // RDMA device that reached the tracee without passing through the harness (SCM_RIGHTS from
    // a process outside the tree, a symlink the path check did not see, ...).
    if (stop.nr == SYS_ioctl && static_cast<uint32_t>(stop.args[1]) == kRdmaVerbsIoctl) {
      const std::string link =
          "/proc/" + std::to_string(stop.task.tid) + "/fd/" + std::to_string(fd);
      auto target = options_.host_fs->ReadLink(link);
      if (target.ok() && IsDeviceFile(*target))
        return Deny(stop, Fail(EPERM,
                               "fd {} is {} but was not opened through the harness; "
                               "RDMA_VERBS_IOCTL on it is refused",
                               fd, *target));
    }
    return Verdict::Continue();
  }
  SyscallView view{stop.task.tid, stop.task.tgid, stop.nr, stop.args, fd, stop.task.credentials};
  Access access(*this, stop.task, nullptr);
  EntryDecision decision = file->handler().OnEntry(view, access);
  return FromEntryDecision(stop, std::move(file), view, std::move(decision), access);
}

Tracer::Verdict Tracer::FromEntryDecision(const Stop& stop, std::shared_ptr<OpenFile> file,
                                          const SyscallView& view, EntryDecision decision,
                                          Access& access) {
  // A skipped call has no exit stop: give back scratch memory the handler took.
  if (decision.kind() != EntryDecision::Kind::kAllow && access.used_scratch())
    stop.task.mm->ReleaseSlot(stop.task.tid);
  switch (decision.kind()) {
    case EntryDecision::Kind::kDeny:
      return Deny(stop, decision.error().value_or(Error{static_cast<int>(-decision.result()),
                                                        "denied by the proxied file's handler"}));
    case EntryDecision::Kind::kEmulate:
      return Verdict::Skip(decision.result());
    case EntryDecision::Kind::kAllow:
      break;
  }
  if (!decision.inspect_exit() && !access.used_scratch()) return Verdict::Continue();
  Verdict verdict = Verdict::WatchExit([this, file, view](ExitStop& exit, long result) {
    Access at_exit(*this, exit.task(), &exit);
    ExitDecision done = file->handler().OnExit(view, result, at_exit);
    return done.replacement().value_or(result);
  });
  verdict.new_args = decision.new_args();
  verdict.release_slot = access.used_scratch();
  return verdict;
}

// The new fd of a dup-like call names the same open file. The call was steered into the range;
// if the range was full the kernel may still have found a number above it: close that one.
Tracer::Verdict Tracer::TrackDuplicate(const Stop& stop, std::shared_ptr<OpenFile> file,
                                       uint32_t min) {
  // A soft RLIMIT_NOFILE the program lowered below the range would fail the copy (EINVAL)
  // where natively it succeeds: raised for the call, when the number the program asked for is
  // below it (at or above it the kernel's EINVAL is the native answer). nofile_limit.h.
  std::shared_ptr<NofileRaise> raise;
  if (auto raised = NofileRaise::To(stop.task.tgid, options_.range.end(), min);
      raised.ok() && raised->raised())
    raise = std::make_shared<NofileRaise>(std::move(*raised));
  return Verdict::WatchExit([this, file, raise](ExitStop& exit, long result) mutable -> long {
    raise.reset();  // the limit is the program's again
    if (result < 0) return result;
    if (!InItsHalf(static_cast<uint64_t>(result), IsQuiet(*file))) {
      (void)exit.Inject(SYS_close, {static_cast<uint64_t>(result), 0, 0, 0, 0, 0});
      options_.log->Error("[pid {}] duplicating proxied fd: the reserved fd range {} is full",
                          exit.task().tid, options_.range.ToString());
      return -EMFILE;
    }
    exit.task().fds->Insert(static_cast<int>(result), file);
    return result;
  });
}

Tracer::Verdict Tracer::OnDup(const Stop& stop) {
  auto file = stop.task.fds->Find(FdOf(stop.args[0]));
  if (file == nullptr) return Verdict::Continue();
  const bool quiet = IsQuiet(*file);
  if (!quiet)
    if (auto refused = FreezeAroundNewFd(stop, "dup of a proxied device")) return *refused;
  // dup() takes the lowest free number, below the range: run fcntl(fd, F_DUPFD, base) instead
  // (the same result for the app, but in the range). The filter re-checks the rewritten call
  // and lets it through (a TRACE verdict on the re-check means allow).
  const uint32_t base = ItsPlace(quiet).base();
  Verdict verdict = TrackDuplicate(stop, std::move(file), 0);
  verdict.new_nr = SYS_fcntl;
  verdict.new_args[1] = F_DUPFD;
  verdict.new_args[2] = base;
  return verdict;
}

Tracer::Verdict Tracer::OnFcntlDup(const Stop& stop) {
  auto file = stop.task.fds->Find(FdOf(stop.args[0]));
  if (file == nullptr) return Verdict::Continue();
  const bool quiet = IsQuiet(*file);
  if (!quiet)
    if (auto refused = FreezeAroundNewFd(stop, "F_DUPFD of a proxied device")) return *refused;
  const uint32_t base = ItsPlace(quiet).base();
  // fcntl's argument is an int for F_DUPFD (f_dupfd takes the low 32 bits). Below the file's
  // half it is raised to the half's base: the copy is still at or above what was asked.
  const auto asked = static_cast<uint32_t>(stop.args[2]);
  Verdict verdict = TrackDuplicate(stop, std::move(file), asked);
  if (asked < base) verdict.new_args[2] = base;
  return verdict;
}

Tracer::Verdict Tracer::OnDupTo(const Stop& stop) {
  const FdRange& range = options_.range;
  const int oldfd = FdOf(stop.args[0]);
  const int newfd = FdOf(stop.args[1]);
  std::shared_ptr<OpenFile> file;
  if (range.Contains(stop.args[0])) file = stop.task.fds->Find(oldfd);
  // Outside its place (a device's: the stopping half) its calls would not stop.
  if (file != nullptr && !InItsHalf(stop.args[1], IsQuiet(*file)))
    return Deny(stop, Fail(EBADF,
                           "proxied fd {} ({}) can only be duplicated inside {} of the reserved "
                           "range {}; {} is outside it",
                           oldfd, file->label(), ItsPlace(IsQuiet(*file)).ToString(),
                           range.ToString(), newfd));
  const bool replaces_tracked = range.Contains(stop.args[1]) && stop.task.fds->Find(newfd);
  if ((file == nullptr && !replaces_tracked) || oldfd == newfd) return Verdict::Continue();
  return Verdict::WatchExit([file, newfd](ExitStop& exit, long result) {
    if (result == newfd) {
      // dup2/dup3 closed whatever newfd named, then made it a copy of oldfd.
      exit.task().fds->Erase(newfd, CloseReason::kClosed);
      if (file != nullptr) exit.task().fds->Insert(newfd, file);
    }
    return result;
  });
}

Tracer::Verdict Tracer::OnClose(const Stop& stop) {
  const int fd = FdOf(stop.args[0]);
  if (stop.task.fds->Find(fd) == nullptr) return Verdict::Continue();
  // Linux releases an open fd even when close then reports an error; only EBADF keeps one, and
  // the model says this one is open (close(2)). So it is dropped here, and the call needs no
  // exit stop. A racing close of the same fd by another thread stops too, after this one, and
  // finds it gone from the model: the kernel gives one of them EBADF, as natively.
  stop.task.fds->Erase(fd, CloseReason::kClosed);
  return Verdict::Continue();
}

Tracer::Verdict Tracer::OnCloseRange(const Stop& stop) {
  // close_range's arguments are unsigned ints (SYSCALL_DEFINE3(close_range, unsigned int, ...)).
  const auto first = static_cast<uint32_t>(stop.args[0]);
  const auto last = static_cast<uint32_t>(stop.args[1]);
  const auto flags = static_cast<uint32_t>(stop.args[2]);
  if (last < options_.range.base() || first >= options_.range.end()) return Verdict::Continue();
  return Verdict::WatchExit([first, last, flags](ExitStop& exit, long result) {
    if (result != 0) return result;
    Task& task = exit.task();
    if ((flags & CLOSE_RANGE_UNSHARE) != 0) task.fds = task.fds->Clone();
    if ((flags & CLOSE_RANGE_CLOEXEC) == 0) {
      task.fds->EraseIf(
          [&](int fd) {
            return static_cast<uint32_t>(fd) >= first && static_cast<uint32_t>(fd) <= last;
          },
          CloseReason::kClosed);
    }
    return result;
  });
}

// A proxied fd passed over a unix socket would arrive outside the reserved range in the
// receiver — possibly a process the harness does not trace at all — where its write() and
// mmap() no longer stop. Refuse the send instead.
Tracer::Verdict Tracer::OnSendFds(const Stop& stop) {
  Task& task = stop.task;
  if (task.fds->size() == 0) return Verdict::Continue();
  ProcessMemory memory(task.tid, &task.mm->mem_fd());
  // sendmsg(fd, msg, flags); sendmmsg(fd, msgvec, vlen, flags) with 64-byte struct mmsghdr.
  const bool many = stop.nr == SYS_sendmmsg;
  const uint32_t count = many ? std::min<uint32_t>(static_cast<uint32_t>(stop.args[2]), UIO_MAXIOV) : 1;
  for (uint32_t i = 0; i < count; ++i) {
    auto fds = PassedFds(memory, stop.args[1] + uint64_t{i} * 64);
    if (!fds.ok()) return Verdict::Continue();  // unreadable: the kernel reports EFAULT
    for (int fd : *fds) {
      if (!options_.range.Contains(static_cast<uint64_t>(static_cast<uint32_t>(fd)))) continue;
      if (auto file = task.fds->Find(fd))
        return Deny(stop, Fail(EPERM,
                               "passing proxied fd {} ({}) over a socket (SCM_RIGHTS) is refused: "
                               "the receiver would hold the device outside the harness",
                               fd, file->label()));
    }
  }
  // A send on a proxied socket (NETLINK_RDMA) is its handler's to decide, as write() is.
  if (options_.range.Contains(stop.args[0]) && task.fds->Find(FdOf(stop.args[0])) != nullptr)
    return OnFdSyscall(stop);
  return Verdict::Continue();
}

// io_submit(ctx, nr, iocbpp): asynchronous reads and writes name their fd inside each iocb,
// where the filter cannot see it; the kernel would run them on a proxied file without a stop
// (a NETLINK_RDMA socket's sends unfiltered). uverbs and rdma_cm files have no write_iter, so
// natively their aio is EINVAL already; a proxied socket's is refused the same way.
Tracer::Verdict Tracer::OnAioSubmit(const Stop& stop) {
  Task& task = stop.task;
  if (task.fds->size() == 0) return Verdict::Continue();
  const long nr = static_cast<long>(stop.args[1]);
  if (nr <= 0) return Verdict::Continue();  // the kernel's EINVAL, or nothing to do
  constexpr long kMaxChecked = 4096;
  if (nr > kMaxChecked)
    return Deny(stop, Fail(EINVAL, "io_submit of {} iocbs in a process holding proxied fds: the "
                           "harness checks at most {}", nr, kMaxChecked));
  ProcessMemory memory(task.tid, &task.mm->mem_fd());
  std::vector<uint64_t> iocbs(static_cast<size_t>(nr));
  if (!memory.Read(stop.args[2], std::as_writable_bytes(std::span(iocbs))).ok())
    return Verdict::Continue();  // the kernel reports EFAULT
  for (uint64_t at : iocbs) {
    iocb cb{};
    if (!memory.Read(at, std::as_writable_bytes(std::span(&cb, 1))).ok())
      return Verdict::Continue();  // EFAULT for that one: the kernel stops there
    if (!options_.range.Contains(cb.aio_fildes)) continue;
    if (auto file = task.fds->Find(FdOf(cb.aio_fildes)))
      return Deny(stop, Fail(EINVAL, "asynchronous I/O on proxied fd {} ({}) is refused",
                             cb.aio_fildes, file->label()));
  }
  return Verdict::Continue();
}

// socket(AF_NETLINK, type, NETLINK_RDMA): the program's new socket moves into the reserved
// range, with the request filter (netlink_rdma.h) as its handler.
Tracer::Verdict Tracer::OnNetlinkSocket(const Stop& stop) {
  const pid_t tid = stop.task.tid;
  const bool cloexec = (stop.args[1] & SOCK_CLOEXEC) != 0;
  if (auto refused = FreezeAroundNewFd(stop, "socket(NETLINK_RDMA)")) return *refused;
  return Verdict::WatchExit([this, tid, cloexec](ExitStop& exit, long result) -> long {
    if (result < 0) return result;  // no RDMA netlink in this kernel: the program sees why
    Result<int> moved = AdoptIntoRange(exit, static_cast<int>(result), cloexec);
    if (!moved.ok()) {
      if (exit.death_status()) return result;
      options_.log->Error("[pid {}] socket(NETLINK_RDMA): {}", tid, moved.error().ToString());
      return -static_cast<long>(moved.error().errnum);
    }
    // The device queries are answered on the tracer's own descriptor of the socket, asking
    // the host from the socket's network namespace; without them they are refused as a kernel
    // without them would (netlink_rdma.h).
    std::unique_ptr<NetlinkRdmaHandler> handler;
    if (options_.netlink_devices != nullptr) {
      auto copy = CopyTraceeFd(exit.task().tgid, *moved);
      auto asking = copy.ok() ? NetlinkSocketInTaskNetns(exit)
                              : Result<std::optional<UniqueFd>>(std::move(copy).error());
      if (exit.death_status()) return result;
      if (asking.ok()) {
        std::optional<proxy::HostRdmaNetlink> host;
        if (*asking) host = proxy::HostRdmaNetlink::Adopt(std::move(**asking));
        handler = std::make_unique<NetlinkRdmaHandler>(*options_.log, options_.netlink_devices,
                                                       std::move(*copy), std::move(host));
      } else {
        options_.log->Error("[pid {}] socket(NETLINK_RDMA): device queries will get EINVAL: {}",
                            tid, asking.error().ToString());
      }
    }
    if (handler == nullptr) handler = std::make_unique<NetlinkRdmaHandler>(*options_.log);
    exit.task().fds->Insert(*moved,
                            std::make_shared<OpenFile>(std::move(handler), "NETLINK_RDMA"));
    options_.log->Trace("[pid {}] socket(NETLINK_RDMA) = {}", tid, *moved);
    return *moved;
  });
}

// The kernel answers a NETLINK_RDMA socket with the devices of the namespace the socket was
// made in (ib_enum_all_devs(): rdma_dev_access_netns() against sock_net()); in exclusive mode
// (`rdma system set netns exclusive`) a program that entered a namespace of its own
// (`unshare -n`, setns) sees only that namespace's devices, none of the tracer's. The tracer
// cannot enter the namespace itself (setns() needs CAP_SYS_ADMIN), so the thread that made the
// program's socket makes one more there, which the tracer takes and closes in the program
// again. Only when the namespaces differ: the usual program pays no injection.
Result<std::optional<UniqueFd>> Tracer::NetlinkSocketInTaskNetns(ExitStop& exit) {
  const pid_t tid = exit.task().tid;
  auto theirs = options_.host_fs->ReadLink("/proc/" + std::to_string(tid) + "/ns/net");
  if (!theirs.ok()) return std::move(theirs).error();
  auto ours = options_.host_fs->ReadLink("/proc/thread-self/ns/net");
  if (!ours.ok()) return std::move(ours).error();
  if (*theirs == *ours) return std::optional<UniqueFd>{};
  Result<long> made = exit.Inject(
      SYS_socket, {AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA, 0, 0, 0});
  if (!made.ok()) return std::move(made).error();
  if (*made < 0)
    return Fail(static_cast<int>(-*made), "socket(NETLINK_RDMA) in the program's {}: {}",
                *theirs, std::strerror(static_cast<int>(-*made)));
  auto copy = CopyTraceeFd(exit.task().tgid, static_cast<int>(*made));
  if (!exit.death_status())
    (void)exit.Inject(SYS_close, {static_cast<uint64_t>(*made), 0, 0, 0, 0, 0});
  if (!copy.ok()) return std::move(copy).error();
  options_.log->Trace("[pid {}] NETLINK_RDMA: the host is asked from the program's {}", tid,
                      *theirs);
  return std::optional<UniqueFd>(std::move(*copy));
}

// unshare(CLONE_FILES): the thread gets a copy of the fd table; unshare(CLONE_NEWUSER): new
// credentials (tracer_credentials.cc). One rule tag for both, as one call may ask for both.
Tracer::Verdict Tracer::OnUnshare(const Stop& stop) {
  const bool files = (stop.args[0] & CLONE_FILES) != 0;
  ExitFn fd_table = [files](ExitStop& exit, long result) {
    if (files && result == 0) exit.task().fds = exit.task().fds->Clone();
    return result;
  };
  if ((stop.args[0] & CLONE_NEWUSER) == 0) return Verdict::WatchExit(std::move(fd_table));
  return Verdict::WatchExit(WatchCredentials(stop, std::move(fd_table)));
}

}  // namespace rxp::harness
