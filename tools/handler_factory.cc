#include "tools/handler_factory.h"

#include "tools/harness/passthrough_handler.h"

namespace rxp::tools {
namespace {

// Until the engine lands: every proxied call runs as issued (policy not interpreted yet).
class PassthroughRunFactory final : public RunFactory {
 public:
  explicit PassthroughRunFactory(harness::Log& log) : factory_(log) {}
  harness::FileHandlerFactory& factory() override { return factory_; }
  void PrintStats(FILE* out) const override { factory_.PrintCounters(out); }

 private:
  harness::PassthroughFactory factory_;
};

}  // namespace

std::unique_ptr<RunFactory> MakeRunFactory(const FactoryContext& context) {
  return std::make_unique<PassthroughRunFactory>(*context.log);
}

}  // namespace rxp::tools
