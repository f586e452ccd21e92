#include "tools/harness/path_canon.h"

#include <catch2/catch.hpp>
#include <map>

namespace rxp::harness {
namespace {

TEST_CASE("lexical helpers", "[path]") {
  CHECK(NormalizePath("/") == "/");
  CHECK(NormalizePath("//a///b/./c/") == "/a/b/c");
  CHECK(NormalizePath("/a/b/../../..") == "/");
  CHECK(NormalizePath("/../x") == "/x");
  CHECK(JoinPath("/a/b", "c/../d") == "/a/b/d");
  CHECK(JoinPath("/a/b", "/abs") == "/abs");
  CHECK(PathIsUnder("/sys/class/infiniband", "/sys/class/infiniband"));
  CHECK(PathIsUnder("/sys/class/infiniband/mlx5_0", "/sys/class/infiniband"));
  CHECK_FALSE(PathIsUnder("/sys/class/infiniband_verbs", "/sys/class/infiniband"));
  CHECK(PathIsUnder("/anything", "/"));
}

// The host as the canonicalizer sees it: links (readlink) and real paths (realpath).
class FakeHostFs final : public HostFs {
 public:
  std::map<std::string, std::string> links;
  std::map<std::string, std::string> real;
  Result<std::string> ReadLink(const std::string& path) override {
    auto it = links.find(path);
    if (it == links.end()) return Fail(ENOENT, "no link {}", path);
    return it->second;
  }
  Result<std::string> RealPath(const std::string& path) override {
    auto it = real.find(path);
    if (it == real.end()) return path;  // no symlink on the way
    return it->second;
  }
};

// Sandbox /sys/class/infiniband_verbs is the view directory /view/verbs on the host;
// sandbox /dev/infiniband/uverbs0 is host uverbs3; the rest of /dev/infiniband is hidden.
RuleResolver TestResolver() {
  using K = Resolution::Kind;
  using M = PathRule::Match;
  return RuleResolver({
      {"/sys/class/infiniband_verbs", M::kTree, K::kRewrite, "/view/verbs", 0, false, "view"},
      {"/dev/infiniband/uverbs0", M::kExact, K::kRewrite, "/dev/infiniband/uverbs3", 0, true, "uverbs0"},
      {"/dev/infiniband", M::kTree, K::kFail, "", ENOENT, false, "hidden"},
  });
}

CanonRequest Req(std::string_view raw, int dirfd = AT_FDCWD, bool follow = true) {
  CanonRequest r;
  r.tid = 12;
  r.tgid = 10;
  r.dirfd = dirfd;
  r.raw = raw;
  r.follow_last = follow;
  return r;
}

TEST_CASE("relative paths resolve against the cwd or the dirfd, in sandbox names", "[path]") {
  FakeHostFs fs;
  RuleResolver resolver = TestResolver();
  fs.links["/proc/12/cwd"] = "/view/verbs";  // the app chdir'd into a redirected directory
  fs.links["/proc/12/fd/5"] = "/home/u";
  auto rel = Canonicalize(Req("uverbs0/ibdev"), fs, resolver);
  REQUIRE(rel.ok());
  CHECK(rel->sandbox == "/sys/class/infiniband_verbs/uverbs0/ibdev");
  CHECK(rel->untouched_host == "/view/verbs/uverbs0/ibdev");
  CHECK(rel->lexical);
  auto at = Canonicalize(Req("./x//y", 5), fs, resolver);
  CHECK(at->sandbox == "/home/u/x/y");
  // A bad dirfd is the kernel's to report.
  CHECK_FALSE(Canonicalize(Req("x", 9), fs, resolver).ok());
  fs.links["/proc/12/fd/6"] = "socket:[1234]";
  CHECK(Canonicalize(Req("x", 6), fs, resolver).error().errnum == ENOTDIR);
  CHECK(Canonicalize(Req(""), fs, resolver).error().errnum == ENOENT);
}

TEST_CASE("dotdot climbs from where a symlink really points", "[path]") {
  FakeHostFs fs;
  RuleResolver resolver = TestResolver();
  // /sys/class/pci_bus/0000:00 -> /sys/devices/pci0000:00/pci_bus/0000:00 (NCCL's walk).
  fs.real["/sys/class/pci_bus/0000:00"] = "/sys/devices/pci0000:00/pci_bus/0000:00";
  fs.real["/sys/devices/pci0000:00/pci_bus"] = "/sys/devices/pci0000:00/pci_bus";
  auto up = Canonicalize(Req("/sys/class/pci_bus/0000:00/../../0000:00:01.0"), fs, resolver);
  REQUIRE(up.ok());
  CHECK(up->sandbox == "/sys/devices/pci0000:00/0000:00:01.0");
  CHECK_FALSE(up->lexical);
  // Inside a redirected tree: realpath of the host side, mapped back.
  fs.real["/view/verbs/uverbs0"] = "/sys/devices/virtual/infiniband_verbs/uverbs3";
  auto view = Canonicalize(Req("/sys/class/infiniband_verbs/uverbs0/../abi_version"), fs, resolver);
  CHECK(view->sandbox == "/sys/devices/virtual/infiniband_verbs/abi_version");
  CHECK(Canonicalize(Req("/.."), fs, resolver)->sandbox == "/");
}

TEST_CASE("proc magic links are followed like the kernel does", "[path]") {
  FakeHostFs fs;
  RuleResolver resolver = TestResolver();
  fs.links["/proc/10/fd/800"] = "/dev/infiniband/uverbs3";  // a proxied fd
  fs.links["/proc/10/root"] = "/";
  fs.links["/proc/10/fd/3"] = "pipe:[77]";
  auto reopen = Canonicalize(Req("/proc/self/fd/800"), fs, resolver);
  REQUIRE(reopen.ok());
  CHECK(reopen->sandbox == "/dev/infiniband/uverbs0");  // the host name maps back
  CHECK(Canonicalize(Req("/dev/fd/800"), fs, resolver)->sandbox == "/dev/infiniband/uverbs0");
  // Not followed when the call does not follow its last component (readlink, lstat).
  CHECK(Canonicalize(Req("/proc/self/fd/800", AT_FDCWD, false), fs, resolver)->sandbox ==
        "/proc/10/fd/800");
  CHECK(Canonicalize(Req("/proc/thread-self/fd/800", AT_FDCWD, false), fs, resolver)->sandbox ==
        "/proc/10/task/12/fd/800");
  CHECK(Canonicalize(Req("/proc/self/root/dev/infiniband/uverbs0"), fs, resolver)->sandbox ==
        "/dev/infiniband/uverbs0");
  CHECK(Canonicalize(Req("/proc/self/fd/3"), fs, resolver)->sandbox == "/proc/10/fd/3");
}

TEST_CASE("crossing a hidden host path is reported as hidden", "[path]") {
  FakeHostFs fs;
  RuleResolver resolver = TestResolver();
  fs.links["/proc/10/fd/4"] = "/dev/infiniband/uverbs1";  // a device the app may not use
  auto hidden = Canonicalize(Req("/proc/self/fd/4"), fs, resolver);
  REQUIRE(hidden.ok());
  CHECK(hidden->hidden);
  CHECK(hidden->hidden_host == "/dev/infiniband/uverbs1");
  fs.links["/proc/12/cwd"] = "/dev/infiniband";
  CHECK(Canonicalize(Req("uverbs1"), fs, resolver)->hidden);
}

TEST_CASE("magic link detection", "[path]") {
  CHECK(IsProcMagicLink("/proc/10/fd/3"));
  CHECK(IsProcMagicLink("/proc/10/task/12/fd/3"));
  CHECK(IsProcMagicLink("/proc/10/cwd"));
  CHECK(IsProcMagicLink("/proc/10/root"));
  CHECK_FALSE(IsProcMagicLink("/proc/10/fd"));
  CHECK_FALSE(IsProcMagicLink("/proc/10/fdinfo/3"));
  CHECK_FALSE(IsProcMagicLink("/proc/self/fd/3"));  // "self" is substituted first
  CHECK_FALSE(IsProcMagicLink("/proc/10/fd/3/x"));
}

}  // namespace
}  // namespace rxp::harness
