#include "sysfs/names.h"

#include <fmt/format.h>

#include <cctype>

namespace rxp::sysfs {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Parses exactly `n` lower-case hex digits starting at `pos`.
bool FixedHex(std::string_view s, size_t pos, size_t n, uint32_t* out) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    int d = HexDigit(s[pos + i]);
    if (d < 0) return false;
    v = v * 16 + static_cast<uint32_t>(d);
  }
  *out = v;
  return true;
}

}  // namespace

std::string Quote(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 64)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '\\' || c == '\'')
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  if (text.size() > 64) out += "...";
  return out + "'";
}

std::vector<std::string_view> PathComponents(std::string_view path) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t slash = path.find('/', pos);
    std::string_view c = path.substr(pos, slash == std::string_view::npos ? path.npos : slash - pos);
    if (!c.empty()) out.push_back(c);
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return out;
}

std::string Bdf::ToString() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, fn);
}
std::string Bdf::BusId() const { return fmt::format("{:04x}:{:02x}", domain, bus); }
std::string Bdf::RootName() const { return fmt::format("pci{:04x}:{:02x}", domain, bus); }

std::optional<Bdf> TryParseBdf(std::string_view text) {
  // "dddd:bb:dd.f" is 12 characters.
  if (text.size() != 12 || text[4] != ':' || text[7] != ':' || text[10] != '.') return std::nullopt;
  uint32_t domain = 0, bus = 0, dev = 0, fn = 0;
  if (!FixedHex(text, 0, 4, &domain) || !FixedHex(text, 5, 2, &bus) ||
      !FixedHex(text, 8, 2, &dev) || !FixedHex(text, 11, 1, &fn) || dev > 0x1f || fn > 7)
    return std::nullopt;
  return Bdf{static_cast<uint16_t>(domain), static_cast<uint8_t>(bus),
             static_cast<uint8_t>(dev), static_cast<uint8_t>(fn)};
}

Result<Bdf> ParseBdf(std::string_view text) {
  if (auto bdf = TryParseBdf(text)) return *bdf;
  auto colon = text.find(':');
  if (text.size() > 12 && colon != std::string_view::npos && colon > 4)
    return Fail(EINVAL, "PCI address {} has a domain wider than 16 bits (VMD?); unsupported",
                Quote(text));
  return Fail(EINVAL, "{} is not a PCI address of the form dddd:bb:dd.f (lower-case hex)",
              Quote(text));
}

bool IsBdf(std::string_view text) { return TryParseBdf(text).has_value(); }

std::optional<Bdf> TryParseBusId(std::string_view text) {
  // "dddd:bb" is 7 characters.
  if (text.size() != 7) return std::nullopt;
  return TryParseBdf(std::string(text) + ":00.0");
}

std::optional<Bdf> TryParseRootName(std::string_view text) {
  if (!text.starts_with("pci")) return std::nullopt;
  return TryParseBusId(text.substr(3));
}

std::string DevNum::ToString() const { return fmt::format("{}:{}", major, minor); }

Result<DevNum> ParseDevNum(std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return Fail(EINVAL, "{} is not a device number of the form major:minor", Quote(text));
  // MAJOR/MINOR of the kernel's dev_t: 12 and 20 bits.
  auto major = ParseDecimal("major", text.substr(0, colon), 0xfff);
  if (!major) return std::move(major).error();
  auto minor = ParseDecimal("minor", text.substr(colon + 1), 0xfffff);
  if (!minor) return std::move(minor).error();
  return DevNum{static_cast<uint32_t>(*major), static_cast<uint32_t>(*minor)};
}

Result<void> CheckComponent(std::string_view what, std::string_view name, size_t max_len) {
  if (name.empty()) return Fail(EINVAL, "{}: empty name", what);
  if (name.size() > max_len)
    return Fail(ENAMETOOLONG, "{}: name of {} bytes exceeds {}", what, name.size(), max_len);
  if (name == "." || name == "..") return Fail(EINVAL, "{}: name '{}' is not allowed", what, name);
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == '/' || u <= 0x20 || u >= 0x7f)
      return Fail(EINVAL, "{}: name {} contains '/', a control, space or non-ASCII byte", what,
                  Quote(name));
  }
  return Ok();
}

Result<void> CheckNetdevName(std::string_view what, std::string_view name) {
  // net/core/dev.c dev_valid_name(): < IFNAMSIZ, no '/', ':' or whitespace, not "." / "..".
  RXP_TRY(CheckComponent(what, name, 15));
  if (name.find(':') != std::string_view::npos)
    return Fail(EINVAL, "{}: netdev name '{}' contains ':'", what, name);
  return Ok();
}

Result<void> CheckIbdevName(std::string_view what, std::string_view name) {
  // IB_DEVICE_NAME_MAX is 64 including the NUL.
  return CheckComponent(what, name, 63);
}

Result<uint32_t> UverbsIndex(std::string_view name) {
  constexpr std::string_view kPrefix = "uverbs";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size())
    return Fail(EINVAL, "{} is not a uverbs device name (uverbs<N>)", Quote(name));
  auto n = ParseDecimal("uverbs index", name.substr(kPrefix.size()), 0xfffff);
  if (!n) return std::move(n).error();
  return static_cast<uint32_t>(*n);
}

Result<void> CheckUverbsName(std::string_view what, std::string_view name) {
  RXP_TRY(CheckComponent(what, name, 32));
  auto n = UverbsIndex(name);
  if (!n) return Fail(EINVAL, "{}: {}", what, n.error().reason);
  return Ok();
}

Result<uint64_t> ParseDecimal(std::string_view what, std::string_view text, uint64_t max) {
  if (text.empty() || text.size() > 20) return Fail(EINVAL, "{}: {} is not a number", what, Quote(text));
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return Fail(EINVAL, "{}: {} is not a number", what, Quote(text));
    auto d = static_cast<uint64_t>(c - '0');
    if (v > (max - d) / 10) return Fail(ERANGE, "{}: {} exceeds {}", what, Quote(text), max);
    v = v * 10 + d;
  }
  return v;
}

Result<uint64_t> ParseHex(std::string_view what, std::string_view text, uint64_t max) {
  std::string_view digits = text;
  if (digits.starts_with("0x")) digits.remove_prefix(2);
  if (digits.empty() || digits.size() > 16)
    return Fail(EINVAL, "{}: {} is not a hex number", what, Quote(text));
  uint64_t v = 0;
  for (char c : digits) {
    int d = HexDigit(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    if (d < 0) return Fail(EINVAL, "{}: {} is not a hex number", what, Quote(text));
    v = v * 16 + static_cast<uint64_t>(d);
  }
  if (v > max) return Fail(ERANGE, "{}: {} exceeds {:#x}", what, Quote(text), max);
  return v;
}

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      std::string_view na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace rxp::sysfs
