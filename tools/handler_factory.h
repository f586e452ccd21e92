// The seam where `rdmaproxy run` gets the handlers for proxied files.
//
// Today it returns the harness's pass-through handler (counts and traces calls, forwards
// everything). The proxy engine plugs in by returning its own FileHandlerFactory here: an
// adapter in tools/ that wraps rdmaproxy/'s engine, with TraceeAccess::memory() as the
// engine's AppMemory, AdoptFd as its "install a new fd" and the tracee's own syscalls as its
// HostDevice (docs/harness.md, "Plugging in the engine").
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tools/harness/device_map.h"
#include "tools/harness/handler.h"
#include "tools/harness/harness_log.h"

namespace rxp::tools {

struct FactoryContext {
  std::string policy_path;  // --policy FILE, or empty
  std::string policy_text;  // its contents (already read: an unreadable file is a CLI error)
  std::vector<harness::DeviceMapping> devices;  // what the app may use, and under which names
  harness::Log* log = nullptr;                  // errors and --trace lines
};

// The factory for one `rdmaproxy run`; also reports its counters at exit (--stats).
class RunFactory {
 public:
  virtual ~RunFactory() = default;
  virtual harness::FileHandlerFactory& factory() = 0;
  virtual void PrintStats(FILE* out) const = 0;
};

std::unique_ptr<RunFactory> MakeRunFactory(const FactoryContext& context);

}  // namespace rxp::tools
