#include "sysfs/snapshot_schema.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <random>
#include <span>
#include <string>

#include "sysfs/testing/hosts.h"

namespace rxp::sysfs {
namespace {

using Json = nlohmann::json;

TEST_CASE("A snapshot survives serialize -> parse unchanged") {
  Snapshot host = testing::MiniHost();
  REQUIRE(Validate(host).ok());
  std::string text = SerializeSnapshot(host);
  auto parsed = ParseSnapshot(text);
  REQUIRE(parsed.ok());
  CHECK(SerializeSnapshot(*parsed) == text);
  CHECK(parsed->FindPci(ParseBdf("0000:81:00.2").value())->physfn == ParseBdf("0000:81:00.0").value());
  CHECK(parsed->FindRdma("rxe0")->uverbs->abi_version == 2u);
  CHECK(parsed->peer_memory.nvidia_peermem == "1.1");
}

TEST_CASE("Parsing canonicalizes the order of lists") {
  Json j = Json::parse(SerializeSnapshot(testing::MiniHost()));
  std::reverse(j["pci_functions"].begin(), j["pci_functions"].end());
  std::reverse(j["rdma_devices"].begin(), j["rdma_devices"].end());
  auto parsed = ParseSnapshot(j.dump());
  REQUIRE(parsed.ok());
  CHECK(SerializeSnapshot(*parsed) == SerializeSnapshot(testing::MiniHost()));
}

// Each row: a JSON pointer, the value put there (or erased when null_erases), and a fragment
// of the expected one-line reason.
struct Mutation {
  const char* pointer;
  Json value;
  const char* reason;
};

// Applies each mutation to `base` alone; the snapshot must be refused with its reason, in one
// line.
void CheckRefused(const Json& base, std::span<const Mutation> cases) {
  for (const auto& c : cases) {
    Json j = base;
    j[Json::json_pointer(c.pointer)] = c.value;
    auto r = ParseSnapshot(j.dump());
    INFO(c.pointer << " = " << c.value.dump().substr(0, 60));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().reason, Catch::Contains(c.reason));
    CHECK(r.error().reason.starts_with("snapshot: "));
    CHECK(r.error().reason.find('\n') == std::string::npos);
  }
}

TEST_CASE("Malformed and hostile snapshots are refused with a clear reason") {
  const Json base = Json::parse(SerializeSnapshot(testing::MiniHost()));
  const Mutation cases[] = {
      {"/schema", "something-else", "field 'schema' must be"},
      {"/version", 2, "schema version 2 is not supported"},
      {"/version", "1", "field 'version' must be an integer"},
      {"/surprise", 1, "unknown field 'surprise'"},
      {"/pci_functions", Json::object(), "expected an array"},
      {"/pci_functions/0/bdf", 17, "bdf: expected a string, got number"},
      {"/pci_functions/0/bdf", "0000:00:01.0/../..", "is not a PCI address"},
      {"/pci_functions/0/bdf", "10000:e0:06.0", "wider than 16 bits"},
      {"/pci_functions/1/bdf", "0000:00:01.0", "duplicate BDF 0000:00:01.0"},
      {"/pci_functions/1/parent", "0000:77:00.0", "parent 0000:77:00.0 is not in pci_functions"},
      {"/pci_functions/0/parent", "0000:02:00.0", "loops"},
      {"/pci_functions/5/parent", "0000:03:00.0", "is not a PCI-to-PCI bridge"},
      {"/pci_functions/0/attrs/class", nullptr, "missing or malformed 'class'"},
      {"/pci_functions/0/attrs/rm_rf", "x", "attribute 'rm_rf' is not one the schema knows"},
      {"/pci_functions/0/attrs/vendor", std::string(5000, 'x'), "exceeds 4096"},
      {"/pci_functions/0/attrs/numa_node", "7", "numa_node 7 is not in numa.nodes"},
      {"/pci_functions/0/attrs/numa_node", "zero", "is not an integer >= -1"},
      {"/pci_functions/0/attrs/local_cpulist", "4-7", "local_cpus and local_cpulist disagree"},
      {"/pci_functions/0/config", "00ff", "expected 128 hex digits"},
      {"/pci_functions/0/attrs/secondary_bus_number", "2", "says bus 02, but its children are on bus 01"},
      {"/pci_functions/0/attrs/secondary_bus_number", "0x1", "is not a bus number"},
      {"/pci_functions/0/attrs/subordinate_bus_number", "256", "is not a bus number"},
      {"/pci_functions/0/attrs/subordinate_bus_number", "0", "is below its children's bus 01"},
      {"/pci_functions/0/driver", "../../../etc", "contains '/'"},
      {"/pci_functions/9/physfn", "0000:81:00.7", "physfn 0000:81:00.7 is not in pci_functions"},
      {"/pci_functions/10/physfn", "0000:81:00.2", "physfn names the function itself"},
      {"/pci_functions/10/physfn", "0000:80:01.0", "physfn 0000:80:01.0 is a bridge, not a PF"},
      {"/pci_functions/9/physfn", "0000:81:00.2", "physfn 0000:81:00.2 is itself a VF"},
      {"/rdma_devices/0/name", "../../x", "contains '/'"},
      {"/rdma_devices/0/name", "..", "is not allowed"},
      {"/rdma_devices/0/pci", "0000:99:00.0", "pci 0000:99:00.0 is not in pci_functions"},
      {"/rdma_devices/0/pci", "0000:80:01.0", "pci 0000:80:01.0 is a PCI-to-PCI bridge, not a device"},
      {"/rdma_devices/0/ports/0/gid_table_len", 70000, "exceeds 65536"},
      {"/rdma_devices/0/ports/0/gid_table_len", -1, "expected a non-negative integer"},
      {"/rdma_devices/0/ports/0/gids/0/index", 4000, "outside gid_table_len 128"},
      {"/rdma_devices/0/ports/0/gids/0/index", 70000, "exceeds 65535"},
      {"/rdma_devices/0/ports/0/gids/0/gid", "fe80::1", "is not a GID"},
      {"/rdma_devices/0/ports/0/gids/0/type", "RoCE v3", "is not 'IB/RoCE v1' or 'RoCE v2'"},
      {"/rdma_devices/0/ports/0/gids/0/ndev", "a/b", "contains '/'"},
      {"/rdma_devices/0/ports/0/pkeys/0", "ffff", "expected 0x-prefixed hex"},
      {"/rdma_devices/0/uverbs/name", "uverbs0/../../x", "contains '/'"},
      {"/rdma_devices/0/uverbs/name", "uverbs1", "is used by two devices"},
      {"/rdma_devices/0/uverbs/dev", "231", "major:minor"},
      {"/rdma_devices/0/uverbs/dev", "231:193", "231:193 is used by two devices"},
      {"/rdma_devices/0/ports/0/port", 0, "port 0 exists only on a switch"},
      {"/numa/nodes/0/distance", "10", "1 entries for 2 NUMA nodes"},
      {"/rdma_devices/0/uverbs/host_name", "uverbs7", "host_name and host_dev come together"},
      {"/netdevs/0/name", "eth0:1", "contains ':'"},
      {"/netdevs/0/pci", "0000:55:00.0", "is not in pci_functions"},
      {"/numa/nodes/0/cpumap", "zz", "is not a hex number"},
      {"/numa/nodes/0/cpulist", "0-2", "disagree"},
      {"/numa/nodes/1/id", 0, "duplicate NUMA node id 0"},
      {"/numa/nodes/0/distance", "10 x", "is not a number"},
      {"/numa/nodes/0/mem_total_kb", "32 GB", "mem_total_kb"},
      {"/numa/nodes/0/mem_total_kb", -1, "mem_total_kb"},
      {"/numa/nodes/0/mem_total_kb", uint64_t{1} << 50, "mem_total_kb"},
      {"/numa/nodes/0/mem_free_kb", 1000, "needs a mem_total_kb"},
      {"/peer_memory/nvidia_peermem", 1, "expected a string"},
  };
  CheckRefused(base, cases);
}

constexpr const char* kVmbus = "LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/d4730f70-e332-4ad8-8b61-f7a53d8e3f84";

TEST_CASE("Root complexes below a non-PCI device (Hyper-V vPCI) round-trip and are checked") {
  Snapshot host = testing::MiniHost();
  host.pci_root_parents["0000:80"] = kVmbus;
  REQUIRE(Validate(host).ok());
  CHECK(PciRootDir(host, ParseBdf("0000:80:02.0").value()) == std::string("devices/") + kVmbus + "/pci0000:80");
  CHECK(PciRootDir(host, ParseBdf("0000:00:01.0").value()) == "devices/pci0000:00");
  const std::string text = SerializeSnapshot(host);
  auto parsed = ParseSnapshot(text);
  REQUIRE(parsed.ok());
  CHECK(parsed->pci_root_parents == host.pci_root_parents);
  CHECK(SerializeSnapshot(*parsed) == text);
  // Without parents the field is not written: older snapshots read and write the same.
  CHECK(SerializeSnapshot(testing::MiniHost()).find("pci_root_parents") == std::string::npos);

  const Json base = Json::parse(text);
  std::string seventeen = "d";
  for (int i = 1; i < 17; ++i) seventeen += "/d";
  const Mutation cases[] = {
      {"/pci_root_parents", Json::array(), "pci_root_parents: expected an object"},
      {"/pci_root_parents/0000:80", 12, "expected a string"},
      {"/pci_root_parents/0000:80", std::string(2000, 'a'), "exceeds 1024"},
      {"/pci_root_parents/0000:99", "VMBUS:00", "no PCI function sits on root bus 0000:99"},
      {"/pci_root_parents/0000:03", "VMBUS:00", "no PCI function sits on root bus 0000:03"},
      {"/pci_root_parents/0000:80:02.0", "VMBUS:00", "not a root bus id"},
      {"/pci_root_parents/0000:80", "", "empty name"},
      {"/pci_root_parents/0000:80", "/VMBUS:00", "empty name"},
      {"/pci_root_parents/0000:80", "VMBUS:00//x", "empty name"},
      {"/pci_root_parents/0000:80", "VMBUS:00/../../etc", "is not allowed"},
      {"/pci_root_parents/0000:80", "VMBUS:00/a b", "contains '/', a control, space"},
      {"/pci_root_parents/0000:80", "system/node", "the kernel's own directory"},
      {"/pci_root_parents/0000:80", "virtual", "the kernel's own directory"},
      {"/pci_root_parents/0000:80", "pci0000:00/0000:00:01.0", "is a PCI root complex or function"},
      {"/pci_root_parents/0000:80", "x/0000:00:0e.0", "is a PCI root complex or function"},
      {"/pci_root_parents/0000:80", seventeen, "more than 16 components"},
  };
  CheckRefused(base, cases);
}

TEST_CASE("A bridge's config space must agree with the bus its children are on") {
  Json j = Json::parse(SerializeSnapshot(testing::MiniHost()));
  // 0000:02:00.0 hosts bus 03; claim bus 05 in its config (byte 0x19 = hex chars 50..51).
  std::string cfg = j["pci_functions"][2]["config"];
  cfg.replace(0x19 * 2, 2, "05");
  j["pci_functions"][2]["config"] = cfg;
  auto r = ParseSnapshot(j.dump());
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().reason, Catch::Contains("children are on bus 03"));
}

TEST_CASE("A bus belongs to one bridge") {
  Json j = Json::parse(SerializeSnapshot(testing::MiniHost()));
  // Move the GPU 0000:04:00.0 under the NIC's downstream port, whose bus is 03.
  j["pci_functions"][5]["parent"] = "0000:02:00.0";
  auto r = ParseSnapshot(j.dump());
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().reason, Catch::Contains("a bridge has one secondary bus"));
  // Two bridges claiming one bus: the GPU below root port 80:02.0 renamed onto bus 81, which
  // belongs to root port 80:01.0.
  Json k = Json::parse(SerializeSnapshot(testing::MiniHost()));
  REQUIRE(k["pci_functions"][11]["bdf"] == "0000:82:00.0");
  k["pci_functions"][11]["bdf"] = "0000:81:01.0";
  auto r2 = ParseSnapshot(k.dump());
  REQUIRE_FALSE(r2.ok());
  CHECK_THAT(r2.error().reason, Catch::Contains("a bus belongs to one bridge"));
}

TEST_CASE("Absurd sizes and nesting are refused before any allocation they ask for") {
  CHECK_FALSE(ParseSnapshot(std::string(100000, '[')).ok());
  auto deep = ParseSnapshot(std::string(20, '[') + std::string(20, ']'));
  REQUIRE_FALSE(deep.ok());
  CHECK_THAT(deep.error().reason, Catch::Contains("nested deeper"));
  // Total GID entries over all ports are bounded even when each port is within its limit.
  Json j = Json::parse(SerializeSnapshot(testing::MiniHost()));
  Json port = j["rdma_devices"][0]["ports"][0];
  port["gid_table_len"] = 65536;
  port["gids"] = Json::array();
  Json ports = Json::array();
  for (int p = 0; p < 17; ++p) {  // 17 x 65536 > 1 Mi
    port["port"] = p + 1;
    ports.push_back(port);
  }
  j["rdma_devices"][0]["ports"] = ports;
  auto r = ParseSnapshot(j.dump());
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().reason, Catch::Contains("GID table entries in all"));
}

// The loader is strict: a key given twice in one object is refused (nlohmann alone keeps the
// last, which a reviewer of the file may not have read as the one that counts), and a parse
// error names the offending token only in part.
TEST_CASE("Duplicate keys are refused, and parse errors stay one short line") {
  const std::string base = SerializeSnapshot(testing::MiniHost());
  const std::string dup_top = "{\"version\": 2, " + base.substr(base.find('{') + 1);
  auto r = ParseSnapshot(dup_top);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().reason, Catch::Contains("key 'version' appears twice"));
  std::string dup_bdf = base;
  const size_t bdf = dup_bdf.find("\"bdf\"");
  REQUIRE(bdf != std::string::npos);
  dup_bdf.insert(bdf, "\"bdf\": \"0000:00:03.0\", ");
  r = ParseSnapshot(dup_bdf);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().reason, Catch::Contains("key 'bdf' appears twice"));
  // The same key in two objects is no duplicate.
  CHECK(ParseSnapshot(base).ok());
  // A 1 MB unterminated string: the reason quotes a bounded part of it.
  r = ParseSnapshot("{\"comment\": \"" + std::string(1 << 20, 'x'));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().reason, Catch::Contains("not valid JSON"));
  CHECK(r.error().reason.size() < 300);
}

TEST_CASE("The loader never crashes on corrupted input") {
  // A deterministic fuzz pass (the libFuzzer target in tests/fuzz does the open-ended one).
  const std::string base = SerializeSnapshot(testing::MiniHost());
  std::mt19937 rng(12345);
  size_t accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string t = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % t.size();
      switch (rng() % 4) {
        case 0: t[pos] = static_cast<char>(rng() % 256); break;
        case 1: t.erase(pos, 1 + rng() % 16); break;
        case 2: t.insert(pos, std::string(1 + rng() % 3, "{}[]\",:0a-/."[rng() % 12])); break;
        default: t.resize(pos); break;
      }
      if (t.empty()) t = "{";
    }
    auto r = ParseSnapshot(t);
    if (r.ok()) {
      ++accepted;
      // Whatever is accepted must serialize to something that parses to the same thing.
      CHECK(SerializeSnapshot(*ParseSnapshot(SerializeSnapshot(*r))) == SerializeSnapshot(*r));
    } else {
      CHECK_FALSE(r.error().reason.empty());
    }
  }
  CHECK(accepted < 3000);
}

}  // namespace
}  // namespace rxp::sysfs
