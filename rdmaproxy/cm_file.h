// CmFile: the proxy's state for one open /dev/infiniband/rdma_cm: the rdma_cm ids it created
// (for reports and cleanup accounting) and the pipeline for its write() commands -- the same
// two phases as UverbsFile (Begin at entry, Complete at exit; Write in sentry mode). rdma_cm
// has no ioctl and no mmap; GET_EVENT blocks in the kernel until an event arrives.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "abi/result.h"
#include "abi/ucma_decoder.h"
#include "rdmaproxy/command.h"
#include "rdmaproxy/embedder.h"

namespace rxp::proxy {

class Engine;

class CmCommand {
 public:
  uint64_t app_buffer = 0;
  uint64_t app_length = 0;
  bool identity = true;
  std::vector<std::byte> raw;
  abi::UcmaRequest request;
  ForwardImage image;
  std::vector<OutputCopy> outputs;
  std::vector<Produced> produced;
  Place response;                 // where the response lands
  // Sentry mode: the app's `out` bytes as they were before the command (zeros where they could
  // not be read), and how many of them the kernel's handler writes whatever they hold
  // (ResponseBytesWritten). The rest of `out` goes back only where the kernel changed it.
  std::vector<std::byte> response_before;
  size_t response_written = 0;
  std::string trace_request;
  // Sentry mode, GET_EVENT: the app's response buffer cannot take an event. Whether the app
  // gets this EFAULT, EAGAIN or a wait depends on the queue (CmFile::Write).
  std::optional<Error> unwritable_event;
};

class CmFile {
 public:
  CmFile(Engine& engine, uint64_t id, std::string label);
  CmFile(const CmFile&) = delete;
  CmFile& operator=(const CmFile&) = delete;

  uint64_t id() const { return id_; }
  const std::string& label() const { return label_; }

  Result<std::unique_ptr<CmCommand>> BeginWrite(AppMemory& memory, FdBridge& fds,
                                                uint64_t buffer, uint64_t length);
  long Complete(CmCommand& command, long result, std::span<std::byte> image_after,
                AppMemory& memory);
  long Write(AppMemory& memory, FdBridge& fds, HostDevice& host, uint64_t buffer,
             uint64_t length);
  // A begun command that will not run after all (the embedder could not place it).
  void Abandon(const Error& why);

  size_t live_ids() const {
    std::lock_guard lock(ids_mutex_);
    return ids_.size();
  }

 private:
  long AnswerUnwritableEvent(CmCommand& command, HostDevice& host);

  Engine& engine_;
  uint64_t id_;
  std::string label_;
  // Commands of one file may complete concurrently in sentry mode (GET_EVENT blocks in one
  // thread while another creates ids).
  mutable std::mutex ids_mutex_;
  std::set<uint32_t> ids_;
};

}  // namespace rxp::proxy
