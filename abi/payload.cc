#include "abi/payload.h"

#include <fmt/format.h>

#include <cstring>

#include "abi/names.h"
#include "abi/write_decoder.h"

namespace rxp::abi {
namespace {

void Walk(const Layout& layout, size_t base, size_t size,
          const std::function<void(const Field&, size_t)>& visit) {
  for (const auto& f : layout.fields) {
    const size_t at = base + f.offset;
    if (at + f.size > size) continue;
    if (f.kind == FieldKind::kStruct && f.nested != nullptr) {
      Walk(*f.nested, at, size, visit);
      continue;
    }
    visit(f, at);
  }
}

// The rdma UAPI headers pull in <linux/in.h>, which clashes with <netinet/in.h>; addresses
// are formatted here by hand. Address families from <bits/socket.h>.
constexpr uint16_t kAfInet = 2, kAfInet6 = 10, kAfIb = 27;

std::string FormatIpv4(const uint8_t* p) {
  return fmt::format("{}.{}.{}.{}", p[0], p[1], p[2], p[3]);
}

// RFC 5952 text: the longest run (>= 2) of zero groups becomes "::"; IPv4-mapped addresses
// (RoCE v2 GIDs) end in dotted quad.
std::string FormatIpv6(const uint8_t* p) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(p, kMapped, sizeof(kMapped)) == 0) return "::ffff:" + FormatIpv4(p + 12);
  uint16_t g[8];
  for (int i = 0; i < 8; ++i) g[i] = static_cast<uint16_t>(p[2 * i] << 8 | p[2 * i + 1]);
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) { ++i; continue; }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len) { best = i; best_len = j - i; }
    i = j;
  }
  if (best_len < 2) best = -1;
  std::string s;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      s += "::";
      i += best_len - 1;
      continue;
    }
    if (!s.empty() && s.back() != ':') s += ':';
    s += fmt::format("{:x}", g[i]);
  }
  return s;
}

std::string FormatGid(std::span<const std::byte> b) {
  return FormatIpv6(reinterpret_cast<const uint8_t*>(b.data()));
}

// struct sockaddr_in / sockaddr_in6 / sockaddr_ib at the start of a sockaddr_storage.
std::string FormatSockaddr(std::span<const std::byte> b) {
  const auto* p = reinterpret_cast<const uint8_t*>(b.data());
  if (b.size() < 2) return "?";
  const uint16_t family = static_cast<uint16_t>(p[0] | p[1] << 8);
  const uint16_t port = b.size() >= 4 ? static_cast<uint16_t>(p[2] << 8 | p[3]) : 0;
  if (family == kAfInet && b.size() >= 8) return fmt::format("{}:{}", FormatIpv4(p + 4), port);
  if (family == kAfInet6 && b.size() >= 24) {
    // sin6_scope_id (after the address) names the interface of a link-local address; RFC 4007
    // writes it as "%zone" (here the interface index, as the kernel holds it).
    uint32_t scope = 0;
    if (b.size() >= 28) std::memcpy(&scope, p + 24, sizeof(scope));
    return scope != 0 ? fmt::format("[{}%{}]:{}", FormatIpv6(p + 8), scope, port)
                      : fmt::format("[{}]:{}", FormatIpv6(p + 8), port);
  }
  if (family == kAfIb) return "ib";
  if (family == 0) return "any";
  return fmt::format("family{}", family);
}

}  // namespace

void ForEachField(const Layout& layout, size_t size,
                  const std::function<void(const Field&, size_t)>& visit) {
  Walk(layout, 0, size, visit);
}

std::string FormatNamed(const NameTable* names, uint64_t value, bool flags) {
  if (names == nullptr) return flags ? fmt::format("{:#x}", value) : fmt::format("{}", value);
  if (!flags) {
    const std::string_view n = NameOf(*names, value);
    return n.empty() ? fmt::format("{}", value) : std::string(n);
  }
  if (value == 0) return "0";
  std::string s;
  uint64_t rest = value;
  for (const auto& e : *names) {
    if (e.value != 0 && (rest & e.value) == e.value) {
      if (!s.empty()) s += '|';
      s += e.name;
      rest &= ~e.value;
    }
  }
  if (rest != 0) s += fmt::format("{}{:#x}", s.empty() ? "" : "|", rest);
  return s;
}

std::string FormatFieldValue(const Field& f, std::span<const std::byte> b) {
  const uint64_t v = ReadField(b, 0, f.size <= 8 ? f.size : 0);
  switch (f.kind) {
    case FieldKind::kU8:
    case FieldKind::kU16:
    case FieldKind::kU32:
    case FieldKind::kU64:
    case FieldKind::kHandle: return fmt::format("{}", v);
    case FieldKind::kS32:
    case FieldKind::kFdIn:
    case FieldKind::kFdOut:
      return f.size == 4 ? fmt::format("{}", static_cast<int32_t>(v)) : fmt::format("{}", v);
    case FieldKind::kHex32:
    case FieldKind::kHex64:
    case FieldKind::kUserHandle:
    case FieldKind::kResponsePtr:
    case FieldKind::kPinnedVa:
    case FieldKind::kUserPtr:
    case FieldKind::kReserved: return fmt::format("{:#x}", v);
    case FieldKind::kGid: return b.size() >= 16 ? FormatGid(b) : "?";
    case FieldKind::kMac: {
      if (b.size() < 6) return "?";
      const auto* p = reinterpret_cast<const uint8_t*>(b.data());
      return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", p[0], p[1], p[2], p[3],
                         p[4], p[5]);
    }
    case FieldKind::kSockaddr: return FormatSockaddr(b);
    case FieldKind::kBytes: return fmt::format("<{} bytes>", b.size());
    case FieldKind::kEnum: return FormatNamed(f.names, v, false);
    case FieldKind::kFlags: return FormatNamed(f.names, v, true);
    case FieldKind::kStruct: {
      std::string s = "{";
      if (f.nested != nullptr) AppendFields(s, *f.nested, b);
      s += '}';
      return s;
    }
  }
  return "?";
}

void AppendFields(std::string& out, const Layout& layout, std::span<const std::byte> bytes) {
  bool first = true;
  for (const auto& f : layout.fields) {
    if (f.kind == FieldKind::kResponsePtr || f.kind == FieldKind::kReserved) continue;
    if (size_t{f.offset} + f.size > bytes.size()) continue;
    if (!first) out += ' ';
    first = false;
    out += f.name;
    out += '=';
    out += FormatFieldValue(f, bytes.subspan(f.offset, f.size));
  }
}

}  // namespace rxp::abi
