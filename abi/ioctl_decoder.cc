#include "abi/ioctl_decoder.h"

#include <cstring>

#include "abi/write_decoder.h"

namespace rxp::abi {
namespace {

constexpr size_t kHeaderSize = sizeof(IoctlHeader);
constexpr size_t kAttrSize = sizeof(ib_uverbs_attr);
// ib_uverbs_ioctl(): hdr.length > PAGE_SIZE -> EINVAL.
constexpr size_t kPageSize = 4096;

std::string_view TypeName(AttrType t) {
  switch (t) {
    case AttrType::kPtrIn: return "PTR_IN";
    case AttrType::kPtrOut: return "PTR_OUT";
    case AttrType::kConstIn: return "CONST_IN";
    case AttrType::kFlagsIn: return "FLAGS_IN";
    case AttrType::kEnumIn: return "ENUM_IN";
    case AttrType::kIdr: return "IDR";
    case AttrType::kFd: return "FD";
    case AttrType::kRawFd: return "RAW_FD";
    case AttrType::kIdrsArray: return "IDRS_ARRAY";
  }
  return "?";
}

// The per-type checks of uverbs_process_attr() (uverbs_ioctl.c), in its order.
Result<void> ValidateAttr(const Method& method, const Attr& spec, const ib_uverbs_attr& u) {
  PtrSpec ptr = spec.Ptr();  // val_spec
  switch (spec.type) {
    case AttrType::kEnumIn: {
      const uint8_t elem = u.attr_data.enum_data.elem_id;
      if (elem >= spec.enum_elems.size())
        return Fail(EOPNOTSUPP, "{}: {} element {} is not one of the {} the kernel knows",
                    method.short_name, spec.name, elem, spec.enum_elems.size());
      if (u.attr_data.enum_data.reserved != 0)
        return Fail(EINVAL, "{}: {} has a non-zero reserved byte", method.short_name, spec.name);
      // val_spec = &spec->u2.enum_def.ids[elem_id], a PTR_IN spec: checked as one below.
      ptr = spec.enum_elems[elem];
      [[fallthrough]];
    }
    case AttrType::kPtrIn:
    case AttrType::kConstIn:
    case AttrType::kFlagsIn:
    case AttrType::kPtrOut:
      // UVERBS_ATTR_STRUCT: bytes past the known struct must be zero. Inline values are
      // checked here; pointed-to ones once copied in (the engine's copy-in).
      if (spec.type != AttrType::kPtrOut && ptr.zero_trailing && u.len > ptr.max_len &&
          u.len <= sizeof(u.data) && (u.data >> (8 * ptr.max_len)) != 0)
        return Fail(EOPNOTSUPP, "{}: {} has non-zero bytes past its {}-byte struct",
                    method.short_name, spec.name, ptr.max_len);
      if (u.len < ptr.min_len || (!ptr.zero_trailing && u.len > ptr.max_len))
        return Fail(EINVAL, "{}: {}{} is {} bytes; the kernel accepts {}..{}",
                    method.short_name, spec.name,
                    spec.type == AttrType::kEnumIn
                        ? fmt::format(" element {}", u.attr_data.enum_data.elem_id)
                        : "",
                    u.len, ptr.min_len, ptr.max_len);
      if (spec.type != AttrType::kEnumIn && u.attr_data.reserved != 0)
        return Fail(EINVAL, "{}: {} has non-zero reserved attr_data", method.short_name,
                    spec.name);
      return Ok();
    case AttrType::kIdr:
    case AttrType::kFd:
      if (u.attr_data.reserved != 0)
        return Fail(EINVAL, "{}: {} has non-zero reserved attr_data", method.short_name,
                    spec.name);
      if (u.len != 0)
        return Fail(EINVAL, "{}: {} ({}) must have len 0, not {}", method.short_name, spec.name,
                    TypeName(spec.type), u.len);
      return Ok();
    case AttrType::kRawFd:
      if (u.attr_data.reserved != 0 || u.len != 0 || u.data_s64 < INT32_MIN ||
          u.data_s64 > INT32_MAX)
        return Fail(EINVAL, "{}: {} is not a valid fd attribute (len {}, fd {})",
                    method.short_name, spec.name, u.len, u.data_s64);
      return Ok();
    case AttrType::kIdrsArray: {
      if (u.attr_data.reserved != 0)
        return Fail(EINVAL, "{}: {} has non-zero reserved attr_data", method.short_name,
                    spec.name);
      if (u.len % sizeof(uint32_t) != 0)
        return Fail(EINVAL, "{}: {} length {} is not a multiple of 4", method.short_name,
                    spec.name, u.len);
      const size_t count = u.len / sizeof(uint32_t);
      if (count < spec.min_count || count > spec.max_count)
        return Fail(EINVAL, "{}: {} has {} handles; the kernel accepts {}..{}",
                    method.short_name, spec.name, count, spec.min_count, spec.max_count);
      return Ok();
    }
  }
  return Fail(EOPNOTSUPP, "{}: {} has an unknown attribute type", method.short_name, spec.name);
}

// INVOKE_WRITE's handler (uverbs_std_types_device.c): the command must exist
// (uapi_get_method) and CORE_IN / CORE_OUT must hold the command's request and response.
Result<const WriteCommand*> ResolveInvokeWrite(const IoctlRequest& r) {
  const IoctlAttr* cmd = r.Find(UVERBS_ATTR_WRITE_CMD);
  const uint64_t value = cmd->InlineValue();
  const auto command = static_cast<uint32_t>(value);
  if (value > UINT32_MAX ||
      (command & ~(IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_CMD_COMMAND_MASK)) != 0)
    return Fail(EINVAL, "INVOKE_WRITE: command word {:#x} has unknown bits", value);
  const WriteCommand* wc = FindWriteCommand(command);
  if (wc == nullptr || wc->request == nullptr)
    return Fail(EOPNOTSUPP, "INVOKE_WRITE: command {:#x}{} is not implemented by the kernel",
                command, wc != nullptr ? fmt::format(" ({})", wc->short_name) : "");
  const IoctlAttr* in = r.Find(UVERBS_ATTR_CORE_IN);
  const IoctlAttr* out = r.Find(UVERBS_ATTR_CORE_OUT);
  const uint16_t in_len = in != nullptr ? in->len : 0;
  const uint16_t out_len = out != nullptr ? out->len : 0;
  // Extended methods have no req_size / resp_size (uapi_create_write()): any length passes.
  if (wc->extended()) return wc;
  if (in_len < wc->req_size)
    return Fail(ENOSPC, "INVOKE_WRITE {}: core request is {} bytes, needs {}", wc->short_name,
                in_len, wc->req_size);
  if (out_len < wc->resp_size)
    return Fail(ENOSPC, "INVOKE_WRITE {}: core response is {} bytes, needs {}", wc->short_name,
                out_len, wc->resp_size);
  return wc;
}

}  // namespace

PtrSpec IoctlAttr::Ptr() const {
  if (spec == nullptr) return {};
  if (spec->type == AttrType::kEnumIn)
    return elem_id < spec->enum_elems.size() ? spec->enum_elems[elem_id] : PtrSpec{};
  return spec->Ptr();
}

PayloadContext DriverContext(const IoctlRequest& r, std::span<const std::byte> core_in,
                             std::span<const std::byte> driver_in) {
  if (r.write_command != nullptr) return DriverContext(*r.write_command, core_in, driver_in);
  PayloadContext c;
  c.driver_in = driver_in;
  if (r.method == nullptr) return c;
  if (r.method->object == UVERBS_OBJECT_QP && r.method->id == UVERBS_METHOD_QP_CREATE) {
    if (const IoctlAttr* t = r.Find(UVERBS_ATTR_CREATE_QP_TYPE)) c.qp_type =
        static_cast<uint32_t>(t->InlineValue());
    if (const IoctlAttr* f = r.Find(UVERBS_ATTR_CREATE_QP_FLAGS)) c.create_flags =
        static_cast<uint32_t>(f->InlineValue());
    c.has_rwq_ind_table = r.Find(UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE) != nullptr;
    // UVERBS_HANDLER(UVERBS_METHOD_QP_CREATE): the attribute sets IB_QP_CREATE_SOURCE_QPN.
    c.has_source_qpn = r.Find(UVERBS_ATTR_CREATE_QP_SOURCE_QPN) != nullptr;
  }
  // The sizes mlx5 derives CQ and SRQ buffer lengths from (create_cq_user, create_srq_user).
  const auto inline_u32 = [&r](uint16_t id) -> uint32_t {
    const IoctlAttr* a = r.Find(id);
    return a != nullptr ? static_cast<uint32_t>(a->InlineValue()) : 0;
  };
  if (r.method->object == UVERBS_OBJECT_CQ && r.method->id == UVERBS_METHOD_CQ_CREATE)
    c.cqe = inline_u32(UVERBS_ATTR_CREATE_CQ_CQE);
  if (r.method->object == UVERBS_OBJECT_SRQ && r.method->id == UVERBS_METHOD_SRQ_CREATE) {
    c.srq_max_wr = inline_u32(UVERBS_ATTR_CREATE_SRQ_MAX_WR);
    c.srq_max_sge = inline_u32(UVERBS_ATTR_CREATE_SRQ_MAX_SGE);
  }
  return c;
}

const DriverPayload* DriverPayloadFor(const IoctlRequest& r, const DeviceAbi& device) {
  if (r.write_command != nullptr) return r.write_command->drivers.For(device.driver);
  return r.method != nullptr ? r.method->drivers.For(device.driver) : nullptr;
}

Error IoctlHeaderError(std::span<const std::byte> bytes, const IoctlHeader& hdr) {
  if (bytes.size() < kHeaderSize)
    return Fail(EINVAL, "ioctl header truncated: {} of {} bytes", bytes.size(), kHeaderSize);
  if (hdr.length > kPageSize || hdr.length != kHeaderSize + kAttrSize * hdr.num_attrs)
    return Fail(EINVAL, "ioctl header length {} != 24 + 16 * {} attributes", hdr.length,
                hdr.num_attrs);
  return Fail(EPROTONOSUPPORT, "ioctl header reserved fields are not zero");
}

Result<void> DecodeIoctl(std::span<const std::byte> bytes, const DeviceAbi& device,
                         IoctlRequest& out) {
  auto hdr = DecodeIoctlHeader(bytes);
  if (!hdr) return std::move(hdr).error();
  out.header = *hdr;
  out.method = nullptr;
  out.write_command = nullptr;
  out.num_attrs = 0;
  out.num_dropped = 0;
  if (bytes.size() != hdr->length)
    return Fail(EINVAL, "ioctl of {} bytes with a header length of {}", bytes.size(),
                hdr->length);
  if (hdr->num_attrs > kMaxIoctlAttrs)
    return Fail(EINVAL, "{} attributes; the proxy accepts at most {}", hdr->num_attrs,
                kMaxIoctlAttrs);
  // ib_uverbs_cmd_verbs(): the header names the device's driver.
  if (hdr->driver_id != device.driver_id)
    return Fail(EINVAL, "driver_id {} does not match the device's {}", hdr->driver_id,
                device.driver_id);
  const Method* method = FindMethod(device.driver, hdr->object_id, hdr->method_id);
  if (method == nullptr)
    return Fail(EPROTONOSUPPORT, "unknown method {}/{:#x} (object {:#x})",
                ObjectShortName(hdr->object_id), hdr->method_id, hdr->object_id);
  out.method = method;

  const std::span<const Attr> driver_attrs = DriverAttrsFor(*method, device.driver);
  uint64_t seen = 0;  // bit i: the i-th spec of method->attrs ++ driver_attrs is present
  for (uint16_t i = 0; i < hdr->num_attrs; ++i) {
    ib_uverbs_attr u;
    std::memcpy(&u, bytes.data() + kHeaderSize + kAttrSize * i, kAttrSize);
    IoctlAttr& a = out.attrs[i];
    a = IoctlAttr{nullptr, i, u.attr_id, u.len, u.flags, u.attr_data.enum_data.elem_id, u.data};
    out.num_attrs = static_cast<uint16_t>(i + 1);
    // Flags the kernel does not know it ignores (uverbs_set_attr() looks at MANDATORY only);
    // the proxy forwards the known ones alone (kKnownAttrFlags, UverbsFile::BuildIoctl).
    // Look the attribute up: core attributes, then the driver's additions.
    int position = -1;
    for (size_t k = 0; k < method->attrs.size(); ++k)
      if (method->attrs[k].id == u.attr_id) {
        position = static_cast<int>(k);
        a.spec = &method->attrs[k];
        break;
      }
    if (a.spec == nullptr)
      for (size_t k = 0; k < driver_attrs.size(); ++k)
        if (driver_attrs[k].id == u.attr_id) {
          position = static_cast<int>(method->attrs.size() + k);
          a.spec = &driver_attrs[k];
          break;
        }
    if (a.spec == nullptr) {
      // uverbs_set_attr(): unknown + MANDATORY -> EPROTONOSUPPORT; unknown optional is ignored.
      if ((u.flags & UVERBS_ATTR_F_MANDATORY) != 0)
        return Fail(EPROTONOSUPPORT, "{}: unknown mandatory attribute {:#x}",
                    method->short_name, u.attr_id);
      ++out.num_dropped;
      continue;
    }
    const uint64_t bit = uint64_t{1} << position;
    if ((seen & bit) != 0)
      return Fail(EINVAL, "{}: attribute {} appears twice", method->short_name, a.spec->name);
    seen |= bit;
    RXP_TRY(ValidateAttr(*method, *a.spec, u));
  }
  // ib_uverbs_run_method(): every mandatory attribute must be present.
  for (size_t k = 0; k < method->attrs.size(); ++k)
    if (method->attrs[k].mandatory && (seen & (uint64_t{1} << k)) == 0)
      return Fail(EINVAL, "{}: mandatory attribute {} is missing", method->short_name,
                  method->attrs[k].name);
  for (size_t k = 0; k < driver_attrs.size(); ++k)
    if (driver_attrs[k].mandatory && (seen & (uint64_t{1} << (method->attrs.size() + k))) == 0)
      return Fail(EINVAL, "{}: mandatory attribute {} is missing", method->short_name,
                  driver_attrs[k].name);

  if (method->object == UVERBS_OBJECT_DEVICE && method->id == UVERBS_METHOD_INVOKE_WRITE) {
    auto wc = ResolveInvokeWrite(out);
    if (!wc) return std::move(wc).error();
    out.write_command = *wc;
  }
  return Ok();
}

}  // namespace rxp::abi
