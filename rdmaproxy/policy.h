// The sandbox policy: which ABI entries may be forwarded (the schema's defaults, overridden by
// name), the content rules that look inside allowed commands (raw-packet QPs, DEVX contexts,
// SW-ICM device memory), and the sandbox's own quotas. Loaded from a JSON policy file
// (`rdmaproxy run --policy FILE`, docs/user-guide.md#policy):
//
//   {
//     "version": 1,
//     "allow": ["MLX5.DEVX.OTHER"],          // entry short names or kernel constants
//     "deny":  ["MR.REG_DMABUF"],
//     "raw_packet_qps": false,               // RAW_PACKET QPs and SOURCE_QPN (CAP_NET_RAW)
//     "devx": "deny",                        // "deny" | "query" (read-only DEVX_OTHER) | "allow"
//     "quotas": {"pinned_bytes": "64MiB", "qps": 256, "cqs": 512, "mrs": 1024, "pds": 64,
//                "srqs": 64, "ahs": 1024, "mws": 256, "contexts": 16, "dms": 4, "uars": 64}
//   }
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "abi/result.h"
#include "abi/schema.h"

namespace rxp::proxy {

// Limits the proxy enforces itself, for the whole sandbox. nullopt = no limit.
struct Quotas {
  std::optional<uint64_t> pinned_bytes;  // the sandbox's memlock budget (MRs, queue buffers)
  std::optional<uint32_t> contexts, pds, cqs, qps, srqs, mrs, mws, ahs, wqs;
  // Device resources shared by every user of the NIC: device memory allocations (DM.ALLOC;
  // mlx5 MEMIC comes from one device-wide bitmap, mlx5_cmd_alloc_memic) and mlx5 UARs
  // (UAR_OBJ_ALLOC, one firmware UAR each: alloc_uar_entry).
  std::optional<uint32_t> dms, uars;

  // Sets the quota named as in a policy file ("pinned_bytes", "qps", ...); EINVAL for an
  // unknown name or a count over 2^32-1.
  Result<void> Set(std::string_view name, uint64_t value);
  // The policy-file key of the quota on objects of `type` ("qps"); empty: none.
  static std::string_view CountKeyOf(abi::ObjectId type);
  // The limit on live objects of `type`, if any.
  std::optional<uint32_t> CountLimit(abi::ObjectId type) const;
};

enum class DevxMode : uint8_t {
  kDeny,   // no DEVX: GET_CONTEXT may not ask for a DEVX uid, every DEVX method is denied
  kQuery,  // a DEVX uid and read-only DEVX_OTHER queries (QUERY_HCA_CAP, ...) are allowed
  kAllow,  // a DEVX uid and every DEVX method: raw firmware access, for trusted workloads
};

struct PolicyConfig {
  std::set<std::string, std::less<>> allow;  // entries forwarded although the schema denies them
  std::set<std::string, std::less<>> deny;   // entries refused although the schema allows them
  bool raw_packet_qps = false;
  DevxMode devx = DevxMode::kDeny;
  Quotas quotas;

  // Parses a policy file's text; unknown keys, unknown entry names and bad values are errors.
  static Result<PolicyConfig> FromJson(std::string_view text);
  // FromJson of ReadPolicyFile(path).
  static Result<PolicyConfig> FromFile(const std::string& path);
};

// A policy file's text: a regular file of at most 1 MiB, opened without waiting (a FIFO, a
// device is EINVAL at once, a directory EISDIR, a larger file EFBIG; else open's or read's
// errno).
Result<std::string> ReadPolicyFile(const std::string& path);

// CheckEntry's general case: an entry the schema denies or leaves unsupported, or a policy
// with a deny list, decided by the entry's names.
Result<void> CheckEntryByName(const PolicyConfig& policy, const abi::Policy& schema_default,
                              std::string_view short_name, std::string_view kernel_name);

// The policy's verdict on an entry by name, before its content is looked at. Inline: every
// command asks, and the usual answer (an allowed entry, no deny list) needs no names.
inline Result<void> CheckEntry(const PolicyConfig& policy, const abi::Policy& schema_default,
                               std::string_view short_name, std::string_view kernel_name) {
  if (schema_default.disposition == abi::Disposition::kAllow && policy.deny.empty()) return Ok();
  return CheckEntryByName(policy, schema_default, short_name, kernel_name);
}

// "64MiB", "1 GiB", "4096" -> bytes.
Result<uint64_t> ParseSize(std::string_view text);

}  // namespace rxp::proxy
