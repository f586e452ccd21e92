#include "rdmaproxy/device_map.h"

#include <algorithm>
#include <cerrno>
#include <set>

namespace rxp::proxy {

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return std::string(s);
}

long UverbsNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "uverbs";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) return -1;
  long n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || n > 1'000'000) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

Result<std::vector<DeviceMapping>> ParseDeviceList(std::string_view spec,
                                                   const std::vector<HostRdmaDevice>& host) {
  std::vector<DeviceMapping> out;
  if (Trim(spec).empty()) {
    for (const HostRdmaDevice& dev : host) out.push_back({dev.uverbs, dev});
    std::sort(out.begin(), out.end(), [](const DeviceMapping& a, const DeviceMapping& b) {
      return UverbsNumber(a.sandbox_uverbs) < UverbsNumber(b.sandbox_uverbs);
    });
    return out;
  }
  std::set<std::string> sandbox_names, host_names;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string item = Trim(spec.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) return Fail(EINVAL, "devices: empty item in '{}'", spec);
    std::string sandbox, wanted = item;
    if (auto eq = item.find('='); eq != std::string::npos) {
      sandbox = Trim(std::string_view(item).substr(0, eq));
      wanted = Trim(std::string_view(item).substr(eq + 1));
      if (UverbsNumber(sandbox) < 0)
        return Fail(EINVAL, "devices: sandbox name '{}' in '{}' is not uverbs<N>", sandbox, item);
    }
    auto match = std::find_if(host.begin(), host.end(), [&](const HostRdmaDevice& dev) {
      return dev.uverbs == wanted || dev.ibdev == wanted;
    });
    if (match == host.end()) {
      std::string known;
      for (const HostRdmaDevice& dev : host) known += fmt::format(" {}({})", dev.uverbs, dev.ibdev);
      return Fail(ENODEV, "devices: no host device '{}'; the host has:{}", wanted,
                  known.empty() ? " none" : known);
    }
    if (sandbox.empty()) sandbox = match->uverbs;
    if (!sandbox_names.insert(sandbox).second)
      return Fail(EINVAL, "devices: sandbox name {} is used twice", sandbox);
    if (!host_names.insert(match->uverbs).second)
      return Fail(EINVAL, "devices: host device {} ({}) is listed twice", match->uverbs,
                  match->ibdev);
    out.push_back({sandbox, *match});
  }
  return out;
}

}  // namespace rxp::proxy
