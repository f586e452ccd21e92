// EngineFactory's part of the kernel's ib_safe_file_access rule: ib_uverbs_write and ucma_write
// take writes only from the credentials that opened the file. The tracer keeps which thread has
// which (Tracer::Task::credentials: new for a fork child, after exec and after a commit; shared
// by threads) and issues some writes on its own descriptor, where the kernel would not refuse
// them, so the factory must (the VM's rxp_verbs_processes shows the end to end: a forked
// child's rxe doorbell is EACCES natively and under the harness).
#include "tools/engine_handlers.h"

#include <sys/syscall.h>

#include <fcntl.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace rxp::tools {
namespace {

using harness::SyscallView;

SyscallView Call(pid_t tid, long nr, uint64_t credentials) {
  SyscallView call;
  call.tid = tid;
  call.tgid = tid;
  call.nr = nr;
  call.fd = 770;
  call.credentials = credentials;
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
  long Verdict(uint64_t credentials, long nr, uint64_t opener, int open_flags = O_RDWR) {
    auto refused = factory.RefuseWrite(Call(101, nr, credentials), opener, open_flags, "uverbs0");
    return refused ? -refused->result() : 0;
  }
};

TEST_CASE("EngineFactory: writes from other credentials than the opener's get the kernel's EACCES") {
  Factory f;
  constexpr uint64_t kOpener = 7, kOther = 8;
  // The opener's credentials write; ioctls and mmaps are never checked.
  CHECK(f.Verdict(kOpener, SYS_write, kOpener) == 0);
  CHECK(f.Verdict(kOpener, SYS_writev, kOpener) == 0);
  CHECK(f.Verdict(kOther, SYS_ioctl, kOpener) == 0);
  CHECK(f.Verdict(kOther, SYS_mmap, kOpener) == 0);
  CHECK(f.Verdict(kOther, SYS_read, kOpener) == 0);
  CHECK(f.factory.engine().counters().commands == 0);
  // Any other: a fork child, a new program, new credentials -- refused, counted, logged.
  CHECK(f.Verdict(kOther, SYS_write, kOpener) == EACCES);
  CHECK(f.Verdict(kOther, SYS_writev, kOpener) == EACCES);
  CHECK(f.factory.engine().counters().refused_state == 2);
  CHECK(f.factory.engine().counters().commands == 2);
  REQUIRE(f.lines.size() == 2);
  CHECK_THAT(f.lines[0], Catch::Contains("EACCES") && Catch::Contains("thread 101") &&
                             Catch::Contains("ib_safe_file_access"));
}

// vfs_write() answers EBADF for a file not opened for writing before the file's own write
// (so before ib_safe_file_access); reads are the kernel's to answer.
TEST_CASE("EngineFactory: writes of a file opened without write access get the kernel's EBADF") {
  Factory f;
  constexpr uint64_t kOpener = 7, kOther = 8;
  CHECK(f.Verdict(kOpener, SYS_write, kOpener, O_WRONLY) == 0);
  CHECK(f.Verdict(kOpener, SYS_write, kOpener, O_RDONLY) == EBADF);
  CHECK(f.Verdict(kOpener, SYS_writev, kOpener, O_RDONLY | O_NONBLOCK) == EBADF);
  CHECK(f.Verdict(kOpener, SYS_write, kOpener, O_ACCMODE) == EBADF);  // mode 3: neither
  CHECK(f.Verdict(kOpener, SYS_write, kOpener, O_PATH | O_RDWR) == EBADF);  // O_PATH: neither
  CHECK(f.Verdict(kOther, SYS_write, kOpener, O_RDONLY) == EBADF);    // before EACCES
  CHECK(f.Verdict(kOpener, SYS_ioctl, kOpener, O_RDONLY) == 0);
  CHECK(f.Verdict(kOpener, SYS_read, kOpener, O_WRONLY) == 0);
  CHECK(f.factory.engine().counters().refused_state == 5);
  REQUIRE(f.lines.size() == 5);
  CHECK_THAT(f.lines[0], Catch::Contains("EBADF") && Catch::Contains("without write access"));
}

}  // namespace
}  // namespace rxp::tools
