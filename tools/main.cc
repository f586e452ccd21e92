// rdmaproxy: the command-line tool. Each subcommand family lives in its own file and adds
// itself through one Register* function listed in kCommandFamilies below; this file only
// parses, dispatches and turns errors into one clear line (exceptions stop here).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

#include "tools/commands.h"

namespace {

// CLI11 2.1 prints a flag's default value in its help name ("--trace{-}",
// "--no-freeze-threads{false}"): syntax of the option definition, not something to type. The
// help shows the names alone; an option's own text (option_text: "[=FILE]") says the rest.
class HelpFormatter final : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    for (size_t open = name.find('{'); open != std::string::npos; open = name.find('{', open)) {
      const size_t close = name.find('}', open);
      if (close == std::string::npos) break;
      name.erase(open, close - open + 1);
    }
    return name;
  }
  // "--trace[=FILE]": an optional value is written against the name, as it is typed.
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string opts = CLI::Formatter::make_option_opts(opt);
    if (opts.rfind(" [=", 0) == 0) opts.erase(0, 1);
    return opts;
  }
};

// One error line on stderr; never throws (fmt::print does if the write fails: EPIPE).
void PrintError(const char* what) {
  const std::string line = fmt::format("rdmaproxy: {}\n", what);
  (void)std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

// `--trace=` with no file name: CLI11 reads an empty flag value as the flag's default (stderr),
// but an empty value is an error, never the default (docs/user-guide.md): an unset variable in
// `--trace="$TRACE_FILE"` must not send the trace elsewhere. Only before `--`: after it come
// the program's own arguments.
bool HasEmptyTraceFile(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return false;
    if (arg == "--trace=") return true;
  }
  return false;
}

int main(int argc, char** argv) {
  if (HasEmptyTraceFile(argc, argv)) {
    PrintError("--trace=: empty file name (--trace alone traces to stderr)");
    return 2;
  }
  CLI::App app{"rdmaproxy: syscall-level RDMA (uverbs) proxy for sandboxed workloads"};
  app.formatter(std::make_shared<HelpFormatter>());  // subcommands added below inherit it
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
    PrintError(e.what());
    return e.status();
  } catch (const std::exception& e) {
    PrintError(e.what());
    return 1;
  }
}
