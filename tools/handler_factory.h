// The seam where `rdmaproxy run` gets the handlers for proxied files: the proxy engine
// (tools/engine_handlers.h), configured from --policy and --devices, its denials and --trace
// lines going to the harness log.
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
  bool tracer_issues = true;  // false: --app-issues-all (EngineFactory's tracer_issues)
};

// The factory for one `rdmaproxy run`; also reports its counters at exit (--stats).
class RunFactory {
 public:
  virtual ~RunFactory() = default;
  virtual harness::FileHandlerFactory& factory() = 0;
  virtual void PrintStats(FILE* out) const = 0;
};

// Throws std::runtime_error (the CLI edge) for a policy that does not parse.
std::unique_ptr<RunFactory> MakeRunFactory(const FactoryContext& context);

}  // namespace rxp::tools
