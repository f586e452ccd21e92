#include "tools/handler_factory.h"

#include <stdexcept>

#include "rdmaproxy/policy.h"
#include "tools/commands.h"
#include "tools/engine_handlers.h"

namespace rxp::tools {
namespace {

// The engine's lines carry their own "rdmaproxy: " prefix; the harness log adds one.
std::string_view Unprefixed(std::string_view line) {
  constexpr std::string_view kPrefix = "rdmaproxy: ";
  if (line.starts_with(kPrefix)) line.remove_prefix(kPrefix.size());
  return line;
}

class EngineRunFactory final : public RunFactory {
 public:
  EngineRunFactory(proxy::EngineOptions options, const FactoryContext& context)
      : factory_(std::move(options), context.devices, *context.log, context.tracer_issues) {}
  harness::FileHandlerFactory& factory() override { return factory_; }
  void PrintStats(FILE* out) const override {
    fmt::print(out, "rdmaproxy: {}\n", factory_.CountersLine());
  }

 private:
  EngineFactory factory_;
};

}  // namespace

std::unique_ptr<RunFactory> MakeRunFactory(const FactoryContext& context) {
  proxy::PolicyConfig policy;
  if (!context.policy_path.empty()) {  // an empty file is an error too, not the default
    auto parsed = proxy::PolicyConfig::FromJson(context.policy_text);
    if (!parsed)  // the CLI edge: main() prints it as one line and exits 2
      throw CommandError(kRunSetupFailed,
                         fmt::format("--policy {}: {}", context.policy_path,
                                     parsed.error().ToString()));
    policy = std::move(*parsed);
  }
  harness::Log* log = context.log;
  proxy::EngineOptions options;
  options.policy = std::move(policy);
  options.log = [log](std::string_view line) { log->Error("{}", Unprefixed(line)); };
  if (log->tracing())
    options.trace = [log](std::string_view line) { log->Trace("{}", line); };
  return std::make_unique<EngineRunFactory>(std::move(options), context);
}

}  // namespace rxp::tools
