// libFuzzer targets for the ABI decoders and the trace printer. One source, three targets:
// RXP_FUZZ_IOCTL, RXP_FUZZ_WRITE, RXP_FUZZ_UCMA. The first input byte picks the device's driver
// (generic, mlx5, rxe) so driver namespaces and payloads are reached; the rest is the request.
// Pointer attributes read their payload from the input itself, so the printer's field walkers
// see arbitrary bytes too. Nothing may crash, hang or read out of bounds (ASan + UBSan).
#include <cstddef>
#include <cstdint>
#include <span>

#include "abi/ioctl_decoder.h"
#include "abi/trace_printer.h"
#include "abi/ucma_decoder.h"
#include "abi/write_decoder.h"

namespace {

// Every read returns a window of the fuzz input (wrapping), as if the app had put it there.
class InputPayloads final : public rxp::abi::PayloadSource {
 public:
  explicit InputPayloads(std::span<const std::byte> input) : input_(input) {}
  std::optional<std::span<const std::byte>> Read(uint64_t address, size_t length) const override {
    if (input_.empty() || length > input_.size()) return std::nullopt;
    const size_t at = static_cast<size_t>(address % (input_.size() - length + 1));
    return input_.subspan(at, length);
  }

 private:
  std::span<const std::byte> input_;
};

rxp::abi::DeviceAbi DeviceFor(uint8_t selector) {
  static constexpr uint32_t kDrivers[] = {RDMA_DRIVER_UNKNOWN, RDMA_DRIVER_MLX5, RDMA_DRIVER_RXE};
  return rxp::abi::DeviceAbiFor(kDrivers[selector % 3]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const auto device = DeviceFor(data[0]);
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  const InputPayloads payloads(input);
  rxp::abi::CallOutcome outcome;
  outcome.out = &payloads;
#if defined(RXP_FUZZ_IOCTL)
  rxp::abi::IoctlRequest request;
  if (rxp::abi::DecodeIoctl(input, device, request).ok()) {
    outcome.attrs_after = input.size() > sizeof(rxp::abi::IoctlHeader)
                              ? input.subspan(sizeof(rxp::abi::IoctlHeader))
                              : std::span<const std::byte>();
    (void)rxp::abi::FormatIoctl("uverbs0", request, device, payloads, &outcome);
  }
#elif defined(RXP_FUZZ_WRITE)
  if (auto request = rxp::abi::DecodeWrite(input, device); request.ok())
    (void)rxp::abi::FormatWrite("uverbs0", *request, device, &outcome);
#elif defined(RXP_FUZZ_UCMA)
  if (auto request = rxp::abi::DecodeUcmaWrite(input); request.ok())
    (void)rxp::abi::FormatUcma("rdma_cm", *request, &outcome);
#else
#error "define one of RXP_FUZZ_IOCTL, RXP_FUZZ_WRITE, RXP_FUZZ_UCMA"
#endif
  return 0;
}
