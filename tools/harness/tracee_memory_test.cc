#include "tools/harness/tracee_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

namespace rxp::harness {
namespace {

// Two pages: the first readable, the second unmapped (a guard), so reads can run off the end.
struct GuardedPage {
  GuardedPage() {
    void* p = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base = static_cast<char*>(p);
    munmap(base + kPage, kPage);
  }
  ~GuardedPage() { munmap(base, kPage); }
  uint64_t addr(size_t offset) const { return reinterpret_cast<uint64_t>(base + offset); }
  static constexpr size_t kPage = 4096;
  char* base;
};

TEST_CASE("reads stop at an unmapped page instead of failing whole", "[memory]") {
  GuardedPage page;
  std::memset(page.base, 'a', GuardedPage::kPage);
  UniqueFd mem_fd;
  ProcessMemory memory(getpid(), &mem_fd);
  std::vector<std::byte> buf(100);
  auto got = memory.ReadSome(page.addr(GuardedPage::kPage - 40), buf);
  REQUIRE(got.ok());
  CHECK(*got == 40);
  auto exact = memory.Read(page.addr(GuardedPage::kPage - 40), buf);
  REQUIRE_FALSE(exact.ok());
  CHECK(exact.error().errnum == EFAULT);
}

TEST_CASE("C strings: short, at the end of a mapping, unterminated, too long", "[memory]") {
  GuardedPage page;
  UniqueFd mem_fd;
  ProcessMemory memory(getpid(), &mem_fd);
  std::strcpy(page.base, "/dev/infiniband/uverbs0");
  CHECK(*memory.ReadCString(page.addr(0), 4095) == "/dev/infiniband/uverbs0");
  // Ends exactly at the last byte before the guard page.
  std::strcpy(page.base + GuardedPage::kPage - 4, "abc");
  CHECK(*memory.ReadCString(page.addr(GuardedPage::kPage - 4), 4095) == "abc");
  // No NUL before the guard: EFAULT, not a read past it.
  std::memset(page.base + GuardedPage::kPage - 8, 'x', 8);
  CHECK(memory.ReadCString(page.addr(GuardedPage::kPage - 8), 4095).error().errnum == EFAULT);
  std::memset(page.base, 'y', 100);
  CHECK(memory.ReadCString(page.addr(0), 50).error().errnum == ENAMETOOLONG);
  CHECK(memory.ReadCString(0, 10).error().errnum == EFAULT);
}

TEST_CASE("Write fails on read-only pages as copy_to_user does, WriteForced reaches them",
          "[memory]") {
  void* p = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  REQUIRE(mprotect(static_cast<char*>(p) + 4096, 4096, PROT_READ) == 0);
  UniqueFd mem_fd;
  ProcessMemory memory(getpid(), &mem_fd);
  const uint64_t addr = reinterpret_cast<uint64_t>(p);
  const uint64_t read_only = addr + 4096;
  const char text[] = "scratch";
  // The program's own buffer, read-only: EFAULT, nothing written, /proc/pid/mem not opened.
  CHECK(memory.Write(read_only, std::as_bytes(std::span(text))).error().errnum == EFAULT);
  CHECK(static_cast<char*>(p)[4096] == '\0');
  CHECK_FALSE(mem_fd.valid());
  // A write that runs from a writable page into the read-only one fails too.
  CHECK(memory.Write(read_only - 4, std::as_bytes(std::span(text))).error().errnum == EFAULT);
  CHECK(memory.Write(addr, std::as_bytes(std::span(text))).ok());
  CHECK(std::strcmp(static_cast<char*>(p), "scratch") == 0);
  // The harness's scratch region: forced.
  REQUIRE(memory.WriteForced(read_only, std::as_bytes(std::span(text))).ok());
  CHECK(std::strcmp(static_cast<char*>(p) + 4096, "scratch") == 0);
  CHECK(mem_fd.valid());  // opened for it, and the caller owns it
  munmap(p, 8192);
  CHECK(memory.Write(addr, std::as_bytes(std::span(text))).error().errnum == EFAULT);
  CHECK(memory.WriteForced(addr, std::as_bytes(std::span(text))).error().errnum == EFAULT);
}

}  // namespace
}  // namespace rxp::harness
