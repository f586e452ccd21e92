#include "tools/harness/credential_calls.h"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

namespace rxp::harness {
namespace {

constexpr uint32_t U32(long v) { return static_cast<uint32_t>(v); }

using enum CredentialCommit;
// clang-format off
constexpr CredentialCall kCredentialCalls[] = {
  // syscall         op (arg 0)                          query (arg 1)                          commit                   mirrors
  {SYS_setuid,     {},                                  {},                                     kOnSuccess,              "__sys_setuid"},
  {SYS_setgid,     {},                                  {},                                     kOnSuccess,              "__sys_setgid"},
  {SYS_setreuid,   {},                                  {},                                     kOnSuccess,              "__sys_setreuid"},
  {SYS_setregid,   {},                                  {},                                     kOnSuccess,              "__sys_setregid"},
  {SYS_setresuid,  {},                                  {},                                     kIfChangedOrNoOpCommits, "__sys_setresuid"},
  {SYS_setresgid,  {},                                  {},                                     kIfChangedOrNoOpCommits, "__sys_setresgid"},
  {SYS_setfsuid,   {},                                  {},                                     kIfChanged,              "__sys_setfsuid"},
  {SYS_setfsgid,   {},                                  {},                                     kIfChanged,              "__sys_setfsgid"},
  {SYS_setgroups,  {},                                  {},                                     kOnSuccess,              "set_current_groups"},
  {SYS_capset,     {},                                  {},                                     kOnSuccess,              "sys_capset"},
  {SYS_setns,      {},                                  {},                                     kIfChanged,              "commit_nsset"},
  {SYS_prctl,      U32(PR_CAPBSET_DROP),                {},                                     kOnSuccess,              "cap_prctl_drop"},
  {SYS_prctl,      U32(PR_CAP_AMBIENT),                 U32(PR_CAP_AMBIENT_IS_SET),             kOnSuccess,              "cap_task_prctl"},
  {SYS_prctl,      U32(PR_SET_KEEPCAPS),                {},                                     kOnSuccess,              "cap_task_prctl"},
  {SYS_prctl,      U32(PR_SET_SECUREBITS),              {},                                     kOnSuccess,              "cap_task_prctl"},
  {SYS_keyctl,     U32(KEYCTL_JOIN_SESSION_KEYRING),    {},                                     kIfPositive,             "join_session_keyring"},
  {SYS_keyctl,     U32(KEYCTL_SET_REQKEY_KEYRING),      U32(KEY_REQKEY_DEFL_NO_CHANGE),         kOnSuccess,              "keyctl_set_reqkey_keyring"},
};
// clang-format on

}  // namespace

std::span<const CredentialCall> CredentialCalls() { return kCredentialCalls; }

CredentialCommit CredentialCommitOf(long nr, const std::array<uint64_t, 6>& args) {
  // The kernel reads the prctl option and the keyctl operation as int: compare the low halves.
  const auto row = std::ranges::find_if(kCredentialCalls, [&](const CredentialCall& c) {
    return c.nr == nr && (!c.op || *c.op == static_cast<uint32_t>(args[0]));
  });
  if (row == std::end(kCredentialCalls)) return kIfChanged;
  if (row->query && *row->query == static_cast<uint32_t>(args[1])) return kNever;
  return row->commit;
}

bool CommittedCredentials(CredentialCommit rule, long result, bool values_changed, bool noop_commits) {
  switch (rule) {
    case kOnSuccess: return result >= 0;
    case kIfPositive: return result > 0;
    // setfsuid and setfsgid return the old ID whether or not they changed it: the comparison
    // alone tells.
    case kIfChanged: return values_changed;
    case kIfChangedOrNoOpCommits: return values_changed || (noop_commits && result >= 0);
    case kNever: return false;
  }
  return values_changed;
}

std::optional<bool> ProbeNoOpSetresCommits(const std::vector<std::string>& files) {
  std::optional<bool> answer;
  std::thread probe([&] {
    for (const std::string& file : files) {
      const int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) continue;
      const char byte = 0;
      const bool short_refused = write(fd, &byte, 1) < 0 && errno == EINVAL;
      // A raw syscall: glibc's setresuid would change every thread of the tracer.
      const bool called = syscall(SYS_setresuid, -1, -1, -1) == 0;
      const long again = write(fd, &byte, 1);
      const int err = errno;
      close(fd);
      if (short_refused && called && again < 0 && (err == EACCES || err == EINVAL))
        answer = err == EACCES;
      return;  // this thread's credentials may be new now: no second file from it
    }
  });
  probe.join();
  return answer;
}

}  // namespace rxp::harness
