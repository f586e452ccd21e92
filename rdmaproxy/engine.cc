#include "rdmaproxy/engine.h"

#include <utility>

#include <fmt/format.h>

#include <cstdio>
#include <cstring>

#include "abi/one_line.h"
#include "rdmaproxy/cm_file.h"
#include "rdmaproxy/uverbs_file.h"

namespace rxp::proxy {

const char* FileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kOther: return "non-RDMA";
    case FileKind::kUverbs: return "uverbs";
    case FileKind::kRdmaCm: return "rdma_cm";
    case FileKind::kAsyncEvent: return "async event";
    case FileKind::kCompChannel: return "completion channel";
    case FileKind::kDmaBuf: return "dma-buf";
  }
  return "?";
}

Engine::Engine(EngineOptions options)
    : options_(std::move(options)), usage_(options_.policy.quotas) {}

Engine::~Engine() = default;

std::unique_ptr<UverbsFile> Engine::OpenUverbs(std::string label, uint32_t driver_id) {
  return std::make_unique<UverbsFile>(*this, next_file_id_++, std::move(label),
                                      abi::DeviceAbiFor(driver_id));
}

std::unique_ptr<CmFile> Engine::OpenRdmaCm(std::string label) {
  return std::make_unique<CmFile>(*this, next_file_id_++, std::move(label));
}

namespace {
thread_local std::optional<Error> last_refusal;
}  // namespace

std::optional<Error> Engine::TakeLastRefusal() {
  if (!last_refusal) return std::nullopt;  // the usual case: nothing to move
  return std::exchange(last_refusal, std::nullopt);
}

void Engine::Refused(std::string_view file, const Error& error, Refusal why) {
  RefusedQuietly(file, error, why);
  Log(fmt::format("rdmaproxy: {}: refused with {}", file, error.ToString()));
}

void Engine::RefusedQuietly(std::string_view file, const Error& error, Refusal why) {
  last_refusal = Error{error.errnum, fmt::format("{}: {}", file, error.reason)};
  switch (why) {
    case Refusal::kDecode: counters_.refused_decode++; break;
    case Refusal::kPolicy: counters_.refused_policy++; break;
    case Refusal::kQuota: counters_.refused_quota++; break;
    case Refusal::kState: counters_.refused_state++; break;
  }
}

// Log and Trace lines are one line each, whatever the app named (abi/one_line.h).
void Engine::Log(std::string_view line) {
  if (HasControlBytes(line)) return Log(OneLine(line));
  std::lock_guard lock(sink_mutex_);
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  }
}

void Engine::Trace(std::string_view line) {
  if (HasControlBytes(line)) return Trace(OneLine(line));
  std::lock_guard lock(sink_mutex_);
  if (options_.trace) options_.trace(line);
}

}  // namespace rxp::proxy
