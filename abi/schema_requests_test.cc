// A focused request for every schema entry: for each ioctl method (on every driver it exists
// for), each legacy command and each rdma_cm command, the smallest well-formed request the
// kernel's rules allow is built from the entry, decoded and printed; then every mandatory
// attribute is dropped in turn (EINVAL) and the core request is cut short (ENOSPC). The
// captured vectors cover what rxe reaches; this covers the rest (mlx5, DEVX, flows, ...).
#include <catch2/catch.hpp>

#include <vector>

#include "abi/ioctl_decoder.h"
#include "abi/testing/request_builder.h"
#include "abi/trace_printer.h"
#include "abi/ucma_decoder.h"
#include "abi/write_decoder.h"

namespace rxp::abi {
namespace {

using testing::IoctlBuilder;

constexpr uint64_t kAppBuffer = 0x7f0000010000;

// The smallest valid encoding of `a` per uverbs_process_attr().
void AddMinimal(IoctlBuilder& b, const Attr& a) {
  const uint16_t flags = a.mandatory ? UVERBS_ATTR_F_MANDATORY : 0;
  switch (a.type) {
    case AttrType::kIdr:
    case AttrType::kFd:
      b.Handle(a.id, 1, flags);
      return;
    case AttrType::kRawFd:
      b.Handle(a.id, 3, flags);
      return;
    case AttrType::kEnumIn: {  // element 0, at its smallest
      const uint16_t len = a.enum_elems.empty() ? 0 : a.enum_elems[0].min_len;
      b.Attr(a.id, len, len <= 8 ? 0 : kAppBuffer, flags);
      return;
    }
    case AttrType::kIdrsArray: {
      const auto len = static_cast<uint16_t>(4 * (a.min_count > 0 ? a.min_count : 1));
      b.Attr(a.id, len, len <= 8 ? 1 : kAppBuffer, flags);
      return;
    }
    case AttrType::kPtrOut:
      b.Pointer(a.id, kAppBuffer, a.min_len, flags);
      return;
    case AttrType::kPtrIn:
    case AttrType::kConstIn:
    case AttrType::kFlagsIn: {
      const uint16_t len = a.min_len;
      if (len <= 8)
        b.Inline(a.id, 0, len, flags);
      else
        b.Pointer(a.id, kAppBuffer, len, flags);
      return;
    }
  }
}

std::vector<const Attr*> MandatoryAttrs(const Method& m, Driver d) {
  std::vector<const Attr*> out;
  for (const auto& a : m.attrs)
    if (a.mandatory) out.push_back(&a);
  for (const auto& a : DriverAttrsFor(m, d))
    if (a.mandatory) out.push_back(&a);
  return out;
}

std::vector<std::byte> MinimalIoctl(const Method& m, const DeviceAbi& dev, const Attr* skip) {
  IoctlBuilder b(m.object, m.id, dev.driver_id);
  for (const Attr* a : MandatoryAttrs(m, dev.driver)) {
    if (a == skip) continue;
    if (a->meaning == AttrMeaning::kWriteCmd) {
      // INVOKE_WRITE needs a real command and room for its request and response.
      b.Inline(a->id, IB_USER_VERBS_CMD_QUERY_DEVICE, 8);
      b.Pointer(UVERBS_ATTR_CORE_IN, kAppBuffer, sizeof(ib_uverbs_query_device));
      b.Pointer(UVERBS_ATTR_CORE_OUT, kAppBuffer + 0x1000, sizeof(ib_uverbs_query_device_resp));
      continue;
    }
    AddMinimal(b, *a);
  }
  return b.Build();
}

TEST_CASE("every ioctl method: minimal request decodes, prints, and needs each mandatory attr",
          "[schema][requests]") {
  const EmptyPayloadSource none;
  size_t checked = 0;
  for (const auto& m : Methods()) {
    for (uint32_t driver_id : {RDMA_DRIVER_RXE, RDMA_DRIVER_MLX5}) {
      const DeviceAbi dev = DeviceAbiFor(driver_id);
      if (m.driver != Driver::kCore && m.driver != dev.driver) continue;
      INFO(m.name << " on " << DriverName(dev.driver));
      IoctlRequest r;
      auto bytes = MinimalIoctl(m, dev, nullptr);
      auto res = DecodeIoctl(bytes, dev, r);
      INFO((res.ok() ? std::string() : res.error().ToString()));
      REQUIRE(res.ok());
      CHECK(r.method == &m);
      const std::string line = FormatIoctl("uverbs0", r, dev, none, nullptr);
      CHECK(line.find(r.write_command != nullptr ? "INVOKE_WRITE" : std::string(m.short_name)) !=
            std::string::npos);
      for (const Attr* a : MandatoryAttrs(m, dev.driver)) {
        INFO("without " << a->name);
        IoctlRequest missing;
        auto e = DecodeIoctl(MinimalIoctl(m, dev, a), dev, missing);
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().errnum == EINVAL);
      }
      ++checked;
    }
  }
  size_t core = 0;
  for (const auto& m : Methods()) core += m.driver == Driver::kCore;
  CHECK(core > 30);
  CHECK(checked == Methods().size() + core);  // core methods are checked on both drivers
}

std::vector<std::byte> MinimalWrite(const WriteCommand& c, size_t core_len) {
  std::vector<std::byte> core(core_len);
  if (c.trailer == Trailer::kSendWrs || c.trailer == Trailer::kRecvWrs) {
    const uint32_t wqe = c.trailer == Trailer::kSendWrs ? sizeof(ib_uverbs_send_wr)
                                                         : sizeof(ib_uverbs_recv_wr);
    if (core_len >= 24) std::memcpy(core.data() + 20, &wqe, 4);
  }
  if (c.trailer == Trailer::kWqHandles) core.resize(core_len + 8);  // one handle, padded
  std::vector<std::byte> buf;
  if (!c.extended()) {
    if (c.has_resp && core_len >= 8) {
      const uint64_t resp = kAppBuffer;
      std::memcpy(core.data(), &resp, 8);
    }
    ib_uverbs_cmd_hdr h{c.command, static_cast<uint16_t>((sizeof(h) + core.size()) / 4),
                        static_cast<uint16_t>(c.resp_size / 4)};
    buf.resize(sizeof(h));
    std::memcpy(buf.data(), &h, sizeof(h));
  } else {
    core.resize((core.size() + 7) / 8 * 8);
    ib_uverbs_cmd_hdr h{c.command, static_cast<uint16_t>(core.size() / 8),
                        static_cast<uint16_t>((c.resp_size + 7) / 8)};
    ib_uverbs_ex_cmd_hdr ex{};
    ex.response = c.resp_size != 0 ? kAppBuffer : 0;
    buf.resize(sizeof(h) + sizeof(ex));
    std::memcpy(buf.data(), &h, sizeof(h));
    std::memcpy(buf.data() + sizeof(h), &ex, sizeof(ex));
  }
  buf.insert(buf.end(), core.begin(), core.end());
  return buf;
}

TEST_CASE("every legacy command: minimal request decodes and prints, short ones are ENOSPC or padded",
          "[schema][requests]") {
  const DeviceAbi rxe = DeviceAbiFor(RDMA_DRIVER_RXE);
  size_t checked = 0;
  for (const auto& c : WriteCommands()) {
    INFO(c.name);
    if (c.request == nullptr) {
      auto r = DecodeWrite(MinimalWrite(c, 8), rxe);
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().errnum == EOPNOTSUPP);
      continue;
    }
    const auto bytes = MinimalWrite(c, c.req_size);
    auto r = DecodeWrite(bytes, rxe);  // its spans point into `bytes`
    INFO((r.ok() ? std::string() : r.error().ToString()));
    REQUIRE(r.ok());
    CHECK(FormatWrite("uverbs0", *r, rxe, nullptr).find(c.short_name) != std::string::npos);
    if (c.req_size >= 8 && !c.extended()) {  // verify_hdr(): ENOSPC
      auto short_req = DecodeWrite(MinimalWrite(c, c.req_size - 8), rxe);
      REQUIRE_FALSE(short_req.ok());
      CHECK(short_req.error().errnum == ENOSPC);
    }
    if (c.extended()) {  // no req_size (uapi_create_write): padded as uverbs_request() reads
      const auto none = MinimalWrite(c, 0);
      auto short_req = DecodeWrite(none, rxe);
      if (!short_req.ok()) {  // MinimalWrite's one WQ handle is then the struct: none follows
        CHECK(c.trailer == Trailer::kWqHandles);
        CHECK(short_req.error().errnum == ENOSPC);
        ++checked;
        continue;
      }
      CHECK(short_req->short_core == (short_req->core.size() < c.request->size));
      if (auto padded = PaddedExtendedWrite(*short_req, none)) {
        auto whole = DecodeWrite(*padded, rxe);
        INFO((whole.ok() ? std::string() : whole.error().ToString()));
        // A trailer the zeroed struct asks for is missing: the kernel's ENOSPC too.
        CHECK((whole.ok() || whole.error().errnum == ENOSPC));
      }
    }
    ++checked;
  }
  CHECK(checked > 40);
}

TEST_CASE("every rdma_cm command: minimal request decodes and prints", "[schema][requests]") {
  for (const auto& c : UcmaCommands()) {
    INFO(c.name);
    std::vector<std::byte> buf(sizeof(rdma_ucm_cmd_hdr) + c.req_size);
    rdma_ucm_cmd_hdr h{c.cmd, c.req_size, c.resp_min};
    std::memcpy(buf.data(), &h, sizeof(h));
    auto r = DecodeUcmaWrite(buf);
    if (c.request == nullptr) {
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().errnum == ENOSYS);
      continue;
    }
    INFO((r.ok() ? std::string() : r.error().ToString()));
    REQUIRE(r.ok());
    CHECK(FormatUcma("rdma_cm", *r, nullptr).find(c.short_name) != std::string::npos);
  }
}

}  // namespace
}  // namespace rxp::abi
