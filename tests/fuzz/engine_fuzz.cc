// libFuzzer target for the engine's command pipeline (rdmaproxy/): BeginIoctl / BeginWrite on
// arbitrary requests, a fake kernel that succeeds and writes outputs, then Complete -- in
// identity mode (the ptrace harness) and with mirrored memory (sentry mode). Byte 0 picks the
// driver (bits 0-1), the mode (bit 2), ioctl vs write (bit 3) and one request or a sequence
// (bit 4). One request: the rest of the input, issued twice (the second sees the first's
// objects). A sequence: up to kMaxSequence records [kind byte (bit 3: write)][u16 length]
// [request], issued in order on one file, so that objects one command creates (the fake kernel
// numbers them 1, 2, 3, ...) are used, destroyed or destroyed twice by later ones.
// Every app address reads a window of the input (wrapping), so pointer attributes and request
// fields reach real bytes. Nothing may crash, hang, leak or read out of bounds (ASan + UBSan),
// and the sandbox's quota usage -- pinned bytes and every object count -- must be back to zero
// when the file closes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <vector>

#include "abi/uapi.h"
#include "rdmaproxy/engine.h"
#include "rdmaproxy/uverbs_file.h"

namespace {

using namespace rxp;
using namespace rxp::proxy;

class InputMemory final : public AppMemory {
 public:
  InputMemory(std::span<const std::byte> input, bool identity)
      : input_(input), request_(input), identity_(identity) {}
  // The bytes at kRequest: the request being issued.
  void SetRequest(std::span<const std::byte> request) { request_ = request; }
  bool IdentityMapped() const override { return identity_; }
  Result<void> Read(uint64_t address, std::span<std::byte> out) override {
    if (out.empty()) return Ok();
    // The request itself sits at kRequest; anything else wraps over the input.
    if (address >= kRequest && address - kRequest + out.size() <= request_.size()) {
      std::memcpy(out.data(), request_.data() + (address - kRequest), out.size());
      return Ok();
    }
    if (address < 0x1000 || input_.empty()) return Fail(EFAULT, "unmapped");
    for (size_t i = 0; i < out.size(); ++i) out[i] = input_[(address + i) % input_.size()];
    return Ok();
  }
  Result<void> Write(uint64_t address, std::span<const std::byte> in) override {
    if (address < 0x1000) return Fail(EFAULT, "unmapped");
    (void)in;
    return Ok();
  }
  Result<uint64_t> HostAddress(uint64_t address, uint64_t length) override {
    if (address < 0x1000 || address + length < address) return Fail(EFAULT, "unmapped");
    return identity_ ? address : address + 0x100000000ull;
  }
  static constexpr uint64_t kRequest = 0x7f0000000000ull;

 private:
  std::span<const std::byte> input_;
  std::span<const std::byte> request_;
  bool identity_;
};

class Fds final : public FdBridge {
 public:
  explicit Fds(uint64_t owner) : owner_(owner) {}
  Result<HostFile> Resolve(int app_fd) override {
    if (app_fd == 5) return HostFile{5, FileKind::kCompChannel, owner_};
    if (app_fd == 6) return HostFile{6, FileKind::kAsyncEvent, owner_};
    if (app_fd >= 0 && app_fd < 64) return HostFile{app_fd, FileKind::kOther, 0};
    return Fail(EBADF, "no fd");
  }
  // The fake kernel hands back whatever fd number the input holds: an app table of 64 Ki
  // numbers, and a full table beyond (the number + 100 must not overflow).
  Result<int> Adopt(int fd, FileKind, uint64_t) override {
    if (fd > 0xffff) return Fail(EMFILE, "app fd table full");
    return fd + 100;
  }

 private:
  uint64_t owner_;
};

// The kernel: success; each ioctl output attribute gets VALID_OUTPUT and its bytes zeroed,
// each new IDR object an id.
long FakeKernelIoctl(std::span<std::byte> image, uint32_t& next_id) {
  if (image.size() < sizeof(abi::IoctlHeader)) return -EINVAL;
  abi::IoctlHeader h;
  std::memcpy(&h, image.data(), sizeof(h));
  for (size_t i = 0; i < h.num_attrs; ++i) {
    const size_t at = sizeof(h) + i * sizeof(ib_uverbs_attr);
    if (at + sizeof(ib_uverbs_attr) > image.size()) break;
    ib_uverbs_attr a;
    std::memcpy(&a, image.data() + at, sizeof(a));
    a.flags |= UVERBS_ATTR_F_VALID_OUTPUT;
    if (a.len == 0) a.data = next_id++;
    std::memcpy(image.data() + at, &a, sizeof(a));
  }
  return 0;
}

// One command through the pipeline: Begin, the fake kernel, Complete.
void Issue(UverbsFile& file, InputMemory& memory, Fds& fds, bool ioctl,
           std::span<const std::byte> request, uint32_t& next_id) {
  memory.SetRequest(request);
  UverbsCommand command;
  auto begun = ioctl ? file.BeginIoctl(memory, fds, InputMemory::kRequest, command)
                     : file.BeginWrite(memory, fds, InputMemory::kRequest, request.size(), command);
  if (!begun) return;
  std::vector<std::byte> image = command.image.Relocated(0x600000000000ull);
  const long result = ioctl ? FakeKernelIoctl(image, next_id)
                            : static_cast<long>(command.write_raw.size());
  (void)file.Complete(command, result, image, 0x600000000000ull, memory, fds);
}

constexpr int kMaxSequence = 8;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static constexpr uint32_t kDrivers[] = {RDMA_DRIVER_UNKNOWN, RDMA_DRIVER_MLX5, RDMA_DRIVER_RXE,
                                          RDMA_DRIVER_RXE};
  const uint32_t driver = kDrivers[data[0] & 3];
  const bool identity = (data[0] & 4) != 0;
  const bool ioctl = (data[0] & 8) == 0;
  const bool sequence = (data[0] & 0x10) != 0;
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data + 1), size - 1);

  PolicyConfig policy;
  policy.quotas.pinned_bytes = 1ull << 30;
  policy.quotas.qps = 4;
  EngineOptions options;
  options.policy = policy;
  options.log = [](std::string_view) {};
  options.trace = [](std::string_view) {};  // the printer runs on every command too
  Engine engine(options);
  {
    auto file = engine.OpenUverbs("uverbs0", driver);
    InputMemory memory(input, identity);
    Fds fds(file->id());
    uint32_t next_id = 1;
    if (!sequence) {
      for (int round = 0; round < 2; ++round) Issue(*file, memory, fds, ioctl, input, next_id);
    } else {
      std::span<const std::byte> rest = input;
      for (int i = 0; i < kMaxSequence && rest.size() >= 3; ++i) {
        const bool record_ioctl = (static_cast<uint8_t>(rest[0]) & 8) == 0;
        const size_t length = std::min<size_t>(
            static_cast<size_t>(rest[1]) | static_cast<size_t>(rest[2]) << 8, rest.size() - 3);
        Issue(*file, memory, fds, record_ioctl, rest.subspan(3, length), next_id);
        rest = rest.subspan(3 + length);
      }
    }
    (void)file->CheckMmap(0x1000, 4096, 3);
    (void)file->Mapped(0x1000);
    (void)file->Mapped(0x2000);  // never checked: EINVAL
    file->Closed();
  }
  if (engine.usage().pinned_bytes() != 0) __builtin_trap();
  // Core object types, then the drivers' (UVERBS_ID_NS_SHIFT: mlx5's start at 0x1000).
  for (const abi::ObjectId base : {abi::ObjectId{0}, abi::ObjectId{0x1000}})
    for (abi::ObjectId type = base; type < base + 64; ++type)
      if (engine.usage().live(type) != 0) __builtin_trap();
  return 0;
}
