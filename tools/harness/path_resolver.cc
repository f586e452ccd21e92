#include "tools/harness/path_resolver.h"

#include "tools/harness/path_canon.h"

namespace rxp::harness {
namespace {

bool Covers(const std::string& rule_path, PathRule::Match match, std::string_view path) {
  return match == PathRule::Match::kExact ? path == rule_path : PathIsUnder(path, rule_path);
}

}  // namespace

const char* PathOpName(PathOp op) {
  switch (op) {
    case PathOp::kOpen: return "open";
    case PathOp::kStat: return "stat";
    case PathOp::kAccess: return "access";
    case PathOp::kReadlink: return "readlink";
    case PathOp::kChdir: return "chdir";
  }
  return "?";
}

const PathRule* RuleResolver::Match(std::string_view sandbox_path) const {
  const PathRule* best = nullptr;
  for (const PathRule& rule : rules_) {
    if (!Covers(rule.sandbox, rule.match, sandbox_path)) continue;
    if (best == nullptr || rule.sandbox.size() > best->sandbox.size() ||
        (rule.sandbox.size() == best->sandbox.size() && rule.match == PathRule::Match::kExact))
      best = &rule;
  }
  return best;
}

Resolution RuleResolver::Resolve(std::string_view sandbox_path, PathOp op) const {
  (void)op;
  const PathRule* rule = Match(sandbox_path);
  Resolution r;
  if (rule == nullptr) return r;
  r.kind = rule->kind;
  r.errnum = rule->errnum;
  r.proxy = rule->proxy;
  r.label = rule->label;
  r.listing_order = rule->listing_order;
  if (rule->kind == Resolution::Kind::kRewrite)
    r.host_path = rule->host + std::string(sandbox_path.substr(rule->sandbox.size()));
  return r;
}

std::optional<std::string> RuleResolver::HostToSandbox(std::string_view host_path) const {
  // 1. The longest rewrite whose host side covers the path maps it back.
  const PathRule* best = nullptr;
  for (const PathRule& rule : rules_) {
    if (rule.kind != Resolution::Kind::kRewrite || !Covers(rule.host, rule.match, host_path))
      continue;
    if (best == nullptr || rule.host.size() > best->host.size()) best = &rule;
  }
  if (best != nullptr)
    return best->sandbox + std::string(host_path.substr(best->host.size()));
  // 2. A host path inside a namespace the rules take over (and do not map back to) has no
  //    sandbox name: it is a hidden device or the host side of a replaced directory.
  if (const PathRule* rule = Match(host_path);
      rule != nullptr && rule->kind != Resolution::Kind::kPassThrough)
    return std::nullopt;
  // 3. Everything else is the same path on both sides.
  return std::string(host_path);
}

}  // namespace rxp::harness
