// FindScratchRegion: where the harness's scratch region lies in this process, found the way a
// program would, from /proc/self/maps. For test programs (the harness testee, rxp_hostile) that
// check what a program can and cannot do to it under `rdmaproxy run`.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace rxp_testdata {

// The harness's scratch region (address_space.h: 64 read-only slots of 16 KiB, then as many
// writable ones), found the way a program would: an anonymous r--p mapping directly followed
// by an anonymous rw-p one. Unsealed (before Linux 6.10) either half may have merged with an
// anonymous neighbour of the same protection, so each is at least 1 MiB, and the region
// starts 1 MiB below the read-only part's end. Returns its start, or 0.
inline constexpr uint64_t kScratchSlotBytes = 16 * 1024;
inline constexpr uint64_t kScratchSlotCount = 64;
inline constexpr uint64_t kScratchHalf = kScratchSlotBytes * kScratchSlotCount;

inline uint64_t FindScratchRegion() {
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return 0;
  char line[512];
  uint64_t read_only_end = 0, found = 0;
  while (found == 0 && std::fgets(line, sizeof line, maps) != nullptr) {
    uint64_t start = 0, end = 0, inode = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %" SCNu64, &start, &end, perms,
                    &inode) != 4)
      continue;
    const bool anonymous = inode == 0 && std::strchr(line, '/') == nullptr &&
                           std::strchr(line, '[') == nullptr;
    if (anonymous && std::strcmp(perms, "rw-p") == 0 && start == read_only_end &&
        end - start >= kScratchHalf)
      found = read_only_end - kScratchHalf;
    read_only_end =
        anonymous && std::strcmp(perms, "r--p") == 0 && end - start >= kScratchHalf ? end : 0;
  }
  std::fclose(maps);
  return found;
}

}  // namespace rxp_testdata
