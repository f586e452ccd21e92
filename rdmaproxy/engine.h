// The proxy engine: one per sandbox. It owns the policy, the sandbox-wide quota usage, the
// counters and the log / trace sinks, and creates the per-open-file state (UverbsFile for
// /dev/infiniband/uverbsN, CmFile for /dev/infiniband/rdma_cm) through which every command
// passes: copy-in -> decode (abi/) -> policy -> translate in -> forward -> translate out ->
// track -> copy-out. It knows nothing of ptrace: embedders reach it through embedder.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "abi/schema.h"
#include "rdmaproxy/policy.h"
#include "rdmaproxy/sandbox_usage.h"

namespace rxp::proxy {

class UverbsFile;
class CmFile;

// Where log lines (one per denial, with errno and reason) and --trace lines go.
using LineSink = std::function<void(std::string_view line)>;

struct EngineOptions {
  PolicyConfig policy;
  LineSink log;    // denials and errors; default: stderr
  LineSink trace;  // one line per command when set (the abi printer's format)
};

// A syscall result the program never sees: the call was interrupted (by a signal, or by a
// ptrace stop such as the harness's address-space freeze) and the kernel restarts it or turns
// it into EINTR on the way out (include/linux/errno.h: ERESTARTSYS 512 ..
// ERESTART_RESTARTBLOCK 516). Only a tracer at the syscall-exit stop sees it; the restarted
// call is a command of its own.
constexpr bool IsRestartResult(long result) { return result <= -512 && result >= -516; }

// What the engine did, for reports and for tests that must show a command was not forwarded.
struct Counters {
  std::atomic<uint64_t> commands{0};        // every command the app issued on a proxied file
  std::atomic<uint64_t> forwarded{0};       // handed to the kernel
  std::atomic<uint64_t> refused_decode{0};  // malformed: refused by the decoders
  std::atomic<uint64_t> refused_policy{0};  // denied by the policy or a content rule
  std::atomic<uint64_t> refused_quota{0};   // over a sandbox quota
  std::atomic<uint64_t> refused_state{0};   // bad handle, wrong fd, unknown mmap offset
  std::atomic<uint64_t> kernel_errors{0};   // forwarded and failed in the kernel
  std::atomic<uint64_t> mmaps{0};

  // A forwarded command's kernel result: a failure counts as a kernel error; an interrupted
  // command is taken back out (it counts again when it is restarted).
  void Settled(long result) {
    if (IsRestartResult(result)) {
      commands--;
      forwarded--;
    } else if (result < 0) {
      kernel_errors++;
    }
  }

  uint64_t refused() const {
    return refused_decode + refused_policy + refused_quota + refused_state;
  }
};

// Why a command was refused: picks the counter.
enum class Refusal { kDecode, kPolicy, kQuota, kState };

class Engine {
 public:
  explicit Engine(EngineOptions options);
  ~Engine();

  // Per-file state for a uverbs device the app opened. `label` names the file in traces and
  // logs ("uverbs0"); `driver_id` is the device's rdma_driver_id (host_rdma_devices.h).
  std::unique_ptr<UverbsFile> OpenUverbs(std::string label, uint32_t driver_id);
  std::unique_ptr<CmFile> OpenRdmaCm(std::string label);

  const PolicyConfig& policy() const { return options_.policy; }
  SandboxUsage& usage() { return usage_; }
  Counters& counters() { return counters_; }
  bool tracing() const { return static_cast<bool>(options_.trace); }

  // One log line: "rdmaproxy: <file>: <errno name>: <reason>" and the counter for `why`.
  // The error is also kept as this thread's last refusal (the C API's rxp_last_error).
  void Refused(std::string_view file, const Error& error, Refusal why);
  // The same without the log line: for refusals that are an expected part of a library's
  // protocol (rdma-core's INVOKE_WRITE support probe), which would only be noise.
  void RefusedQuietly(std::string_view file, const Error& error, Refusal why);
  // Refused() for a command the file's pipeline never began (a request the file does not
  // take, a write its access mode or writer forbids): it counts as a command first.
  void RefusedCommand(std::string_view file, const Error& error, Refusal why) {
    counters_.commands++;
    Refused(file, error, why);
  }
  // This thread's last refusal since the previous call, and forgets it.
  static std::optional<Error> TakeLastRefusal();
  void Log(std::string_view line);
  void Trace(std::string_view line);

 private:
  EngineOptions options_;
  SandboxUsage usage_;
  Counters counters_;
  std::atomic<uint64_t> next_file_id_{1};
  std::mutex sink_mutex_;
};

}  // namespace rxp::proxy
