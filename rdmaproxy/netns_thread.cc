#include "rdmaproxy/netns_thread.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>

#include "abi/unique_fd.h"

namespace rxp::proxy {

Result<std::unique_ptr<NetnsThread>> NetnsThread::Start(const std::string& path) {
  // O_NONBLOCK: a FIFO named by mistake opens at once (and setns refuses it) instead of
  // waiting for a writer.
  UniqueFd ns(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!ns) return Fail(errno, "rdma_cm network namespace {}: {}", path, std::strerror(errno));
  std::unique_ptr<NetnsThread> t(new NetnsThread());
  std::promise<int> entered;
  auto entered_result = entered.get_future();
  t->thread_ = std::thread([self = t.get(), fd = ns.get(), &entered] {
    // setns with CLONE_NEWNET refuses an fd of another kind of namespace (EINVAL).
    entered.set_value(::setns(fd, CLONE_NEWNET) == 0 ? 0 : errno);
    self->Loop();
  });
  if (const int err = entered_result.get(); err != 0) {
    // The thread is already in its loop; stop it before reporting.
    t.reset();
    return Fail(err, "rdma_cm network namespace {}: setns: {}", path, std::strerror(err));
  }
  return t;
}

NetnsThread::~NetnsThread() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NetnsThread::Run(const std::function<void()>& job) {
  std::lock_guard turn(callers_);
  std::unique_lock lock(mutex_);
  job_ = &job;
  done_ = false;
  cv_.notify_all();
  cv_.wait(lock, [this] { return done_; });
  job_ = nullptr;
}

void NetnsThread::Loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || (job_ != nullptr && !done_); });
    if (stop_) return;
    (*job_)();
    done_ = true;
    cv_.notify_all();
  }
}

}  // namespace rxp::proxy
