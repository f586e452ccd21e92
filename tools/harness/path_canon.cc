#include "tools/harness/path_canon.h"

#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

namespace rxp::harness {
namespace {

std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    parts.push_back(path.substr(pos, next - pos));
    pos = next + 1;
  }
  return parts;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string Child(const std::string& dir, std::string_view name) {
  std::string out = dir == "/" ? "" : dir;
  out += '/';
  out += name;
  return out;
}

bool IsNumber(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

bool IsProcMagicLink(std::string_view path) {
  auto parts = Split(path);  // "", "proc", pid, ...
  if (parts.size() < 4 || parts[1] != "proc" || !IsNumber(parts[2])) return false;
  size_t i = 3;
  if (parts[i] == "task") {
    if (parts.size() < 6 || !IsNumber(parts[4])) return false;
    i = 5;
  }
  const size_t rest = parts.size() - i;
  if (rest == 1) return parts[i] == "cwd" || parts[i] == "root";
  return rest == 2 && parts[i] == "fd" && IsNumber(parts[i + 1]);
}

namespace {

class Walker {
 public:
  Walker(const CanonRequest& req, HostFs& fs, const PathResolver& resolver)
      : req_(req), fs_(fs), resolver_(resolver) {}

  // Maps a host path the kernel reported to its sandbox name; records it when hidden.
  std::string ToSandbox(const std::string& host) {
    auto sandbox = resolver_.HostToSandbox(host);
    if (sandbox) return *sandbox;
    if (hidden_host_.empty()) hidden_host_ = host;
    return host;
  }

  // ".." from `cur`: the parent of where `cur` really is (realpath of its host path).
  std::string PhysicalParent(const std::string& cur) {
    if (cur == "/") return cur;
    Resolution r = resolver_.Resolve(cur, PathOp::kStat);
    if (r.kind != Resolution::Kind::kFail) {
      auto real = fs_.RealPath(r.kind == Resolution::Kind::kRewrite ? r.host_path : cur);
      if (real.ok()) {
        if (auto sandbox = resolver_.HostToSandbox(*real)) return Parent(*sandbox);
      }
    }
    return Parent(cur);  // does not exist (yet): the kernel will fail it; lexical is fine
  }

  // Jumps through /proc/self, /proc/thread-self, /dev/fd and /proc magic links at `cur`.
  std::string Substitute(const std::string& cur) {
    const std::string proc_self = "/proc/" + std::to_string(req_.tgid);
    if (cur == "/proc/self") return proc_self;
    if (cur == "/proc/thread-self") return proc_self + "/task/" + std::to_string(req_.tid);
    if (cur == "/dev/fd") return proc_self + "/fd";
    if (!IsProcMagicLink(cur)) return cur;
    auto target = fs_.ReadLink(cur);
    // Not readable (another user's process) or not a path (pipe:[...], anon_inode:...): the
    // kernel opens the object behind the link directly; nothing here to redirect.
    if (!target.ok() || target->empty() || (*target)[0] != '/') return cur;
    crossed_magic_ = true;
    return ToSandbox(NormalizePath(*target));
  }

  Result<CanonicalPath> Run() {
    if (req_.raw.empty()) return Fail(ENOENT, "empty path");
    std::string cur = "/";
    std::string host_base = "/";
    if (req_.raw[0] != '/') {
      const std::string link = "/proc/" + std::to_string(req_.tid) +
                               (req_.dirfd == AT_FDCWD ? std::string("/cwd")
                                                       : "/fd/" + std::to_string(req_.dirfd));
      auto base = fs_.ReadLink(link);
      if (!base.ok()) return std::move(base).error();
      if (base->empty() || (*base)[0] != '/')
        return Fail(ENOTDIR, "{} is not a directory ({})", link, *base);
      host_base = *base;
      cur = ToSandbox(host_base);
      base_redirected_ = cur != host_base && hidden_host_.empty();
    }
    const auto parts = Split(req_.raw);
    // The last non-empty component; a trailing slash makes the kernel follow it regardless.
    size_t last = parts.size();
    while (last > 0 && parts[last - 1].empty()) --last;
    const bool trailing_slash = last < parts.size();
    bool lexical = true;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string_view part = parts[i];
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        lexical = false;
        cur = PhysicalParent(cur);
        continue;
      }
      cur = Child(cur, part);
      const bool is_last = i + 1 == last;
      if (!is_last || req_.follow_last || trailing_slash) {
        cur = Substitute(cur);
      }
    }
    CanonicalPath out;
    out.sandbox = cur;
    out.lexical = lexical && !crossed_magic_;
    out.base_redirected = base_redirected_;
    out.untouched_host = JoinPath(host_base, req_.raw);
    out.hidden = !hidden_host_.empty();
    out.hidden_host = hidden_host_;
    return out;
  }

 private:
  const CanonRequest& req_;
  HostFs& fs_;
  const PathResolver& resolver_;
  bool crossed_magic_ = false;
  bool base_redirected_ = false;
  std::string hidden_host_;
};

}  // namespace

std::string NormalizePath(std::string_view absolute) {
  std::vector<std::string_view> stack;
  for (std::string_view part : Split(absolute)) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    stack.push_back(part);
  }
  std::string out;
  for (std::string_view part : stack) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

std::string JoinPath(std::string_view base, std::string_view rel) {
  if (!rel.empty() && rel[0] == '/') return NormalizePath(rel);
  std::string joined(base);
  joined += '/';
  joined += rel;
  return NormalizePath(joined);
}

bool PathIsUnder(std::string_view path, std::string_view dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  if (path.size() < dir.size() || path.substr(0, dir.size()) != dir) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

Result<std::string> LocalHostFs::ReadLink(const std::string& path) {
  std::string buf(PATH_MAX, '\0');
  ssize_t n = readlink(path.c_str(), buf.data(), buf.size());
  if (n < 0) return Fail(errno, "readlink {}: {}", path, std::strerror(errno));
  buf.resize(static_cast<size_t>(n));
  return buf;
}

Result<std::string> LocalHostFs::RealPath(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  if (real == nullptr) return Fail(errno, "realpath {}: {}", path, std::strerror(errno));
  std::string out(real);
  std::free(real);
  return out;
}

Result<CanonicalPath> Canonicalize(const CanonRequest& req, HostFs& fs,
                                   const PathResolver& resolver) {
  return Walker(req, fs, resolver).Run();
}

}  // namespace rxp::harness
