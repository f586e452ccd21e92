#include "sysfs/materialize.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sysfs/names.h"
#include "abi/unique_fd.h"

namespace rxp::sysfs {
namespace {

Error Errno(std::string_view what, std::string_view path) {
  int e = errno;
  return Fail(e, "{} {}: {}", what, path, std::strerror(e));
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

// Entries of an open directory (the fd stays open: a duplicate is handed to fdopendir).
Result<std::vector<std::string>> Entries(int dirfd, std::string_view where) {
  UniqueFd dup(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  if (!dup.valid()) return Errno("dup", where);
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(dup.get()));
  if (!dir) return Errno("fdopendir", where);
  dup.release();
  ::rewinddir(dir.get());
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir.get())) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  }
  return names;
}

// Empties `dirfd` (on device `dev`) depth-first; never follows a link, never crosses a mount.
Result<void> RemoveContents(int dirfd, dev_t dev, const std::string& where, int depth) {
  if (depth > 256) return Fail(ELOOP, "{}: nested too deep to remove", where);
  auto names = Entries(dirfd, where);
  if (!names) return std::move(names).error();
  for (const auto& name : *names) {
    std::string path = where + "/" + name;
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Errno("lstat", path);
    if (S_ISDIR(st.st_mode)) {
      if (st.st_dev != dev) return Fail(EXDEV, "{} is a mount point; refusing to empty it", path);
      UniqueFd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub.valid()) return Errno("open", path);
      RXP_TRY(RemoveContents(sub.get(), dev, path, depth + 1));
      if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0) return Errno("rmdir", path);
    } else if (::unlinkat(dirfd, name.c_str(), 0) != 0) {
      return Errno("unlink", path);
    }
  }
  return Ok();
}

Result<void> WriteAll(int fd, std::string_view data, std::string_view path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Ok();
}

// Files with equal keys are interchangeable: same bytes, mode and EINVAL-ness.
struct FileKey {
  uint16_t mode;
  bool fails;
  std::string_view data;  // views the tree's node, which outlives the writer
  bool operator==(const FileKey&) const = default;
};
struct FileKeyHash {
  size_t operator()(const FileKey& k) const {
    return std::hash<std::string_view>{}(k.data) ^ (size_t{k.mode} << 1) ^ size_t{k.fails};
  }
};
FileKey KeyOf(const Node& n) { return FileKey{n.mode, n.read_fails, n.read_fails ? std::string_view() : n.data}; }

constexpr unsigned kMaxWriters = 8;
constexpr size_t kMaxSourceDirs = 256;  // fds held for link sources, by all the writers together

// Entries below each directory, at any depth: whether a subdirectory is worth handing to
// another writer. Tree::Add adds a node after its parent, so a reverse pass over the ids sees
// every child before its parent.
std::vector<uint32_t> CountDescendants(const Tree& tree) {
  std::vector<uint32_t> below(tree.size(), 0);
  for (size_t id = tree.size() - 1; id > 0; --id) below[tree.node(static_cast<NodeId>(id)).parent] += below[id] + 1;
  return below;
}

// A directory that exists, waiting for a writer to fill it: created (and opened) by the
// writer of its parent, so a directory always exists before its children are created.
struct Task {
  NodeId dir = Tree::kRoot;
  UniqueFd fd;
  int depth = 0;
};

// What the writers share: the read-only plan, and a queue of directories to fill. A writer
// takes a directory, writes it depth first, and queues each large subdirectory it creates
// rather than descending into it, so the other writers get work. The render is over when the
// queue is empty and no writer is busy, or at the first error, which stops every writer.
class Pool {
 public:
  // A subdirectory with this many entries below it goes to the queue: smaller ones are not
  // worth the lock and the wake-up.
  static constexpr uint32_t kHandOffFrom = 64;
  // Each queued directory holds an fd: past this many, a writer descends in place.
  static constexpr size_t kMaxQueued = 64;

  Pool(const Tree& t, unsigned threads) : tree(t), writers(threads), below(CountDescendants(t)) {
    std::unordered_map<FileKey, uint32_t, FileKeyHash> counts;
    for (NodeId id = 0; id < tree.size(); ++id)
      if (const Node& n = tree.node(id); n.kind == NodeKind::kFile) ++counts[KeyOf(n)];
    for (const auto& [key, count] : counts)
      if (count >= 2) repeated.insert(key);
  }

  // One more directory fd kept for link sources, from the budget all writers share: taken as
  // needed, not split in advance, since how much each writer writes depends on scheduling.
  bool TakeSourceDir() {
    size_t left = source_dirs_left_.load(std::memory_order_relaxed);
    while (left != 0 &&
           !source_dirs_left_.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
    }
    return left != 0;
  }

  const Tree& tree;
  const unsigned writers;
  const std::vector<uint32_t> below;
  std::unordered_set<FileKey, FileKeyHash> repeated;  // contents that occur twice or more

  // The first directory: the output directory itself.
  void Start(Task root) {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(root));
  }

  // Queues `task` (moving from it) if it is large and there is room; false: write it yourself.
  bool Offer(Task& task) {
    if (writers < 2 || below[task.dir] < kHandOffFrom) return false;
    {
      std::lock_guard lock(mu_);
      if (stop_ || queue_.size() >= kMaxQueued) return false;
      queue_.push_back(std::move(task));
    }
    cv_.notify_one();
    return true;
  }

  // The next directory to write; nullopt when everything is written or a writer failed.
  std::optional<Task> Next() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stop_ || !queue_.empty() || busy_ == 0; });
    if (stop_ || queue_.empty()) return std::nullopt;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    return task;
  }

  // A writer finished the directory Next() gave it; the first error is the render's.
  void Done(Result<void> result) {
    std::lock_guard lock(mu_);
    --busy_;
    if (!result.ok()) {
      if (!error_) error_ = std::move(result).error();
      stop_ = true;
      queue_.clear();  // closes their fds now
    }
    if (stop_ || (queue_.empty() && busy_ == 0)) cv_.notify_all();
  }

  // Read without the lock by busy writers, to give up early once another one has failed.
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

  Result<void> Finish() {
    std::lock_guard lock(mu_);
    if (error_) return std::move(*error_);
    return Ok();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  unsigned busy_ = 0;             // writers between Next() and Done()
  std::optional<Error> error_;    // the first failure
  std::atomic<bool> stop_{false};  // written under mu_
  std::atomic<size_t> source_dirs_left_{kMaxSourceDirs};
};

// A file written once and hard-linked wherever the same content appears again: most of a
// tree is GID-table entries (zero GIDs, EINVAL stand-ins, "0x0000" pkeys) and repeated
// values, and on the build machines linkat costs a third of creating and writing a file.
struct LinkSource {
  // A duplicate of the fd of the directory that holds `name`, shared by all the sources in
  // that directory: a writer's sources lie in a few directories (the first GID table it
  // writes holds most), so few fds are held however many sources there are.
  std::shared_ptr<const UniqueFd> dir;
  std::string name;
};

// One writing thread. Its link sources are its own: no coordination between writers, and
// two writers linking to different inodes do not contend on one inode lock in the kernel.
// Directories are written depth first: one fd per level is open, plus the directories that
// hold link sources.
class Writer {
 public:
  explicit Writer(Pool& pool) : pool_(pool), tree_(pool.tree) {}

  void Run() {
    while (auto task = pool_.Next()) {
      Result<void> result = WriteDir(task->dir, task->fd.get(), task->depth);
      task.reset();
      pool_.Done(std::move(result));
    }
  }

  const MaterializeStats& stats() const { return stats_; }

 private:
  Result<void> WriteDir(NodeId dir, int dirfd, int depth) {
    if (depth > 256) return Fail(ELOOP, "{}: tree nested too deep", tree_.PathOf(dir));
    std::shared_ptr<const UniqueFd> kept;  // `dirfd` duplicated, once it holds a link source
    for (NodeId id : tree_.Children(dir)) {
      if (pool_.stopped()) return Fail(ECANCELED, "{}: another writer failed", tree_.PathOf(dir));
      const Node& n = tree_.node(id);
      const char* name = n.name.c_str();  // checked by Tree: no '/', "." or ".."
      switch (n.kind) {
        case NodeKind::kDir:
        case NodeKind::kPassthrough: {
          if (::mkdirat(dirfd, name, n.mode) != 0) return Errno("mkdir", tree_.PathOf(id));
          ++stats_.dirs;
          if (n.kind == NodeKind::kPassthrough) break;
          Task sub{id, UniqueFd(::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)), depth + 1};
          if (!sub.fd.valid()) return Errno("open", tree_.PathOf(id));
          if (!pool_.Offer(sub)) RXP_TRY(WriteDir(id, sub.fd.get(), depth + 1));
          break;
        }
        case NodeKind::kFile:
          RXP_TRY(WriteFile(id, n, dirfd, kept));
          ++stats_.files;
          break;
        case NodeKind::kSymlink:
          if (::symlinkat(n.data.c_str(), dirfd, name) != 0) return Errno("symlink", tree_.PathOf(id));
          ++stats_.links;
          break;
      }
    }
    return Ok();
  }

  Result<void> WriteFile(NodeId id, const Node& n, int dirfd, std::shared_ptr<const UniqueFd>& kept) {
    FileKey key = KeyOf(n);
    bool repeated = pool_.repeated.count(key) != 0;
    if (repeated) {
      if (auto src = sources_.find(key); src != sources_.end()) {
        // linkat with flags 0 and a plain name never follows a link, and the source is a
        // regular file this writer created in a directory it created.
        if (::linkat(src->second.dir->get(), src->second.name.c_str(), dirfd, n.name.c_str(), 0) == 0) return Ok();
        if (errno != EMLINK) return Errno("link", tree_.PathOf(id));
      }
    }
    UniqueFd f(::openat(dirfd, n.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, n.mode));
    if (!f.valid()) return Errno("create", tree_.PathOf(id));
    if (!n.read_fails) RXP_TRY(WriteAll(f.get(), n.data, tree_.PathOf(id)));
    if (repeated && !sources_.count(key)) {
      if (!kept && pool_.TakeSourceDir()) {
        UniqueFd dup(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
        if (dup.valid()) kept = std::make_shared<const UniqueFd>(std::move(dup));
      }
      if (kept) sources_.emplace(key, LinkSource{kept, n.name});
    }
    return Ok();
  }

  Pool& pool_;
  const Tree& tree_;
  MaterializeStats stats_;
  std::unordered_map<FileKey, LinkSource, FileKeyHash> sources_;
};

}  // namespace

unsigned MaterializeWriters(const MaterializeOptions& options) {
  const unsigned wanted =
      options.threads != 0 ? options.threads : std::min(std::thread::hardware_concurrency(), 4u);
  return std::clamp(wanted, 1u, kMaxWriters);
}

Result<MaterializeStats> Materialize(const Tree& tree, const std::string& out_dir_as_given,
                                     const MaterializeOptions& options) {
  // Trailing slashes make the kernel follow a symlink at the output path, O_NOFOLLOW or not
  // (path_resolution(7)): the path is taken without them, so "link/" is refused as "link" is.
  std::string out_dir = out_dir_as_given;
  while (out_dir.size() > 1 && out_dir.back() == '/') out_dir.pop_back();
  if (::mkdir(out_dir.c_str(), 0755) != 0 && errno != EEXIST) return Errno("mkdir", out_dir);
  // O_NOFOLLOW: a symlink planted at the output path must not redirect the render.
  UniqueFd root(::open(out_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root.valid()) {
    if (errno == ELOOP || errno == ENOTDIR)
      return Fail(errno, "{} is a symbolic link or not a directory; refusing to render into it", out_dir);
    return Errno("open", out_dir);
  }
  auto existing = Entries(root.get(), out_dir);
  if (!existing) return std::move(existing).error();
  if (!existing->empty()) {
    if (!options.replace_existing)
      return Fail(EEXIST, "{} is not empty ({} entries); nothing was written", out_dir,
                  existing->size());
    struct stat st {};
    if (::fstat(root.get(), &st) != 0) return Errno("stat", out_dir);
    RXP_TRY(RemoveContents(root.get(), st.st_dev, out_dir, 0));
  }

  // Writers: the caller plus helpers. Fds held at most: per writer one per level being
  // written, the directories of link sources (kMaxSourceDirs among them all), plus one per
  // queued directory (Pool::kMaxQueued).
  const unsigned writers = MaterializeWriters(options);
  Pool pool(tree, writers);
  pool.Start(Task{Tree::kRoot, std::move(root), 0});
  std::deque<Writer> team;
  for (unsigned i = 0; i < writers; ++i) team.emplace_back(pool);
  {
    std::vector<std::jthread> helpers;
    for (unsigned i = 1; i < writers; ++i) {
      // A helper that cannot be started leaves its share to the others.
      try {
        helpers.emplace_back([&w = team[i]] { w.Run(); });
      } catch (const std::system_error&) {
        break;
      }
    }
    team[0].Run();
  }  // joins the helpers
  RXP_TRY(pool.Finish());
  MaterializeStats stats;
  for (const Writer& w : team) {
    stats.dirs += w.stats().dirs;
    stats.files += w.stats().files;
    stats.links += w.stats().links;
  }
  return stats;
}

}  // namespace rxp::sysfs
