// Credential changes of a process that holds proxied fds.
//
// The kernel refuses a write() to a uverbs or rdma_cm file from a task whose credentials are
// not the ones the file was opened with (ib_safe_file_access: file->f_cred == current_cred(),
// in ib_uverbs_write and ucma_write). A write the program issues itself meets that check; the
// rxe send doorbells the tracer issues on its own descriptor would not, so the engine refuses
// them for a process whose credentials changed since the open (EngineFactory::
// RefuseForeignWriter), told by a ProcessEvent::kCredentials.
//
// The kernel compares struct cred pointers, which no process can see. The tracer compares what
// the change could have changed instead: the IDs, supplementary groups and capability sets
// /proc/<tid>/status shows and the user namespace. A call that leaves all of those as they
// were (a no-op setuid, or a no-op setresuid on a kernel without commit 659c0ce1cb9e -- 6.3,
// backported to the stable kernels in April 2023 -- both of which commit new credentials;
// keyrings and securebits, which grant nothing) is not counted; docs/threat-model.md says so.
#include <sys/syscall.h>
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

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

}  // namespace

Tracer::ExitFn Tracer::WatchCredentials(const Stop& stop, ExitFn then) {
  return [this, before = CredentialsSnapshot(stop.task.tid), nr = stop.nr,
          then = std::move(then)](ExitStop& exit, long result) {
    const long final_result = then ? then(exit, result) : result;
    // A failed call changed nothing (setfsuid and setfsgid return the old ID either way: the
    // comparison tells).
    if (result < 0 && nr != SYS_setfsuid && nr != SYS_setfsgid) return final_result;
    const Task& task = exit.task();
    const std::optional<std::string> after = CredentialsSnapshot(task.tid);
    if (before && after && *before == *after) return final_result;
    options_.log->Trace("[pid {}] {} changed the credentials of process {}: its writes to files "
                        "opened before are refused, as the kernel refuses them",
                        task.tid, SyscallName(nr), task.tgid);
    if (options_.factory != nullptr)
      options_.factory->OnProcessEvent({ProcessEvent::Kind::kCredentials, task.tgid, 0, false, false});
    return final_result;
  };
}

// set*id, setgroups, capset, setns, prctl(PR_CAPBSET_DROP / PR_CAP_AMBIENT): run as issued,
// compared at the exit.
Tracer::Verdict Tracer::OnCredentials(const Stop& stop) {
  return Verdict::WatchExit(WatchCredentials(stop, nullptr));
}

}  // namespace rxp::harness
