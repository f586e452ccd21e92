#include "tools/harness/ordered_listing.h"

#include <sys/syscall.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace rxp::harness {
namespace {

// Where the fields of one record sit (fs/readdir.c: filldir64() and filldir()).
struct Layout {
  size_t off_at;    // d_off, 8 bytes
  size_t name_at;   // d_name
  size_t min_size;  // the smallest record: the fixed part and a one-byte name with its NUL
};
constexpr Layout kDirent64{8, 19, 21};  // u64 ino, s64 off, u16 reclen, u8 type, name
constexpr Layout kDirent{8, 18, 21};    // ulong ino, ulong off, u16 reclen, name, NUL, type

struct Record {
  size_t at;
  size_t size;
  std::string_view name;
  size_t rank;  // position in `order`, or npos: not an entry that moves
};

// A batch a large directory or a scribbling thread cannot make the harness spend much on.
constexpr size_t kMaxBatch = 1 << 20;

}  // namespace

std::optional<std::vector<std::byte>> ReorderDirents(std::span<const std::byte> batch,
                                                     DirentFormat format,
                                                     std::span<const std::string> order) {
  const Layout& layout = format == DirentFormat::kDirent64 ? kDirent64 : kDirent;
  std::vector<Record> records;
  std::vector<size_t> moving;  // indexes into records, in batch order
  for (size_t at = 0; at < batch.size();) {
    if (batch.size() - at < layout.min_size) return std::nullopt;
    uint16_t reclen;
    std::memcpy(&reclen, batch.data() + at + 16, sizeof(reclen));
    // The kernel aligns every record to 8 bytes (ALIGN(..., sizeof(u64)) / sizeof(long)).
    if (reclen < layout.min_size || reclen % 8 != 0 || reclen > batch.size() - at)
      return std::nullopt;
    const auto* name_begin = reinterpret_cast<const char*>(batch.data() + at + layout.name_at);
    const size_t room = reclen - layout.name_at;
    const size_t len = strnlen(name_begin, room);
    if (len == room) return std::nullopt;  // no NUL inside the record
    const std::string_view name(name_begin, len);
    const auto found = std::find(order.begin(), order.end(), name);
    const size_t rank =
        found == order.end() ? std::string_view::npos : static_cast<size_t>(found - order.begin());
    if (rank != std::string_view::npos) moving.push_back(records.size());
    records.push_back({at, reclen, name, rank});
    at += reclen;
  }

  std::vector<size_t> sorted = moving;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](size_t a, size_t b) { return records[a].rank < records[b].rank; });
  if (sorted == moving) return std::nullopt;

  std::vector<std::byte> out;
  out.reserve(batch.size());
  size_t next_moving = 0;
  for (const Record& slot : records) {
    const Record& from =
        slot.rank == std::string_view::npos ? slot : records[sorted[next_moving++]];
    const size_t at = out.size();
    out.insert(out.end(), batch.begin() + static_cast<std::ptrdiff_t>(from.at),
               batch.begin() + static_cast<std::ptrdiff_t>(from.at + from.size));
    // d_off belongs to the position, not to the entry: telldir() after the k-th entry still
    // names the kernel's position after k entries.
    std::memcpy(out.data() + at + layout.off_at, batch.data() + slot.at + layout.off_at, 8);
  }
  return out;
}

EntryDecision OrderedListingHandler::OnEntry(const SyscallView& call, TraceeAccess&) {
  if (call.nr == SYS_getdents64 || call.nr == SYS_getdents) return EntryDecision::AllowAndInspect();
  return EntryDecision::Allow();  // read, ioctl, mmap, ... on a directory: the kernel answers
}

ExitDecision OrderedListingHandler::OnExit(const SyscallView& call, long result,
                                           TraceeAccess& tracee) {
  // getdents64(fd, dirp, count) returned `result` bytes of records at dirp.
  if (result <= 0 || static_cast<uint64_t>(result) > call.args[2] ||
      static_cast<size_t>(result) > kMaxBatch)
    return ExitDecision::Keep();
  std::vector<std::byte> batch(static_cast<size_t>(result));
  if (!tracee.memory().Read(call.args[1], batch).ok()) return ExitDecision::Keep();
  const auto reordered = ReorderDirents(
      batch, call.nr == SYS_getdents64 ? DirentFormat::kDirent64 : DirentFormat::kDirent,
      *order_);
  // A failed write leaves the kernel's order: the listing is still complete and correct.
  if (reordered) (void)tracee.memory().Write(call.args[1], *reordered);
  return ExitDecision::Keep();
}

}  // namespace rxp::harness
