#include "tools/harness/path_resolver.h"

#include <catch2/catch.hpp>

namespace rxp::harness {
namespace {

using K = Resolution::Kind;
using M = PathRule::Match;

RuleResolver Devices() {
  return RuleResolver({
      {"/dev/infiniband", M::kExact, K::kRewrite, "/tmp/view/dev", 0, false, "dir"},
      {"/dev/infiniband", M::kTree, K::kFail, "", ENOENT, false, "hidden"},
      {"/dev/infiniband/uverbs0", M::kExact, K::kRewrite, "/dev/infiniband/uverbs3", 0, true, "uverbs0"},
      {"/dev/infiniband/rdma_cm", M::kExact, K::kRewrite, "/dev/infiniband/rdma_cm", 0, true, "rdma_cm"},
      {"/sys", M::kTree, K::kRewrite, "/tmp/sysfs", 0, false, "sysfs dir"},
  });
}

TEST_CASE("longest match wins and exact beats tree at equal length", "[resolver]") {
  RuleResolver r = Devices();
  auto dev = r.Resolve("/dev/infiniband/uverbs0", PathOp::kOpen);
  CHECK(dev.kind == K::kRewrite);
  CHECK(dev.host_path == "/dev/infiniband/uverbs3");
  CHECK(dev.proxy);
  CHECK(dev.label == "uverbs0");
  CHECK(r.Resolve("/dev/infiniband", PathOp::kOpen).host_path == "/tmp/view/dev");
  auto hidden = r.Resolve("/dev/infiniband/uverbs1", PathOp::kStat);
  CHECK(hidden.kind == K::kFail);
  CHECK(hidden.errnum == ENOENT);
  CHECK(r.Resolve("/sys/class/net", PathOp::kOpen).host_path == "/tmp/sysfs/class/net");
  CHECK(r.Resolve("/sysfoo", PathOp::kOpen).kind == K::kPassThrough);
  CHECK(r.Resolve("/etc/passwd", PathOp::kOpen).kind == K::kPassThrough);
}

TEST_CASE("host paths map back to sandbox names, or are hidden", "[resolver]") {
  RuleResolver r = Devices();
  CHECK(r.HostToSandbox("/dev/infiniband/uverbs3") == "/dev/infiniband/uverbs0");
  CHECK(r.HostToSandbox("/dev/infiniband/rdma_cm") == "/dev/infiniband/rdma_cm");
  CHECK(r.HostToSandbox("/tmp/sysfs/class/infiniband") == "/sys/class/infiniband");
  CHECK(r.HostToSandbox("/tmp/view/dev") == "/dev/infiniband");
  CHECK_FALSE(r.HostToSandbox("/dev/infiniband/uverbs0"));  // another host device: not allowed
  CHECK_FALSE(r.HostToSandbox("/sys/devices/pci0000:00"));  // the host sysfs behind --sysfs-dir
  CHECK(r.HostToSandbox("/home/user") == "/home/user");
}

}  // namespace
}  // namespace rxp::harness
