#include "rdmaproxy/policy.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include "rdmaproxy/mmap_rules.h"
#include "rdmaproxy/sandbox_usage.h"

namespace rxp::proxy {
namespace {

TEST_CASE("policy files: every key, and clear errors for bad ones", "[policy]") {
  auto p = PolicyConfig::FromJson(R"({
    "version": 1,
    "allow": ["MLX5.VAR.ALLOC"],
    "deny": ["MR.REG_DMABUF", "IB_USER_VERBS_CMD_ALLOC_MW"],
    "raw_packet_qps": true,
    "devx": "query",
    "quotas": {"pinned_bytes": "64MiB", "qps": 16, "mrs": 32, "contexts": 2}
  })");
  REQUIRE(p.ok());
  CHECK(p->allow.count("MLX5.VAR.ALLOC") == 1);
  CHECK(p->allow.count("MLX5_IB_METHOD_DEVX_OTHER") == 1);  // opened by devx "query"
  CHECK(p->deny.size() == 2);
  CHECK(p->raw_packet_qps);
  CHECK(p->devx == DevxMode::kQuery);
  CHECK(*p->quotas.pinned_bytes == 64ull << 20);
  CHECK(*p->quotas.CountLimit(UVERBS_OBJECT_QP) == 16);
  CHECK(*p->quotas.CountLimit(UVERBS_OBJECT_DEVICE) == 2);
  CHECK_FALSE(p->quotas.CountLimit(UVERBS_OBJECT_CQ).has_value());

  auto err = [](const char* text) {
    auto r = PolicyConfig::FromJson(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().errnum == EINVAL);
    return r.error().reason;
  };
  CHECK(err("[]").find("not a JSON object") != std::string::npos);
  // Text that is no JSON at all says where it breaks; an empty file is no policy.
  CHECK(err(R"({"version": 1, "allow": [)").find("not valid JSON") != std::string::npos);
  CHECK(err(R"({"version": 1, "allow": [)").find("column") != std::string::npos);
  CHECK(err("").find("not valid JSON") != std::string::npos);
  CHECK(err(R"({"version": 1.0})").find("version") != std::string::npos);
  CHECK(err(R"({"version": "1"})").find("version") != std::string::npos);
  CHECK(err(R"({"allow": []})").find("version") != std::string::npos);
  CHECK(err(R"({"version": 1, "allow": ["NO_SUCH_THING"]})").find("NO_SUCH_THING") !=
        std::string::npos);
  CHECK(err(R"({"version": 1, "colour": "blue"})").find("unknown key") != std::string::npos);
  CHECK(err(R"({"version": 1, "devx": "maybe"})").find("devx") != std::string::npos);
  CHECK(err(R"({"version": 1, "quotas": {"pinned_bytes": "12 parsecs"}})").find("unit") !=
        std::string::npos);
  CHECK(err(R"({"version": 1, "quotas": {"pinned_bytes": "12 parsecs"}})")
            .starts_with("policy: quota \"pinned_bytes\": "));
  CHECK(err(R"({"version": 1, "quotas": {"qps": -1}})").find("qps") != std::string::npos);
  CHECK(err(R"({"version": 1, "allow": ["PD.DESTROY"], "deny": ["PD.DESTROY"]})")
            .find("both") != std::string::npos);
  // A key given twice is refused, at any depth: nlohmann would keep the last, so the first
  // "deny" a reviewer reads would not be the one enforced.
  CHECK(err(R"({"version": 1, "deny": ["REG_MR"], "deny": []})") ==
        R"(policy: key "deny" appears twice in one object)");
  CHECK(err(R"({"version": 1, "quotas": {"qps": 1, "qps": 100}})").find("\"qps\" appears twice") !=
        std::string::npos);
  CHECK(PolicyConfig::FromJson(R"({"version": 1, "quotas": {"qps": 1}, "deny": [], "allow": []})")
            .ok());
}

TEST_CASE("policy file: read to end of file, not st_size bytes (/proc says 0)", "[policy]") {
  // /proc/self/status is a regular file of st_size 0 with text in it.
  auto text = ReadPolicyFile("/proc/self/status");
  REQUIRE(text.ok());
  CHECK(text->starts_with("Name:"));
  auto parsed = PolicyConfig::FromFile("/proc/self/status");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().reason.find("end of input") == std::string::npos);
}

TEST_CASE("policy names: INVOKE_WRITE X, as the trace spells it, is legacy command X", "[policy]") {
  // docs/user-guide.md's example policy denies "INVOKE_WRITE REREG_MR": the name the trace
  // prints for rdma-core's ibv_rereg_mr. It must deny REREG_MR on both of its paths.
  auto p = PolicyConfig::FromJson(
      R"({"version": 1, "deny": ["INVOKE_WRITE REREG_MR", "INVOKE_WRITE IB_USER_VERBS_CMD_ALLOC_MW"]})");
  REQUIRE(p.ok());
  CHECK(p->deny.count("REREG_MR") == 1);
  CHECK(p->deny.count("IB_USER_VERBS_CMD_ALLOC_MW") == 1);
  const abi::WriteCommand* rereg = abi::FindWriteCommand(IB_USER_VERBS_CMD_REREG_MR);
  REQUIRE(rereg != nullptr);
  CHECK(CheckEntry(*p, rereg->policy, rereg->short_name, rereg->name).error().errnum == EPERM);
  const abi::WriteCommand* reg = abi::FindWriteCommand(IB_USER_VERBS_CMD_REG_MR);
  CHECK(CheckEntry(*p, reg->policy, reg->short_name, reg->name).ok());
  // Allowing and denying the same command under its two spellings is a contradiction.
  auto both = PolicyConfig::FromJson(
      R"({"version": 1, "allow": ["INVOKE_WRITE ALLOC_MW"], "deny": ["ALLOC_MW"]})");
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().reason.find("both") != std::string::npos);
  // Only legacy commands have an INVOKE_WRITE spelling.
  auto bad = PolicyConfig::FromJson(R"({"version": 1, "deny": ["INVOKE_WRITE PD.DESTROY"]})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().reason.find("INVOKE_WRITE PD.DESTROY") != std::string::npos);
}

TEST_CASE("sizes parse with binary units", "[policy]") {
  CHECK(*ParseSize("4096") == 4096);
  CHECK(*ParseSize("64 KiB") == 65536);
  CHECK(*ParseSize("2G") == 2ull << 30);
  CHECK_FALSE(ParseSize("").ok());
  CHECK_FALSE(ParseSize("99999999999999999999999").ok());
  CHECK_FALSE(ParseSize("16777216 TiB").ok());
}

TEST_CASE("entry policy: schema defaults, overrides by short or kernel name", "[policy]") {
  PolicyConfig p;
  const abi::Method* devx = abi::FindMethod(abi::Driver::kMlx5, MLX5_IB_OBJECT_DEVX,
                                            MLX5_IB_METHOD_DEVX_OTHER);
  const abi::Method* pd = abi::FindMethod(abi::Driver::kRxe, UVERBS_OBJECT_PD,
                                          UVERBS_METHOD_PD_DESTROY);
  CHECK(CheckEntry(p, devx->policy, devx->short_name, devx->name).error().errnum ==
        EPROTONOSUPPORT);
  CHECK(CheckEntry(p, pd->policy, pd->short_name, pd->name).ok());
  p.deny.insert("PD.DESTROY");
  CHECK(CheckEntry(p, pd->policy, pd->short_name, pd->name).error().errnum == EPERM);
  p.allow.insert("MLX5_IB_METHOD_DEVX_OTHER");
  CHECK(CheckEntry(p, devx->policy, devx->short_name, devx->name).ok());
  const abi::WriteCommand* modify_ah = abi::FindWriteCommand(IB_USER_VERBS_CMD_MODIFY_AH);
  p.allow.insert("MODIFY_AH");  // the kernel has no handler: allowing it changes nothing
  CHECK(CheckEntry(p, modify_ah->policy, modify_ah->short_name, modify_ah->name)
            .error()
            .errnum == EOPNOTSUPP);
}

TEST_CASE("sandbox usage: counts and pinned bytes against the quotas", "[policy]") {
  Quotas q;
  q.qps = 2;
  q.pinned_bytes = 1 << 20;
  SandboxUsage u(q);
  CHECK(u.Reserve(UVERBS_OBJECT_QP, 0).ok());
  CHECK(u.Reserve(UVERBS_OBJECT_QP, 0).ok());
  auto third = u.Reserve(UVERBS_OBJECT_QP, 0);
  REQUIRE_FALSE(third.ok());
  CHECK(third.error().errnum == EDQUOT);
  CHECK(third.error().reason.find("QP quota (\"qps\": 2)") != std::string::npos);
  u.Release(UVERBS_OBJECT_QP, 0);
  CHECK(u.Reserve(UVERBS_OBJECT_QP, 0).ok());
  CHECK(u.Reserve(UVERBS_OBJECT_MR, 1 << 19).ok());
  CHECK(u.Reserve(UVERBS_OBJECT_MR, 1 << 19).ok());
  CHECK(u.Reserve(UVERBS_OBJECT_MR, 1).error().errnum == ENOMEM);
  CHECK(u.pinned_bytes() == 1 << 20);
}

TEST_CASE("mlx5 mmap offsets: command encoding and handed-out entries", "[mmap]") {
  MmapRules m(abi::Driver::kMlx5, 12);
  auto off = [](uint64_t cmd, uint64_t index) { return ((cmd << 8) | index) << 12; };
  CHECK(m.Check(off(0, 0), 4096, PROT_WRITE).ok());          // static UAR page
  CHECK(m.Check(off(5, 0), 4096, PROT_READ).ok());           // core clock, read-only
  CHECK(m.Check(off(5, 0), 4096, PROT_READ | PROT_WRITE).error().errnum == EPERM);
  CHECK(m.Check(off(7, 0), 4096, PROT_READ).ok());           // clock info
  CHECK(m.Check(off(1, 0), 4096, PROT_READ).error().errnum == ENOSYS);
  CHECK(m.Check(off(4, 0), 4096, PROT_READ).error().errnum == EINVAL);
  CHECK(m.Check(off(9, 3), 4096, PROT_WRITE).error().errnum == EINVAL);  // not handed out
  m.AllowEntry(off(9, 3), 4096);
  CHECK(m.Check(off(9, 3), 4096, PROT_WRITE).ok());
  CHECK(m.Check(off(9, 3), 8192, PROT_WRITE).error().errnum == EINVAL);
  m.RevokeEntry(off(9, 3));
  CHECK(m.Check(off(9, 3), 4096, PROT_WRITE).error().errnum == EINVAL);
  CHECK(m.Check(123, 4096, PROT_READ).error().errnum == EINVAL);  // unaligned
}

// mlx5_ib_mmap() decodes vma->vm_pgoff, in the host kernel's pages: on an arm64 kernel with
// 64 KiB pages (Grace hosts) libmlx5 maps the clock page at (5 << 8) << 16, not << 12.
TEST_CASE("mlx5 mmap offsets are decoded in the host's page size", "[mmap]") {
  MmapRules m(abi::Driver::kMlx5, 16);
  auto off = [](uint64_t cmd, uint64_t index) { return ((cmd << 8) | index) << 16; };
  CHECK(m.Check(off(5, 0), 65536, PROT_READ).ok());
  CHECK(m.Check(off(5, 0), 65536, PROT_READ | PROT_WRITE).error().errnum == EPERM);
  CHECK(m.Check(off(0, 1), 65536, PROT_WRITE).ok());
  CHECK(m.Check(off(9, 3), 65536, PROT_WRITE).error().errnum == EINVAL);  // not handed out
  CHECK(m.Check(4096, 4096, PROT_READ).error().errnum == EINVAL);  // not 64 KiB aligned
  CHECK(MmapRules::HostPageShift() == static_cast<unsigned>(__builtin_ctzl(
                                          static_cast<unsigned long>(sysconf(_SC_PAGESIZE)))));
}

}  // namespace
}  // namespace rxp::proxy
