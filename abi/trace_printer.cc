#include "abi/trace_printer.h"

#include <fmt/format.h>

#include <cstring>

namespace rxp::abi {
namespace {

std::string ErrnoName(int errnum) {
  const char* name = strerrorname_np(errnum);
  return name != nullptr ? name : fmt::format("errno{}", errnum);
}

void AppendOutcomeHead(std::string& s, const CallOutcome& o) {
  if (o.errnum != 0) {
    s += fmt::format(" = -1 {}", ErrnoName(o.errnum));
    if (!o.reason.empty()) s += fmt::format(" ({})", o.reason);
  } else {
    s += fmt::format(" = {}", o.ret);
  }
}

void Sep(std::string& s, bool& first) {
  if (!first) s += ' ';
  first = false;
}

// A scalar attribute value: enum / flag names, hex where the schema says so.
std::string ScalarValue(const Attr& spec, uint64_t v) {
  if (spec.names != nullptr) return FormatNamed(spec.names, v, spec.type == AttrType::kFlagsIn);
  if (spec.hex || spec.meaning == AttrMeaning::kPinnedVa) return fmt::format("{:#x}", v);
  if (spec.meaning == AttrMeaning::kFdInline) return fmt::format("{}", static_cast<int32_t>(v));
  return fmt::format("{}", v);
}

// The driver layout for UHW / driver data of this request, if the schema has one.
const Layout* DriverLayout(const DriverPayload* payload, bool in, const PayloadContext& c) {
  if (payload == nullptr) return nullptr;
  return in ? payload->InFor(c) : payload->out;
}

void AppendBlock(std::string& s, bool& first, std::string_view name, const Layout* layout,
                 std::optional<std::span<const std::byte>> bytes, size_t len) {
  Sep(s, first);
  s += name;
  s += '=';
  if (!bytes) {
    s += fmt::format("<{} bytes>", len);
    return;
  }
  if (layout == nullptr) {
    s += fmt::format("<{} bytes>", bytes->size());
    return;
  }
  s += '{';
  AppendFields(s, *layout, *bytes);
  s += '}';
}

std::optional<std::span<const std::byte>> ReadAttr(const PayloadSource& src, const IoctlAttr& a) {
  if (!a.IsPointer()) return std::span<const std::byte>(
      reinterpret_cast<const std::byte*>(&a.data), a.len < 8 ? a.len : 8);
  return src.Read(a.data, a.len);
}

}  // namespace

std::string FormatIoctl(std::string_view file, const IoctlRequest& r, const DeviceAbi& device,
                        const PayloadSource& in, const CallOutcome* outcome) {
  std::string s = fmt::format("ioctl({}, ", file);
  const WriteCommand* wc = r.write_command;
  const DriverPayload* driver = DriverPayloadFor(r, device);
  // The driver request, for choosing its layout variant.
  std::span<const std::byte> uhw_in, core_in;
  if (const IoctlAttr* u = r.FindMeaning(AttrMeaning::kUdataIn)) {
    if (auto b = ReadAttr(in, *u)) uhw_in = *b;
  }
  if (const IoctlAttr* c = wc != nullptr ? r.FindMeaning(AttrMeaning::kCoreIn) : nullptr) {
    if (auto b = ReadAttr(in, *c)) core_in = *b;
  }
  const PayloadContext context = DriverContext(r, core_in, uhw_in);

  if (wc != nullptr) {
    s += fmt::format("INVOKE_WRITE {}", wc->short_name);
  } else {
    s += r.method != nullptr ? r.method->short_name : "?";
  }
  s += '{';
  bool first = true;
  for (const IoctlAttr& a : r.Attrs()) {
    if (a.spec == nullptr) {
      Sep(s, first);
      s += fmt::format("dropped:{:#x}", a.id);
      continue;
    }
    const Attr& spec = *a.spec;
    const bool is_new = spec.access == Access::kNew;
    if (spec.type == AttrType::kPtrOut || is_new || spec.meaning == AttrMeaning::kWriteCmd)
      continue;  // outputs print after " = "
    switch (spec.type) {
      case AttrType::kIdr:
      case AttrType::kFd:
        Sep(s, first);
        s += fmt::format("{}={}", spec.short_name, static_cast<int64_t>(a.data));
        break;
      case AttrType::kRawFd:
        Sep(s, first);
        s += fmt::format("{}={}", spec.short_name, static_cast<int32_t>(a.data));
        break;
      case AttrType::kEnumIn:
        Sep(s, first);
        s += fmt::format("{}=elem{}", spec.short_name, a.elem_id);
        break;
      case AttrType::kIdrsArray: {
        Sep(s, first);
        s += fmt::format("{}=[", spec.short_name);
        if (auto b = ReadAttr(in, a)) {
          for (size_t i = 0; i + 4 <= b->size(); i += 4) {
            uint32_t h;
            std::memcpy(&h, b->data() + i, 4);
            s += fmt::format("{}{}", i == 0 ? "" : ",", h);
          }
        }
        s += ']';
        break;
      }
      case AttrType::kPtrIn:
      case AttrType::kConstIn:
      case AttrType::kFlagsIn: {
        if (spec.meaning == AttrMeaning::kCoreIn) {
          // INVOKE_WRITE's legacy request: print its fields in place.
          if (auto b = ReadAttr(in, a); b && wc != nullptr) {
            std::string fields;
            AppendFields(fields, *wc->request, *b);
            if (!fields.empty()) {
              Sep(s, first);
              s += fields;
            }
          } else {
            AppendBlock(s, first, "core_in", nullptr, std::nullopt, a.len);
          }
          break;
        }
        if (spec.meaning == AttrMeaning::kUdataIn) {
          AppendBlock(s, first, "uhw", DriverLayout(driver, true, context), ReadAttr(in, a),
                      a.len);
          break;
        }
        if (spec.layout != nullptr || a.IsPointer()) {
          AppendBlock(s, first, spec.short_name, spec.layout, ReadAttr(in, a), a.len);
          break;
        }
        Sep(s, first);
        s += fmt::format("{}={}", spec.short_name, ScalarValue(spec, a.InlineValue()));
        break;
      }
      case AttrType::kPtrOut:
        break;
    }
  }
  s += "})";
  if (outcome == nullptr) return s;
  AppendOutcomeHead(s, *outcome);
  if (outcome->errnum != 0) return s;

  // Outputs: NEW handles / fds from the attribute array after the call, PTR_OUT buffers the
  // kernel marked VALID_OUTPUT.
  std::string outs;
  bool ofirst = true;
  for (const IoctlAttr& a : r.Attrs()) {
    if (a.spec == nullptr) continue;
    const Attr& spec = *a.spec;
    ib_uverbs_attr after{};
    const size_t at = size_t{a.index} * sizeof(ib_uverbs_attr);
    const bool have_after = at + sizeof(after) <= outcome->attrs_after.size();
    if (have_after) std::memcpy(&after, outcome->attrs_after.data() + at, sizeof(after));
    if (spec.access == Access::kNew) {
      Sep(outs, ofirst);
      outs += have_after ? fmt::format("{}={}", spec.short_name, after.data_s64)
                         : fmt::format("{}=?", spec.short_name);
      continue;
    }
    if (spec.type != AttrType::kPtrOut) continue;
    if (have_after && (after.flags & UVERBS_ATTR_F_VALID_OUTPUT) == 0) continue;
    std::optional<std::span<const std::byte>> bytes;
    if (outcome->out != nullptr) bytes = outcome->out->Read(a.data, a.len);
    if (spec.meaning == AttrMeaning::kCoreOut) {
      if (bytes && wc != nullptr && wc->response != nullptr) {
        std::string fields;
        AppendFields(fields, *wc->response, *bytes);
        if (!fields.empty()) {
          Sep(outs, ofirst);
          outs += fields;
        }
      }
      continue;
    }
    if (spec.meaning == AttrMeaning::kUdataOut) {
      AppendBlock(outs, ofirst, "uhw", DriverLayout(driver, false, context), bytes, a.len);
      continue;
    }
    if (spec.layout == nullptr && a.len <= 8 && bytes) {
      uint64_t v = 0;
      // An empty output (the kernel wrote nothing) may have no storage: memcpy's source must
      // not be null even for zero bytes.
      if (!bytes->empty()) std::memcpy(&v, bytes->data(), bytes->size() < 8 ? bytes->size() : 8);
      Sep(outs, ofirst);
      outs += fmt::format("{}={}", spec.short_name, ScalarValue(spec, v));
      continue;
    }
    AppendBlock(outs, ofirst, spec.short_name, spec.layout, bytes, a.len);
  }
  if (!outs.empty()) s += fmt::format(" {{{}}}", outs);
  return s;
}

std::string FormatWrite(std::string_view file, const WriteRequest& r, const DeviceAbi& device,
                        const CallOutcome* outcome) {
  const WriteCommand& c = *r.command;
  std::string s = fmt::format("write({}, {}{{", file, c.short_name);
  AppendFields(s, *c.request, r.core);
  s += '}';
  const DriverPayload* driver = c.drivers.For(device.driver);
  const PayloadContext context = DriverContext(c, r.core, r.driver);
  if (!r.driver.empty()) {
    const Layout* layout = DriverLayout(driver, true, context);
    if (layout != nullptr) {
      s += " +udata{";
      AppendFields(s, *layout, r.driver);
      s += '}';
    } else {
      s += fmt::format(" +udata<{} bytes>", r.driver.size());
    }
  }
  s += ')';
  if (outcome == nullptr) return s;
  AppendOutcomeHead(s, *outcome);
  if (outcome->errnum != 0 || outcome->out == nullptr) return s;
  std::string outs;
  if (c.response != nullptr && r.response != 0) {
    if (auto b = outcome->out->Read(r.response, r.response_len)) AppendFields(outs, *c.response, *b);
  }
  const Layout* dout = DriverLayout(driver, false, context);
  if (dout != nullptr && r.driver_response != 0) {
    if (auto b = outcome->out->Read(r.driver_response, r.driver_response_len)) {
      if (!outs.empty()) outs += ' ';
      outs += "udata={";
      AppendFields(outs, *dout, *b);
      outs += '}';
    }
  }
  if (!outs.empty()) s += fmt::format(" {{{}}}", outs);
  return s;
}

std::string FormatUcma(std::string_view file, const UcmaRequest& r, const CallOutcome* outcome) {
  const UcmaCommand& c = *r.command;
  std::string s = fmt::format("write({}, {}{{", file, c.short_name);
  AppendFields(s, *c.request, r.body);
  s += "})";
  if (outcome == nullptr) return s;
  AppendOutcomeHead(s, *outcome);
  if (outcome->errnum != 0 || outcome->out == nullptr || c.response == nullptr ||
      r.response == 0)
    return s;
  const size_t len = r.response_len < c.response->size ? r.response_len : c.response->size;
  if (auto b = outcome->out->Read(r.response, len)) {
    std::string outs;
    AppendFields(outs, *c.response, *b);
    if (!outs.empty()) s += fmt::format(" {{{}}}", outs);
  }
  return s;
}

std::string FormatRefused(std::string_view syscall, std::string_view file, std::string_view what,
                          const Error& error) {
  return fmt::format("{}({}, {}) = -1 {} ({})", syscall, file, what, ErrnoName(error.errnum),
                     error.reason);
}

}  // namespace rxp::abi
