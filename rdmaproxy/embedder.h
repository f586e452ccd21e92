// The engine's three narrow interfaces to whoever embeds it (see ../docs/embedding.md):
//
//   AppMemory   copy bytes in and out of the app; say where the host kernel must see an app
//               range it will pin or write (identity when the app issues its own syscalls, as
//               under the ptrace harness; a mirror of the same pages in a Sentry-style runtime)
//   FdBridge    app fd -> host fd and what kind of file it is; install a new host fd as an
//               app fd
//   HostDevice  issue the host ioctl / write on the real device file (sentry mode only: under
//               the ptrace harness the tracee issues them itself)
//
// The engine never touches app memory, fds or devices any other way.
#pragma once

#include <fcntl.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "abi/result.h"

namespace rxp::proxy {

class AppMemory {
 public:
  virtual ~AppMemory() = default;
  // True when the app itself issues the host syscalls (the ptrace harness): its addresses and
  // fd numbers are what the kernel sees, and commands run on a private copy in its memory.
  virtual bool IdentityMapped() const = 0;
  // Copies app bytes at `address` into `out`; EFAULT if any of them is unmapped.
  virtual Result<void> Read(uint64_t address, std::span<std::byte> out) = 0;
  // Copies `in` to the app at `address`; EFAULT if any of it is not writable.
  virtual Result<void> Write(uint64_t address, std::span<const std::byte> in) = 0;
  // The address the host kernel must be given for the app range [address, address + length)
  // that it will pin (ib_umem_get), map or copy_to_user into. Identity when the app itself
  // issues the syscall; otherwise the address of the same pages in the forwarder.
  virtual Result<uint64_t> HostAddress(uint64_t address, uint64_t length) = 0;
};

// What an fd the engine deals with is.
enum class FileKind : uint8_t {
  kOther,          // not an RDMA file (an arbitrary fd the app passed)
  kUverbs,         // /dev/infiniband/uverbsN
  kRdmaCm,         // /dev/infiniband/rdma_cm
  kAsyncEvent,     // the async event fd of a uverbs context
  kCompChannel,    // a completion channel
  kDmaBuf,         // a dma-buf exported by a GPU driver (nvproxy)
};
const char* FileKindName(FileKind kind);

// What an open file's access mode (its open flags' O_ACCMODE bits) lets through, as
// OPEN_FMODE() (include/linux/fs.h) makes f_mode: O_RDONLY reads, O_WRONLY writes, O_RDWR
// both, and access mode 3 neither (an ioctl-only open); an O_PATH file neither, whatever its
// mode (build_open_flags()). vfs_write()/vfs_read() answer EBADF for the others before the
// file's own write/read runs.
constexpr bool OpenedForReading(int open_flags) {
  return (open_flags & O_PATH) == 0 && (((open_flags & 3) + 1) & 1) != 0;
}
constexpr bool OpenedForWriting(int open_flags) {
  return (open_flags & O_PATH) == 0 && (((open_flags & 3) + 1) & 2) != 0;
}

struct HostFile {
  int host_fd = -1;  // valid for the duration of the call
  FileKind kind = FileKind::kOther;
  uint64_t owner = 0;  // kAsyncEvent / kCompChannel: the uverbs file (engine id) they belong to
};

class FdBridge {
 public:
  virtual ~FdBridge() = default;
  // What the app's fd `app_fd` is: EBADF when the app has no such fd.
  virtual Result<HostFile> Resolve(int app_fd) = 0;
  // A new fd the host kernel just returned inside a response (the async event fd, a completion
  // channel): make it an fd of the app, of `kind`, belonging to the uverbs file `owner`, and
  // return the number the app must see. In sentry mode `fd` is a forwarder fd and ownership
  // passes to the bridge; under the ptrace harness it is already the tracee's fd, which the
  // harness moves into its reserved range. On failure `fd` is closed (the app never holds it)
  // and the command fails with the error (UverbsFile::Complete).
  virtual Result<int> Adopt(int fd, FileKind kind, uint64_t owner) = 0;
};

class HostDevice {
 public:
  virtual ~HostDevice() = default;
  // ioctl(RDMA_VERBS_IOCTL) on the host device file with a buffer in forwarder memory.
  virtual Result<long> Ioctl(unsigned long request, void* arg) = 0;
  // write() on the host device file (rdma_cm commands; uverbs commands the forwarder may
  // write because it opened the file itself).
  virtual Result<long> Write(const void* buffer, size_t length) = 0;
  // The host fd, for mmap and poll.
  virtual int fd() const = 0;
};

}  // namespace rxp::proxy
