#include "tools/harness/stop_waiter.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <catch2/catch.hpp>

namespace rxp::harness {
namespace {

using std::chrono::microseconds;

// A child that exits after `delay` (0: at once); its wait status is what Wait reports.
pid_t ChildExitingAfter(microseconds delay, int code) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (delay.count() > 0) usleep(static_cast<useconds_t>(delay.count()));
    _exit(code);
  }
  return pid;
}

TEST_CASE("StopWaiter with no poll window is a plain waitpid", "[stop_waiter]") {
  StopWaiter waiter(microseconds(0));
  CHECK_FALSE(waiter.polling());
  const pid_t child = ChildExitingAfter(microseconds(0), 7);
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(waiter.Wait(child, &status) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
  CHECK(waiter.stats().caught == 0);
  CHECK(waiter.stats().slept == 0);
}

TEST_CASE("StopWaiter reports waitpid's errors, not a poll timeout", "[stop_waiter]") {
  StopWaiter waiter(microseconds(1000));
  int status = 0;
  errno = 0;
  CHECK(waiter.Wait(-1, &status) == -1);  // this test process has no child left
  CHECK(errno == ECHILD);
}

TEST_CASE("StopWaiter catches a quick stop while polling and backs off on slow ones", "[stop_waiter]") {
  StopWaiter waiter(microseconds(1'000'000));  // a second: a child that exits at once is caught
  if (!waiter.polling()) {
    WARN("this process may run on one CPU only: StopWaiter never polls there; nothing to check");
    CHECK_FALSE(MayUseSeveralCpus());
    return;
  }
  int status = 0;
  pid_t child = ChildExitingAfter(microseconds(0), 3);
  REQUIRE(waiter.Wait(child, &status) == child);
  CHECK(WEXITSTATUS(status) == 3);
  CHECK(waiter.stats().caught == 1);
  CHECK(waiter.stats().slept == 0);
  CHECK(waiter.window() == std::chrono::seconds(1));

  // A program busy elsewhere for far longer than the window: the waiter sleeps, and halves
  // the window for the next wait.
  StopWaiter short_poll(microseconds(1000));
  REQUIRE(short_poll.polling());
  child = ChildExitingAfter(microseconds(200'000), 4);
  REQUIRE(short_poll.Wait(child, &status) == child);
  CHECK(WEXITSTATUS(status) == 4);
  CHECK(short_poll.stats().slept == 1);
  CHECK(short_poll.window() == microseconds(500));
  for (int i = 0; i < 8; ++i) {
    child = ChildExitingAfter(microseconds(200'000), 0);
    REQUIRE(short_poll.Wait(child, &status) == child);
  }
  CHECK(short_poll.window() == std::chrono::nanoseconds(62'500));  // the floor: limit/16
}

TEST_CASE("StopWaiter does not poll where it may use one CPU only", "[stop_waiter]") {
  cpu_set_t all;
  REQUIRE(sched_getaffinity(0, sizeof all, &all) == 0);
  size_t first = CPU_SETSIZE;
  for (size_t cpu = 0; cpu < CPU_SETSIZE && first == CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &all)) first = cpu;
  REQUIRE(first < CPU_SETSIZE);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  StopWaiter waiter(microseconds(1000));
  const bool several = MayUseSeveralCpus();
  REQUIRE(sched_setaffinity(0, sizeof all, &all) == 0);
  CHECK_FALSE(several);
  CHECK_FALSE(waiter.polling());
  CHECK(waiter.window() == microseconds(0));
}

}  // namespace
}  // namespace rxp::harness
