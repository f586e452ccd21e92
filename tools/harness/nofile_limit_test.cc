#include "tools/harness/nofile_limit.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>

namespace rxp::harness {
namespace {

const FdRange kRange = *FdRange::Make(768, 256);

TEST_CASE("a hard RLIMIT_NOFILE below the reserved range is kept at its end, the soft as asked") {
  CHECK_FALSE(HardLimitKeepingRange({200, 1024}, kRange));  // only the soft limit: as asked
  CHECK_FALSE(HardLimitKeepingRange({200, 4096}, kRange));
  CHECK_FALSE(HardLimitKeepingRange({RLIM_INFINITY, RLIM_INFINITY}, kRange));
  CHECK_FALSE(HardLimitKeepingRange({300, 200}, kRange));  // soft > hard: the kernel's EINVAL
  auto kept = HardLimitKeepingRange({200, 256}, kRange);  // `ulimit -n 256` sets both
  REQUIRE(kept);
  CHECK(kept->rlim_cur == 200);
  CHECK(kept->rlim_max == 1024);
  kept = HardLimitKeepingRange({0, 0}, kRange);
  REQUIRE(kept);
  CHECK(kept->rlim_cur == 0);
  CHECK(kept->rlim_max == 1024);
}

// A child of this test that waits to be killed, with its own RLIMIT_NOFILE. The constructor
// returns once the child has set it: a child scheduled late (under ASan, on a loaded machine)
// that set it after the test's NofileRaise would put the soft limit back down under the test.
struct Child {
  explicit Child(rlimit limit) {
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    pid = fork();
    if (pid == 0) {
      close(ready[0]);
      setrlimit(RLIMIT_NOFILE, &limit);
      (void)!write(ready[1], "1", 1);
      pause();
      _exit(0);
    }
    close(ready[1]);
    char byte = 0;
    while (read(ready[0], &byte, 1) < 0 && errno == EINTR) {
    }
    close(ready[0]);
  }
  ~Child() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  rlimit Limit() const {
    rlimit now{};
    (void)prlimit(pid, RLIMIT_NOFILE, nullptr, &now);
    return now;
  }
  pid_t pid = -1;
};

TEST_CASE("NofileRaise lifts a process's soft RLIMIT_NOFILE for its lifetime only") {
  rlimit mine{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &mine) == 0);
  if (mine.rlim_max < 1024) {
    WARN("not run: this process's hard RLIMIT_NOFILE is below 1024");
    return;
  }
  Child child({100, 1024});
  {
    auto raise = NofileRaise::To(child.pid, 1024);
    REQUIRE(raise.ok());
    CHECK(raise->raised());
    CHECK(child.Limit().rlim_cur == 1024);
    CHECK(child.Limit().rlim_max == 1024);
  }
  CHECK(child.Limit().rlim_cur == 100);  // put back
  CHECK(child.Limit().rlim_max == 1024);

  Child roomy({1024, 1024});
  auto none = NofileRaise::To(roomy.pid, 1024);
  REQUIRE(none.ok());
  CHECK_FALSE(none->raised());

  Child tight({100, 200});  // hard below the range: nothing to do but say so
  auto refused = NofileRaise::To(tight.pid, 1024);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().errnum == EMFILE);
  CHECK_THAT(refused.error().reason, Catch::Contains("hard limit (200)"));
  CHECK(tight.Limit().rlim_cur == 100);
}

}  // namespace
}  // namespace rxp::harness
