// UverbsFile: the proxy's state for one open /dev/infiniband/uverbsN (one host open file, one
// ucontext): the objects created through it, the mmap offsets it was handed, and the command
// pipeline for its ioctl() and write() calls.
//
// Two embedders drive it (embedder.h):
//  - the ptrace harness, where the app issues its own syscalls: BeginIoctl/BeginWrite at the
//    syscall's entry (the harness places the returned forward image in scratch memory of the
//    app and points the syscall at it), Complete at its exit;
//  - sentry mode, where the engine issues them: Ioctl/Write do both phases around HostDevice.
//
// Threading: Ioctl, Write, CheckMmap and Mapped may be called from any thread (they take the
// file's lock; commands on one file run one at a time, as none blocks in the kernel). The
// two-phase calls (Begin*, Complete) and Closed must be serialized by the caller -- the ptrace
// harness's single tracer thread.
#pragma once

#include <cstdint>
#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "abi/payload.h"
#include "abi/result.h"
#include "abi/schema.h"
#include "rdmaproxy/command.h"
#include "rdmaproxy/device_methods.h"
#include "rdmaproxy/embedder.h"
#include "rdmaproxy/mmap_rules.h"
#include "rdmaproxy/object_table.h"

namespace rxp::proxy {

class Engine;

class UverbsFile {
 public:
  UverbsFile(Engine& engine, uint64_t id, std::string label, abi::DeviceAbi device);
  ~UverbsFile();
  UverbsFile(const UverbsFile&) = delete;
  UverbsFile& operator=(const UverbsFile&) = delete;

  uint64_t id() const { return id_; }  // the owner id of this file's event fds (FdBridge)
  const std::string& label() const { return label_; }
  const abi::DeviceAbi& device() const { return device_; }

  // Phase 1: copy in, decode, apply policy and quotas, translate into a forward image.
  // An error means the command must not run; the app gets -error.errnum (already logged).
  Result<std::unique_ptr<UverbsCommand>> BeginIoctl(AppMemory& memory, FdBridge& fds,
                                                    uint64_t arg);
  Result<std::unique_ptr<UverbsCommand>> BeginWrite(AppMemory& memory, FdBridge& fds,
                                                    uint64_t buffer, uint64_t length);
  // The same into a caller's command (Reset first), reusing its buffers. `probe`, where
  // given, is a descriptor of the host file the engine may ask which methods the device
  // implements, so that a refused call of a method it lacks gets the kernel's answer
  // (device_methods.h); without one such a call gets the proxy's own errno.
  Result<void> BeginIoctl(AppMemory& memory, FdBridge& fds, uint64_t arg, UverbsCommand& command,
                          HostDevice* probe = nullptr);
  Result<void> BeginWrite(AppMemory& memory, FdBridge& fds, uint64_t buffer, uint64_t length,
                          UverbsCommand& command, HostDevice* probe = nullptr);

  // Phase 2: the kernel ran the image placed at `base` with `result` (>= 0, or -errno);
  // `image_after` is the image as the kernel left it. Settles tracking and quotas, copies
  // outputs and the attribute array back to the app, adopts new fds. Returns what the app's
  // syscall returns.
  long Complete(UverbsCommand& command, long result, std::span<std::byte> image_after,
                uint64_t base, AppMemory& memory, FdBridge& fds);

  // A begun command that will not run after all (the embedder could not place it): gives back
  // what Begin reserved and records the refusal with `why` (already logged by the caller's
  // return path: the app gets -why.errnum).
  void Abandon(UverbsCommand& command, const Error& why);

  // Sentry mode: both phases around the host device.
  long Ioctl(AppMemory& memory, FdBridge& fds, HostDevice& host, uint64_t arg);
  long Write(AppMemory& memory, FdBridge& fds, HostDevice& host, uint64_t buffer,
             uint64_t length);

  // The ptrace harness's one-stop path: the forwarder (the tracer) issues the app's ioctl
  // itself on `host`, its own descriptor of the same open file, from a validated image in its
  // own memory, so the app's syscall can be answered at its entry and the kernel never reads
  // memory the app can change. Only for commands that need nothing of the app's own context:
  // none that pins app memory (ib_umem_get works on current->mm), names or returns an fd (the
  // forwarder's fd table is not the app's), or creates the ucontext. For those it returns
  // nullopt having counted, logged and reserved nothing: the caller runs BeginIoctl /
  // Complete around the app's own syscall instead. `memory` is the app's (Read/Write only).
  // `own_fds`, where given, resolves app fds to the forwarder's own descriptors of the same
  // files (the async event fd a CQ or QP names, a completion channel): a command whose fds it
  // all resolves is issued by the forwarder after all; one it cannot resolve goes to the app.
  std::optional<long> IoctlAsForwarder(AppMemory& memory, HostDevice& host, uint64_t arg,
                                       FdBridge* own_fds = nullptr);
  // The same for a write() of `length` bytes at `buffer`, for the one legacy command that
  // needs nothing of the app either and that a program writes on every post: the rxe / siw
  // send doorbell (IsSendDoorbell, invoke_write.h). The forwarder cannot write() it (the
  // kernel refuses a writer that did not open the file), so it issues the INVOKE_WRITE ioctl
  // that runs the same handler; the app's write() is answered with its byte count and its
  // response buffer filled. Any other write returns nullopt, counted and logged nowhere.
  std::optional<long> WriteAsForwarder(AppMemory& memory, HostDevice& host, uint64_t buffer,
                                       uint64_t length);

  // mmap on this file: whether (offset, length, prot) may be mapped, and that it was. Mapped
  // takes only an offset CheckMmap passed and not yet Mapped (EINVAL, logged, otherwise).
  Result<void> CheckMmap(uint64_t offset, uint64_t length, int prot);
  Result<void> Mapped(uint64_t offset);

  // The file is gone (closed everywhere, or its processes died): the kernel destroys every
  // object with the host file; the sandbox's quotas get back what they held.
  void Closed();
  // A begun command that will never settle: its thread died between its entry and exit stops
  // (exit_group, execve, SIGKILL), and the file is closing. What it reserved is given back;
  // call it before Closed().
  void Forsake(UverbsCommand& c);

  size_t live_objects() const { return objects_.size(); }

 private:
  Result<void> BeginIoctlAs(AppMemory& memory, FdBridge& fds, uint64_t arg,
                           UverbsCommand& command, bool as_forwarder);
  Result<void> BuildIoctl(UverbsCommand& c, AppMemory& memory, FdBridge& fds);
  Result<void> BuildWrite(UverbsCommand& c, AppMemory& memory, FdBridge& fds);
  // Translates the request `layout` at image offset `at`: all of its fields, or only
  // `fields` when the caller listed the ones to translate (abi::FieldsOf). A driver request
  // passes its `payload` context: the sizes its queue buffers' pinned lengths derive from.
  Result<void> TranslateFields(UverbsCommand& c, const abi::Layout& layout, size_t at,
                               size_t length, AppMemory& memory, FdBridge& fds, bool pin_trans,
                               std::optional<std::span<const abi::FieldAt>> fields = {},
                               const abi::PayloadContext* payload = nullptr);
  void ResizesQueue(UverbsCommand& c, const abi::WriteCommand& wc,
                    std::span<const std::byte> core);
  Result<int> ResolveFd(FdBridge& fds, int app_fd, FileKind want);
  Result<int> ResolveXrcdFd(FdBridge& fds, int app_fd);
  // A command that makes an object: where the app takes its results must be writable before
  // it is forwarded (EFAULT otherwise, nothing made: copy_out.h).
  Result<void> CheckResultsFit(const UverbsCommand& c, AppMemory& memory);
  Result<void> Reserve(UverbsCommand& c);
  void Settle(UverbsCommand& c, long result, std::span<const std::byte> image_after,
              AppMemory& memory, FdBridge& fds);
  // The command destroys `tracked`, the object under `handle` now (c.destroys); the second
  // form looks it up (a legacy request's handle field, which CheckHandles found).
  void Destroys(UverbsCommand& c, uint32_t handle, const TrackedObject& tracked);
  void Destroys(UverbsCommand& c, uint64_t handle_field);
  // The command moves the pinned range of `tracked`, the object under `handle` now (c.rereg;
  // null: none is tracked there); the second form looks it up from a request's handle field.
  void Reregisters(UverbsCommand& c, uint32_t handle, const TrackedObject* tracked);
  void Reregisters(UverbsCommand& c, uint64_t handle_field);
  // A REREG_MR (`core`, its legacy request): with a new range (TRANS), the MR's charge moves
  // to that range; with new access flags alone, the MR keeps its range and charge, and only
  // whether it is ODP to a later rereg (c.on_demand) changes. PD alone: nothing to track.
  void ReregistersMr(UverbsCommand& c, std::span<const std::byte> core);
  // What a REG_MR / REREG_MR with a new range (`core`, its legacy request) pins, into
  // c.pinned: the whole pages of its range, or nothing for an on-demand-paging MR
  // (ib_umem_odp_get pins no page), which c.on_demand records.
  void RegistrationPins(UverbsCommand& c, uint32_t command, std::span<const std::byte> core) const;
  // A destroy or rereg of a tracked object is in flight from Reserve to Settle / Abandon;
  // a second one of the same object is EBUSY meanwhile.
  Result<void> MarkBusy(UverbsCommand& c);
  void EndBusy(UverbsCommand& c);
  Result<void> ReserveQuota(UverbsCommand& c);
  // Gives back what Reserve took for a command that failed or will not run (Settle's failure,
  // Abandon, Forsake).
  void GiveBack(UverbsCommand& c);
  // An object destroyed (or replaced under its handle): the quotas get back what it held, and
  // its mmap entry is no longer mappable.
  void Forget(const TrackedObject& gone);
  // One holder less of doorbell page `page`; the last gives its charge back, as
  // mlx5_ib_db_unmap_user unpins the page when its last doorbell goes.
  void DropDoorbell(uint64_t page);
  void Refuse(const Error& error, int refusal);
  // `refusal` of what command `c` carries, or the kernel's answer when the device does not
  // implement the command's method (device_methods.h); `missing` says which.
  Error AsTheKernelAnswers(Error refusal, const UverbsCommand& c, bool& missing);
  // The same for a write() the decoder refused, by its header's command word.
  Error WhenUndecodable(Error refusal, UverbsCommand& c);

  Engine& engine_;
  uint64_t id_;
  std::string label_;
  abi::DeviceAbi device_;
  DeviceMethods methods_{device_.driver_id};
  HostDevice* probe_ = nullptr;  // for the command being begun (BeginIoctl / BeginWrite)
  ObjectTable objects_;
  // Objects the kernel created whose handles could not be read back (Settle): counted against
  // the quotas until the file closes.
  std::vector<TrackedObject> unread_objects_;
  MmapRules mmaps_;
  // Doorbell pages the driver holds pinned for this file's context, and how many queues (and
  // begun creations) hold each: mlx5_ib_db_map_user pins a page for its first doorbell only.
  std::map<uint64_t, uint32_t> doorbell_pages_;
  // Objects (by serial) with a destroy, REREG_MR or RESIZE_CQ between Reserve and Settle: a
  // traced program's threads may begin two at once, and the proxy, which settles them in the
  // order their exit stops come, cannot tell in which order the kernel ran them.
  std::set<uint64_t> busy_objects_;
  bool has_context_ = false;
  bool closed_ = false;

  // Sentry mode: one command reused by every call (under the lock); its image is what the
  // kernel reads.
  std::mutex mutex_;
  UverbsCommand command_;
};

}  // namespace rxp::proxy
