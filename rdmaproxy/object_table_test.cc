// ObjectTable: the kernel's small handles in the flat table, any other handle in the map, one
// table either way.
#include "rdmaproxy/object_table.h"

#include <catch2/catch.hpp>

#include <map>

namespace rxp::proxy {
namespace {

TEST_CASE("object table: small and large handles are tracked alike", "[engine]") {
  ObjectTable t;
  const uint32_t large = 1u << 20;  // past the flat table
  t.Insert(0, {UVERBS_OBJECT_PD, 0});
  t.Insert(5, {UVERBS_OBJECT_MR, 4096});
  t.Insert(large, {UVERBS_OBJECT_CQ, 0});
  CHECK(t.size() == 3);
  CHECK(t.Find(1) == nullptr);
  CHECK(t.Find(large + 1) == nullptr);
  REQUIRE(t.Find(5) != nullptr);
  CHECK(t.Find(5)->pinned == 4096);

  auto pd = t.Lookup(0, UVERBS_OBJECT_PD);
  REQUIRE(pd.ok());
  CHECK((*pd)->type == UVERBS_OBJECT_PD);
  CHECK(t.Lookup(large, abi::kAnyObject).ok());
  CHECK(t.Lookup(large, UVERBS_OBJECT_QP).error().errnum == EINVAL);
  CHECK(t.Lookup(7, UVERBS_OBJECT_PD).error().errnum == ENOENT);
  CHECK(t.Lookup(uint64_t{1} << 32, UVERBS_OBJECT_PD).error().errnum == ENOENT);

  // Inserting a live handle again replaces it without counting it twice.
  t.Insert(5, {UVERBS_OBJECT_MR, 8192});
  t.Insert(large, {UVERBS_OBJECT_CQ, 1});
  CHECK(t.size() == 3);

  std::map<uint32_t, TrackedObject> seen;
  t.ForEach([&](uint32_t h, const TrackedObject& o) { seen[h] = o; });
  REQUIRE(seen.size() == 3);
  CHECK(seen[5].pinned == 8192);
  CHECK(seen[large].pinned == 1);

  auto gone = t.Erase(5);
  REQUIRE(gone);
  CHECK(gone->pinned == 8192);
  CHECK_FALSE(t.Erase(5));
  CHECK(t.Erase(large));
  CHECK_FALSE(t.Erase(large));
  CHECK(t.size() == 1);
  CHECK(t.Find(5) == nullptr);
  // A freed handle is the kernel's to hand out again.
  t.Insert(5, {UVERBS_OBJECT_QP, 0});
  CHECK(t.Lookup(5, UVERBS_OBJECT_QP).ok());
  CHECK(t.size() == 2);
}

}  // namespace
}  // namespace rxp::proxy
