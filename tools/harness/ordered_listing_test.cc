#include "tools/harness/ordered_listing.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace rxp::harness {
namespace {

namespace fs = std::filesystem;

struct Entry {
  std::string name;
  int64_t off;
  uint8_t type;
};

// What getdents64 / getdents returned for a real directory: the kernel's own records.
std::vector<std::byte> KernelBatch(const std::string& dir, DirentFormat format) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::vector<std::byte> buf(32768);
  const long n = syscall(format == DirentFormat::kDirent64 ? SYS_getdents64 : SYS_getdents, fd,
                         buf.data(), buf.size());
  close(fd);
  REQUIRE(n > 0);
  buf.resize(static_cast<size_t>(n));
  return buf;
}

std::vector<Entry> Parse(std::span<const std::byte> batch, DirentFormat format) {
  std::vector<Entry> out;
  for (size_t at = 0; at < batch.size();) {
    uint16_t reclen;
    std::memcpy(&reclen, batch.data() + at + 16, 2);
    int64_t off;
    std::memcpy(&off, batch.data() + at + 8, 8);
    const bool is64 = format == DirentFormat::kDirent64;
    const char* name = reinterpret_cast<const char*>(batch.data() + at + (is64 ? 19 : 18));
    const auto type = static_cast<uint8_t>(batch[at + (is64 ? 18 : reclen - 1u)]);
    out.push_back({name, off, type});
    at += reclen;
  }
  return out;
}

struct TempDir {
  TempDir() {
    char templ[] = "/tmp/rxp-listing-test.XXXXXX";
    path = mkdtemp(templ);
    for (const char* name : {"uverbs0", "uverbs1", "uverbs2", "uverbs10", "uverbs3"})
      fs::create_directories(path + "/" + name);
    std::ofstream(path + "/abi_version") << "6\n";
  }
  ~TempDir() { fs::remove_all(path); }
  std::string path;
};

TEST_CASE("the named entries take the given order, in the slots they had", "[ordered_listing]") {
  TempDir dir;
  for (DirentFormat format : {DirentFormat::kDirent64, DirentFormat::kDirent}) {
    const auto batch = KernelBatch(dir.path, format);
    const auto kernel = Parse(batch, format);
    REQUIRE(kernel.size() == 8);  // ".", "..", five devices, abi_version
    // Wanted: the kernel's device order reversed, so that each one moves.
    std::vector<std::string> order;
    for (auto it = kernel.rbegin(); it != kernel.rend(); ++it)
      if (it->name.rfind("uverbs", 0) == 0) order.push_back(it->name);
    const auto reordered = ReorderDirents(batch, format, order);
    REQUIRE(reordered.has_value());
    CHECK(reordered->size() == batch.size());
    const auto got = Parse(*reordered, format);
    REQUIRE(got.size() == kernel.size());
    size_t next = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].off == kernel[i].off);  // d_off stays with the position
      if (kernel[i].name.rfind("uverbs", 0) == 0) {
        CHECK(got[i].name == order[next++]);
        CHECK(got[i].type == DT_DIR);
      } else {
        CHECK(got[i].name == kernel[i].name);
        CHECK(got[i].type == kernel[i].type);
      }
    }
    CHECK(next == order.size());
  }
}

TEST_CASE("a batch already in order, or without the names, is left alone", "[ordered_listing]") {
  TempDir dir;
  const auto batch = KernelBatch(dir.path, DirentFormat::kDirent64);
  std::vector<std::string> order;
  for (const Entry& e : Parse(batch, DirentFormat::kDirent64))
    if (e.name.rfind("uverbs", 0) == 0) order.push_back(e.name);
  CHECK_FALSE(ReorderDirents(batch, DirentFormat::kDirent64, order).has_value());
  const std::vector<std::string> none = {"mlx5_0", "mlx5_1"};
  CHECK_FALSE(ReorderDirents(batch, DirentFormat::kDirent64, none).has_value());
  // Names missing from `order` keep their slots; a partial order moves only its own names.
  const std::vector<std::string> two = {order[1], order[0]};
  const auto partial = ReorderDirents(batch, DirentFormat::kDirent64, two);
  REQUIRE(partial.has_value());
  const auto got = Parse(*partial, DirentFormat::kDirent64);
  const auto kernel = Parse(batch, DirentFormat::kDirent64);
  for (size_t i = 0; i < got.size(); ++i) {
    if (kernel[i].name == order[0]) CHECK(got[i].name == order[1]);
    else if (kernel[i].name == order[1]) CHECK(got[i].name == order[0]);
    else CHECK(got[i].name == kernel[i].name);
  }
}

TEST_CASE("a batch that does not parse is left as it is", "[ordered_listing]") {
  TempDir dir;
  const auto batch = KernelBatch(dir.path, DirentFormat::kDirent64);
  std::vector<std::string> order;
  for (const Entry& e : Parse(batch, DirentFormat::kDirent64))
    if (e.name.rfind("uverbs", 0) == 0) order.insert(order.begin(), e.name);
  REQUIRE(ReorderDirents(batch, DirentFormat::kDirent64, order).has_value());

  auto set_reclen = [](std::vector<std::byte> b, uint16_t reclen) {
    std::memcpy(b.data() + 16, &reclen, 2);
    return b;
  };
  // A first record whose length is too short, misaligned, past the end, or has no NUL.
  CHECK_FALSE(ReorderDirents(set_reclen(batch, 8), DirentFormat::kDirent64, order));
  CHECK_FALSE(ReorderDirents(set_reclen(batch, 27), DirentFormat::kDirent64, order));
  CHECK_FALSE(ReorderDirents(set_reclen(batch, 0xfff8), DirentFormat::kDirent64, order));
  std::vector<std::byte> unterminated = batch;
  uint16_t reclen;
  std::memcpy(&reclen, unterminated.data() + 16, 2);
  std::memset(unterminated.data() + 19, 'x', reclen - 19u);
  CHECK_FALSE(ReorderDirents(unterminated, DirentFormat::kDirent64, order));
  // A truncated batch (a record cut off at the end).
  CHECK_FALSE(ReorderDirents(std::span(batch).first(batch.size() - 3), DirentFormat::kDirent64,
                             order));
  CHECK_FALSE(ReorderDirents({}, DirentFormat::kDirent64, order));
}

}  // namespace
}  // namespace rxp::harness
