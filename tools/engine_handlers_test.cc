// EngineFactory's part of the kernel's ib_safe_file_access rule: ib_uverbs_write and ucma_write
// take writes only from the credentials that opened the file, and a process has its own after
// fork and after exec. The tracer issues some writes on its own descriptor, where the kernel
// would not refuse them, so the factory must (the VM's rxp_verbs_processes shows the end to end:
// a forked child's rxe doorbell is EACCES natively and under the harness).
#include "tools/engine_handlers.h"

#include <sys/syscall.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace rxp::tools {
namespace {

using harness::ProcessEvent;
using harness::SyscallView;

SyscallView Call(pid_t tgid, long nr) {
  SyscallView call;
  call.tid = tgid;
  call.tgid = tgid;
  call.nr = nr;
  call.fd = 770;
  return call;
}

proxy::EngineOptions Quiet(std::vector<std::string>& lines) {
  proxy::EngineOptions options;
  options.log = [&lines](std::string_view line) { lines.emplace_back(line); };
  return options;
}

struct Factory {
  FILE* sink = std::tmpfile();
  harness::Log log{sink};
  std::vector<std::string> lines;  // the engine's log
  EngineFactory factory{Quiet(lines), {}, log};
  ~Factory() { std::fclose(sink); }

  // The errno a call gets at entry from the writer check, 0 when it goes on.
  long Verdict(pid_t tgid, long nr, uint64_t opener) {
    auto refused = factory.RefuseForeignWriter(Call(tgid, nr), opener, "uverbs0");
    return refused ? -refused->result() : 0;
  }
};

TEST_CASE("EngineFactory: writes from a process other than the opener get the kernel's EACCES") {
  Factory f;
  constexpr pid_t kOpener = 100, kChild = 101, kGrandchild = 102;
  f.factory.OnProcessEvent({ProcessEvent::Kind::kExec, kOpener, 0, false, false});
  const uint64_t opener = f.factory.CredentialsOf(kOpener);
  CHECK(f.factory.CredentialsOf(kOpener) == opener);  // stable while nothing happens

  // The opener and its threads (one tgid) write; ioctls are never checked.
  CHECK(f.Verdict(kOpener, SYS_write, opener) == 0);
  CHECK(f.Verdict(kOpener, SYS_writev, opener) == 0);

  // A fork child: new credentials. Its ioctls and mmaps go on; its writes do not.
  f.factory.OnProcessEvent({ProcessEvent::Kind::kFork, kChild, kOpener, false, false});
  CHECK(f.Verdict(kChild, SYS_write, opener) == EACCES);
  CHECK(f.Verdict(kChild, SYS_writev, opener) == EACCES);
  CHECK(f.Verdict(kChild, SYS_ioctl, opener) == 0);
  CHECK(f.Verdict(kChild, SYS_mmap, opener) == 0);
  CHECK(f.factory.engine().counters().refused_state == 2);
  CHECK(f.factory.engine().counters().commands == 2);
  REQUIRE(f.lines.size() == 2);
  CHECK_THAT(f.lines[0], Catch::Contains("EACCES") && Catch::Contains("process 101") &&
                             Catch::Contains("ib_safe_file_access"));

  // A child whose own stop comes before its fork event (tracer.h): refused either way.
  CHECK(f.Verdict(kGrandchild, SYS_write, opener) == EACCES);
  f.factory.OnProcessEvent({ProcessEvent::Kind::kFork, kGrandchild, kChild, false, false});
  CHECK(f.Verdict(kGrandchild, SYS_write, opener) == EACCES);

  // A vfork child shares the memory, not the credentials.
  f.factory.OnProcessEvent({ProcessEvent::Kind::kExit, kChild, 0, false, false});
  f.factory.OnProcessEvent({ProcessEvent::Kind::kFork, kChild, kOpener, false, true});
  CHECK(f.Verdict(kChild, SYS_write, opener) == EACCES);

  // The opener running a new program (an fd without O_CLOEXEC survives exec): refused.
  f.factory.OnProcessEvent({ProcessEvent::Kind::kExec, kOpener, 0, false, false});
  CHECK(f.Verdict(kOpener, SYS_write, opener) == EACCES);
  CHECK(f.factory.CredentialsOf(kOpener) != opener);
}

TEST_CASE("EngineFactory: writes after the opener changed its credentials get EACCES") {
  Factory f;
  constexpr pid_t kOpener = 300;
  f.factory.OnProcessEvent({ProcessEvent::Kind::kExec, kOpener, 0, false, false});
  const uint64_t before = f.factory.CredentialsOf(kOpener);
  CHECK(f.Verdict(kOpener, SYS_write, before) == 0);
  // setresuid, setgroups, capset, a user namespace (tracer_credentials.cc).
  f.factory.OnProcessEvent({ProcessEvent::Kind::kCredentials, kOpener, 0, false, false});
  const uint64_t after = f.factory.CredentialsOf(kOpener);
  CHECK(after != before);
  CHECK(f.Verdict(kOpener, SYS_write, before) == EACCES);
  CHECK(f.Verdict(kOpener, SYS_writev, before) == EACCES);
  CHECK(f.Verdict(kOpener, SYS_ioctl, before) == 0);  // ioctls are not checked, natively either
  REQUIRE(f.lines.size() == 2);
  CHECK_THAT(f.lines[0], Catch::Contains("changed its credentials"));
  // A file opened with the new credentials takes writes; a second change refuses them too.
  CHECK(f.Verdict(kOpener, SYS_write, after) == 0);
  f.factory.OnProcessEvent({ProcessEvent::Kind::kCredentials, kOpener, 0, false, false});
  CHECK(f.Verdict(kOpener, SYS_write, after) == EACCES);
}

TEST_CASE("EngineFactory: a pid reused after the opener exited is another process") {
  Factory f;
  constexpr pid_t kOpener = 200, kHolder = 201;
  const uint64_t opener = f.factory.CredentialsOf(kOpener);
  f.factory.OnProcessEvent({ProcessEvent::Kind::kFork, kHolder, kOpener, false, false});
  f.factory.OnProcessEvent({ProcessEvent::Kind::kExit, kOpener, 0, false, false});
  // The holder's child gets the opener's old pid: it inherited the file, it did not open it.
  f.factory.OnProcessEvent({ProcessEvent::Kind::kFork, kOpener, kHolder, false, false});
  CHECK(f.Verdict(kOpener, SYS_write, opener) == EACCES);
  // Even when its first stop comes before its fork event.
  Factory g;
  const uint64_t first = g.factory.CredentialsOf(kOpener);
  g.factory.OnProcessEvent({ProcessEvent::Kind::kExit, kOpener, 0, false, false});
  CHECK(g.Verdict(kOpener, SYS_write, first) == EACCES);
}

}  // namespace
}  // namespace rxp::tools
