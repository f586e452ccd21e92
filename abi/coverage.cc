#include "abi/coverage.h"

#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "abi/payload.h"

namespace rxp::abi {
namespace {

std::string_view KindNote(FieldKind k) {
  switch (k) {
    case FieldKind::kPinnedVa: return "pinned VA";
    case FieldKind::kUserPtr: return "user pointer";
    case FieldKind::kFdIn: return "fd in";
    case FieldKind::kFdOut: return "fd out";
    case FieldKind::kResponsePtr: return "response pointer";
    default: return {};
  }
}

void Add(std::vector<std::string>& items, std::string item) {
  for (const auto& i : items)
    if (i == item) return;
  items.push_back(std::move(item));
}

// Adds every translated field of `layout` as "`prefix.path` (kind)"; nested structs give
// dotted paths ("base.cq_handle").
void CollectFields(std::vector<std::string>& items, const Layout* layout, std::string_view prefix,
                   const std::string& path = {}) {
  if (layout == nullptr) return;
  for (const auto& f : layout->fields) {
    const std::string name = path.empty() ? std::string(f.name) : path + "." + std::string(f.name);
    if (f.kind == FieldKind::kStruct && f.nested != nullptr) {
      CollectFields(items, f.nested, prefix, name);
      continue;
    }
    const std::string_view note = KindNote(f.kind);
    if (!note.empty()) Add(items, fmt::format("`{}{}` ({})", prefix, name, note));
  }
}

void CollectDriver(std::vector<std::string>& items, const DriverPayloads& d) {
  for (auto [driver, p] : {std::pair{"mlx5", d.mlx5}, std::pair{"rxe", d.rxe}}) {
    if (p == nullptr) continue;
    std::vector<const Layout*> ins;
    if (p->in != nullptr) ins.push_back(p->in);
    for (const Layout* v : p->variants) ins.push_back(v);
    std::set<const Layout*> done;
    for (const Layout* l : ins) {
      if (!done.insert(l).second) continue;
      CollectFields(items, l, fmt::format("{} ", driver));
    }
  }
}

Status FromPolicy(const Policy& p, const std::vector<std::string>& items) {
  switch (p.disposition) {
    case Disposition::kDeny: return Status::kDenied;
    case Disposition::kUnsupported: return Status::kUnsupported;
    case Disposition::kAllow: break;
  }
  return items.empty() ? Status::kForwarded : Status::kTranslated;
}

std::string Join(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

std::string StatusCell(const Coverage& c, const Policy& p) {
  if (c.status == Status::kDenied || c.status == Status::kUnsupported)
    return fmt::format("{} ({}): {}", StatusName(c.status), strerrorname_np(p.errnum), p.reason);
  return std::string(StatusName(c.status));
}

std::string ObjectsCell(ObjectId creates, ObjectId destroys) {
  std::string s;
  if (creates != kNoObject) s += fmt::format("creates {}", ObjectShortName(creates));
  if (destroys != kNoObject)
    s += fmt::format("{}destroys {}", s.empty() ? "" : ", ", ObjectShortName(destroys));
  return s;
}

}  // namespace

std::string_view StatusName(Status s) {
  switch (s) {
    case Status::kForwarded: return "forwarded";
    case Status::kTranslated: return "translated";
    case Status::kDenied: return "denied";
    case Status::kUnsupported: return "unsupported";
  }
  return "?";
}

Coverage CoverageOf(const WriteCommand& c) {
  std::vector<std::string> items;
  CollectFields(items, c.request, "");
  CollectFields(items, c.response, "resp.");
  CollectDriver(items, c.drivers);
  if (c.extended() && c.response != nullptr) Add(items, "`ex_hdr.response` (response pointer)");
  return {FromPolicy(c.policy, items), Join(items)};
}

Coverage CoverageOf(const Method& m) {
  std::vector<std::string> items;
  for (const auto& a : m.attrs) {
    switch (a.type) {
      case AttrType::kFd:
        Add(items, fmt::format("`{}` (fd {})", a.short_name, a.access == Access::kNew ? "out" : "in"));
        continue;
      case AttrType::kRawFd:
        Add(items, fmt::format("`{}` (raw fd in)", a.short_name));
        continue;
      default:
        break;
    }
    switch (a.meaning) {
      case AttrMeaning::kPinnedVa:
        Add(items, fmt::format("`{}` (pinned VA)", a.short_name));
        break;
      case AttrMeaning::kFdInline:
        Add(items, fmt::format("`{}` (inline fd in)", a.short_name));
        break;
      case AttrMeaning::kCoreIn:
        Add(items, "CORE_IN/CORE_OUT: as the wrapped legacy command");
        break;
      default:
        break;
    }
  }
  for (Driver d : {Driver::kMlx5, Driver::kRxe})
    for (const auto& a : DriverAttrsFor(m, d))
      if (a.meaning == AttrMeaning::kPinnedVa || a.meaning == AttrMeaning::kFdInline ||
          a.type == AttrType::kFd || a.type == AttrType::kRawFd)
        Add(items, fmt::format("`{}` ({})", a.short_name, DriverName(d)));
  CollectDriver(items, m.drivers);
  return {FromPolicy(m.policy, items), Join(items)};
}

Coverage CoverageOf(const UcmaCommand& c) {
  std::vector<std::string> items;
  CollectFields(items, c.request, "");
  if (c.variable_response) Add(items, "`response` (response pointer, size by option)");
  return {FromPolicy(c.policy, items), Join(items)};
}

std::string CoverageMarkdown() {
  std::string s;
  s += "# ABI coverage\n\n";
  s += "<!-- Generated by `rdmaproxy abi coverage` from abi/ (the schema). Do not edit: run\n"
       "     `cmake --build build --target abi-docs` and commit the result; a unit test fails\n"
       "     when this file and the schema disagree. -->\n\n";
  s += "Every uverbs legacy `write()` command, every `RDMA_VERBS_IOCTL` method, every mlx5\n"
       "driver method and every rdma_cm command of the Linux 6.12 UAPI, and the few newer methods\n"
       "rdma-core sends by default (their last column names the rdma-core release), with what\n"
       "the proxy does with it by default:\n\n"
       "- **forwarded**: passed to the host device as is (after decoding and validation);\n"
       "- **translated**: forwarded after translating the listed fields (user addresses the\n"
       "  kernel pins or writes, fds in the caller's table, response pointers) between the\n"
       "  sandbox and the host;\n"
       "- **denied**: never forwarded; the app gets the errno shown and the log one line with\n"
       "  the reason (a policy file may allow some of them);\n"
       "- **unsupported**: the kernel has no handler; refused with the errno it would return.\n\n"
       "Object handles (PD, CQ, QP, ...) are per open file and pass through untouched, as do\n"
       "`user_handle` cookies and SGE/IOVA addresses (the NIC uses the MR's IOVA space). A\n"
       "handle the file never created, or one of another type, is refused before the kernel\n"
       "sees it, with the kernel's errno: in ioctl attributes, and in the request fields of\n"
       "legacy commands as their handlers read them (an XRC target QP's `pd_handle` names its\n"
       "XRCD; `srq_handle` counts only with `is_srq`; ...).\n\n";
  s += "**Kernels newer than this table.** A host kernel may know methods, attributes and\n"
       "rdma_cm commands that are not listed here. The proxy answers them as a 6.12 kernel\n"
       "would: an unknown object or method, and an unknown attribute marked mandatory, get\n"
       "`EPROTONOSUPPORT`; an unknown rdma_cm command gets `EINVAL`; an unknown optional\n"
       "attribute is dropped, never forwarded (the host kernel would act on it untranslated).\n"
       "rdma-core reads those answers as an older kernel and takes its older path (for example\n"
       "`ibv_reg_mr_ex` falls back from `UVERBS_METHOD_REG_MR` to the legacy REG_MR); the\n"
       "features themselves (DMA handles, dma-buf objects, completion counters, CQ and QP\n"
       "buffers passed as umem descriptors) are not available in the sandbox.\n\n";
  s += "**Methods a device does not implement.** The kernel disables, per device, the methods\n"
       "whose driver function the device lacks (rxe on Linux 6.1 has no `rereg_user_mr`): a\n"
       "call of one is `EOPNOTSUPP` (a legacy command, also through `INVOKE_WRITE`) or\n"
       "`EPROTONOSUPPORT` (an ioctl method) whatever it carries, because the kernel looks the\n"
       "method up first. The proxy forwards a well-formed call and the app gets that answer.\n"
       "A call it would refuse for what it names (a handle the file does not own, an fd of the\n"
       "wrong kind, unreadable memory) gets the same answer: before refusing, the proxy asks\n"
       "the device, once per method and open file, with a call the kernel answers before any\n"
       "handler runs (no attributes: `EINVAL` or `EPROTONOSUPPORT`; an `INVOKE_WRITE` with no\n"
       "request: `ENOSPC` or `EOPNOTSUPP`, rdma-core's own probe). Methods the policy denies\n"
       "are never asked about, and a denial or a quota refusal stands; so does the refusal of\n"
       "a malformed call (bad attribute lengths or reserved fields). Where the proxy has no\n"
       "descriptor of the host file to ask (a harness whose credentials differ from the\n"
       "program's), its own errno stands. Attribute flags other than the 6.12 UAPI's\n"
       "(`UVERBS_ATTR_F_MANDATORY`, `UVERBS_ATTR_F_VALID_OUTPUT`) are ignored, as that kernel\n"
       "ignores them, and not forwarded.\n\n";
  s += "**Request and response sizes.** A legacy command's request and response must hold at\n"
       "least the kernel's struct (`verify_hdr()`, and `INVOKE_WRITE`'s handler: `ENOSPC`). An\n"
       "extended command (`EX_*`, `CREATE_FLOW`, the WQ and RWQ table commands) has no such\n"
       "minimum (`uapi_create_write()` gives it none): the kernel reads a short request as if\n"
       "zero-extended (`uverbs_request()`) and cuts its answer to a short response\n"
       "(`uverbs_response()`), as an rdma-core older than the kernel relies on. The proxy\n"
       "forwards such a request zero-extended to the struct it knows, so it checks the values\n"
       "the kernel reads (a zeroed `comp_channel` names fd 0), and the response length as the\n"
       "app gave it. A create whose response is too short to carry the new handle still makes\n"
       "its object, which counts against the sandbox's quotas until the file is closed.\n"
       "Every input the proxy forwards is copied and checked first, and the kernel reads the\n"
       "copy: an input pointer to unreadable memory is `EFAULT` even where the driver would\n"
       "not have read it (driver data, `UHW_IN`, that rxe ignores).\n\n";
  s += "## Legacy write() commands\n\n";
  s += "Reached by `write()` on `/dev/infiniband/uverbsN` and, on kernels >= 5.x, through\n"
       "`UVERBS_METHOD_INVOKE_WRITE` (rdma-core wraps almost every legacy command in it).\n\n";
  s += "| Command | Kernel constant | Status | Translated | Objects | How rdma-core reaches it |\n";
  s += "|---|---|---|---|---|---|\n";
  for (const auto& c : WriteCommands()) {
    const Coverage cov = CoverageOf(c);
    const uint32_t n = c.command & IB_USER_VERBS_CMD_COMMAND_MASK;
    s += fmt::format("| {}{} {} | `{}` | {} | {} | {} | {} |\n", c.extended() ? "ex " : "", n,
                     c.short_name, c.name, StatusCell(cov, c.policy), cov.translated,
                     ObjectsCell(c.creates, c.destroys), c.path);
  }

  s += "\n## ioctl methods (RDMA_VERBS_IOCTL)\n\n";
  s += "| Method | Kernel constant | Driver | Status | Translated | Objects | Used by |\n";
  s += "|---|---|---|---|---|---|---|\n";
  for (const auto& m : Methods()) {
    const Coverage cov = CoverageOf(m);
    ObjectId creates = kNoObject, destroys = kNoObject;
    for (const auto& a : m.attrs) {
      if (a.access == Access::kNew) creates = a.object;
      if (a.access == Access::kDestroy) destroys = a.object;
    }
    s += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} |\n", m.short_name, m.name,
                     DriverName(m.driver), StatusCell(cov, m.policy), cov.translated,
                     ObjectsCell(creates, destroys), m.path);
  }

  s += "\n## Driver attributes added to core methods\n\n";
  s += "| Method | Driver | Attribute | Kernel constant |\n|---|---|---|---|\n";
  for (const auto& d : DriverAttributes()) {
    const Method* m = FindMethod(d.driver, d.object, d.method);
    for (const auto& a : d.attrs)
      s += fmt::format("| {} | {} | {} | `{}` |\n", m != nullptr ? m->short_name : "?",
                       DriverName(d.driver), a.short_name, a.name);
  }

  s += "\n## rdma_cm commands (/dev/infiniband/rdma_cm)\n\n";
  s += "| Command | Kernel constant | Status | Translated | Used by |\n|---|---|---|---|---|\n";
  for (const auto& c : UcmaCommands()) {
    const Coverage cov = CoverageOf(c);
    s += fmt::format("| {} {} | `{}` | {} | {} | {} |\n", c.cmd, c.short_name, c.name,
                     StatusCell(cov, c.policy), cov.translated, c.path);
  }
  return s;
}

}  // namespace rxp::abi
