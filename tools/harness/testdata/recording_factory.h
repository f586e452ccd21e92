// Test double for the engine seam: a FileHandlerFactory that records what the harness tells
// it and answers with scripted decisions.
#pragma once

#include <sys/syscall.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tools/harness/handler.h"

namespace rxp::harness::testing {

struct Recorded {
  std::vector<OpenedPath> opens;
  std::vector<SyscallView> entries;
  std::vector<std::pair<long, long>> exits;  // (nr, result)
  std::vector<CloseReason> closes;
  std::vector<ProcessEvent> events;

  int CountCalls(long nr) const {
    int n = 0;
    for (const auto& e : entries) n += e.nr == nr;
    return n;
  }
};

class RecordingFactory final : public FileHandlerFactory {
 public:
  using EntryScript = std::function<EntryDecision(const SyscallView&, TraceeAccess&)>;
  using ExitScript = std::function<ExitDecision(const SyscallView&, long, TraceeAccess&)>;

  // Decides every entry (default: allow and inspect the exit).
  EntryScript on_entry = [](const SyscallView&, TraceeAccess&) {
    return EntryDecision::AllowAndInspect();
  };
  // Decides every exit (default: keep the result).
  ExitScript on_exit = [](const SyscallView&, long, TraceeAccess&) {
    return ExitDecision::Keep();
  };
  // When set, OnOpen fails with this error.
  std::optional<Error> refuse_open;
  // The handlers' DataSyscallsStop() (false: an event file's, whose copies go in the quiet half).
  bool data_syscalls_stop = true;
  Recorded record;

  Result<std::unique_ptr<ProxiedFileHandler>> OnOpen(const OpenedPath& opened,
                                                     TraceeAccess&) override {
    record.opens.push_back(opened);
    if (refuse_open) return *refuse_open;
    return std::unique_ptr<ProxiedFileHandler>(std::make_unique<Handler>(*this));
  }
  void OnProcessEvent(const ProcessEvent& event) override { record.events.push_back(event); }

 private:
  class Handler final : public ProxiedFileHandler {
   public:
    explicit Handler(RecordingFactory& f) : f_(f) {}
    EntryDecision OnEntry(const SyscallView& call, TraceeAccess& tracee) override {
      f_.record.entries.push_back(call);
      return f_.on_entry(call, tracee);
    }
    ExitDecision OnExit(const SyscallView& call, long result, TraceeAccess& tracee) override {
      f_.record.exits.emplace_back(call.nr, result);
      return f_.on_exit(call, result, tracee);
    }
    void OnClose(CloseReason reason) override { f_.record.closes.push_back(reason); }
    bool DataSyscallsStop() const override { return f_.data_syscalls_stop; }

   private:
    RecordingFactory& f_;
  };
};

}  // namespace rxp::harness::testing
