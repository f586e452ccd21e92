#include "tools/harness/fd_table.h"

namespace rxp::harness {

const char* CloseReasonName(CloseReason reason) {
  switch (reason) {
    case CloseReason::kClosed: return "closed";
    case CloseReason::kExec: return "close-on-exec";
    case CloseReason::kExit: return "process exit";
    case CloseReason::kHarnessExit: return "harness exit";
  }
  return "?";
}

OpenFile::~OpenFile() { handler_->OnClose(close_reason_); }

FdTable::~FdTable() {
  for (auto& [fd, file] : files_) file->set_close_reason(teardown_reason_);
}

std::shared_ptr<FdTable> FdTable::Clone() const {
  auto copy = std::make_shared<FdTable>();
  copy->files_ = files_;
  return copy;
}

std::shared_ptr<OpenFile> FdTable::Find(int fd) const {
  auto it = files_.find(fd);
  return it == files_.end() ? nullptr : it->second;
}

void FdTable::Insert(int fd, std::shared_ptr<OpenFile> file) {
  auto& slot = files_[fd];
  if (slot) slot->set_close_reason(CloseReason::kClosed);
  slot = std::move(file);
}

bool FdTable::Erase(int fd, CloseReason reason) {
  auto it = files_.find(fd);
  if (it == files_.end()) return false;
  it->second->set_close_reason(reason);
  files_.erase(it);
  return true;
}

void FdTable::EraseIf(const std::function<bool(int)>& gone, CloseReason reason) {
  for (auto it = files_.begin(); it != files_.end();) {
    if (gone(it->first)) {
      it->second->set_close_reason(reason);
      it = files_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace rxp::harness
