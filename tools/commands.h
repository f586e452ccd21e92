// The CLI's subcommand families. A family adds its subcommands to the app and records, for each,
// the function to run when it is selected (RegisterRunner). Add a family: write
// tools/<family>_commands.cc with an Add<Family>Commands(CLI::App&) and list it here.
#pragma once

#include <CLI/CLI.hpp>

#include <array>
#include <functional>
#include <stdexcept>
#include <string>

namespace rxp::tools {

// An error that ends a command with a given exit status; main() prints it as one line
// ("rdmaproxy: <message>"). Other exceptions end it with status 1.
class CommandError : public std::runtime_error {
 public:
  CommandError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// `rdmaproxy run`'s status when it fails before the program starts (an unreadable policy or
// snapshot, an unknown device, ...), distinct from CLI11's usage errors.
inline constexpr int kRunSetupFailed = 2;

// Runs when `sub` was selected on the command line; returns the process exit status.
void RegisterRunner(CLI::App* sub, std::function<int()> run);

// Runs the runner of the selected (deepest) subcommand; 2 when none has a runner.
int RunSelected(CLI::App& app);

struct CommandFamily {
  const char* name;
  void (*add)(CLI::App& app);
};

void AddAbiCommands(CLI::App& app);    // abi_commands.cc
void AddRunCommands(CLI::App& app);    // run_command.cc
void AddSysfsCommands(CLI::App& app);  // sysfs_commands.cc

// One line per family, in --help order.
inline constexpr std::array kCommandFamilies = {
    CommandFamily{"run", &AddRunCommands},
    CommandFamily{"abi", &AddAbiCommands},
    CommandFamily{"sysfs", &AddSysfsCommands},
};

}  // namespace rxp::tools
