// libFuzzer target for the snapshot loader (RDMAPROXY_FUZZ=ON, clang). Seed it with the
// fixtures: build-fuzz/tests/fuzz/rxp_fuzz_sysfs_snapshot tests/data/sysfs/
//
// Properties checked on every input:
//   - ParseSnapshot never crashes, hangs or leaks, whatever the bytes;
//   - an accepted snapshot serializes to text that parses back to the same text;
//   - an accepted snapshot always synthesizes (validation leaves nothing for the synthesizer
//     to trip on), and resolving its every node's path through the VFS succeeds.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "sysfs/snapshot_schema.h"
#include "sysfs/synthesize.h"
#include "sysfs/vfs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rxp::sysfs;
  auto snapshot = ParseSnapshot(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!snapshot) return 0;
  std::string text = SerializeSnapshot(*snapshot);
  auto again = ParseSnapshot(text);
  if (!again || SerializeSnapshot(*again) != text) __builtin_trap();
  auto tree = Synthesize(*snapshot);
  if (!tree) __builtin_trap();
  SysfsVfs vfs(std::make_shared<const Tree>(std::move(*tree)));
  for (NodeId id = 0; id < vfs.tree().size(); id += 1 + static_cast<NodeId>(vfs.tree().size() / 64)) {
    auto r = vfs.Resolve(vfs.tree().PathOf(id), false);
    if (!r) __builtin_trap();
  }
  return 0;
}
