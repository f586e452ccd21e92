#include "sysfs/policy.h"

namespace rxp::sysfs {
namespace {

// `path` equals `prefix` or lies below it.
bool Under(std::string_view path, std::string_view prefix) {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

}  // namespace

PathClass ClassifyPath(std::string_view path) {
  if (!Under(path, "/sys")) return PathClass::kNotSysfs;
  for (const auto& rule : kPassthroughRules)
    if (Under(path, rule.path)) return PathClass::kPassthrough;
  return PathClass::kSynthesized;
}

}  // namespace rxp::sysfs
