// Names and numbers as the kernel prints them in sysfs, parsed strictly.
//
// Everything that becomes a path component of the synthesized tree comes through here, so a
// hostile snapshot cannot smuggle "/", ".." or NUL into a path.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "abi/result.h"

namespace rxp::sysfs {

// A PCI function address, printed like the kernel's pci_name(): "%04x:%02x:%02x.%d".
struct Bdf {
  uint16_t domain = 0;
  uint8_t bus = 0;
  uint8_t dev = 0;  // 0..0x1f
  uint8_t fn = 0;   // 0..7

  std::string ToString() const;  // "0000:17:00.1"
  std::string BusId() const;     // "0000:17", the name of the bus in /sys/class/pci_bus
  // The root complex directory that owns bus `bus` of `domain`: "pci0000:17".
  std::string RootName() const;
  auto operator<=>(const Bdf&) const = default;
};

// Strict: exactly "dddd:bb:dd.f" in lower-case hex, as NCCL's checkBDFFormat and the kernel
// expect. Wider (VMD) domains are refused with a reason: NCCL and hwloc (16-bit
// domains) cannot use them either.
Result<Bdf> ParseBdf(std::string_view text);
std::optional<Bdf> TryParseBdf(std::string_view text);  // the same, without a reason
bool IsBdf(std::string_view text);
// A root bus: its bus id "dddd:bb" (Bdf::BusId), or its root complex directory "pcidddd:bb"
// (Bdf::RootName). Function 00.0 of that bus.
std::optional<Bdf> TryParseBusId(std::string_view text);
std::optional<Bdf> TryParseRootName(std::string_view text);

// A device number as in uverbsN/dev: "231:192".
struct DevNum {
  uint32_t major = 0;
  uint32_t minor = 0;
  std::string ToString() const;
  auto operator<=>(const DevNum&) const = default;
};
Result<DevNum> ParseDevNum(std::string_view text);

// One path component: 1..max_len printable ASCII characters, no '/', not "." or "..".
// `what` names the field in the error ("rdma_devices[2].name").
Result<void> CheckComponent(std::string_view what, std::string_view name, size_t max_len = 255);

// Kernel name rules on top of CheckComponent: dev_valid_name() for netdevs (<= 15 characters,
// no ':' or whitespace), IB_DEVICE_NAME_MAX for RDMA devices, "uverbs<N>" for verbs devices.
Result<void> CheckNetdevName(std::string_view what, std::string_view name);
Result<void> CheckIbdevName(std::string_view what, std::string_view name);
Result<void> CheckUverbsName(std::string_view what, std::string_view name);
// The N of "uverbsN".
Result<uint32_t> UverbsIndex(std::string_view name);

// Parses a non-negative decimal number that fits `max`; no sign, no spaces.
Result<uint64_t> ParseDecimal(std::string_view what, std::string_view text, uint64_t max);
// Parses "0x"-prefixed (or bare) hex such as a PCI class "0x020700".
Result<uint64_t> ParseHex(std::string_view what, std::string_view text, uint64_t max);

// The non-empty components of a '/'-separated path ("a//b/" -> {"a", "b"}).
std::vector<std::string_view> PathComponents(std::string_view path);

// `text` quoted for an error message: at most 64 bytes, non-printable bytes as \xNN.
std::string Quote(std::string_view text);

// Natural order ("mlx5_2" < "mlx5_10"), used wherever people read device lists.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace rxp::sysfs
