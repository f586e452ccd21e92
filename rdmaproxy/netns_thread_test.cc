// NetnsThread: jobs run on a thread inside the namespace named, one at a time, and a path that
// is no network namespace is refused when the thread starts.
#include "rdmaproxy/netns_thread.h"

#include <catch2/catch.hpp>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "rdmaproxy/sentry.h"

namespace rxp::proxy {
namespace {

// The identity of the calling thread's network namespace ("net:[4026531992]").
std::string ThreadNetns() {
  char buf[64];
  const ssize_t n = readlink("/proc/thread-self/ns/net", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
}

TEST_CASE("a path that is no network namespace is refused at start", "[netns]") {
  auto missing = NetnsThread::Start("/nonexistent/ns/net");
  REQUIRE(!missing);
  CHECK(missing.error().errnum == ENOENT);
  auto not_ns = NetnsThread::Start("/dev/null");
  REQUIRE(!not_ns);
  CHECK(not_ns.error().errnum == EINVAL);
  auto other_kind = NetnsThread::Start("/proc/self/ns/uts");
  REQUIRE(!other_kind);
  CHECK(other_kind.error().errnum == EINVAL);
}

TEST_CASE("a sentry refuses an rdma_cm namespace it cannot enter", "[netns]") {
  SentryConfig config;
  config.rdma_cm_netns = "proc/self/ns/net";  // relative: refused before any open
  auto relative = Sentry::Create(config);
  REQUIRE(!relative);
  CHECK(relative.error().errnum == EINVAL);
  config.rdma_cm_netns = "/proc/self/ns/uts";
  auto other_kind = Sentry::Create(config);
  REQUIRE(!other_kind);
  CHECK(other_kind.error().errnum == EINVAL);
  config.rdma_cm = false;  // no rdma_cm served: the namespace is never entered
  CHECK(Sentry::Create(config));
}

TEST_CASE("jobs run in the namespace named, one at a time", "[netns]") {
  // A namespace of its own, held by a thread that unshared it (root only: CAP_SYS_ADMIN).
  std::promise<std::string> made;
  std::promise<void> release;
  auto made_path = made.get_future();
  std::thread holder([&] {
    if (unshare(CLONE_NEWNET) != 0) {
      made.set_value("");
      return;
    }
    made.set_value("/proc/self/task/" + std::to_string(gettid()) + "/ns/net");
    release.get_future().wait();
  });
  const std::string path = made_path.get();
  if (path.empty()) {
    holder.join();
    WARN("skipped: cannot create a network namespace here (not root)");
    return;
  }
  char want[64];
  const ssize_t n = readlink(path.c_str(), want, sizeof want);
  REQUIRE(n > 0);
  const std::string target(want, static_cast<size_t>(n));
  REQUIRE(target != ThreadNetns());

  auto netns = NetnsThread::Start(path);
  REQUIRE(netns);
  release.set_value();
  holder.join();  // the thread's fd keeps the namespace alive

  std::string seen;
  (*netns)->Run([&] { seen = ThreadNetns(); });
  CHECK(seen == target);
  CHECK(ThreadNetns() != target);  // the caller stays where it was

  // Callers on several threads take turns: no two jobs overlap.
  std::atomic<int> running{0}, overlaps{0}, done{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        (*netns)->Run([&] {
          if (running.fetch_add(1) != 0) overlaps++;
          if (ThreadNetns() != target) overlaps++;
          running.fetch_sub(1);
          done++;
        });
    });
  for (auto& c : callers) c.join();
  CHECK(done == 200);
  CHECK(overlaps == 0);
}

}  // namespace
}  // namespace rxp::proxy
