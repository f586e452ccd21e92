#include "tools/harness/seccomp_filter.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace rxp::harness {
namespace {

struct CtxDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using SeccompCtx = std::unique_ptr<void, CtxDeleter>;

scmp_compare ToScmp(ArgCondition::Op op) {
  // One row per operator; the enum mirrors libseccomp's own set.
  static constexpr struct {
    ArgCondition::Op op;
    scmp_compare scmp;
  } kOps[] = {
      {ArgCondition::Op::kMaskedEq, SCMP_CMP_MASKED_EQ},
      {ArgCondition::Op::kEq,       SCMP_CMP_EQ},
      {ArgCondition::Op::kGe,       SCMP_CMP_GE},
      {ArgCondition::Op::kGt,       SCMP_CMP_GT},
      {ArgCondition::Op::kLe,       SCMP_CMP_LE},
      {ArgCondition::Op::kLt,       SCMP_CMP_LT},
  };
  for (const auto& row : kOps)
    if (row.op == op) return row.scmp;
  return SCMP_CMP_EQ;
}

uint32_t ToScmp(const FilterAction& action) {
  switch (action.kind) {
    case FilterAction::Kind::kAllow: return SCMP_ACT_ALLOW;
    case FilterAction::Kind::kTrace: return SCMP_ACT_TRACE(action.data);
    case FilterAction::Kind::kErrno: return SCMP_ACT_ERRNO(action.data);
  }
  return SCMP_ACT_ALLOW;
}

}  // namespace

Result<BpfProgram> CompileFilter(std::span<const FilterRule> rules) {
  SeccompCtx ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Fail(ENOMEM, "seccomp_init failed");
  // A syscall through another ABI (int 0x80 from a 64-bit process, x32) must not bypass the
  // rules; refusing it with ENOSYS is what a kernel without that ABI does.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
      rc < 0)
    return Fail(-rc, "seccomp_attr_set(ACT_BADARCH): {}", std::strerror(-rc));
  // Every syscall of the tracee runs this program, the untouched ones included: a binary tree
  // over syscall numbers (libseccomp optimization level 2) keeps that cost logarithmic in the
  // number of rules instead of a linear chain of comparisons.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0)
    return Fail(-rc, "seccomp_attr_set(CTL_OPTIMIZE): {}", std::strerror(-rc));

  for (const FilterRule& rule : rules) {
    std::vector<scmp_arg_cmp> cmps;
    cmps.reserve(rule.conditions.size());
    for (const ArgCondition& c : rule.conditions) {
      if (c.arg > 5) return Fail(EINVAL, "seccomp rule for syscall {}: argument {} > 5", rule.nr, c.arg);
      scmp_arg_cmp cmp{};
      cmp.arg = c.arg;
      cmp.op = ToScmp(c.op);
      if (c.op == ArgCondition::Op::kMaskedEq) {
        cmp.datum_a = c.mask;
        cmp.datum_b = c.value;
      } else {
        cmp.datum_a = c.value;
      }
      cmps.push_back(cmp);
    }
    int rc = seccomp_rule_add_array(ctx.get(), ToScmp(rule.action), static_cast<int>(rule.nr),
                                    static_cast<unsigned>(cmps.size()), cmps.data());
    if (rc < 0)
      return Fail(-rc, "seccomp rule for {} ({} conditions): {}", SyscallName(rule.nr),
                  cmps.size(), std::strerror(-rc));
  }

  // seccomp_export_bpf writes to an fd; a memfd avoids a temporary file.
  int fd = memfd_create("rxp-seccomp", MFD_CLOEXEC);
  if (fd < 0) return Fail(errno, "memfd_create: {}", std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  if (int rc = seccomp_export_bpf(ctx.get(), fd); rc < 0)
    return Fail(-rc, "seccomp_export_bpf: {}", std::strerror(-rc));
  off_t bytes = lseek(fd, 0, SEEK_END);
  if (bytes <= 0 || bytes % static_cast<off_t>(sizeof(sock_filter)) != 0)
    return Fail(EIO, "seccomp_export_bpf wrote {} bytes", bytes);
  std::vector<sock_filter> insns(static_cast<size_t>(bytes) / sizeof(sock_filter));
  if (pread(fd, insns.data(), static_cast<size_t>(bytes), 0) != bytes)
    return Fail(EIO, "reading back the BPF program: {}", std::strerror(errno));
  if (insns.size() > BPF_MAXINSNS)
    return Fail(E2BIG, "seccomp program has {} instructions (max {})", insns.size(), BPF_MAXINSNS);
  return BpfProgram(std::move(insns));
}

int InstallFilter(const sock_fprog& prog) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  // SPEC_ALLOW: do not turn on the Speculative Store Bypass mitigation for the tracee just
  // because it has a filter (seccomp(2)); the harness must not change how fast the program
  // computes, and the filter is not a security boundary against the program itself.
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog) != 0)
    return errno;
  return 0;
}

std::string SyscallName(long nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, static_cast<int>(nr));
  if (name == nullptr) return "syscall_" + std::to_string(nr);
  std::string out(name);
  std::free(name);
  return out;
}

}  // namespace rxp::harness
