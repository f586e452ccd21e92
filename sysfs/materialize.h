// Materialize: writes a synthesized tree into a directory a container can bind-mount on /sys
// (and that SYSFS_PATH / HWLOC_FSROOT can point at).
//
// Safety: everything is created relative to directory fds (mkdirat, openat with O_CREAT |
// O_EXCL | O_NOFOLLOW, symlinkat, linkat without AT_SYMLINK_FOLLOW), the output directory
// itself is opened with O_NOFOLLOW, and no link it creates is ever followed, so nothing is
// written outside the output directory, whatever the snapshot said. An existing non-empty
// directory is refused unless `replace_existing`, which first empties it without following
// links or crossing mounts.
//
// Files with identical content (most of a GID table) are hard links to one inode: linkat is
// three times cheaper than creating and writing a file, and the tree is read-only anyway.
//
// Parallel: every entry costs a syscall (about 3 us on tmpfs), so the tree is written by
// several threads (options.threads; the caller is one of them, and the others are joined
// before Materialize returns). A directory is created and opened before it is handed to a
// writer, so it always exists before its children; the first error stops every writer and
// is the one returned. Each writer keeps its own link sources, so repeated content has up to
// one inode per writer; the directory fds they need come from one budget for all writers.
//
// What a directory cannot express: an attribute whose read fails with EINVAL is an empty
// file (the snapshot reader reads an empty file back as EINVAL); a passthrough point is an
// empty directory, a mount point for the host's own.
#pragma once

#include <cstddef>
#include <string>

#include "abi/result.h"
#include "sysfs/tree.h"

namespace rxp::sysfs {

struct MaterializeOptions {
  bool replace_existing = false;
  // Writing threads, the caller's included: 0 is min(hardware threads, 4); at most 8.
  unsigned threads = 0;
};

// The writing threads Materialize runs for `options`: `threads`, or min(hardware threads, 4)
// when it is 0, clamped to 1..8.
unsigned MaterializeWriters(const MaterializeOptions& options);

struct MaterializeStats {
  size_t dirs = 0;
  size_t files = 0;
  size_t links = 0;
};

Result<MaterializeStats> Materialize(const Tree& tree, const std::string& out_dir,
                                     const MaterializeOptions& options = {});

}  // namespace rxp::sysfs
