// Where the harness writes: one-line errors (a denied call, an unusable path) and, with
// --trace, one line per intercepted call.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "abi/one_line.h"

namespace rxp::harness {

class Log {
 public:
  // `errors` gets every error line (stderr by default); `trace` every trace line (none when
  // null). When both are set and differ, errors are copied to the trace too, so a trace file
  // shows why a call failed.
  explicit Log(FILE* errors = stderr, FILE* trace = nullptr) : errors_(errors), trace_(trace) {}

  bool tracing() const { return trace_ != nullptr; }
  // The trace from here on (`rdmaproxy run` starts its --trace file once the set-up passed).
  void SetTrace(FILE* trace) { trace_ = trace; }

  template <typename... Args>
  void Error(fmt::format_string<Args...> format, Args&&... args) {
    Write(errors_, fmt::format(format, std::forward<Args>(args)...));
    if (trace_ != nullptr && trace_ != errors_)
      Write(trace_, fmt::format(format, std::forward<Args>(args)...));
  }

  template <typename... Args>
  void Trace(fmt::format_string<Args...> format, Args&&... args) {
    if (trace_ != nullptr) Write(trace_, fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  // One line, whatever the program named (a path it opened): abi/one_line.h.
  // Never throws (fmt::print does when the write fails): a log whose reader went away (a pipe
  // closed, EPIPE) must not end the run, nor the program with it.
  static void Write(FILE* out, const std::string& line) {
    if (out == nullptr) return;
    const std::string text =
        fmt::format("rdmaproxy: {}\n", HasControlBytes(line) ? OneLine(line) : line);
    (void)std::fwrite(text.data(), 1, text.size(), out);
  }
  FILE* errors_;
  FILE* trace_;
};

}  // namespace rxp::harness
