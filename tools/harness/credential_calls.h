// The system calls that can give a thread new credentials, one row each, and how the tracer
// tells at a call's exit whether it did.
//
// The kernel refuses a write() to a uverbs or rdma_cm file from a task whose credentials are
// not the ones the file was opened with (ib_safe_file_access: file->f_cred == current_cred(),
// in ib_uverbs_write and ucma_write). That compares struct cred pointers: every commit_creds()
// makes a new one, also when it changes no value. Which calls commit on success, in Linux 6.1
// and 6.12 (kernel/sys.c, kernel/capability.c, security/commoncap.c, security/keys/), checked
// natively in the test bed by the verbs_processes conformance case:
//   * always: setuid, setgid, setreuid, setregid, setgroups, capset, prctl(PR_CAPBSET_DROP,
//     PR_SET_KEEPCAPS, PR_SET_SECUREBITS, PR_CAP_AMBIENT other than IS_SET),
//     keyctl(KEYCTL_SET_REQKEY_KEYRING) other than KEY_REQKEY_DEFL_NO_CHANGE;
//   * keyctl(KEYCTL_JOIN_SESSION_KEYRING) when it returns a serial (> 0): 0 means the named
//     keyring already was the session keyring (join_session_keyring aborts the new creds);
//   * only when a value changes, which /proc/<tid>/status and the user namespace show:
//     setfsuid, setfsgid (__sys_setfsuid), setns and unshare (commit_nsset / unshare_userns
//     commit only for a user namespace);
//   * setresuid, setresgid: only on a change since commit 659c0ce1cb9e (6.3, and backported
//     to the stable kernels), which returns early for a no-op; always before it. The harness
//     asks the running kernel once (ProbeNoOpSetresCommits).
// What is not here: keyrings created on demand (a first add_key/request_key/keyctl naming
// KEY_SPEC_THREAD_KEYRING or KEY_SPEC_PROCESS_KEYRING), keyctl(KEYCTL_SESSION_TO_PARENT),
// which changes the parent's credentials, and an LSM context written to /proc/self/attr:
// docs/threat-model.md lists them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rxp::harness {

enum class CredentialCommit : uint8_t {
  kOnSuccess,      // new credentials whenever the call succeeds (result >= 0)
  kIfPositive,     // new credentials when the call returns > 0
  kIfChanged,      // new credentials only when the IDs, groups, capabilities or user ns changed
  kIfChangedOrNoOpCommits,  // as kIfChanged; on a kernel that commits no-ops, as kOnSuccess
  kNever,          // a query sharing the call (PR_CAP_AMBIENT_IS_SET, ...)
};

struct CredentialCall {
  long nr;
  std::optional<uint32_t> op;       // argument 0 (the prctl option, the keyctl operation)
  std::optional<uint32_t> query;    // argument 1 that makes this op a query: kNever
  CredentialCommit commit;
  const char* mirrors;              // the kernel function that decides
};

// Every row; the device filter stops each (intercept_rules.cc BuildDeviceRules).
std::span<const CredentialCall> CredentialCalls();

// The rule for a call of `nr` with `args`. A call not in the table (unshare, whose stop has a
// tag of its own) is kIfChanged.
CredentialCommit CredentialCommitOf(long nr, const std::array<uint64_t, 6>& args);

// Whether a call that returned `result` gave its thread new credentials. `values_changed`: the
// /proc comparison saw a change; `noop_commits`: this kernel commits a no-op setresuid.
bool CommittedCredentials(CredentialCommit rule, long result, bool values_changed, bool noop_commits);

// Asks the running kernel whether a no-op setresuid(-1, -1, -1) commits new credentials: a
// thread of the caller opens the first of `files` it can (an rdma_cm or uverbs device), writes
// one byte (EINVAL: shorter than a header), makes the call and writes again; EACCES then means
// ib_safe_file_access saw new credentials. Only that thread's credentials change (a raw
// syscall, not glibc's all-thread setxid), and it ends. nullopt when no file could be opened
// or the answers were not the expected ones.
std::optional<bool> ProbeNoOpSetresCommits(const std::vector<std::string>& files);

}  // namespace rxp::harness
