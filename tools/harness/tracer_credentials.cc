// Credential changes of a process that holds proxied fds.
//
// The kernel refuses a write() to a uverbs or rdma_cm file from a task whose credentials are
// not the ones the file was opened with (ib_safe_file_access). A write the program issues
// itself meets that check; the rxe send doorbells the tracer issues on its own descriptor would
// not, so the engine refuses them for a process whose credentials changed since the open
// (EngineFactory::RefuseWrite), told by a ProcessEvent::kCredentials.
//
// The kernel compares struct cred pointers, which no process can see: which calls make new
// ones, also for no change, is a table (credential_calls.h). For the calls that commit only on
// a change the tracer compares what they could have changed: the IDs, supplementary groups and
// capability sets /proc/<tid>/status shows and the user namespace.
#include <sys/syscall.h>
#include <sys/types.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "tools/harness/credential_calls.h"
#include "tools/harness/tracer.h"
#include "tools/harness/tracer_internal.h"

namespace rxp::harness {
namespace {

// The lines of /proc/<tid>/status that hold credentials (fs/proc/array.c task_state and
// task_cap), and the thread's user namespace; nullopt when the thread is gone.
std::optional<std::string> CredentialsSnapshot(pid_t tid) {
  const std::string proc = "/proc/" + std::to_string(tid);
  std::ifstream status(proc + "/status");
  if (!status) return std::nullopt;
  static constexpr std::string_view kFields[] = {"Uid:",    "Gid:",    "Groups:", "CapInh:",
                                                 "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"};
  std::string snapshot;
  for (std::string line; std::getline(status, line);)
    for (std::string_view field : kFields)
      if (line.starts_with(field)) snapshot += line + '\n';
  std::error_code error;
  snapshot += std::filesystem::read_symlink(proc + "/ns/user", error).string();
  if (snapshot.empty() || error) return std::nullopt;
  return snapshot;
}

// The files a no-op setresuid probe may open: rdma_cm first (no device context behind it),
// then the uverbs devices, in name order.
std::vector<std::string> CredentialProbeFiles() {
  std::vector<std::string> files{"/dev/infiniband/rdma_cm"};
  std::error_code error;
  std::vector<std::string> verbs;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/infiniband", error))
    if (entry.path().filename().string().starts_with("uverbs")) verbs.push_back(entry.path());
  std::ranges::sort(verbs);
  files.insert(files.end(), verbs.begin(), verbs.end());
  return files;
}

}  // namespace

bool Tracer::NoOpSetresCommits() {
  if (!noop_setres_commits_) {
    const std::optional<bool> probed = ProbeNoOpSetresCommits(CredentialProbeFiles());
    // Without a file to ask, the kernels since 6.3 (and the stable ones) are the likelier.
    noop_setres_commits_ = probed.value_or(false);
    options_.log->Trace("a no-op setresuid {} new credentials on this kernel{}",
                        *noop_setres_commits_ ? "commits" : "does not commit",
                        probed ? "" : " (assumed: no device file to ask)");
  }
  return *noop_setres_commits_;
}

Tracer::ExitFn Tracer::WatchCredentials(const Stop& stop, ExitFn then) {
  return [this, before = CredentialsSnapshot(stop.task.tid), nr = stop.nr,
          rule = CredentialCommitOf(stop.nr, stop.args),
          then = std::move(then)](ExitStop& exit, long result) {
    const long final_result = then ? then(exit, result) : result;
    if (rule == CredentialCommit::kNever) return final_result;
    Task& task = exit.task();
    const std::optional<std::string> after = CredentialsSnapshot(task.tid);
    // A thread that is gone, or whose /proc could not be read, counts as changed.
    const bool changed = !before || !after || *before != *after;
    const bool noop_commits =
        rule == CredentialCommit::kIfChangedOrNoOpCommits && !changed && result >= 0 && NoOpSetresCommits();
    if (!CommittedCredentials(rule, result, changed, noop_commits)) return final_result;
    CommitCredentials(task);
    options_.log->Trace("[pid {}] {} gave the thread new credentials{}: its writes to files "
                        "opened before are refused, as the kernel refuses them",
                        task.tid, SyscallName(nr), changed ? "" : " (no value changed)");
    if (options_.factory != nullptr)
      options_.factory->OnProcessEvent({ProcessEvent::Kind::kCredentials, task.tgid, 0, false, false});
    return final_result;
  };
}

// The calls of credential_calls.h: run as issued, judged at the exit.
Tracer::Verdict Tracer::OnCredentials(const Stop& stop) {
  return Verdict::WatchExit(WatchCredentials(stop, nullptr));
}

}  // namespace rxp::harness
