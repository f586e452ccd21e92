// The harness's model of proxied fds: open file descriptions and the fd tables that name them.
//
// OpenFile mirrors a kernel `struct file` the harness proxies: one handler, shared by every fd
// that refers to it (dup, F_DUPFD, fork inheritance). FdTable mirrors a `files_struct`: the
// reserved-range fds of one or more tasks (threads, and CLONE_FILES siblings, share one; fork
// copies it; exec and unshare(CLONE_FILES) unshare it). Both are refcounted with shared_ptr,
// so the handler's OnClose runs exactly when the last fd naming the description is gone from
// every table — the same moment the kernel would drop its last fd reference (mappings of the
// device can keep the kernel object alive longer; that is the engine's concern).
//
// Only fds in the reserved range are tracked. A table entry exists only for proxied files;
// an unrelated fd that happens to sit in the range is simply absent.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "tools/harness/handler.h"

namespace rxp::harness {

class OpenFile {
 public:
  OpenFile(std::unique_ptr<ProxiedFileHandler> handler, std::string label)
      : handler_(std::move(handler)), label_(std::move(label)) {}
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  // Calls the handler's OnClose with the reason recorded by whoever dropped the last reference.
  ~OpenFile();

  ProxiedFileHandler& handler() { return *handler_; }
  const ProxiedFileHandler& handler() const { return *handler_; }
  const std::string& label() const { return label_; }
  void set_close_reason(CloseReason reason) { close_reason_ = reason; }

 private:
  std::unique_ptr<ProxiedFileHandler> handler_;
  std::string label_;
  CloseReason close_reason_ = CloseReason::kHarnessExit;
};

class FdTable {
 public:
  FdTable() = default;
  FdTable(const FdTable&) = delete;
  FdTable& operator=(const FdTable&) = delete;
  // Entries left at destruction lose their reference with `reason` (set by the owner).
  ~FdTable();

  // A copy for fork / unshare: the same open files, one more reference each.
  std::shared_ptr<FdTable> Clone() const;

  std::shared_ptr<OpenFile> Find(int fd) const;
  // Makes `fd` name `file`; an open file it named before loses a reference (kClosed).
  void Insert(int fd, std::shared_ptr<OpenFile> file);
  // Drops `fd`; true when it was tracked.
  bool Erase(int fd, CloseReason reason);
  // Drops every fd for which `gone(fd)` is true.
  void EraseIf(const std::function<bool(int)>& gone, CloseReason reason);

  size_t size() const { return files_.size(); }
  const std::map<int, std::shared_ptr<OpenFile>>& entries() const { return files_; }
  // The reason applied to entries still present when the table is destroyed.
  void set_teardown_reason(CloseReason reason) { teardown_reason_ = reason; }

 private:
  std::map<int, std::shared_ptr<OpenFile>> files_;
  CloseReason teardown_reason_ = CloseReason::kExit;
};

}  // namespace rxp::harness
