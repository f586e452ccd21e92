#include "tools/commands.h"

#include <fmt/format.h>

#include <cstdio>
#include <map>

namespace rxp::tools {
namespace {

std::map<const CLI::App*, std::function<int()>>& Runners() {
  static std::map<const CLI::App*, std::function<int()>> runners;
  return runners;
}

}  // namespace

void RegisterRunner(CLI::App* sub, std::function<int()> run) { Runners()[sub] = std::move(run); }

int RunSelected(CLI::App& app) {
  const CLI::App* node = &app;
  // Descend along the parsed subcommands to the deepest one.
  for (;;) {
    auto subs = node->get_subcommands();
    if (subs.empty()) break;
    node = subs.front();
  }
  auto it = Runners().find(node);
  if (it == Runners().end()) {
    fmt::print(stderr, "rdmaproxy: '{}' needs a subcommand; see --help\n", node->get_name());
    return 2;
  }
  return it->second();
}

}  // namespace rxp::tools
