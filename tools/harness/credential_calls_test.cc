#include "tools/harness/credential_calls.h"

#include <linux/keyctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>

namespace rxp::harness {
namespace {

std::array<uint64_t, 6> Args(uint64_t a0 = 0, uint64_t a1 = 0) { return {a0, a1, 0, 0, 0, 0}; }

TEST_CASE("which credential calls commit new credentials, by call and operation", "[credentials]") {
  using enum CredentialCommit;
  CHECK(CredentialCommitOf(SYS_setuid, Args(1000)) == kOnSuccess);
  CHECK(CredentialCommitOf(SYS_setgroups, Args()) == kOnSuccess);
  CHECK(CredentialCommitOf(SYS_capset, Args()) == kOnSuccess);
  CHECK(CredentialCommitOf(SYS_setresuid, Args(~0ull, ~0ull)) == kIfChangedOrNoOpCommits);
  CHECK(CredentialCommitOf(SYS_setfsgid, Args()) == kIfChanged);
  CHECK(CredentialCommitOf(SYS_setns, Args()) == kIfChanged);
  CHECK(CredentialCommitOf(SYS_unshare, Args()) == kIfChanged);  // not in the table
  CHECK(CredentialCommitOf(SYS_prctl, Args(PR_SET_KEEPCAPS, 1)) == kOnSuccess);
  CHECK(CredentialCommitOf(SYS_prctl, Args(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)) == kOnSuccess);
  CHECK(CredentialCommitOf(SYS_prctl, Args(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET)) == kNever);
  // The kernel reads the option as int: high bits do not make another option.
  CHECK(CredentialCommitOf(SYS_prctl, Args(0xffffffff00000000ull | PR_SET_SECUREBITS)) == kOnSuccess);
  CHECK(CredentialCommitOf(SYS_keyctl, Args(KEYCTL_JOIN_SESSION_KEYRING)) == kIfPositive);
  CHECK(CredentialCommitOf(SYS_keyctl, Args(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_DEFAULT)) == kOnSuccess);
  CHECK(CredentialCommitOf(SYS_keyctl, Args(KEYCTL_SET_REQKEY_KEYRING,
                                            static_cast<uint32_t>(KEY_REQKEY_DEFL_NO_CHANGE))) == kNever);
  // Every row the filter stops is one the exit judges by its own rule.
  for (const CredentialCall& call : CredentialCalls()) {
    INFO(call.mirrors);
    CHECK(CredentialCommitOf(call.nr, Args(call.op.value_or(0), 12345)) == call.commit);
  }
}

TEST_CASE("a credential call's result and the /proc comparison decide whether it committed", "[credentials]") {
  using enum CredentialCommit;
  CHECK(CommittedCredentials(kOnSuccess, 0, false, false));  // a no-op setuid
  CHECK_FALSE(CommittedCredentials(kOnSuccess, -1, false, false));  // EPERM
  CHECK(CommittedCredentials(kOnSuccess, 2, false, false));  // SET_REQKEY returns the old setting
  CHECK(CommittedCredentials(kIfPositive, 812345678, false, false));  // a new session keyring
  CHECK_FALSE(CommittedCredentials(kIfPositive, 0, false, false));  // already the session keyring
  CHECK(CommittedCredentials(kIfChanged, 1000, true, false));  // setfsuid returns the old ID
  CHECK_FALSE(CommittedCredentials(kIfChanged, 1000, false, true));
  CHECK_FALSE(CommittedCredentials(kIfChangedOrNoOpCommits, 0, false, false));  // since 6.3
  CHECK(CommittedCredentials(kIfChangedOrNoOpCommits, 0, false, true));  // before it
  CHECK_FALSE(CommittedCredentials(kIfChangedOrNoOpCommits, -1, false, true));
  CHECK(CommittedCredentials(kIfChangedOrNoOpCommits, 0, true, false));
  CHECK_FALSE(CommittedCredentials(kNever, 0, true, true));
}

TEST_CASE("the no-op setresuid probe answers only from a file that checks its writer", "[credentials]") {
  CHECK_FALSE(ProbeNoOpSetresCommits({}));
  CHECK_FALSE(ProbeNoOpSetresCommits({"/nonexistent/rdma_cm"}));
  // /dev/null takes the byte: no ib_safe_file_access behind it, so no answer.
  CHECK_FALSE(ProbeNoOpSetresCommits({"/nonexistent/rdma_cm", "/dev/null"}));
}

}  // namespace
}  // namespace rxp::harness
