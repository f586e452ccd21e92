#include "sysfs/tree.h"

#include <fmt/format.h>

#include <algorithm>

#include "sysfs/names.h"

namespace rxp::sysfs {

Tree::Tree() {
  Node root;
  root.kind = NodeKind::kDir;
  root.mode = 0755;
  root.parent = kRoot;
  root.dir = 0;
  root.name = "sys";
  nodes_.push_back(std::move(root));
  dirs_.emplace_back();
}

namespace {

// FNV-1a: sysfs names are short, and this hashes them faster than std::hash's Murmur.
size_t HashName(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return static_cast<size_t>(h ^ (h >> 32));
}

}  // namespace

std::optional<NodeId> Tree::Lookup(const DirEntries& entries, std::string_view name) const {
  if (entries.index.empty()) {
    for (NodeId id : entries.order)
      if (nodes_[id].name == name) return id;
    return std::nullopt;
  }
  const size_t mask = entries.index.size() - 1;
  for (size_t i = HashName(name) & mask; entries.index[i] != 0; i = (i + 1) & mask)
    if (nodes_[entries.index[i] - 1].name == name) return entries.index[i] - 1;
  return std::nullopt;
}

void Tree::Index(DirEntries& entries, NodeId id) const {
  if (entries.order.size() <= kIndexedFrom) return;
  // Linear probing to the first empty slot.
  auto place = [&](NodeId child) {
    const size_t mask = entries.index.size() - 1;
    size_t i = HashName(nodes_[child].name) & mask;
    while (entries.index[i] != 0) i = (i + 1) & mask;
    entries.index[i] = child + 1;
  };
  if (entries.order.size() * 2 <= entries.index.size()) return place(id);
  // (Re)build at a quarter full, every entry so far included (`id` is the last).
  size_t slots = 64;
  while (slots < entries.order.size() * 4) slots *= 2;
  entries.index.assign(slots, 0);
  for (NodeId child : entries.order) place(child);
}

std::optional<NodeId> Tree::Child(NodeId dir, std::string_view name) const {
  const Node& n = nodes_[dir];
  if (n.kind != NodeKind::kDir) return std::nullopt;
  return Lookup(dirs_[n.dir], name);
}

std::span<const NodeId> Tree::Children(NodeId dir) const {
  const Node& n = nodes_[dir];
  if (n.kind != NodeKind::kDir) return {};
  return dirs_[n.dir].order;
}

std::string Tree::PathOf(NodeId id) const {
  std::vector<std::string_view> parts;
  for (NodeId cur = id; cur != kRoot; cur = nodes_[cur].parent) parts.push_back(nodes_[cur].name);
  std::string out(kMountPoint);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    out += '/';
    out += *it;
  }
  return out;
}

std::optional<NodeId> Tree::Find(std::string_view rel) const {
  NodeId cur = kRoot;
  for (std::string_view comp : PathComponents(rel)) {
    auto next = Child(cur, comp);
    if (!next) return std::nullopt;
    cur = *next;
  }
  return cur;
}

Result<NodeId> Tree::Add(NodeId parent, std::string_view name, Node node) {
  RXP_TRY(CheckComponent("tree entry", name));
  if (parent >= nodes_.size() || nodes_[parent].kind != NodeKind::kDir)
    return Fail(ENOTDIR, "tree: parent of {} is not a directory", Quote(name));
  if (Child(parent, name))
    return Fail(EEXIST, "tree: {}/{} already exists", PathOf(parent), name);
  if (nodes_.size() >= UINT32_MAX - 1) return Fail(E2BIG, "tree: too many nodes");
  auto id = static_cast<NodeId>(nodes_.size());
  node.parent = parent;
  node.name = std::string(name);
  if (node.kind == NodeKind::kDir) {
    node.dir = static_cast<uint32_t>(dirs_.size());
    dirs_.emplace_back();
  }
  nodes_.push_back(std::move(node));
  auto& entries = dirs_[nodes_[parent].dir];
  entries.order.push_back(id);
  Index(entries, id);
  return id;
}

Result<NodeId> Tree::Mkdir(NodeId parent, std::string_view name, uint16_t mode) {
  Node n;
  n.kind = NodeKind::kDir;
  n.mode = mode;
  return Add(parent, name, std::move(n));
}

Result<NodeId> Tree::MkdirAll(std::string_view rel) {
  NodeId cur = kRoot;
  for (std::string_view comp : PathComponents(rel)) {
    if (auto next = Child(cur, comp)) {
      if (nodes_[*next].kind != NodeKind::kDir)
        return Fail(ENOTDIR, "tree: {} is not a directory", PathOf(*next));
      cur = *next;
    } else {
      auto made = Mkdir(cur, comp);
      if (!made) return std::move(made).error();
      cur = *made;
    }
  }
  return cur;
}

Result<NodeId> Tree::AddFile(NodeId parent, std::string_view name, std::string content,
                             uint16_t mode) {
  Node n;
  n.kind = NodeKind::kFile;
  n.mode = mode;
  n.data = std::move(content);
  return Add(parent, name, std::move(n));
}

Result<NodeId> Tree::AddUnreadable(NodeId parent, std::string_view name, uint16_t mode) {
  Node n;
  n.kind = NodeKind::kFile;
  n.mode = mode;
  n.read_fails = true;
  return Add(parent, name, std::move(n));
}

Result<NodeId> Tree::AddSymlink(NodeId parent, std::string_view name, std::string target) {
  // Containment: walk the target lexically from the link's directory.
  if (target.empty() || target.front() == '/')
    return Fail(EINVAL, "tree: link {} target {} is not relative", Quote(name), Quote(target));
  size_t depth = 0;
  for (NodeId cur = parent; cur != kRoot; cur = nodes_[cur].parent) ++depth;
  size_t pos = 0;
  while (pos <= target.size()) {
    size_t slash = target.find('/', pos);
    std::string_view comp = std::string_view(target).substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    if (comp == "..") {
      if (depth == 0)
        return Fail(EXDEV, "tree: link {} target {} leaves /sys", Quote(name), Quote(target));
      --depth;
    } else {
      RXP_TRY(CheckComponent("tree link target", comp));
      ++depth;
    }
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  Node n;
  n.kind = NodeKind::kSymlink;
  n.mode = 0777;
  n.data = std::move(target);
  return Add(parent, name, std::move(n));
}

Result<NodeId> Tree::AddPassthrough(NodeId parent, std::string_view name) {
  Node n;
  n.kind = NodeKind::kPassthrough;
  n.mode = 0755;
  return Add(parent, name, std::move(n));
}

bool Tree::IsAncestorOrSelf(NodeId ancestor, NodeId node) const {
  for (NodeId cur = node;; cur = nodes_[cur].parent) {
    if (cur == ancestor) return true;
    if (cur == kRoot) return false;
  }
}

std::string Tree::RelativeTarget(NodeId link_dir, NodeId target) const {
  // fs/sysfs/symlink.c sysfs_get_target_path(): climb from the link's directory until it
  // contains the target's parent, one "../" per step, then descend to the target. For a
  // target that contains the link (`device` of a class device) this yields "../../../<bdf>".
  NodeId target_parent = nodes_[target].parent;
  std::string out;
  NodeId base = link_dir;
  while (base != kRoot && !IsAncestorOrSelf(base, target_parent)) {
    out += "../";
    base = nodes_[base].parent;
  }
  std::vector<std::string_view> down;
  for (NodeId cur = target; cur != base; cur = nodes_[cur].parent) down.push_back(nodes_[cur].name);
  for (auto it = down.rbegin(); it != down.rend(); ++it) {
    out += *it;
    if (std::next(it) != down.rend()) out += '/';
  }
  return out;
}

Result<NodeId> Tree::Link(NodeId parent, std::string_view name, NodeId target) {
  return AddSymlink(parent, name, RelativeTarget(parent, target));
}

}  // namespace rxp::sysfs
