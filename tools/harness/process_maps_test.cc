#include "tools/harness/process_maps.h"

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

namespace rxp::harness {
namespace {

constexpr uint64_t kPage = 4096;

// Pages of our own: 0-1 read/write, 2 read-only (its own mapping), 3 inaccessible, 4 unmapped
// (a hole), 5 read/write, 6 unmapped (what lies past it is someone else's).
struct Layout {
  Layout() {
    void* p = mmap(nullptr, 7 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base = reinterpret_cast<uint64_t>(p);
    REQUIRE(mprotect(At(2), kPage, PROT_READ) == 0);
    REQUIRE(mprotect(At(3), kPage, PROT_NONE) == 0);
    REQUIRE(munmap(At(4), kPage) == 0);
    REQUIRE(munmap(At(6), kPage) == 0);
  }
  ~Layout() {
    munmap(At(0), 4 * kPage);
    munmap(At(5), kPage);
  }
  void* At(uint64_t page) const { return reinterpret_cast<void*>(base + page * kPage); }
  uint64_t base = 0;
};

// What both lookups say lies under the range; the ioctl (where the kernel has it) must answer
// as the text does.
RangeMapping BothOf(uint64_t address, uint64_t length) {
  const RangeMapping text = MappingOf(getpid(), address, length, MapsLookup::kText);
  CHECK(text == MappingOf(getpid(), address, length, MapsLookup::kAuto));
  return text;
}

bool Both(uint64_t address, uint64_t length) {
  return BothOf(address, length) == RangeMapping::kReadable;
}

TEST_CASE("readable mappings cover a range only without holes or unreadable pages", "[maps]") {
  Layout m;
  const uint64_t b = m.base;
  CHECK(Both(b, 1));
  CHECK(Both(b, 2 * kPage));
  CHECK(Both(b + 100, 3 * kPage - 100));  // across the read/write and read-only mappings
  CHECK_FALSE(Both(b, 4 * kPage));        // into the inaccessible page
  CHECK_FALSE(Both(b + 3 * kPage, 1));
  CHECK_FALSE(Both(b + 4 * kPage, 1));    // the hole
  CHECK_FALSE(Both(b + 2 * kPage, 4 * kPage));
  CHECK(Both(b + 5 * kPage, kPage));
  CHECK_FALSE(Both(b + 5 * kPage, kPage + 1));  // past the last mapping
  CHECK_FALSE(Both(b, 0));                      // empty
  CHECK_FALSE(Both(UINT64_MAX - 10, 100));      // wraps around
  if (!ProcmapQueryAnswered()) WARN("this kernel has no PROCMAP_QUERY: only the text was used");
}

TEST_CASE("a range is readable, mapped but unreadable somewhere, or has a hole", "[maps]") {
  Layout m;
  const uint64_t b = m.base;
  CHECK(BothOf(b, 3 * kPage) == RangeMapping::kReadable);
  CHECK(BothOf(b + 3 * kPage, kPage) == RangeMapping::kUnreadable);  // PROT_NONE
  CHECK(BothOf(b, 4 * kPage) == RangeMapping::kUnreadable);          // readable, then not
  CHECK(BothOf(b + 3 * kPage - 1, 2) == RangeMapping::kUnreadable);
  CHECK(BothOf(b, 5 * kPage) == RangeMapping::kHole);                // on into the hole
  CHECK(BothOf(b + 3 * kPage, 2 * kPage) == RangeMapping::kHole);
  CHECK(BothOf(b + 4 * kPage, 1) == RangeMapping::kHole);
  CHECK(BothOf(b + 5 * kPage, kPage + 1) == RangeMapping::kHole);   // past the last mapping
  CHECK(BothOf(b, 0) == RangeMapping::kHole);
  CHECK(MappingOf(0x3fffffff, 0x10000, 1) == RangeMapping::kHole);   // no such process
}

// do_mmap()'s MAP_FIXED_NOREPLACE test: EEXIST when any byte of the range is mapped.
TEST_CASE("any mapped byte in a range is found, holes alone are not", "[maps]") {
  Layout m;
  const uint64_t b = m.base;
  CHECK(AnyMapped(getpid(), b + 4 * kPage, kPage) == false);      // the hole
  CHECK(AnyMapped(getpid(), b + 4 * kPage, kPage + 1));          // into page 5
  CHECK(AnyMapped(getpid(), b + 3 * kPage, 2 * kPage));          // PROT_NONE counts
  CHECK(AnyMapped(getpid(), b + 4 * kPage - 1, 1));
  CHECK_FALSE(AnyMapped(getpid(), b + 6 * kPage, 0));
  CHECK_FALSE(AnyMapped(getpid(), UINT64_MAX - 10, 100));
  CHECK_FALSE(AnyMapped(0x3fffffff, b, kPage));  // no such process
}

TEST_CASE("every mapping of the maps text is covered by both lookups as the text says", "[maps]") {
  struct Line { uint64_t lo, hi; bool readable; };
  std::vector<Line> lines;
  FILE* f = std::fopen("/proc/self/maps", "re");
  REQUIRE(f != nullptr);
  char text[512];
  while (std::fgets(text, sizeof text, f) != nullptr) {
    uint64_t lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(text, "%" SCNx64 "-%" SCNx64 " %7s", &lo, &hi, perms) == 3 &&
        std::strstr(text, "[vsyscall]") == nullptr)  // the gate area is no mapping of the mm
      lines.push_back({lo, hi, perms[0] == 'r'});
  }
  std::fclose(f);
  REQUIRE(lines.size() > 5);
  for (const Line& l : lines) {
    INFO(std::hex << l.lo << "-" << l.hi);
    CHECK(Both(l.lo, l.hi - l.lo) == l.readable);
  }
}

TEST_CASE("a process that does not exist covers nothing", "[maps]") {
  CHECK(MappingOf(0x3fffffff, 0x10000, 1) != RangeMapping::kReadable);
  CHECK(MappingOf(0x3fffffff, 0x10000, 1, MapsLookup::kText) != RangeMapping::kReadable);
}

}  // namespace
}  // namespace rxp::harness
