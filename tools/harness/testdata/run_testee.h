// Test helper: runs the testee (testdata/testee.cc) under the harness in this process and
// collects what it printed, its wait status and the tracer's counters.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tools/harness/harness.h"

namespace rxp::harness::testing {

struct TesteeRun {
  int status = -1;
  TracerStats stats;
  std::string out;                             // stdout
  std::map<std::string, std::string> values;   // its key=value lines (last wins)
  std::vector<std::string> keys_in_order;
  std::string errors;                          // the harness's error lines

  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
  int term_signal() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
  std::string operator[](const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? "<missing " + key + ">" : it->second;
  }
  long Number(const std::string& key) const { return std::stol((*this)[key]); }
};

// The number of fds this process has open (the leak check).
inline int OpenFdCount() {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    (void)entry;
    ++n;
  }
  return n;
}

// Runs `args` (after the testee path) under a harness with `options` (argv is filled here).
inline TesteeRun RunTestee(std::vector<std::string> args, HarnessOptions options = {}) {
  TesteeRun run;
  options.argv = {RXP_TESTEE};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  // The tracee inherits our stdout: point it at a temp file for the run.
  FILE* out = std::tmpfile();
  FILE* errs = std::tmpfile();
  std::fflush(stdout);
  const int saved = fcntl(1, F_DUPFD_CLOEXEC, 3);
  dup2(fileno(out), 1);
  Log log(errs, nullptr);
  if (options.log == nullptr) options.log = &log;
  auto result = RunHarness(options);
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  if (result.ok()) {
    run.status = result->wait_status;
    run.stats = result->stats;
  } else {
    run.errors = result.error().ToString() + "\n";
  }
  auto slurp = [](FILE* f) {
    std::string text;
    std::rewind(f);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
    return text;
  };
  run.out = slurp(out);
  run.errors += slurp(errs);
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    run.values[line.substr(0, eq)] = line.substr(eq + 1);
    run.keys_in_order.push_back(line.substr(0, eq));
  }
  return run;
}

}  // namespace rxp::harness::testing
