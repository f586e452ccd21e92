#include "rdmaproxy/policy.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "abi/json_duplicate_keys.h"
#include "abi/one_line.h"
#include "abi/unique_fd.h"

namespace rxp::proxy {
namespace {

using nlohmann::json;

bool KnownEntry(std::string_view name) {
  for (const auto& c : abi::WriteCommands())
    if (c.name == name || c.short_name == name) return true;
  for (const auto& m : abi::Methods())
    if (m.name == name || m.short_name == name) return true;
  for (const auto& c : abi::UcmaCommands())
    if (c.name == name || c.short_name == name) return true;
  return false;
}

// "INVOKE_WRITE REG_MR" -- how the trace and the refusal lines name a legacy command that came
// wrapped in UVERBS_METHOD_INVOKE_WRITE -- is the legacy command's own entry ("REG_MR"): one
// verdict covers both of its paths (write() and INVOKE_WRITE), or a program denied one would
// take the other. Any other name is returned as it is.
std::string_view EntryName(std::string_view name) {
  constexpr std::string_view kInvoke = "INVOKE_WRITE ";
  if (!name.starts_with(kInvoke)) return name;
  const std::string_view command = name.substr(kInvoke.size());
  for (const auto& c : abi::WriteCommands())
    if (c.name == command || c.short_name == command) return command;
  return name;
}

Result<std::set<std::string, std::less<>>> EntryList(const json& j, std::string_view key) {
  std::set<std::string, std::less<>> out;
  if (!j.is_array()) return Fail(EINVAL, "policy: \"{}\" must be a list of entry names", key);
  for (const auto& e : j) {
    if (!e.is_string()) return Fail(EINVAL, "policy: \"{}\" holds a non-string", key);
    const std::string name(EntryName(e.get<std::string>()));
    if (!KnownEntry(name))
      return Fail(EINVAL, "policy: \"{}\" names \"{}\", which is no ABI entry (see docs/ABI.md)",
                  key, name);
    out.insert(name);
  }
  return out;
}

// One entry per count quota: its policy-file key, the objects it counts, where it is kept.
struct CountKey {
  const char* key;
  abi::ObjectId type;
  std::optional<uint32_t> Quotas::*field;
};
constexpr CountKey kCountQuotas[] = {
    {"contexts", UVERBS_OBJECT_DEVICE, &Quotas::contexts},  // a ucontext: a DEVICE instance
    {"pds", UVERBS_OBJECT_PD, &Quotas::pds},
    {"cqs", UVERBS_OBJECT_CQ, &Quotas::cqs},
    {"qps", UVERBS_OBJECT_QP, &Quotas::qps},
    {"srqs", UVERBS_OBJECT_SRQ, &Quotas::srqs},
    {"mrs", UVERBS_OBJECT_MR, &Quotas::mrs},
    {"mws", UVERBS_OBJECT_MW, &Quotas::mws},
    {"ahs", UVERBS_OBJECT_AH, &Quotas::ahs},
    {"wqs", UVERBS_OBJECT_WQ, &Quotas::wqs},
    {"dms", UVERBS_OBJECT_DM, &Quotas::dms},
    {"uars", MLX5_IB_OBJECT_UAR, &Quotas::uars},
};
const CountKey* CountQuotaOf(abi::ObjectId type) {
  for (const auto& c : kCountQuotas)
    if (c.type == type) return &c;
  return nullptr;
}

Result<Quotas> ParseQuotas(const json& j) {
  Quotas q;
  if (!j.is_object()) return Fail(EINVAL, "policy: \"quotas\" must be an object");
  for (const auto& [key, value] : j.items()) {
    if (key == "pinned_bytes") {
      if (value.is_number_unsigned()) {
        q.pinned_bytes = value.get<uint64_t>();
      } else if (value.is_string()) {
        auto b = ParseSize(value.get<std::string>());
        if (!b) return Fail(b.error().errnum, "policy: quota \"pinned_bytes\": {}", b.error().reason);
        q.pinned_bytes = *b;
      } else {
        return Fail(EINVAL, "policy: quota \"pinned_bytes\" must be bytes or a size like 64MiB");
      }
      continue;
    }
    if (!value.is_number_unsigned()) return Fail(EINVAL, "policy: quota \"{}\" must be a count", key);
    if (auto set = q.Set(key, value.get<uint64_t>()); !set) return std::move(set).error();
  }
  return q;
}

}  // namespace

Result<void> Quotas::Set(std::string_view name, uint64_t value) {
  if (name == "pinned_bytes") {
    pinned_bytes = value;
    return Ok();
  }
  for (const auto& c : kCountQuotas)
    if (name == c.key) {
      if (value > UINT32_MAX) return Fail(EINVAL, "policy: quota \"{}\" must be a count", name);
      this->*c.field = static_cast<uint32_t>(value);
      return Ok();
    }
  return Fail(EINVAL, "policy: unknown quota \"{}\"", name);
}

std::optional<uint32_t> Quotas::CountLimit(abi::ObjectId type) const {
  const CountKey* c = CountQuotaOf(type);
  return c != nullptr ? this->*c->field : std::nullopt;
}

std::string_view Quotas::CountKeyOf(abi::ObjectId type) {
  const CountKey* c = CountQuotaOf(type);
  return c != nullptr ? c->key : std::string_view{};
}

Result<uint64_t> ParseSize(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  uint64_t value = 0;
  size_t digits = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
    if (value > (UINT64_MAX - 9) / 10) return Fail(EINVAL, "size \"{}\" is too large", text);
    value = value * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  if (digits == 0) return Fail(EINVAL, "size \"{}\" has no number", text);
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const std::string_view unit = text.substr(i);
  struct Unit {
    std::string_view name;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {{"", 1},          {"B", 1},           {"KiB", 1ull << 10},
                                    {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40},
                                    {"K", 1ull << 10},   {"M", 1ull << 20},   {"G", 1ull << 30}};
  for (const auto& u : kUnits)
    if (unit == u.name) {
      if (value > UINT64_MAX / u.factor) return Fail(EINVAL, "size \"{}\" is too large", text);
      return value * u.factor;
    }
  return Fail(EINVAL, "size \"{}\" has an unknown unit (use B, KiB, MiB, GiB, TiB)", text);
}

Result<PolicyConfig> PolicyConfig::FromJson(std::string_view text) {
  // A key given twice ({"deny": [...], "deny": []}) is refused: nlohmann keeps the last, so a
  // reviewer reading the first would think a method denied that the proxy allows.
  DuplicateKeyWatch<json> keys;
  json j = json::parse(text, keys.Callback(), false);
  if (j.is_discarded()) {
    // Parsed again only to say where it breaks: nlohmann's parse_error names the line and
    // column (the first parse stays exception-free for the common, valid case).
    try {
      [[maybe_unused]] const json again = json::parse(text);
    } catch (const json::parse_error& e) {
      return Fail(EINVAL, "policy: not valid JSON: {}", e.what());
    }
    return Fail(EINVAL, "policy: not valid JSON");
  }
  if (keys.duplicate()) {
    std::string key = OneLine(*keys.duplicate());
    if (key.size() > 64) key = key.substr(0, 64) + "...";  // one short line, whatever the key
    return Fail(EINVAL, "policy: key \"{}\" appears twice in one object", key);
  }
  if (!j.is_object()) return Fail(EINVAL, "policy: not a JSON object");
  PolicyConfig p;
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != 1)
    return Fail(EINVAL, "policy: \"version\": 1 is required");
  for (const auto& [key, value] : j.items()) {
    if (key == "version") continue;
    if (key == "allow" || key == "deny") {
      auto list = EntryList(value, key);
      if (!list) return std::move(list).error();
      (key == "allow" ? p.allow : p.deny) = std::move(*list);
    } else if (key == "raw_packet_qps") {
      if (!value.is_boolean()) return Fail(EINVAL, "policy: \"raw_packet_qps\" must be true/false");
      p.raw_packet_qps = value.get<bool>();
    } else if (key == "devx") {
      if (value == "deny") {
        p.devx = DevxMode::kDeny;
      } else if (value == "query") {
        p.devx = DevxMode::kQuery;
      } else if (value == "allow") {
        p.devx = DevxMode::kAllow;
      } else {
        return Fail(EINVAL, "policy: \"devx\" must be \"deny\", \"query\" or \"allow\"");
      }
    } else if (key == "quotas") {
      auto q = ParseQuotas(value);
      if (!q) return std::move(q).error();
      p.quotas = *q;
    } else {
      return Fail(EINVAL, "policy: unknown key \"{}\"", key);
    }
  }
  for (const auto& name : p.allow)
    if (p.deny.count(name) != 0) return Fail(EINVAL, "policy: {} is both allowed and denied", name);
  // DEVX modes open the DEVX entries; the content rules narrow "query" to read-only opcodes.
  if (p.devx == DevxMode::kQuery) p.allow.insert("MLX5_IB_METHOD_DEVX_OTHER");
  if (p.devx == DevxMode::kAllow)
    for (const auto& m : abi::Methods())
      if (m.object == MLX5_IB_OBJECT_DEVX || m.object == MLX5_IB_OBJECT_DEVX_OBJ ||
          m.object == MLX5_IB_OBJECT_DEVX_UMEM || m.object == MLX5_IB_OBJECT_DEVX_ASYNC_CMD_FD ||
          m.object == MLX5_IB_OBJECT_DEVX_ASYNC_EVENT_FD)
        p.allow.insert(std::string(m.name));
  return p;
}

// A policy file is a regular file of at most this size: a FIFO, a device (/dev/zero) or a
// directory given by mistake is refused at once instead of blocking or reading forever.
constexpr off_t kMaxPolicyFileBytes = 1 << 20;

Result<std::string> ReadPolicyFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading does not wait for a writer.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) return Fail(errno, "policy: cannot open {}: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return Fail(errno, "policy: cannot stat {}: {}", path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Fail(EISDIR, "policy: {} is a directory", path);
  if (!S_ISREG(st.st_mode)) return Fail(EINVAL, "policy: {} is not a regular file", path);
  if (st.st_size > kMaxPolicyFileBytes)
    return Fail(EFBIG, "policy: {} is {} bytes; a policy file is at most {}", path, st.st_size,
                kMaxPolicyFileBytes);
  // Read to end of file, not st_size bytes: a /proc or /sys file says size 0 and still has
  // text, and a file that grew since fstat is still held to the limit.
  std::string text(static_cast<size_t>(kMaxPolicyFileBytes) + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail(errno, "policy: cannot read {}: {}", path, std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > static_cast<size_t>(kMaxPolicyFileBytes))
    return Fail(EFBIG, "policy: {} is over {} bytes; a policy file is at most that", path,
                kMaxPolicyFileBytes);
  text.resize(got);
  return text;
}

Result<PolicyConfig> PolicyConfig::FromFile(const std::string& path) {
  auto text = ReadPolicyFile(path);
  if (!text) return std::move(text).error();
  auto p = FromJson(*text);
  if (!p) return Fail(p.error().errnum, "{}: {}", path, p.error().reason);
  return p;
}

Result<void> CheckEntryByName(const PolicyConfig& policy, const abi::Policy& schema_default,
                              std::string_view short_name, std::string_view kernel_name) {
  auto named = [&](const std::set<std::string, std::less<>>& set) {
    return !set.empty() && (set.count(short_name) != 0 || set.count(kernel_name) != 0);
  };
  if (schema_default.disposition == abi::Disposition::kUnsupported)
    return Fail(schema_default.errnum, "{}: {}", short_name, schema_default.reason);
  if (named(policy.deny))
    return Fail(schema_default.disposition == abi::Disposition::kDeny ? schema_default.errnum
                                                                      : EPERM,
                "{}: denied by the sandbox policy", short_name);
  if (schema_default.disposition == abi::Disposition::kDeny && !named(policy.allow))
    return Fail(schema_default.errnum, "{}: {}", short_name, schema_default.reason);
  return Ok();
}

}  // namespace rxp::proxy
