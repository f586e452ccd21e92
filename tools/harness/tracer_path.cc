// Path redirection: the seccomp stops of intercept_rules.h's path lookups.
//
// The path is read from the tracee, made absolute and canonical in the sandbox namespace
// (path_canon.h) and given to the PathResolver. A rewrite writes the host path into the
// thread's scratch slot (mapped read-only in the tracee, so no other thread can change it
// before the kernel copies it — getname() at syscall entry) and points the path argument at
// it; every register is restored at the exit stop. An open of a proxied path also moves the
// new fd into the reserved range and asks the FileHandlerFactory for its handler.
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include "tools/harness/ordered_listing.h"
#include "tools/harness/tracer.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {
namespace {

struct OpenArgs {
  uint64_t flags = 0;
  uint64_t resolve = 0;  // openat2 RESOLVE_* flags
};

// The flags of a path call (open flags, AT_* flags): from a register, implied (creat), or
// from the openat2 struct open_how (flags, mode, resolve; include/uapi/linux/openat2.h).
Result<OpenArgs> ReadOpenArgs(const PathSyscall& row, const std::array<uint64_t, 6>& args,
                              TraceeMemory& memory) {
  OpenArgs out;
  if (row.nr == SYS_creat) {
    out.flags = O_CREAT | O_WRONLY | O_TRUNC;
  } else if (row.nr == SYS_openat2) {
    auto how = memory.ReadValue<open_how>(args[2]);
    if (!how.ok()) return std::move(how).error();
    out.flags = how->flags;
    out.resolve = how->resolve;
  } else if (row.flags_arg >= 0) {
    out.flags = args[static_cast<size_t>(row.flags_arg)];
  }
  return out;
}

// Whether an open may give write access. open/openat/creat carry their flags in registers,
// which no other thread can change; openat2's are in memory, so it always may. O_PATH ignores
// the access mode (open(2)); an access mode of 3 is neither read nor write, but is checked
// as a write (Linux asks for both permissions for it).
bool MayOpenForWriting(const PathSyscall& row, const std::array<uint64_t, 6>& args) {
  if (row.nr == SYS_creat || row.nr == SYS_openat2) return true;
  if (row.flags_arg < 0) return false;
  const uint64_t flags = args[static_cast<size_t>(row.flags_arg)];
  return (flags & O_PATH) == 0 && (flags & O_ACCMODE) != O_RDONLY;
}

// Whether `link` (a /proc/<tid>/fd/N of the tracer's) is a procfs "mem" file:
// /proc/<pid>/mem or /proc/<pid>/task/<tid>/mem (fs/proc/base.c, proc_mem_operations). Its
// writes use FOLL_FORCE (mem_rw), which reaches read-only pages: the scratch region's, which
// hold the validated copies the kernel reads. The target's name, not its path, is checked: a
// procfs mounted where the tracer cannot see it still ends in "<pid>/mem".
std::optional<std::string> ProcMemFileOf(const std::string& link) {
  struct statfs fs{};
  if (statfs(link.c_str(), &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC) return std::nullopt;
  char target[PATH_MAX];
  const ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
  if (n <= 0) return std::nullopt;
  const std::string path(target, static_cast<size_t>(n));
  constexpr std::string_view kMem = "/mem";
  if (path.size() <= kMem.size() || !path.ends_with(kMem)) return std::nullopt;
  const std::string dir = path.substr(0, path.size() - kMem.size());
  const std::string id = dir.substr(dir.rfind('/') + 1);
  if (id.empty() || !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return path;
}

// Whether two paths name the same file (stat(2) of both: device and inode).
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa{}, sb{};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

Tracer::Verdict Tracer::OnPath(const Stop& stop) {
  const PathSyscall* row = FindPathSyscall(stop.nr);
  if (row == nullptr) return Verdict::Continue();
  Verdict verdict = options_.resolver != nullptr ? DecidePath(stop, *row) : Verdict::Continue();
  // An open the harness leaves alone may still reach /proc/<pid>/mem. That is decided at the
  // exit, on the file opened: the path, a symlink on it or a dirfd can change until the
  // kernel's lookup. (An open the harness rewrites or adopts reaches the file it chose.)
  if (verdict.kind == Verdict::Kind::kContinue && row->op == PathOp::kOpen &&
      MayOpenForWriting(*row, stop.args))
    return Verdict::WatchExit(RefuseMemFileForWriting(stop));
  return verdict;
}

Tracer::Verdict Tracer::DecidePath(const Stop& stop, const PathSyscall& row) {
  Task& task = stop.task;
  ProcessMemory memory(task.tid, &task.mm->mem_fd());
  // Unreadable, too long or empty paths: the kernel gives the app its own error for them.
  auto raw = memory.ReadCString(stop.args[static_cast<size_t>(row.path_arg)], PATH_MAX - 1);
  if (!raw.ok() || raw->empty()) return Verdict::Continue();
  auto open = ReadOpenArgs(row, stop.args, memory);
  if (!open.ok()) return Verdict::Continue();
  const uint64_t flags = open->flags;

  CanonRequest request;
  request.tid = task.tid;
  request.tgid = task.tgid;
  // dirfd is an int: the kernel truncates the register (do_sys_openat2(int dfd, ...)).
  request.dirfd = row.dirfd_arg >= 0
                      ? static_cast<int>(static_cast<uint32_t>(stop.args[static_cast<size_t>(row.dirfd_arg)]))
                      : AT_FDCWD;
  request.raw = *raw;
  request.follow_last = !row.never_follows && (flags & row.nofollow_flag) == 0;
  auto canon = Canonicalize(request, *options_.host_fs, *options_.resolver);
  if (!canon.ok()) return Verdict::Continue();  // bad dirfd etc.: the kernel reports it
  const char* op = PathOpName(row.op);
  if (canon->hidden) {
    ++stats_.paths_failed;
    options_.log->Trace("[pid {}] {} {}: ENOENT ({} is hidden from the sandbox)", task.tid, op,
                        *raw, canon->hidden_host);
    return Verdict::Skip(-ENOENT);
  }

  Resolution resolution = options_.resolver->Resolve(canon->sandbox, row.op);
  const bool adopt = resolution.proxy && row.op == PathOp::kOpen;
  // A device opened here is at a low number until the exit stop moves it (FreezeAroundNewFd);
  // a directory listed in the harness's order is not a device: its getdents may run unstopped.
  auto freeze_for_device = [&]() -> std::optional<Verdict> {
    if (resolution.listing_order != nullptr) return std::nullopt;
    return FreezeAroundNewFd(stop, "open of " + canon->sandbox);
  };
  switch (resolution.kind) {
    case Resolution::Kind::kFail:
      ++stats_.paths_failed;
      options_.log->Trace("[pid {}] {} {}: {} ({})", task.tid, op, canon->sandbox,
                          std::strerror(resolution.errnum), resolution.label);
      return Verdict::Skip(-static_cast<long>(resolution.errnum));
    case Resolution::Kind::kPassThrough:
      if (row.op == PathOp::kReadlink && IsProcMagicLink(canon->sandbox))
        return EmulateProcFdReadlink(stop, row, canon->sandbox);
      if (canon->base_redirected) {
        // Relative to a redirected directory (a chdir into /dev/infiniband, say), out of it:
        // the kernel would walk the ".." of the host directory it was redirected to. The
        // sandbox's file is the same path on the host.
        resolution.host_path = canon->sandbox;
        break;
      }
      if (!adopt) return Verdict::Continue();
      if (auto refused = freeze_for_device()) return *refused;
      return Verdict::WatchExit(
          AdoptOpenedFd(stop, canon->sandbox, std::move(resolution), static_cast<int>(flags)));
    case Resolution::Kind::kRewrite:
      break;
  }
  // The kernel would reach the same file through the raw path: leave the registers alone.
  const bool rewrites = !(canon->lexical && canon->untouched_host == resolution.host_path);
  if (rewrites && row.nr == SYS_openat2 &&
      (open->resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT)) != 0) {
    // The rewrite is an absolute path, which these flags forbid (openat2(2): EXDEV).
    return Deny(stop, Fail(EXDEV, "openat2 of {} with RESOLVE_BENEATH/IN_ROOT cannot be redirected to {}",
                           canon->sandbox, resolution.host_path));
  }
  ExitFn on_exit;
  if (adopt) {
    if (auto refused = freeze_for_device()) return *refused;
    on_exit = AdoptOpenedFd(stop, canon->sandbox, resolution, static_cast<int>(flags));
  }
  if (!rewrites) return on_exit ? Verdict::WatchExit(std::move(on_exit)) : Verdict::Continue();
  options_.log->Trace("[pid {}] {} {} -> {}", task.tid, op, canon->sandbox,
                      resolution.host_path);
  return RewritePath(stop, row, resolution.host_path, std::move(on_exit));
}

Tracer::Verdict Tracer::RewritePath(const Stop& stop, const PathSyscall& row,
                                    const std::string& host, ExitFn on_exit) {
  Task& task = stop.task;
  if (host.size() + 1 > kScratchSlotSize)
    return Deny(stop, Fail(ENAMETOOLONG, "redirected path {} is too long", host));
  auto slot = task.mm->AcquireSlot(task.tid);
  if (!slot.ok())
    return Deny(stop, Fail(slot.error().errnum, "cannot redirect {}: {}", host,
                           slot.error().reason));
  ProcessMemory memory(task.tid, &task.mm->mem_fd());
  auto written = memory.WriteForced(*slot, std::as_bytes(std::span(host.c_str(), host.size() + 1)));
  if (!written.ok()) {
    task.mm->ReleaseSlot(task.tid);
    return Deny(stop, Fail(written.error().errnum, "cannot redirect {}: {}", host,
                           written.error().reason));
  }
  ++stats_.paths_rewritten;
  Verdict verdict = Verdict::WatchExit(std::move(on_exit));
  verdict.new_args[static_cast<size_t>(row.path_arg)] = *slot;
  verdict.release_slot = true;
  return verdict;
}

// getcwd(buf, size): the kernel names the cwd by where it is (d_path), so after a chdir into a
// redirected directory -- /dev/infiniband, a served /sys directory -- it would name the host
// directory it was redirected to, and ".." from there leads into the harness's view. The
// sandbox's name for it is answered instead, as the kernel answers: the length with the NUL,
// ERANGE when it does not fit (sys_getcwd). Elsewhere the call runs as issued.
Tracer::Verdict Tracer::OnGetcwd(const Stop& stop) {
  if (options_.resolver == nullptr) return Verdict::Continue();  // nothing is redirected
  auto cwd = options_.host_fs->ReadLink("/proc/" + std::to_string(stop.task.tid) + "/cwd");
  if (!cwd.ok() || cwd->empty() || (*cwd)[0] != '/') return Verdict::Continue();
  auto sandbox = options_.resolver->HostToSandbox(*cwd);
  if (!sandbox || *sandbox == *cwd) return Verdict::Continue();
  const uint64_t size = stop.args[1];
  if (size < sandbox->size() + 1) return Verdict::Skip(-ERANGE);
  ProcessMemory memory(stop.task.tid, &stop.task.mm->mem_fd());
  if (!memory.Write(stop.args[0], std::as_bytes(std::span(sandbox->c_str(), sandbox->size() + 1)))
           .ok())
    return Verdict::Skip(-EFAULT);
  return Verdict::Skip(static_cast<long>(sandbox->size() + 1));
}

// readlink("/proc/self/fd/N") of a proxied fd would show the host's device name: answer with
// the sandbox name instead (the same for any magic link whose target has another sandbox name).
Tracer::Verdict Tracer::EmulateProcFdReadlink(const Stop& stop, const PathSyscall& row,
                                              const std::string& link) {
  auto target = options_.host_fs->ReadLink(link);
  if (!target.ok() || target->empty() || (*target)[0] != '/') return Verdict::Continue();
  auto sandbox = options_.resolver->HostToSandbox(*target);
  if (sandbox && *sandbox == *target) return Verdict::Continue();
  const std::string shown = sandbox.value_or(*target);
  // readlink(path, buf, bufsiz) / readlinkat(dirfd, path, buf, bufsiz): the buffer follows the
  // path. The result is truncated to bufsiz and not NUL-terminated (readlink(2)).
  const uint64_t buf = stop.args[static_cast<size_t>(row.path_arg + 1)];
  const auto bufsiz = static_cast<int>(stop.args[static_cast<size_t>(row.path_arg + 2)]);
  if (bufsiz <= 0) return Verdict::Skip(-EINVAL);
  const size_t n = std::min(shown.size(), static_cast<size_t>(bufsiz));
  ProcessMemory memory(stop.task.tid, &stop.task.mm->mem_fd());
  if (!memory.Write(buf, std::as_bytes(std::span(shown.data(), n))).ok())
    return Verdict::Skip(-EFAULT);
  return Verdict::Skip(static_cast<long>(n));
}

Tracer::ExitFn Tracer::RefuseMemFileForWriting(const Stop& stop) {
  const pid_t tid = stop.task.tid;
  return [this, tid](ExitStop& exit, long result) -> long {
    if (result < 0) return result;
    auto mem = ProcMemFileOf("/proc/" + std::to_string(tid) + "/fd/" + std::to_string(result));
    if (!mem) return result;
    // openat2's flags were in memory: the file's own mode says what the open gave.
    const std::optional<unsigned long> flags = TraceeFdFlags(tid, result);
    if (flags && (*flags & O_ACCMODE) == O_RDONLY) return result;
    (void)exit.Inject(SYS_close, {static_cast<uint64_t>(result), 0, 0, 0, 0, 0});
    if (exit.death_status()) return result;
    ++stats_.denied;
    options_.log->Error("[pid {}] open of {} for writing refused with EACCES: its writes reach "
                        "read-only memory, where the harness keeps validated copies of the "
                        "program's commands", tid, *mem);
    return -EACCES;
  };
}

Tracer::ExitFn Tracer::AdoptOpenedFd(const Stop& stop, std::string sandbox,
                                     Resolution resolution, int flags) {
  const pid_t tid = stop.task.tid;
  const pid_t tgid = stop.task.tgid;
  return [this, tid, tgid, sandbox = std::move(sandbox), resolution = std::move(resolution),
          flags](ExitStop& exit, long result) -> long {
    if (result < 0) return result;
    const int fd = static_cast<int>(result);
    auto close_fd = [&exit](int which) {
      (void)exit.Inject(SYS_close, {static_cast<uint64_t>(which), 0, 0, 0, 0, 0});
    };
    Result<int> moved = AdoptIntoRange(exit, fd, (flags & O_CLOEXEC) != 0);
    if (!moved.ok()) {
      if (exit.death_status()) return result;
      options_.log->Error("[pid {}] open {}: {}", tid, sandbox, moved.error().ToString());
      return -static_cast<long>(moved.error().errnum);
    }
    // What the tracee opened must be the file the harness chose: another thread could have
    // changed a dirfd or a symlink between the check and the kernel's lookup.
    const std::string host_path =
        resolution.kind == Resolution::Kind::kRewrite ? resolution.host_path : sandbox;
    if (!SameFile("/proc/" + std::to_string(tid) + "/fd/" + std::to_string(*moved), host_path)) {
      close_fd(*moved);
      ++stats_.denied;
      options_.log->Error("[pid {}] open {}: EACCES: the file opened is not {} (it changed "
                          "while the open was in flight)", tid, sandbox, host_path);
      return -EACCES;
    }
    OpenedPath opened;
    opened.tid = tid;
    opened.tgid = tgid;
    opened.sandbox_path = sandbox;
    opened.host_path = host_path;
    opened.label = resolution.label;
    // The file's own flags, not those read at entry: openat2's were in memory another thread
    // could rewrite, and an O_PATH open drops the access mode (build_open_flags()).
    const std::optional<unsigned long> file_flags = TraceeFdFlags(tid, *moved);
    opened.flags = file_flags ? static_cast<int>(*file_flags) : flags;
    opened.fd = *moved;
    opened.credentials = exit.task().credentials;
    Result<std::unique_ptr<ProxiedFileHandler>> handler =
        Fail(ENODEV, "no handler factory for proxied files");
    if (resolution.listing_order != nullptr) {
      // A directory the harness serves in an order of its own (ordered_listing.h).
      handler = std::unique_ptr<ProxiedFileHandler>(
          std::make_unique<OrderedListingHandler>(resolution.listing_order));
    } else if (options_.factory != nullptr) {
      Access access(*this, exit.task(), &exit);
      handler = options_.factory->OnOpen(opened, access);
    }
    if (!handler.ok() || *handler == nullptr) {
      const Error error = handler.ok() ? Error{ENODEV, "the factory returned no handler"}
                                       : handler.error();
      close_fd(*moved);
      ++stats_.denied;
      options_.log->Error("[pid {}] open {}: {}", tid, sandbox, error.ToString());
      return -static_cast<long>(error.errnum);
    }
    exit.task().fds->Insert(*moved, std::make_shared<OpenFile>(std::move(*handler),
                                                               resolution.label));
    options_.log->Trace("[pid {}] open {} ({}) = {}", tid, sandbox, opened.host_path, *moved);
    return *moved;
  };
}

}  // namespace rxp::harness
