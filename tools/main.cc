// rdmaproxy: the command-line tool. Each subcommand family lives in its own file and adds
// itself through one Register* function listed in kCommandFamilies below; this file only
// parses, dispatches and turns errors into one clear line (exceptions stop here).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"rdmaproxy: syscall-level RDMA (uverbs) proxy for sandboxed workloads"};
  app.require_subcommand(1);
  app.set_version_flag("--version", RDMAPROXY_VERSION);
  for (const auto& family : rxp::tools::kCommandFamilies) family.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help). A usage error exits 2, like a run that cannot
    // start: CLI11's own codes (105-109) could be taken for the program's exit status.
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return rxp::tools::RunSelected(app);
  } catch (const rxp::tools::CommandError& e) {
    fmt::print(stderr, "rdmaproxy: {}\n", e.what());
    return e.status();
  } catch (const std::exception& e) {
    fmt::print(stderr, "rdmaproxy: {}\n", e.what());
    return 1;
  }
}
