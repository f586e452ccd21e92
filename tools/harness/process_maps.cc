#include "tools/harness/process_maps.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "abi/unique_fd.h"

namespace rxp::harness {
namespace {

// include/uapi/linux/fs.h (Linux 6.11), which Debian 12's headers predate.
struct ProcmapQuery {
  uint64_t size;
  uint64_t query_flags;  // in
  uint64_t query_addr;   // in
  uint64_t vma_start;    // out
  uint64_t vma_end;      // out
  uint64_t vma_flags;    // out
  uint64_t vma_page_size;
  uint64_t vma_offset;
  uint64_t inode;
  uint32_t dev_major;
  uint32_t dev_minor;
  uint32_t vma_name_size;  // in/out: 0, no name wanted
  uint32_t build_id_size;  // in/out: 0, no build id wanted
  uint64_t vma_name_addr;
  uint64_t build_id_addr;
};
static_assert(sizeof(ProcmapQuery) == 104);
constexpr unsigned long kProcmapQuery = _IOWR('f', 17, ProcmapQuery);
constexpr uint64_t kVmaReadable = 0x01;  // PROCMAP_QUERY_VMA_READABLE

// -1: not asked yet; 0: the kernel does not know the ioctl; 1: it answered.
std::atomic<int> query_known{-1};

// The mappings that hold [want, end), one query each. No flags: do_procmap_query then returns
// the mapping that holds query_addr or ENOENT (a hole). nullopt: the kernel did not answer
// (no PROCMAP_QUERY before Linux 6.11), and the text must.
std::optional<RangeMapping> QueryCover(int maps, uint64_t want, uint64_t end) {
  RangeMapping found = RangeMapping::kReadable;
  while (want < end) {
    ProcmapQuery q{};
    q.size = sizeof q;
    q.query_addr = want;
    if (::ioctl(maps, kProcmapQuery, &q) != 0) {
      // A hole; or the process is gone.
      if (errno == ENOENT || errno == ESRCH) return RangeMapping::kHole;
      // ENOTTY: a kernel before 6.11, which will never answer. Anything else the text decides,
      // so an ioctl this kernel answers differently never refuses a good range.
      if (errno == ENOTTY) query_known.store(0, std::memory_order_relaxed);
      return std::nullopt;
    }
    query_known.store(1, std::memory_order_relaxed);
    if (q.vma_start > want || q.vma_end <= want) return RangeMapping::kHole;
    if ((q.vma_flags & kVmaReadable) == 0) found = RangeMapping::kUnreadable;
    want = q.vma_end;
  }
  return found;
}

// The same from the text, whose lines are in address order: the first mapping that ends past
// `want` must start at or before it.
RangeMapping TextCover(UniqueFd maps, uint64_t want, uint64_t end) {
  FILE* f = ::fdopen(maps.get(), "r");
  if (f == nullptr) return RangeMapping::kHole;
  (void)maps.release();  // the FILE owns it now
  char line[512];
  bool in_line = false;  // the rest of a line longer than the buffer
  RangeMapping found = RangeMapping::kReadable;
  while (want < end && std::fgets(line, sizeof line, f) != nullptr) {
    const bool continued = in_line;
    const std::string_view l(line);
    in_line = !l.ends_with('\n');
    if (continued) continue;
    uint64_t lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &lo, &hi, perms) != 3) continue;
    if (hi <= want) continue;
    if (lo > want) break;
    if (perms[0] != 'r') found = RangeMapping::kUnreadable;
    want = hi;
  }
  std::fclose(f);
  return want >= end ? found : RangeMapping::kHole;
}

}  // namespace

RangeMapping MappingOf(pid_t pid, uint64_t address, uint64_t length, MapsLookup how) {
  if (length == 0 || address + length < address) return RangeMapping::kHole;
  const std::string path = "/proc/" + std::to_string(pid) + "/maps";
  UniqueFd maps(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!maps.valid()) return RangeMapping::kHole;
  const uint64_t end = address + length;
  if (how == MapsLookup::kAuto && query_known.load(std::memory_order_relaxed) != 0)
    if (auto covered = QueryCover(maps.get(), address, end)) return *covered;
  return TextCover(std::move(maps), address, end);
}

bool AnyMapped(pid_t pid, uint64_t address, uint64_t length) {
  if (length == 0 || address + length < address) return false;
  const std::string path = "/proc/" + std::to_string(pid) + "/maps";
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return false;
  const uint64_t end = address + length;
  char line[512];
  bool in_line = false;  // the rest of a line longer than the buffer
  bool hit = false;
  while (!hit && std::fgets(line, sizeof line, f) != nullptr) {
    const bool continued = in_line;
    in_line = !std::string_view(line).ends_with('\n');
    if (continued) continue;
    uint64_t lo = 0, hi = 0;
    if (std::sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) != 2) continue;
    if (lo >= end) break;  // address order: nothing later can overlap
    hit = hi > address;
  }
  std::fclose(f);
  return hit;
}

bool ProcmapQueryAnswered() { return query_known.load(std::memory_order_relaxed) == 1; }

}  // namespace rxp::harness
