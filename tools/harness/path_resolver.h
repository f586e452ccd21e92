// Path redirection: where a path the tracee names really points.
//
// The harness hands every path lookup it intercepts (open, stat, access, readlink, chdir; see
// path_syscalls.h) to a PathResolver, after making it absolute and canonical in the *sandbox*
// namespace (path_canon.h). The resolver answers: pass it through untouched, rewrite it to a
// host path (sandbox /dev/infiniband/uverbs0 -> host /dev/infiniband/uverbs3; /sys/class/...
// -> a rendered view directory), or fail it with an errno (a device that is not allowed does
// not exist: ENOENT). An open of a path marked `proxy` makes the new fd a proxied one.
//
// RuleResolver is the table-driven implementation: rules on sandbox paths, longest match wins.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rxp::harness {

enum class PathOp { kOpen, kStat, kAccess, kReadlink, kChdir };
const char* PathOpName(PathOp op);

struct Resolution {
  enum class Kind { kPassThrough, kRewrite, kFail };
  Kind kind = Kind::kPassThrough;
  std::string host_path;  // kRewrite: the path the tracee will really use
  int errnum = 0;         // kFail
  bool proxy = false;     // an open of it becomes a proxied fd (FileHandlerFactory::OnOpen)
  std::string label;      // the rule's name for what it matched ("uverbs0", "sysfs view")
  // A proxied directory whose listing the harness orders itself (ordered_listing.h) instead
  // of asking the handler factory: the entry names in the order the program must see them.
  std::shared_ptr<const std::vector<std::string>> listing_order;
};

class PathResolver {
 public:
  virtual ~PathResolver() = default;

  // `sandbox_path` is absolute and normalized (no ".", "..", "//").
  virtual Resolution Resolve(std::string_view sandbox_path, PathOp op) const = 0;

  // The sandbox name of a host path the kernel reports about the tracee — its cwd, a dirfd's
  // target, a /proc magic link — so that relative lookups from there resolve consistently.
  // The inverse of Resolve's rewrites; nullopt when the host path is hidden from the sandbox
  // (e.g. a device that is not allowed).
  virtual std::optional<std::string> HostToSandbox(std::string_view host_path) const = 0;
};

// One rule on sandbox paths.
struct PathRule {
  enum class Match {
    kExact,  // only this path
    kTree,   // this path and everything below it
  };
  std::string sandbox;  // absolute, normalized
  Match match = Match::kTree;
  Resolution::Kind kind = Resolution::Kind::kPassThrough;
  std::string host;     // kRewrite: replaces the `sandbox` prefix
  int errnum = 0;       // kFail
  bool proxy = false;
  std::string label;
  std::shared_ptr<const std::vector<std::string>> listing_order;  // with proxy: see Resolution
};

// Longest matching rule wins; at equal length an exact rule beats a tree rule. No match means
// pass-through.
class RuleResolver final : public PathResolver {
 public:
  explicit RuleResolver(std::vector<PathRule> rules) : rules_(std::move(rules)) {}
  Resolution Resolve(std::string_view sandbox_path, PathOp op) const override;
  std::optional<std::string> HostToSandbox(std::string_view host_path) const override;
  const std::vector<PathRule>& rules() const { return rules_; }

 private:
  const PathRule* Match(std::string_view sandbox_path) const;
  std::vector<PathRule> rules_;
};

}  // namespace rxp::harness
