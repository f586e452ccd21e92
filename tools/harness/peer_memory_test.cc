#include "tools/harness/peer_memory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

namespace rxp::harness {
namespace {

TEST_CASE("a peer-memory client is a directory under kernel/mm/memory_peers", "[peer_memory]") {
  char tmpl[] = "/tmp/rxp-peer-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string root = tmpl;
  CHECK_FALSE(HostHasPeerMemoryClients(root));  // no kernel/mm/memory_peers at all
  REQUIRE(mkdir((root + "/kernel").c_str(), 0755) == 0);
  REQUIRE(mkdir((root + "/kernel/mm").c_str(), 0755) == 0);
  REQUIRE(mkdir((root + "/kernel/mm/memory_peers").c_str(), 0755) == 0);
  CHECK_FALSE(HostHasPeerMemoryClients(root));  // the framework, with no client registered
  REQUIRE(mkdir((root + "/kernel/mm/memory_peers/nv_mem").c_str(), 0755) == 0);
  CHECK(HostHasPeerMemoryClients(root));
  rmdir((root + "/kernel/mm/memory_peers/nv_mem").c_str());
  rmdir((root + "/kernel/mm/memory_peers").c_str());
  rmdir((root + "/kernel/mm").c_str());
  rmdir((root + "/kernel").c_str());
  rmdir(root.c_str());
}

}  // namespace
}  // namespace rxp::harness
