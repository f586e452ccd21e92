// NetnsThread: one thread of this process that lives in another network namespace, for the
// few host calls whose effect depends on the caller's namespace. rdma_cm is the one here: the
// kernel puts a new rdma_cm id in the network namespace of the task that creates it
// (ucma_create_id -> rdma_create_user_id: current->nsproxy->net_ns) and binds, resolves and
// listens on addresses there for the id's whole life. A sandbox runtime whose sandbox has a
// namespace of its own runs the sandbox's CREATE_IDs on such a thread (SentryConfig::
// rdma_cm_netns); its other threads stay where they are. setns(2) of a network namespace is
// per thread, and allowed in a multi-threaded process.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "abi/result.h"

namespace rxp::proxy {

class NetnsThread {
 public:
  // Opens `path` (a network namespace file: /proc/<pid>/ns/net, /run/netns/<name>) and starts
  // a thread that enters it. The errno of open, or of setns: EINVAL when `path` is not a
  // network namespace, EPERM without CAP_SYS_ADMIN over it.
  static Result<std::unique_ptr<NetnsThread>> Start(const std::string& path);
  ~NetnsThread();
  NetnsThread(const NetnsThread&) = delete;
  NetnsThread& operator=(const NetnsThread&) = delete;

  // Runs `job` on the thread and returns when it is done. Calls from several threads take
  // turns; a job must not block for long (CREATE_ID does not).
  void Run(const std::function<void()>& job);

 private:
  NetnsThread() = default;
  void Loop();

  std::mutex callers_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable cv_;
  const std::function<void()>* job_ = nullptr;  // guarded by mutex_
  bool done_ = false;                           // the job ran
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace rxp::proxy
