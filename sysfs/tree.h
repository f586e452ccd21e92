// Tree: the synthesized /sys as an in-memory tree of directories, attribute files, symlinks
// and passthrough points. Built once by the synthesizer, then read concurrently (the VFS and
// materialize never modify it).
//
// Every name is checked when it is added (no '/', "." or ".."), and every symlink target is
// relative and, resolved lexically from the link's directory, stays inside the tree: a
// snapshot cannot make the VFS or a materialized directory point outside /sys.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "abi/result.h"

namespace rxp::sysfs {

using NodeId = uint32_t;

enum class NodeKind : uint8_t {
  kDir,
  kFile,
  kSymlink,
  // A directory whose contents are the host's (docs/sysfs.md, "passthrough"): the VFS hands
  // paths below it back to the embedder; materialize leaves an empty mount point.
  kPassthrough,
};

struct Node {
  NodeKind kind = NodeKind::kDir;
  uint16_t mode = 0;           // permission bits
  bool read_fails = false;     // a file whose read() fails with EINVAL, like a kernel attribute
  NodeId parent = 0;
  uint32_t dir = 0;            // index of the directory's entries (kDir only)
  std::string name;
  std::string data;            // file content, or symlink target
};

class Tree {
 public:
  static constexpr NodeId kRoot = 0;
  static constexpr std::string_view kMountPoint = "/sys";

  Tree();
  Tree(Tree&&) = default;
  Tree& operator=(Tree&&) = default;

  const Node& node(NodeId id) const { return nodes_[id]; }
  size_t size() const { return nodes_.size(); }
  std::optional<NodeId> Child(NodeId dir, std::string_view name) const;
  // Entries in creation order (the kernel's readdir order is creation order too).
  std::span<const NodeId> Children(NodeId dir) const;
  // "/sys/devices/pci0000:00/...".
  std::string PathOf(NodeId id) const;
  // Walks `rel` ("class/net") from the root without following symlinks.
  std::optional<NodeId> Find(std::string_view rel) const;

  Result<NodeId> Mkdir(NodeId parent, std::string_view name, uint16_t mode = 0755);
  // Creates missing directories along `rel` ("devices/system/node"); existing ones are fine.
  Result<NodeId> MkdirAll(std::string_view rel);
  Result<NodeId> AddFile(NodeId parent, std::string_view name, std::string content,
                         uint16_t mode = 0444);
  // An attribute that exists but whose read fails with EINVAL.
  Result<NodeId> AddUnreadable(NodeId parent, std::string_view name, uint16_t mode = 0444);
  // `target` must be relative and stay inside the tree.
  Result<NodeId> AddSymlink(NodeId parent, std::string_view name, std::string target);
  // A link to `target` spelled the way the kernel spells it (sysfs_get_target_path()).
  Result<NodeId> Link(NodeId parent, std::string_view name, NodeId target);
  Result<NodeId> AddPassthrough(NodeId parent, std::string_view name);

  // The relative path the kernel writes for a link in `link_dir` to `target`.
  std::string RelativeTarget(NodeId link_dir, NodeId target) const;

 private:
  // Most sysfs directories hold a handful of entries: they are searched in order, which
  // costs no allocation per entry. A directory that grows past kIndexedFrom entries (GID and
  // pkey tables, the /sys/bus/pci/devices and /sys/class/* link farms of a large host) gets a
  // hash index, so building stays linear in the number of nodes: open addressing over node
  // ids (0 empty, else id + 1), at most half full, so an entry costs no allocation either.
  static constexpr size_t kIndexedFrom = 16;
  struct DirEntries {
    std::vector<NodeId> order;
    std::vector<NodeId> index;  // empty, or a power-of-two number of slots
  };

  std::optional<NodeId> Lookup(const DirEntries& entries, std::string_view name) const;
  void Index(DirEntries& entries, NodeId id) const;  // after `id` joined entries.order
  Result<NodeId> Add(NodeId parent, std::string_view name, Node node);
  bool IsAncestorOrSelf(NodeId ancestor, NodeId node) const;

  std::deque<Node> nodes_;
  std::deque<DirEntries> dirs_;
};

}  // namespace rxp::sysfs
