// The built-in proxied-file handler `rdmaproxy run` uses until the engine lands: every call
// runs as issued. It counts calls per syscall and, when tracing, prints one line per call
// (with its result) and one per close.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "tools/harness/handler.h"
#include "tools/harness/harness_log.h"

namespace rxp::harness {

class PassthroughFactory final : public FileHandlerFactory {
 public:
  explicit PassthroughFactory(Log& log) : log_(log) {}

  Result<std::unique_ptr<ProxiedFileHandler>> OnOpen(const OpenedPath& opened,
                                                     TraceeAccess& tracee) override;

  // Calls seen, per syscall name ("ioctl", "mmap", ...), over every handler of this factory.
  const std::map<std::string, uint64_t>& calls() const { return calls_; }
  uint64_t opens() const { return opens_; }
  uint64_t closes() const { return closes_; }
  void PrintCounters(FILE* out) const;

 private:
  friend class PassthroughHandler;
  Log& log_;
  std::map<std::string, uint64_t> calls_;
  uint64_t opens_ = 0;
  uint64_t closes_ = 0;
};

}  // namespace rxp::harness
