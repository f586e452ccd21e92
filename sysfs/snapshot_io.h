// Snapshot files: load (size-capped, regular files only) and save (atomically, via rename).
#pragma once

#include <string>

#include "abi/result.h"
#include "sysfs/snapshot_schema.h"

namespace rxp::sysfs {

Result<Snapshot> LoadSnapshotFile(const std::string& path);
// Writes `path` through a temporary file in the same directory and rename(2), so a reader
// never sees half a snapshot -- when `path` is absent or a regular file. Anything else there (a
// device, a FIFO, a symlink such as /dev/stdout) is written in place, never replaced.
Result<void> SaveSnapshotFile(const Snapshot& snapshot, const std::string& path);

}  // namespace rxp::sysfs
