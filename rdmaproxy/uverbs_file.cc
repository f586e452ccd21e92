#include "rdmaproxy/uverbs_file.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "abi/mlx5_queue_sizes.h"
#include "abi/payload.h"
#include "abi/trace_printer.h"
#include "rdmaproxy/content_rules.h"
#include "rdmaproxy/copy_out.h"
#include "rdmaproxy/engine.h"
#include "rdmaproxy/invoke_write.h"
#include "rdmaproxy/translate.h"

namespace rxp::proxy {
namespace {

constexpr size_t kAttr = sizeof(ib_uverbs_attr);
// The least a response bounce buffer holds. Drivers copy some responses with ib_copy_to_udata,
// which does not look at the caller's length (mlx5_ib_create_cq: the cqn; mlx5_ib_alloc_pd: the
// pdn): natively a short buffer is the caller's own memory to lose, here those bytes must land
// inside the image. Only the caller's length is copied back.
constexpr size_t kMinResponseBounce = 64;
// The longest write() any command can be (ib_uverbs_write(), verify_hdr()): the count must equal
// in_words * 4 (legacy, u16 words) or 24 + (in_words + provider_in_words) * 8 (extended), so
// nothing longer than the extended maximum ever passes the kernel's own check (EINVAL).
constexpr uint64_t kMaxWrite = sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_ex_cmd_hdr) +
                               2 * uint64_t{UINT16_MAX} * 8;

ib_uverbs_attr AttrAt(std::span<const std::byte> bytes, size_t at) {
  ib_uverbs_attr a;
  std::memcpy(&a, bytes.data() + at, sizeof(a));
  return a;
}

// The length INVOKE_WRITE's CORE_IN is forwarded with: an extended command's request shorter
// than the struct the proxy knows is zero-extended to it (abi::PaddedExtendedWrite); 0 when
// it stays as the app sent it.
size_t PaddedCoreIn(const abi::WriteCommand* wc, size_t len) {
  if (wc == nullptr || !wc->extended() || wc->request == nullptr) return 0;
  const size_t whole = wc->padded_request_bytes();
  return len < whole ? whole : 0;
}

FileKind FdKindOf(abi::ObjectId object) {
  switch (object) {
    case UVERBS_OBJECT_COMP_CHANNEL: return FileKind::kCompChannel;
    case UVERBS_OBJECT_ASYNC_EVENT: return FileKind::kAsyncEvent;
    default: return FileKind::kOther;
  }
}

Result<std::vector<std::byte>> CopyIn(AppMemory& memory, uint64_t address, size_t length) {
  std::vector<std::byte> bytes(length);
  if (length == 0) return bytes;
  auto r = memory.Read(address, bytes);
  if (!r) return Fail(EFAULT, "cannot read {} bytes at {:#x}: {}", length, address,
                      r.error().reason);
  return bytes;
}

// CopyIn into `out`, reusing its capacity.
Result<void> CopyInto(AppMemory& memory, uint64_t address, size_t length,
                      std::vector<std::byte>& out) {
  out.resize(length);
  if (length == 0) return Ok();
  auto r = memory.Read(address, out);
  if (!r) return Fail(EFAULT, "cannot read {} bytes at {:#x}: {}", length, address,
                      r.error().reason);
  return Ok();
}

// The copied-in bytes of pointer attributes, for content rules and the trace printer: where
// each app buffer sits in the forward image (no second copy).
class CopiedInputs final : public abi::PayloadSource {
 public:
  explicit CopiedInputs(const ForwardImage& image) : image_(image) {}
  void Add(uint64_t address, size_t image_offset, size_t length) {
    if (count_ < entries_.size()) entries_[count_++] = {address, image_offset, length};
  }
  std::optional<std::span<const std::byte>> Read(uint64_t address, size_t length) const override {
    for (size_t i = 0; i < count_; ++i) {
      const Entry& e = entries_[i];
      if (e.address == address && e.length >= length)
        return image_.bytes().subspan(e.image_offset, length);
    }
    return std::nullopt;
  }

 private:
  struct Entry {
    uint64_t address;
    size_t image_offset;
    size_t length;
  };
  const ForwardImage& image_;
  std::array<Entry, abi::kMaxIoctlAttrs> entries_;  // the first count_ are set
  size_t count_ = 0;
};

// App memory after the call, for the result half of a trace line.
class AppPayloads final : public abi::PayloadSource {
 public:
  AppPayloads(AppMemory& memory) : memory_(memory) {}
  std::optional<std::span<const std::byte>> Read(uint64_t address, size_t length) const override {
    // Nothing to read (an empty driver response): the embedder is not asked for 0 bytes.
    if (length == 0) return std::span<const std::byte>{};
    auto& slot = cache_.emplace_back(length);
    if (!memory_.Read(address, slot)) return std::nullopt;
    return std::span<const std::byte>(slot);
  }

 private:
  AppMemory& memory_;
  mutable std::vector<std::vector<std::byte>> cache_;
};

// What the command path takes from a legacy command's schema entry by name, looked up once per
// command (the decoders' WriteCommand is an entry of abi::WriteCommands()).
struct WriteFacts {
  std::string invoke_name;  // "INVOKE_WRITE REG_MR"
  int created_at = -1;      // the new object's handle in the response (wc.created)
  int destroyed_at = -1;    // the destroyed object's handle in the request (wc.destroyed)
  // The request's fields to look up (handles) and to translate (pinned addresses, fds, user
  // pointers): a few of its fields, or none, instead of a walk over all of them.
  std::vector<abi::FieldAt> handles;
  std::vector<abi::FieldAt> translated;
};

const WriteFacts& FactsOf(const abi::WriteCommand& wc) {
  struct Table {
    const abi::WriteCommand* first;
    std::vector<WriteFacts> facts;  // parallel to abi::WriteCommands()
  };
  static const Table table = [] {
    Table t{abi::WriteCommands().data(), {}};
    for (const abi::WriteCommand& c : abi::WriteCommands()) {
      WriteFacts& f = t.facts.emplace_back();
      f.invoke_name = fmt::format("INVOKE_WRITE {}", c.short_name);
      if (c.creates != abi::kNoObject && c.response != nullptr)
        f.created_at = c.response->OffsetOf(c.created);
      if (c.destroys != abi::kNoObject && c.request != nullptr)
        f.destroyed_at = c.request->OffsetOf(c.destroyed);
      if (c.request != nullptr) {
        f.handles = ObjectTable::HandleFields(*c.request);
        f.translated = TranslatedFields(*c.request);
      }
    }
    return t;
  }();
  return table.facts[static_cast<size_t>(&wc - table.first)];
}

// Where the kernel's output for PTR_OUT attribute `a` lands: its bounce buffer in the image
// (sentry mode) or the app's own buffer.
Place OutputPlace(const UverbsCommand& c, const abi::IoctlAttr& a) {
  const int k = c.image_attr[a.index];
  for (const auto& o : c.outputs)
    if (o.attr_index == k) return {true, o.image_offset, a.len};
  return {false, a.data, a.len};
}

// The legacy GET_CONTEXT (ib_uverbs_get_context) creates the ucontext and, with it, the async
// event fd it returns in resp.async_fd -- whether it came as a write() or, after rdma-core's
// fallback from the GET_CONTEXT method (_execute_ioctl_fallback on EPROTONOSUPPORT), wrapped in
// INVOKE_WRITE. Either way that fd must become the app's, of kind kAsyncEvent, or every CQ,
// QP, SRQ and WQ rdma-core then creates with it as EVENT_FD is refused (EBADF).
void ProduceLegacyContext(UverbsCommand& c, const Place& response) {
  c.creates_context = true;
  Produced p{Produced::What::kFd};
  p.place = response;
  p.offset = offsetof(ib_uverbs_get_context_resp, async_fd);
  p.fd_kind = FileKind::kAsyncEvent;
  c.produced.push_back(p);
}

}  // namespace

UverbsFile::UverbsFile(Engine& engine, uint64_t id, std::string label, abi::DeviceAbi device)
    : engine_(engine), id_(id), label_(std::move(label)), device_(device), mmaps_(device.driver) {}

UverbsFile::~UverbsFile() { Closed(); }

void UverbsFile::Refuse(const Error& error, int refusal) {
  engine_.Refused(label_, error, static_cast<Refusal>(refusal));
}

namespace {

// An ioctl attribute's object id, as the kernel reads it: an s64. lookup_get_idr_uobject()
// refuses a negative one with EINVAL before any lookup (a positive one that names nothing is
// ENOENT, the table's answer); lookup_get_fd_uobject() and uverbs_get_raw_fd() refuse one that
// does not fit an int with EINVAL. Checked here, since only the low bits reach the lookups.
Result<void> CheckIdrId(uint64_t id, std::string_view attr) {
  if (static_cast<int64_t>(id) < 0)
    return Fail(EINVAL, "{} handle {} is negative as the kernel's s64", attr,
                static_cast<int64_t>(id));
  return Ok();
}

Result<int> FdNumber(uint64_t id, std::string_view attr) {
  const auto value = static_cast<int64_t>(id);
  if (value != static_cast<int>(value))
    return Fail(EINVAL, "{} fd {} does not fit an int", attr, value);
  return static_cast<int>(value);
}

}  // namespace

Result<int> UverbsFile::ResolveFd(FdBridge& fds, int app_fd, FileKind want) {
  auto f = fds.Resolve(app_fd);
  if (!f) return Fail(EBADF, "fd {} is not an open file of the app", app_fd);
  // lookup_get_fd_uobject(): an fd of another type, or of another uverbs file, is EBADF.
  if (want != FileKind::kOther && (f->kind != want || f->owner != id_))
    return Fail(EBADF, "fd {} is a {} file, not a {} of {}", app_fd, FileKindName(f->kind),
                FileKindName(want), label_);
  return f->host_fd;
}

// OPEN_XRCD.fd: the kernel keys XRC domains by the file's inode, across every process of the
// host (find_xrcd). The device and event files of every sandbox share the host's inodes, so a
// domain opened on one of them would be shared -- its XRC target QPs and SRQs with it -- with
// other sandboxes on the host: refused (EPERM), as the policy refuses what crosses sandboxes.
Result<int> UverbsFile::ResolveXrcdFd(FdBridge& fds, int app_fd) {
  auto f = fds.Resolve(app_fd);
  if (!f) return Fail(EBADF, "fd {} is not an open file of the app", app_fd);
  if (f->kind != FileKind::kOther && f->kind != FileKind::kDmaBuf)
    return Fail(EPERM, "an XRC domain keyed by a {} file would be shared with every sandbox on "
                "the host", FileKindName(f->kind));
  return f->host_fd;
}

Result<void> UverbsFile::TranslateFields(UverbsCommand& c, const abi::Layout& layout, size_t at,
                                         size_t length, AppMemory& memory, FdBridge& fds,
                                         bool pin_trans,
                                         std::optional<std::span<const abi::FieldAt>> fields,
                                         const abi::PayloadContext* payload) {
  // A driver request (payload given) is the layout translated here, at `at`.
  TranslateContext t{c.image, c.outputs, c.produced, memory, c.identity, pin_trans,
                     c.short_name, {}, payload, at};
  // CREATE_CQ.comp_channel must be a completion channel of this file (EBADF otherwise, as
  // ib_uverbs_lookup_comp_file says); OPEN_XRCD.fd may be any file but an RDMA one.
  t.resolve_fd = [&](const abi::Field& f, int fd) -> Result<int> {
    if (f.name == "comp_channel") return ResolveFd(fds, fd, FileKind::kCompChannel);
    return ResolveXrcdFd(fds, fd);
  };
  auto r = fields ? rxp::proxy::TranslateFields(t, layout, at, length, *fields)
                  : rxp::proxy::TranslateFields(t, layout, at, length);
  // Driver queue buffers count against the pinned budget with the object they belong to
  // (RESIZE_CQ: like a REREG_MR, the CQ's new buffer replaces its old one).
  c.pinned += t.queue_bytes;
  if (t.doorbell_page != 0) c.doorbell_page = t.doorbell_page;
  if (payload != nullptr && t.queue_bytes != 0)
    c.queue_entries = abi::mlx5::CqEntries(t.PayloadNow());
  return r;
}

// RESIZE_CQ pins a new CQ buffer in place of the old one (mlx5 resize_user): the CQ's charge
// against the pinned budget follows, as a REREG_MR's does. To as many entries as the CQ has,
// mlx5_ib_resize_cq returns before it reads the request: nothing changes hands.
void UverbsFile::ResizesQueue(UverbsCommand& c, const abi::WriteCommand& wc,
                              std::span<const std::byte> core) {
  if (wc.command != IB_USER_VERBS_CMD_RESIZE_CQ || c.pinned == 0) return;
  const auto cq = static_cast<uint32_t>(
      abi::ReadField(core, offsetof(ib_uverbs_resize_cq, cq_handle), 4));
  const TrackedObject* o = objects_.Find(cq);
  // In flight either way (Reserve's EBUSY): another thread's resize of the CQ, which the
  // kernel may run first, makes this one change the CQ after all.
  Reregisters(c, cq, o);
  if (o != nullptr && o->queue_entries != 0 && o->queue_entries == c.queue_entries) {
    c.pinned = 0;
    c.rereg_keeps_range = true;
  }
}

Result<void> UverbsFile::CheckResultsFit(const UverbsCommand& c, AppMemory& memory) {
  const bool makes = c.creates != abi::kNoObject || c.creates_context ||
                     std::any_of(c.produced.begin(), c.produced.end(), [](const Produced& p) {
                       return p.what == Produced::What::kHandle || p.what == Produced::What::kFd;
                     });
  if (!makes) return Ok();
  if (c.kind == UverbsCommand::Kind::kIoctl)
    RXP_TRY(CheckAttrWriteBack(c.request, c.app_arg, c.raw, memory, c.short_name));
  // A legacy create always answers (uverbs_response(): copy_to_user of at least resp_size
  // bytes): to a NULL response that fails, and the kernel undoes the object it made.
  if (c.kind == UverbsCommand::Kind::kWrite && c.write && c.write->command->has_resp &&
      !c.write->command->extended() && c.write->response == 0)
    return Fail(EFAULT, "{}: the response pointer is NULL: the kernel would make the object "
                "and undo it when its answer cannot be copied", c.short_name);
  return CheckOutputsWritable(c.outputs, memory, c.short_name);
}

Result<void> UverbsFile::Reserve(UverbsCommand& c) {
  RXP_TRY(MarkBusy(c));
  auto reserved = ReserveQuota(c);
  if (!reserved) EndBusy(c);
  return reserved;
}

// The kernel answers a destroy or a rereg of an object another one holds EBUSY
// (rdma_lookup_get_uobject: both take the object's write lock, uobj_get_destroy /
// uobj_get_write). Two the proxy has begun may still run one after the other in the kernel,
// in either order, while the proxy settles them in the order their results come back: a
// rereg the kernel ran after a destroy and a create that took the freed handle moves the NEW
// object to its range, which the proxy would never charge; two reregs would leave the
// charge and the ODP flag of the one the kernel ran first. So while one such command of an
// object is in flight, another is the kernel's EBUSY -- a RESIZE_CQ's as well, which
// mlx5_ib_resize_cq runs one after the other (resize_mutex) instead.
Result<void> UverbsFile::MarkBusy(UverbsCommand& c) {
  const uint64_t serial = c.destroys ? c.destroys_serial : c.rereg ? c.rereg_serial : 0;
  if (serial == 0) return Ok();
  if (!busy_objects_.insert(serial).second)
    return Fail(EBUSY, "{}: another thread's destroy or rereg of this object is in flight; "
                "the kernel answers an overlapping one EBUSY", c.short_name);
  c.busy_serial = serial;
  return Ok();
}

void UverbsFile::EndBusy(UverbsCommand& c) {
  if (c.busy_serial != 0) busy_objects_.erase(c.busy_serial);
  c.busy_serial = 0;
}

Result<void> UverbsFile::ReserveQuota(UverbsCommand& c) {
  if (c.creates_context) {
    // A file has one context: a second GET_CONTEXT is the kernel's EINVAL
    // (ib_init_ucontext: file->ucontext is set) and takes nothing from the sandbox's quota.
    if (has_context_) return Ok();
    RXP_TRY(engine_.usage().Reserve(UVERBS_OBJECT_DEVICE, 0));
    c.reserved = true;
    return Ok();
  }
  if (c.rereg) return c.pinned != 0 ? engine_.usage().ReservePinned(c.pinned) : Ok();
  if (c.creates == abi::kNoObject || abi::FindObject(c.creates)->fd_object) return Ok();
  RXP_TRY(engine_.usage().Reserve(c.creates, c.pinned));
  c.reserved = true;
  if (c.doorbell_page != 0) {
    // The page's first holder in this context pins it (mlx5_ib_db_map_user: ib_umem_get of
    // one page, charged like any pin); later ones share it.
    uint32_t& holders = doorbell_pages_[c.doorbell_page];
    if (holders == 0)
      if (auto r = engine_.usage().ReservePinned(uint64_t{1} << MmapRules::HostPageShift()); !r) {
        doorbell_pages_.erase(c.doorbell_page);
        engine_.usage().Release(c.creates, c.pinned);
        c.reserved = false;
        return r;
      }
    ++holders;
    c.doorbell_held = true;
  }
  return Ok();
}

void UverbsFile::DropDoorbell(uint64_t page) {
  auto it = doorbell_pages_.find(page);
  if (it == doorbell_pages_.end()) return;
  if (--it->second == 0) {
    doorbell_pages_.erase(it);
    engine_.usage().ReleasePinned(uint64_t{1} << MmapRules::HostPageShift());
  }
}

Result<void> UverbsFile::BuildIoctl(UverbsCommand& c, AppMemory& memory, FdBridge& fds) {
  const abi::IoctlRequest& r = c.request;
  const abi::Method& m = *r.method;
  const WriteFacts* facts = r.write_command != nullptr ? &FactsOf(*r.write_command) : nullptr;
  c.short_name = facts != nullptr ? std::string_view(facts->invoke_name) : m.short_name;

  // Entry policy: the method, and for INVOKE_WRITE the legacy command it wraps.
  RXP_TRY(CheckEntry(engine_.policy(), m.policy, m.short_name, m.name));
  if (r.write_command != nullptr)
    RXP_TRY(CheckEntry(engine_.policy(), r.write_command->policy, r.write_command->short_name,
                       r.write_command->name));

  // Header and the kept attributes (unknown optional ones are dropped: the kernel would
  // ignore them, and the proxy does not forward what it does not understand).
  const uint16_t kept = static_cast<uint16_t>(r.num_attrs - r.num_dropped);
  abi::IoctlHeader h = r.header;
  h.num_attrs = kept;
  h.length = static_cast<uint16_t>(sizeof(h) + kAttr * kept);
  c.image.Append(std::as_bytes(std::span(&h, 1)));
  c.image_attrs_at = c.image.Reserve(kAttr * kept);
  c.image_attr.assign(r.num_attrs, -1);

  CopiedInputs copied(c.image);
  std::span<const std::byte> core_in, driver_in;
  size_t core_in_at = 0, driver_in_at = 0;
  int out_index = 0;
  for (const abi::IoctlAttr& a : r.Attrs()) {
    if (a.spec == nullptr) continue;
    const abi::Attr& spec = *a.spec;
    const int k = out_index++;
    c.image_attr[a.index] = k;
    const size_t slot = c.image_attrs_at + kAttr * static_cast<size_t>(k);
    ib_uverbs_attr u = AttrAt(c.raw, sizeof(abi::IoctlHeader) + kAttr * a.index);
    u.flags &= abi::kKnownAttrFlags;  // the kernel ignores the others; they stay here
    switch (spec.type) {
      case abi::AttrType::kIdr:
        if (spec.access == abi::Access::kNew) {
          c.creates = spec.object;
          c.produced.push_back({Produced::What::kHandle, k});
        } else {
          RXP_TRY(CheckIdrId(a.data, spec.name));
          auto obj = objects_.Lookup(a.data, spec.object);
          if (!obj) return std::move(obj).error();
          if (spec.access == abi::Access::kDestroy)
            Destroys(c, static_cast<uint32_t>(a.data), **obj);
        }
        break;
      case abi::AttrType::kFd:
        if (spec.access == abi::Access::kNew) {
          c.produced.push_back({Produced::What::kFd, k});
          c.produced.back().fd_kind = FdKindOf(spec.object);
        } else {
          auto number = FdNumber(a.data, spec.name);
          if (!number) return std::move(number).error();
          auto host = ResolveFd(fds, *number, FdKindOf(spec.object));
          if (!host) return std::move(host).error();
          u.data_s64 = *host;
        }
        break;
      case abi::AttrType::kRawFd: {
        auto number = FdNumber(a.data, spec.name);
        if (!number) return std::move(number).error();
        auto host = ResolveFd(fds, *number, FileKind::kOther);
        if (!host) return std::move(host).error();
        u.data_s64 = *host;
        // A kernel without the attribute would ignore it as optional and pin ADDR as a VA of
        // the forwarder's, which the proxy left unchecked: mandatory, it refuses instead.
        if (spec.meaning == abi::AttrMeaning::kDmabufFd) u.flags |= UVERBS_ATTR_F_MANDATORY;
        break;
      }
      case abi::AttrType::kIdrsArray: {
        std::vector<std::byte> handles;
        if (a.IsPointer()) {
          auto b = CopyIn(memory, a.data, a.len);
          if (!b) return std::move(b).error();
          handles = std::move(*b);
          const size_t at = c.image.Append(handles);
          c.image.PointTo(slot + offsetof(ib_uverbs_attr, data), at);
        } else {
          handles.assign(reinterpret_cast<const std::byte*>(&a.data),
                         reinterpret_cast<const std::byte*>(&a.data) + a.len);
        }
        for (size_t i = 0; i + 4 <= handles.size(); i += 4) {
          auto obj = objects_.Lookup(abi::ReadField(handles, i, 4), spec.object);
          if (!obj) return std::move(obj).error();
        }
        break;
      }
      case abi::AttrType::kPtrOut:
        if (!c.identity) {  // sentry: the kernel writes into a bounce buffer in the image
          const size_t at = ReserveOutput(c.image, kMinResponseBounce, memory, a.data, a.len);
          c.image.PointTo(slot + offsetof(ib_uverbs_attr, data), at);
          c.outputs.push_back({at, a.data, a.len, k});
        }
        break;
      case abi::AttrType::kPtrIn:
      case abi::AttrType::kConstIn:
      case abi::AttrType::kFlagsIn:
      case abi::AttrType::kEnumIn: {
        // An extended command's short CORE_IN is read zero-extended (uverbs_request()); the
        // image carries it so, as a pointer (PaddedExtendedWrite's reason).
        const size_t padded = spec.meaning == abi::AttrMeaning::kCoreIn
                                  ? PaddedCoreIn(r.write_command, a.len)
                                  : 0;
        if (!a.IsPointer() && padded > a.len) {
          u.len = static_cast<uint16_t>(padded);
          if (padded <= sizeof(u.data)) {  // still inline (uverbs_attr_ptr_is_inline)
            std::memset(reinterpret_cast<std::byte*>(&u.data) + a.len, 0,
                        sizeof(u.data) - a.len);
            core_in_at = slot + offsetof(ib_uverbs_attr, data);
            break;
          }
          const size_t at = c.image.Reserve(padded);
          std::memcpy(c.image.bytes().data() + at, &a.data, a.len);
          c.image.PointTo(slot + offsetof(ib_uverbs_attr, data), at);
          core_in_at = at;
          break;
        }
        if (!a.IsPointer()) {
          // Inline data lives in the attribute's data word in the image.
          const size_t inline_at = slot + offsetof(ib_uverbs_attr, data);
          if (spec.meaning == abi::AttrMeaning::kCoreIn) core_in_at = inline_at;
          if (spec.meaning == abi::AttrMeaning::kUdataIn) driver_in_at = inline_at;
          if (spec.meaning == abi::AttrMeaning::kFdInline) {
            auto host = ResolveFd(fds, static_cast<int>(a.InlineValue()), FileKind::kOther);
            if (!host) return std::move(host).error();
            u.data = static_cast<__u64>(static_cast<uint32_t>(*host));
          } else if (spec.meaning == abi::AttrMeaning::kPinnedVa &&
                     r.FindMeaning(abi::AttrMeaning::kDmabufFd) == nullptr) {
            // devx_umem_get pins [ADDR, ADDR + LEN): all of it must be app memory (with a
            // dma-buf fd, ADDR is an offset into the dma-buf and nothing of the app is pinned).
            const abi::IoctlAttr* len = r.FindMeaning(abi::AttrMeaning::kPinnedLength);
            const uint64_t n = len != nullptr ? std::max<uint64_t>(len->InlineValue(), 1) : 1;
            auto host = memory.HostAddress(a.InlineValue(), n);
            if (!host)
              return Fail(EFAULT, "{}: {} {:#x} (+{}) is not app memory the host can pin: {}",
                          c.short_name, spec.name, a.InlineValue(), n, host.error().reason);
            u.data = *host;
            // The UMEM counts against the pinned budget, as an MR does (ib_umem_get).
            c.pinned = PinnedPageBytes(a.InlineValue(), n);
          }
          break;
        }
        // Copied straight into the image: the kernel reads the proxy's copy, never the app's.
        const size_t at = c.image.Reserve(std::max<size_t>(a.len, padded));
        if (a.len != 0 && !memory.Read(a.data, c.image.bytes().subspan(at, a.len)))
          return Fail(EFAULT, "cannot read {} bytes at {:#x}", a.len, a.data);
        if (padded > a.len) u.len = static_cast<uint16_t>(padded);
        const auto b = c.image.bytes().subspan(at, a.len);
        // UVERBS_ATTR_STRUCT: bytes past the known struct must be zero (EOPNOTSUPP); for
        // ENUM_IN, the struct of the selected element (uverbs_process_attr).
        if (const abi::PtrSpec ptr = a.Ptr(); ptr.zero_trailing && a.len > ptr.max_len)
          for (size_t i = ptr.max_len; i < b.size(); ++i)
            if (b[i] != std::byte{0})
              return Fail(EOPNOTSUPP, "{}: {} has non-zero bytes past its {}-byte struct",
                          c.short_name, spec.name, ptr.max_len);
        c.image.PointTo(slot + offsetof(ib_uverbs_attr, data), at);
        copied.Add(a.data, at, a.len);
        if (spec.meaning == abi::AttrMeaning::kCoreIn) core_in_at = at;
        if (spec.meaning == abi::AttrMeaning::kUdataIn) driver_in_at = at;
        break;
      }
    }
    std::memcpy(c.image.bytes().data() + slot, &u, sizeof(u));
  }
  if (const abi::IoctlAttr* ci = r.FindMeaning(abi::AttrMeaning::kCoreIn))
    core_in = c.image.bytes().subspan(
        core_in_at, std::max<size_t>(ci->len, PaddedCoreIn(r.write_command, ci->len)));
  if (const abi::IoctlAttr* di = r.FindMeaning(abi::AttrMeaning::kUdataIn))
    driver_in = c.image.bytes().subspan(driver_in_at, di->len);
  // The same views again after each translation: a field's copy appended to the image (a
  // kUserPtr buffer) may move its bytes.
  const auto view_inputs = [&] {
    core_in = c.image.bytes().subspan(core_in_at, core_in.size());
    driver_in = c.image.bytes().subspan(driver_in_at, driver_in.size());
  };

  // Content rules look at what was copied in.
  CommandView view;
  view.driver = device_.driver;
  view.method = &m;
  view.ioctl = &r;
  view.write_command = r.write_command;
  view.core = core_in;
  view.driver_in = driver_in;
  view.inputs = &copied;
  RXP_TRY(CheckContent(engine_.policy(), view));

  // INVOKE_WRITE: validate and translate the legacy request like a write() body.
  if (const abi::WriteCommand* wc = r.write_command) {
    RXP_TRY(abi::ValidateWriteBody(*wc, core_in));
    if (const abi::IoctlAttr* out = r.FindMeaning(abi::AttrMeaning::kCoreOut))
      RXP_TRY(abi::ValidateWriteResponse(*wc, core_in, out->len));
    if (!facts->handles.empty())
      RXP_TRY(objects_.CheckHandles(facts->handles, core_in, c.short_name));
    const bool pin_trans = wc->command != IB_USER_VERBS_CMD_REREG_MR ||
                           (abi::ReadField(core_in, offsetof(ib_uverbs_rereg_mr, flags), 4) &
                            abi::kMrReregTrans) != 0;
    if (!facts->translated.empty()) {
      RXP_TRY(TranslateFields(c, *wc->request, core_in_at, core_in.size(), memory, fds,
                              pin_trans, facts->translated));
      view_inputs();
    }
    const abi::IoctlAttr* core_out = r.FindMeaning(abi::AttrMeaning::kCoreOut);
    if (wc->creates != abi::kNoObject) c.creates = wc->creates;  // with CORE_OUT or not
    if (c.creates != abi::kNoObject && core_out != nullptr) {
      const bool fd_object = abi::FindObject(wc->creates)->fd_object;
      Produced p{fd_object ? Produced::What::kFd : Produced::What::kHandle};
      p.place = OutputPlace(c, *core_out);
      p.offset = static_cast<uint32_t>(facts->created_at);
      p.fd_kind = FdKindOf(wc->creates);
      c.produced.push_back(p);
    }
    if (wc->destroys != abi::kNoObject)
      Destroys(c, abi::ReadField(core_in, static_cast<size_t>(facts->destroyed_at), 4));
    if (wc->command == IB_USER_VERBS_CMD_GET_CONTEXT) {
      c.creates_context = true;
      if (core_out != nullptr) ProduceLegacyContext(c, OutputPlace(c, *core_out));
    }
    if (wc->command == IB_USER_VERBS_CMD_REG_MR) RegistrationPins(c, wc->command, core_in);
    if (wc->command == IB_USER_VERBS_CMD_REREG_MR) ReregistersMr(c, core_in);
  }
  if (m.object == UVERBS_OBJECT_DEVICE && m.id == UVERBS_METHOD_GET_CONTEXT)
    c.creates_context = true;

  // Driver data: translate what the driver layout says is pinned / a pointer / an fd.
  if (!driver_in.empty()) {
    const abi::DriverPayload* dp = abi::DriverPayloadFor(r, device_);
    const abi::PayloadContext context = abi::DriverContext(r, core_in, driver_in);
    const abi::Layout* layout = dp != nullptr ? dp->InFor(context) : nullptr;
    if (layout != nullptr)
      RXP_TRY(TranslateFields(c, *layout, driver_in_at, driver_in.size(), memory, fds, true,
                              std::nullopt, &context));
    else if (layout == nullptr && !memory.IdentityMapped())
      return Fail(EOPNOTSUPP, "{}: the {} driver's private data is not modelled; it cannot be "
                  "translated", c.short_name, abi::DriverName(device_.driver));
    view_inputs();
    if (r.write_command != nullptr) ResizesQueue(c, *r.write_command, core_in);
  }

  // Outputs the proxy must act on: rxe mmap cookies (UHW_OUT), mmap entries (mlx5 UAR, VAR).
  if (const abi::IoctlAttr* uo = r.FindMeaning(abi::AttrMeaning::kUdataOut); uo != nullptr) {
    const abi::DriverPayload* dp = abi::DriverPayloadFor(r, device_);
    const abi::Layout* out = dp != nullptr ? dp->out : nullptr;
    if (out != nullptr && device_.driver == abi::Driver::kRxe) {
      const Place place = OutputPlace(c, *uo);
      abi::ForEachField(*out, out->size, [&](const abi::Field& f, size_t off) {
        if (f.name == "offset") {  // struct mminfo {offset, size}
          Produced p{Produced::What::kRxeMmapInfo};
          p.place = place;
          p.offset = static_cast<uint32_t>(off);
          c.produced.push_back(p);
        }
      });
    }
  }
  if (const abi::IoctlAttr* off = r.FindMeaning(abi::AttrMeaning::kMmapEntryOffset)) {
    // Both outputs are mandatory in the schema, so a decoded request carries the pair.
    const abi::IoctlAttr* len = r.FindMeaning(abi::AttrMeaning::kMmapEntryLength);
    Produced p{Produced::What::kMmapEntry};
    p.place = OutputPlace(c, *off);
    p.length_place = OutputPlace(c, *len);
    c.produced.push_back(p);
  }

  if (engine_.tracing())
    c.trace_request = abi::FormatIoctl(label_, r, device_, copied, nullptr);
  return Ok();
}

Result<std::unique_ptr<UverbsCommand>> UverbsFile::BeginIoctl(AppMemory& memory, FdBridge& fds,
                                                              uint64_t arg) {
  auto c = std::make_unique<UverbsCommand>();
  RXP_TRY(BeginIoctl(memory, fds, arg, *c));
  return c;
}

namespace {

// The counter a refusal of a decoded command goes to: a method the device lacks is
// unsupported, like one the schema does not know; a bad handle, fd or address is the file's
// state; a quota is a quota. EOPNOTSUPP of an INVOKE_WRITE is its legacy body failing
// validation (ValidateWriteBody), so malformed. Anything else is the policy's.
Refusal RefusalOf(int errnum, bool missing, bool wrapped_write) {
  if (missing) return Refusal::kDecode;
  if (errnum == ENOENT || errnum == EBADF || errnum == EFAULT) return Refusal::kState;
  if (errnum == EDQUOT || errnum == ENOMEM) return Refusal::kQuota;
  if (errnum == EOPNOTSUPP && wrapped_write) return Refusal::kDecode;
  return Refusal::kPolicy;
}

// Sets the probe for one command's Begin (the file's commands run one at a time).
class ProbeScope {
 public:
  ProbeScope(HostDevice*& slot, HostDevice* probe) : slot_(slot) { slot_ = probe; }
  ~ProbeScope() { slot_ = nullptr; }
  ProbeScope(const ProbeScope&) = delete;
  ProbeScope& operator=(const ProbeScope&) = delete;

 private:
  HostDevice*& slot_;
};

}  // namespace

Result<void> UverbsFile::BeginIoctl(AppMemory& memory, FdBridge& fds, uint64_t arg,
                                    UverbsCommand& command, HostDevice* probe) {
  ProbeScope scope(probe_, probe);
  return BeginIoctlAs(memory, fds, arg, command, /*as_forwarder=*/false);
}

Result<void> UverbsFile::BeginIoctlAs(AppMemory& memory, FdBridge& fds, uint64_t arg,
                                      UverbsCommand& command, bool as_forwarder) {
  engine_.counters().commands++;
  UverbsCommand* c = &command;
  c->Reset();
  c->as_forwarder = as_forwarder;
  c->kind = UverbsCommand::Kind::kIoctl;
  c->app_arg = arg;
  c->identity = memory.IdentityMapped();
  // Copy in the header, then the attributes it announces.
  std::array<std::byte, sizeof(abi::IoctlHeader)> head;
  if (auto r = memory.Read(arg, head); !r) {
    auto e = Fail(EFAULT, "cannot read the ioctl header at {:#x}: {}", arg, r.error().reason);
    Refuse(e, static_cast<int>(Refusal::kDecode));
    return e;
  }
  auto hdr = abi::DecodeIoctlHeader(head);
  if (!hdr) {
    Refuse(hdr.error(), static_cast<int>(Refusal::kDecode));
    return std::move(hdr).error();
  }
  if (auto raw = CopyInto(memory, arg, hdr->length, c->raw); !raw) {
    Refuse(raw.error(), static_cast<int>(Refusal::kDecode));
    return std::move(raw).error();
  }
  if (auto d = abi::DecodeIoctl(c->raw, device_, c->request); !d) {
    // rdma-core probes for INVOKE_WRITE at every context open with an INVOKE_WRITE that has
    // no CORE_IN and expects the kernel's ENOSPC (execute_write_bufs' support check); the
    // proxy answers the same, without a log line for a question every program asks.
    const abi::Method* m = c->request.method;
    const bool probe = d.error().errnum == ENOSPC && m != nullptr &&
                       m->object == UVERBS_OBJECT_DEVICE && m->id == UVERBS_METHOD_INVOKE_WRITE &&
                       c->request.Find(UVERBS_ATTR_CORE_IN) == nullptr;
    if (probe)
      engine_.RefusedQuietly(label_, d.error(), Refusal::kDecode);
    else
      Refuse(d.error(), static_cast<int>(Refusal::kDecode));
    if (engine_.tracing())
      engine_.Trace(abi::FormatRefused("ioctl", label_,
                                       c->request.method ? c->request.method->short_name : "?",
                                       d.error()));
    return std::move(d).error();
  }
  auto built = BuildIoctl(*c, memory, fds);
  // A new ucontext or a new fd must come to the app's own process (IoctlAsForwarder).
  if (built && c->as_forwarder &&
      (c->creates_context ||
       std::any_of(c->produced.begin(), c->produced.end(),
                   [](const Produced& p) { return p.what == Produced::What::kFd; })))
    c->needs_app = true;
  if (c->needs_app) {  // not refused: the app issues it after all, and it is counted then
    engine_.counters().commands--;
    return Fail(EXDEV, "{} needs the app's own syscall", c->short_name);
  }
  if (built) built = CheckResultsFit(*c, memory);
  if (built) built = Reserve(*c);
  if (!built) {
    bool missing = false;
    Error e = AsTheKernelAnswers(std::move(built).error(), *c, missing);
    const Refusal why = RefusalOf(e.errnum, missing, c->request.write_command != nullptr);
    Refuse(e, static_cast<int>(why));
    if (engine_.tracing()) engine_.Trace(abi::FormatRefused("ioctl", label_, c->short_name, e));
    return e;
  }
  engine_.counters().forwarded++;
  return Ok();
}

Result<void> UverbsFile::BuildWrite(UverbsCommand& c, AppMemory& memory, FdBridge& fds) {
  const abi::WriteRequest& w = *c.write;
  const abi::WriteCommand& wc = *w.command;
  const WriteFacts& facts = FactsOf(wc);
  c.short_name = wc.short_name;
  RXP_TRY(CheckEntry(engine_.policy(), wc.policy, wc.short_name, wc.name));
  CommandView view;
  view.driver = device_.driver;
  view.write_command = &wc;
  view.core = w.core;
  view.driver_in = w.driver;
  RXP_TRY(CheckContent(engine_.policy(), view));
  if (!facts.handles.empty()) RXP_TRY(objects_.CheckHandles(facts.handles, w.core, c.short_name));

  const size_t base = c.image.Append(c.write_raw);
  const size_t core_at = base + static_cast<size_t>(w.core.data() - c.write_raw.data());
  c.write_core_at = core_at;
  const size_t driver_at = base + static_cast<size_t>(w.driver.data() - c.write_raw.data());
  const bool pin_trans = wc.command != IB_USER_VERBS_CMD_REREG_MR ||
                         (abi::ReadField(w.core, offsetof(ib_uverbs_rereg_mr, flags), 4) &
                          abi::kMrReregTrans) != 0;
  if (!facts.translated.empty())
    RXP_TRY(TranslateFields(c, *wc.request, core_at, w.core.size(), memory, fds, pin_trans,
                            facts.translated));
  const abi::DriverPayload* dp = wc.drivers.For(device_.driver);
  if (!w.driver.empty()) {
    const abi::PayloadContext context = abi::DriverContext(wc, w.core, w.driver);
    const abi::Layout* layout = dp != nullptr ? dp->InFor(context) : nullptr;
    if (layout != nullptr)
      RXP_TRY(TranslateFields(c, *layout, driver_at, w.driver.size(), memory, fds, true,
                              std::nullopt, &context));
    else if (!memory.IdentityMapped())
      return Fail(EOPNOTSUPP, "{}: the {} driver's private data is not modelled",
                  c.short_name, abi::DriverName(device_.driver));
    ResizesQueue(c, wc, w.core);
  }

  // Where the kernel writes the response: the app's buffer (identity) or a bounce buffer that
  // covers the core and the driver response, which the kernel writes contiguously.
  const uint32_t resp_total = w.response_len + w.driver_response_len;
  Place resp{false, w.response, w.response_len};
  if (w.response != 0 && !c.identity) {
    const size_t bounce =
        ReserveOutput(c.image, resp_total + kMinResponseBounce, memory, w.response, resp_total);
    const size_t field = wc.extended() ? base + sizeof(ib_uverbs_cmd_hdr) : core_at;
    c.image.PointTo(field, bounce);
    c.outputs.push_back({bounce, w.response, resp_total, -1});
    resp = {true, bounce, w.response_len};
  }
  // An extended create with no response buffer (ex_hdr.response 0, out_words 0) still makes
  // its object (uverbs_response copies nothing): it counts, unread, until the file closes.
  if (wc.creates != abi::kNoObject) c.creates = wc.creates;
  if (c.creates != abi::kNoObject && wc.response != nullptr && w.response != 0) {
    const bool fd_object = abi::FindObject(wc.creates)->fd_object;
    Produced p{fd_object ? Produced::What::kFd : Produced::What::kHandle};
    p.place = resp;
    p.offset = static_cast<uint32_t>(facts.created_at);
    p.fd_kind = FdKindOf(wc.creates);
    c.produced.push_back(p);
  }
  if (wc.command == IB_USER_VERBS_CMD_GET_CONTEXT && w.response != 0)
    ProduceLegacyContext(c, resp);
  if (wc.destroys != abi::kNoObject)
    Destroys(c, abi::ReadField(w.core, static_cast<size_t>(facts.destroyed_at), 4));
  if (wc.command == IB_USER_VERBS_CMD_REG_MR) RegistrationPins(c, wc.command, w.core);
  if (wc.command == IB_USER_VERBS_CMD_REREG_MR) ReregistersMr(c, w.core);
  // rxe mmap cookies in the driver response.
  if (device_.driver == abi::Driver::kRxe && dp != nullptr && dp->out != nullptr &&
      w.driver_response != 0) {
    const Place dresp = resp.in_image ? Place{true, resp.where + w.response_len,
                                              w.driver_response_len}
                                      : Place{false, w.driver_response, w.driver_response_len};
    abi::ForEachField(*dp->out, dp->out->size, [&](const abi::Field& f, size_t off) {
      if (f.name == "offset") {
        Produced p{Produced::What::kRxeMmapInfo};
        p.place = dresp;
        p.offset = static_cast<uint32_t>(off);
        c.produced.push_back(p);
      }
    });
  }
  if (engine_.tracing()) c.trace_request = abi::FormatWrite(label_, w, device_, nullptr);
  return Ok();
}

Result<std::unique_ptr<UverbsCommand>> UverbsFile::BeginWrite(AppMemory& memory, FdBridge& fds,
                                                              uint64_t buffer, uint64_t length) {
  auto c = std::make_unique<UverbsCommand>();
  RXP_TRY(BeginWrite(memory, fds, buffer, length, *c));
  return c;
}

Result<void> UverbsFile::BeginWrite(AppMemory& memory, FdBridge& fds, uint64_t buffer,
                                    uint64_t length, UverbsCommand& command, HostDevice* probe) {
  ProbeScope scope(probe_, probe);
  engine_.counters().commands++;
  UverbsCommand* c = &command;
  c->Reset();
  c->kind = UverbsCommand::Kind::kWrite;
  c->app_arg = buffer;
  c->app_length = length;
  c->identity = memory.IdentityMapped();
  auto fail = [&](Error e, Refusal why) -> Error {
    Refuse(e, static_cast<int>(why));
    if (engine_.tracing()) engine_.Trace(abi::FormatRefused("write", label_, "?", e));
    return e;
  };
  // ib_uverbs_write() refuses a count shorter than the header before it reads the buffer.
  if (length < sizeof(ib_uverbs_cmd_hdr))
    return fail(Fail(EINVAL, "write of {} bytes is shorter than the command header", length),
                Refusal::kDecode);
  if (length > kMaxWrite)
    return fail(Fail(EINVAL, "write of {} bytes is longer than any command the kernel accepts "
                     "({} bytes)", length, kMaxWrite),
                Refusal::kDecode);
  if (auto raw = CopyInto(memory, buffer, static_cast<size_t>(length), c->write_raw); !raw)
    return fail(std::move(raw).error(), Refusal::kDecode);
  auto w = abi::DecodeWrite(c->write_raw, device_);
  if (!w) return fail(WhenUndecodable(std::move(w).error(), *c), Refusal::kDecode);
  if (auto padded = abi::PaddedExtendedWrite(*w, c->write_raw)) {
    // What the kernel reads of a short extended request; the write forwarded is this one
    // (its count too), the app's write() still returns the app's count.
    c->write_raw = std::move(*padded);
    w = abi::DecodeWrite(c->write_raw, device_);
    if (!w) return fail(std::move(w).error(), Refusal::kDecode);
  }
  c->write = *w;
  auto built = BuildWrite(*c, memory, fds);
  if (built) built = CheckResultsFit(*c, memory);
  if (built) built = Reserve(*c);
  if (!built) {
    bool missing = false;
    Error e = AsTheKernelAnswers(std::move(built).error(), *c, missing);
    const Refusal why = RefusalOf(e.errnum, missing, /*wrapped_write=*/false);
    return fail(std::move(e), why);
  }
  engine_.counters().forwarded++;
  return Ok();
}

// ib_uverbs_write() looks the command up (uapi_get_method(): EOPNOTSUPP for one the device
// disabled) right after reading the header, before verify_hdr() checks the lengths or the
// handler reads the body: a malformed call of a method the device lacks is EOPNOTSUPP too.
Error UverbsFile::WhenUndecodable(Error refusal, UverbsCommand& c) {
  if (c.write_raw.size() < sizeof(ib_uverbs_cmd_hdr)) return refusal;  // the kernel's EINVAL
  ib_uverbs_cmd_hdr h;
  std::memcpy(&h, c.write_raw.data(), sizeof(h));
  const abi::WriteCommand* wc = abi::FindWriteCommand(h.command);
  if (wc == nullptr) return refusal;
  c.write.emplace();
  c.write->command = wc;
  c.short_name = wc->short_name;
  bool missing = false;
  Error e = AsTheKernelAnswers(std::move(refusal), c, missing);
  c.write.reset();
  return e;
}

Error UverbsFile::AsTheKernelAnswers(Error refusal, const UverbsCommand& c, bool& missing) {
  missing = false;
  // Policy and quota refusals stand: they are the sandbox's, not the kernel's. A denied
  // method is never probed.
  const int errnum = refusal.errnum;
  if (probe_ == nullptr || errnum == EPERM || errnum == EDQUOT || errnum == ENOMEM)
    return refusal;
  const abi::WriteCommand* wc = c.kind == UverbsCommand::Kind::kIoctl ? c.request.write_command
                                : c.write                             ? c.write->command
                                                                      : nullptr;
  if (wc != nullptr) {
    if (!CheckEntry(engine_.policy(), wc->policy, wc->short_name, wc->name)) return refusal;
    if (methods_.Implements(*probe_, *wc) != false) return refusal;
    missing = true;
    return Fail(EOPNOTSUPP, "{}: the device does not implement it (the kernel refuses any call "
                "of it: {})", c.short_name, refusal.reason);
  }
  if (c.kind != UverbsCommand::Kind::kIoctl || c.request.method == nullptr) return refusal;
  const abi::Method& m = *c.request.method;
  if (!CheckEntry(engine_.policy(), m.policy, m.short_name, m.name)) return refusal;
  if (methods_.Implements(*probe_, m) != false) return refusal;
  missing = true;
  return Fail(EPROTONOSUPPORT, "{}: the device does not implement it (the kernel refuses any "
              "call of it: {})", c.short_name, refusal.reason);
}

namespace {

// Reads a produced value's bytes from the image (sentry) or the app (identity).
std::optional<uint64_t> ReadProduced(const Place& place, uint32_t offset, size_t size,
                                     std::span<const std::byte> image, AppMemory& memory) {
  if (offset + size > place.length) return std::nullopt;
  if (place.in_image) {
    if (place.where + offset + size > image.size()) return std::nullopt;
    return abi::ReadField(image, static_cast<size_t>(place.where + offset), size);
  }
  std::byte b[8] = {};
  if (!memory.Read(place.where + offset, std::span(b, size))) return std::nullopt;
  return abi::ReadField(std::span(b, size), 0, size);
}

}  // namespace

void UverbsFile::Destroys(UverbsCommand& c, uint32_t handle, const TrackedObject& tracked) {
  c.destroys = handle;
  c.destroys_serial = tracked.serial;
}

void UverbsFile::Destroys(UverbsCommand& c, uint64_t handle_field) {
  // CheckHandles found it: a legacy destroy's handle names a tracked object.
  const auto handle = static_cast<uint32_t>(handle_field);
  if (const TrackedObject* o = objects_.Find(handle)) Destroys(c, handle, *o);
}

void UverbsFile::Reregisters(UverbsCommand& c, uint32_t handle, const TrackedObject* tracked) {
  // As a destroy does: the serial says which object the command named, so that Settle moves
  // the new range's charge onto that object only (not onto one created under its freed handle).
  c.rereg = handle;
  c.rereg_serial = tracked != nullptr ? tracked->serial : 0;
}

void UverbsFile::Reregisters(UverbsCommand& c, uint64_t handle_field) {
  const auto handle = static_cast<uint32_t>(handle_field);
  Reregisters(c, handle, objects_.Find(handle));
}

void UverbsFile::ReregistersMr(UverbsCommand& c, std::span<const std::byte> core) {
  const auto flags = abi::ReadField(core, offsetof(ib_uverbs_rereg_mr, flags), 4);
  const auto handle = abi::ReadField(core, offsetof(ib_uverbs_rereg_mr, mr_handle), 4);
  if ((flags & (abi::kMrReregTrans | abi::kMrReregAccess)) == 0) return;  // PD alone
  Reregisters(c, handle);
  if ((flags & abi::kMrReregTrans) != 0) {
    RegistrationPins(c, IB_USER_VERBS_CMD_REREG_MR, core);
  } else {
    // New flags on the same range: mlx5_ib_rereg_user_mr keeps a pinned MR's umem and stores
    // the flags, which a later rereg with a new range and no ACCESS reuses (new_access_flags
    // = mr->access_flags). A pinned MR given ON_DEMAND here stays pinned, yet that later
    // rereg makes it an ODP MR (create_mr_user), pinning nothing. (An ODP or dma-buf MR
    // whose flags change is recreated from the request's range, which the proxy makes
    // empty, so that fails and Settle changes nothing.)
    c.rereg_keeps_range = true;
    c.on_demand = (abi::ReadField(core, offsetof(ib_uverbs_rereg_mr, access_flags), 4) &
                   IB_UVERBS_ACCESS_ON_DEMAND) != 0;
  }
}

void UverbsFile::RegistrationPins(UverbsCommand& c, uint32_t command,
                                   std::span<const std::byte> core) const {
  bool on_demand = false;
  uint64_t start = 0, length = 0;
  if (command == IB_USER_VERBS_CMD_REG_MR) {
    on_demand = (abi::ReadField(core, offsetof(ib_uverbs_reg_mr, access_flags), 4) &
                 IB_UVERBS_ACCESS_ON_DEMAND) != 0;
    start = abi::ReadField(core, offsetof(ib_uverbs_reg_mr, start), 8);
    length = abi::ReadField(core, offsetof(ib_uverbs_reg_mr, length), 8);
  } else {
    // The new access flags when the rereg changes them, else the MR's own
    // (mlx5_ib_rereg_user_mr: new_access_flags = mr->access_flags): an MR tracked as ODP. A
    // dma-buf MR's flags never hold ON_DEMAND (UVERBS_METHOD_REG_DMABUF_MR masks them), so
    // its rereg with a new range recreates it as an MR that pins that range.
    const auto flags = abi::ReadField(core, offsetof(ib_uverbs_rereg_mr, flags), 4);
    const TrackedObject* mr = objects_.Find(
        static_cast<uint32_t>(abi::ReadField(core, offsetof(ib_uverbs_rereg_mr, mr_handle), 4)));
    on_demand = (flags & abi::kMrReregAccess) != 0
                    ? (abi::ReadField(core, offsetof(ib_uverbs_rereg_mr, access_flags), 4) &
                       IB_UVERBS_ACCESS_ON_DEMAND) != 0
                    : mr != nullptr && mr->on_demand;
    start = abi::ReadField(core, offsetof(ib_uverbs_rereg_mr, start), 8);
    length = abi::ReadField(core, offsetof(ib_uverbs_rereg_mr, length), 8);
  }
  c.on_demand = on_demand;
  c.pinned = on_demand ? 0 : PinnedPageBytes(start, length);
}

void UverbsFile::Forget(const TrackedObject& gone) {
  engine_.usage().Release(gone.type, gone.pinned);
  // rdma_user_mmap_entry_remove(): the kernel maps the offset no more once its object is gone
  // (a later UAR may be handed the same offset again, and is allowed anew).
  if (gone.mmap_entry != 0) mmaps_.RevokeEntry(gone.mmap_entry);
  if (gone.doorbell_page != 0) DropDoorbell(gone.doorbell_page);
}

void UverbsFile::Settle(UverbsCommand& c, long result, std::span<const std::byte> image_after,
                        AppMemory& memory, FdBridge& fds) {
  const bool ok = result >= 0;
  engine_.counters().Settled(result);
  EndBusy(c);
  if (!ok) {
    GiveBack(c);
    return;
  }
  if (c.creates_context) {
    // Two GET_CONTEXTs in flight at once (two threads of a traced program) both reserve; the
    // kernel lets only one succeed, and whatever it answers the file holds one context.
    if (has_context_ && c.reserved)
      engine_.usage().Release(UVERBS_OBJECT_DEVICE, 0);
    has_context_ = true;
  }
  if (c.destroys) {
    // Only the object the command named: with two threads of a traced program, a create
    // whose kernel took the handle this destroy freed may have settled first (Insert then
    // forgot the destroyed object); the table's object under the handle is that new one.
    const TrackedObject* o = objects_.Find(*c.destroys);
    if (o != nullptr && o->serial == c.destroys_serial) Forget(*objects_.Erase(*c.destroys));
  }
  if (c.rereg) {
    TrackedObject* o = objects_.Find(*c.rereg);
    if (o != nullptr && o->serial == c.rereg_serial) {
      if (!c.rereg_keeps_range) {
        engine_.usage().ReleasePinned(o->pinned);
        o->pinned = c.pinned;
      }
      o->on_demand = c.on_demand;
      if (c.queue_entries != 0) o->queue_entries = c.queue_entries;
    } else {
      // Destroyed meanwhile (another thread of a traced program; a create may even hold its
      // handle now, and keeps its own charge): nothing holds the new range.
      engine_.usage().ReleasePinned(c.pinned);
    }
  }
  bool tracked = false;  // the new object (if the command made one) is in objects_
  std::optional<uint32_t> new_handle;
  uint64_t mmap_entry = 0, mmap_entry_size = 0;  // the mmap entry that came with it
  for (const Produced& p : c.produced) {
    std::optional<uint64_t> value;
    if (p.attr_index >= 0) {
      const size_t at = c.image_attrs_at + kAttr * static_cast<size_t>(p.attr_index) +
                        offsetof(ib_uverbs_attr, data);
      if (at + 8 <= image_after.size()) value = abi::ReadField(image_after, at, 8);
    } else {
      const size_t size = p.what == Produced::What::kRxeMmapInfo ||
                                  p.what == Produced::What::kMmapEntry
                              ? 8
                              : 4;
      value = ReadProduced(p.place, p.offset, size, image_after, memory);
    }
    if (!value) continue;
    switch (p.what) {
      case Produced::What::kHandle:
        if (c.creates != abi::kNoObject && !abi::FindObject(c.creates)->fd_object) {
          const auto handle = static_cast<uint32_t>(*value);
          // The kernel hands out a handle only while it is free (the file's xarray), so one
          // still tracked here is an object already gone: what it held goes back to the
          // sandbox as the new one takes its place.
          TrackedObject made{c.creates, c.pinned, c.on_demand, c.queue_entries};
          if (c.doorbell_held) made.doorbell_page = c.doorbell_page;
          if (const auto stale = objects_.Insert(handle, made)) Forget(*stale);
          tracked = true;
          new_handle = handle;
        }
        break;
      case Produced::What::kFd:
        break;  // adopted by the caller (Complete), which rewrites where the app sees it
      case Produced::What::kRxeMmapInfo: {
        auto size = ReadProduced(p.place, p.offset + 8, 4, image_after, memory);
        if (*value != 0) mmaps_.AllowOnce(*value, size.value_or(0));
        break;
      }
      case Produced::What::kMmapEntry:
        mmap_entry = *value;
        mmap_entry_size = ReadProduced(p.length_place, 0, 4, image_after, memory).value_or(4096);
        break;
    }
  }
  // After every handle is settled: a stale object forgotten above may have held the same
  // offset (the kernel reuses a removed entry's), whose revocation must not undo this.
  if (mmap_entry != 0) {
    mmaps_.AllowEntry(mmap_entry, mmap_entry_size);
    if (new_handle)
      if (TrackedObject* o = objects_.Find(*new_handle)) o->mmap_entry = mmap_entry;
  }
  // A new object whose handle could not be read back: the kernel wrote the response into the
  // app's memory (identity mode), which another thread unmapped or made unreadable before the
  // proxy read it; or the app's response was too short to hold it (an extended create, whose
  // answer the kernel cuts to any length). The object exists, so what it holds stays counted
  // until the file closes.
  if (c.reserved && !c.creates_context && !tracked) {
    unread_objects_.push_back({c.creates, c.pinned});  // its doorbell stays held till close
    engine_.Log(fmt::format("rdmaproxy: {}: {} succeeded but its new handle could not be read "
                            "back (the app's response is too short for it, or unreadable); the "
                            "object counts against the sandbox's quotas until the file closes",
                            label_, c.short_name));
  }
  (void)fds;
}

long UverbsFile::Complete(UverbsCommand& c, long result, std::span<std::byte> image_after,
                          uint64_t base, AppMemory& memory, FdBridge& fds) {
  (void)base;
  Settle(c, result, image_after, memory, fds);
  long app_result = result;
  // A new fd the app cannot be given fails the command with the reason (the bridge closed
  // it, which ends the host object it stood for), as ib_uverbs fails one whose fd it cannot
  // allocate; the app's copy of the response says -1 there, never the host's number.
  std::optional<Error> not_adopted;
  // A result the app's memory would not take (copy_out.h): the command fails with EFAULT, as
  // the kernel's own copy_to_user() fails it after the handler ran.
  std::optional<Error> not_copied;
  const auto copy_back = [&](uint64_t address, std::span<const std::byte> bytes) {
    if (auto w = memory.Write(address, bytes); !w && !not_copied) not_copied = w.error();
  };
  if (result >= 0) {
    // New fds: make them the app's and rewrite where the app reads them. The image's attribute
    // array as the kernel left it is read and rewritten where it is (the image is not used
    // after Complete).
    std::span<std::byte> attrs_after;
    if (c.kind == UverbsCommand::Kind::kIoctl) {
      const size_t n = c.request.num_attrs - c.request.num_dropped;
      attrs_after = image_after.subspan(c.image_attrs_at, kAttr * n);
    }
    for (const Produced& p : c.produced) {
      if (p.what != Produced::What::kFd) continue;
      int fd = -1;
      if (p.attr_index >= 0) {
        fd = static_cast<int>(abi::ReadField(attrs_after, kAttr * static_cast<size_t>(p.attr_index) +
                                                              offsetof(ib_uverbs_attr, data), 8));
      } else if (auto v = ReadProduced(p.place, p.offset, 4, image_after, memory)) {
        fd = static_cast<int>(*v);
      }
      if (fd < 0) continue;
      auto app_fd = fds.Adopt(fd, p.fd_kind, id_);
      const int shown = app_fd ? *app_fd : -1;
      if (!app_fd) {
        engine_.Log(fmt::format("rdmaproxy: {}: cannot hand the new {} fd to the app: {}", label_,
                                FileKindName(p.fd_kind), app_fd.error().ToString()));
        if (!not_adopted) not_adopted = app_fd.error();
      }
      const auto v32 = static_cast<uint32_t>(shown);
      if (p.attr_index >= 0) {
        const uint64_t v64 = static_cast<uint64_t>(static_cast<int64_t>(shown));
        std::memcpy(attrs_after.data() + kAttr * static_cast<size_t>(p.attr_index) +
                        offsetof(ib_uverbs_attr, data),
                    &v64, sizeof(v64));
      } else if (p.place.in_image) {
        std::memcpy(image_after.data() + p.place.where + p.offset, &v32, sizeof(v32));
      } else {
        copy_back(p.place.where + p.offset, std::as_bytes(std::span(&v32, 1)));
      }
    }
    // Outputs the kernel wrote into bounce buffers (sentry mode).
    for (const auto& o : c.outputs) {
      if (o.attr_index >= 0) {
        const uint64_t flags = abi::ReadField(attrs_after, kAttr * static_cast<size_t>(o.attr_index) +
                                                               offsetof(ib_uverbs_attr, flags), 2);
        if ((flags & UVERBS_ATTR_F_VALID_OUTPUT) == 0) continue;
      }
      copy_back(o.app_address, image_after.subspan(o.image_offset, o.length));
    }
    // The attribute array back to the app: the kernel's flags and new ids / fds, the app's own
    // data words everywhere else (it must never see a proxy pointer or a host fd). The app's
    // copy in c.raw is patched in place (nothing reads it after Complete); one write of the
    // whole array, and none when the kernel changed nothing in it.
    if (c.kind == UverbsCommand::Kind::kIoctl && c.request.num_attrs != 0) {
      const auto back = std::span(c.raw).subspan(sizeof(abi::IoctlHeader),
                                                 kAttr * c.request.num_attrs);
      bool changed = false;
      for (const abi::IoctlAttr& a : c.request.Attrs()) {
        const int k = c.image_attr[a.index];
        if (k < 0) continue;
        ib_uverbs_attr mine = AttrAt(back, kAttr * a.index);
        const ib_uverbs_attr after = AttrAt(attrs_after, kAttr * static_cast<size_t>(k));
        const bool new_data = a.spec->access == abi::Access::kNew && mine.data != after.data;
        if (mine.flags == after.flags && !new_data) continue;
        mine.flags = after.flags;
        if (new_data) mine.data = after.data;
        std::memcpy(back.data() + kAttr * a.index, &mine, sizeof(mine));
        changed = true;
      }
      if (changed) copy_back(c.app_arg + sizeof(abi::IoctlHeader), back);
    }
    if (c.kind == UverbsCommand::Kind::kWrite) app_result = static_cast<long>(c.app_length);
    if (not_adopted) {
      app_result = -not_adopted->errnum;
    } else if (not_copied) {
      // Checked before forwarding for a command that makes an object (CheckResultsFit), so
      // here only if another thread changed the app's mapping in between.
      engine_.Log(fmt::format("rdmaproxy: {}: {} succeeded but its results cannot be copied "
                              "back to the app ({}); it fails with EFAULT{}",
                              label_, c.short_name, not_copied->reason,
                              c.creates != abi::kNoObject || c.creates_context
                                  ? ", and what it made stays counted until the file closes"
                                  : ""));
      app_result = -EFAULT;
    }
  }
  if (engine_.tracing()) {
    // What the app sees: a command the kernel ran can still fail for it (an fd it cannot be
    // given, a result its memory does not take), and a write returns the app's own count.
    abi::CallOutcome outcome;
    outcome.ret = app_result;
    outcome.errnum = app_result < 0 ? static_cast<int>(-app_result) : 0;
    AppPayloads after(memory);
    outcome.out = &after;
    std::vector<std::byte> app_attrs;
    if (c.kind == UverbsCommand::Kind::kIoctl && app_result >= 0) {
      app_attrs.resize(kAttr * c.request.num_attrs);
      if (memory.Read(c.app_arg + sizeof(abi::IoctlHeader), app_attrs)) outcome.attrs_after = app_attrs;
    }
    std::string line;
    if (c.kind == UverbsCommand::Kind::kIoctl) {
      line = abi::FormatIoctl(label_, c.request, device_, abi::EmptyPayloadSource(), &outcome);
      // The request half was printed with the copied inputs at Begin; keep it.
      const size_t cut = line.find(") = ");
      if (!c.trace_request.empty() && cut != std::string::npos)
        line = c.trace_request + line.substr(cut + 1);
    } else {
      line = abi::FormatWrite(label_, *c.write, device_, &outcome);
    }
    engine_.Trace(line);
  }
  return app_result;
}

void UverbsFile::GiveBack(UverbsCommand& c) {
  EndBusy(c);
  if (c.doorbell_held) DropDoorbell(c.doorbell_page);
  c.doorbell_held = false;
  if (c.reserved) {
    engine_.usage().Release(c.creates_context ? abi::ObjectId{UVERBS_OBJECT_DEVICE} : c.creates,
                            c.creates_context ? 0 : c.pinned);
  } else if (c.rereg && c.pinned != 0) {
    engine_.usage().ReleasePinned(c.pinned);
  }
  c.reserved = false;
  c.pinned = 0;
}

void UverbsFile::Abandon(UverbsCommand& c, const Error& why) {
  GiveBack(c);
  engine_.counters().forwarded--;
  Refuse(why, static_cast<int>(Refusal::kState));
}

void UverbsFile::Forsake(UverbsCommand& c) {
  // Whatever the kernel did with it, the file's release ends it (ib_uverbs_release_file ->
  // uverbs_destroy_ufile_hw destroys every object of the file), as Closed() lets go of all
  // the file's tracked objects.
  GiveBack(c);
}

// Sentry mode forwards the command's own image, relocated where it is: it lives in this
// process, which is where the kernel reads it.
long UverbsFile::Ioctl(AppMemory& memory, FdBridge& fds, HostDevice& host, uint64_t arg) {
  std::lock_guard lock(mutex_);
  if (auto begun = BeginIoctl(memory, fds, arg, command_, &host); !begun)
    return -begun.error().errnum;
  const std::span<std::byte> image = command_.image.RelocateInPlace();
  auto r = host.Ioctl(RDMA_VERBS_IOCTL, image.data());
  const long result = r ? *r : -r.error().errnum;
  return Complete(command_, result, image, reinterpret_cast<uint64_t>(image.data()), memory,
                  fds);
}

namespace {

// IoctlAsForwarder's view of the app: its bytes are reachable (copied in and out), its pages
// are not -- they belong to another address space, and a pin would take the forwarder's.
class ForwarderMemory final : public AppMemory {
 public:
  ForwarderMemory(AppMemory& app, UverbsCommand& command) : app_(app), command_(command) {}
  bool IdentityMapped() const override { return false; }
  Result<void> Read(uint64_t address, std::span<std::byte> out) override {
    return app_.Read(address, out);
  }
  Result<void> Write(uint64_t address, std::span<const std::byte> in) override {
    return app_.Write(address, in);
  }
  Result<uint64_t> HostAddress(uint64_t address, uint64_t) override {
    command_.needs_app = true;
    return Fail(EXDEV, "{:#x} is pinned by the app's own syscall", address);
  }

 private:
  AppMemory& app_;
  UverbsCommand& command_;
};

// ... and its fds are numbers in another fd table, except those the forwarder holds
// descriptors of itself (`own`): the kernel looks an fd attribute up in the caller's table
// (uverbs_get_uobject_from_file -> fget), and the forwarder's descriptor names the same file.
class ForwarderFds final : public FdBridge {
 public:
  ForwarderFds(UverbsCommand& command, FdBridge* own) : command_(command), own_(own) {}
  Result<HostFile> Resolve(int app_fd) override {
    if (own_ != nullptr)
      if (auto mine = own_->Resolve(app_fd)) return mine;
    command_.needs_app = true;
    return Fail(EXDEV, "fd {} is resolved by the app's own syscall", app_fd);
  }
  Result<int> Adopt(int fd, FileKind, uint64_t) override {
    command_.needs_app = true;  // not reached: commands that return fds are the app's
    return Fail(EXDEV, "fd {} is the forwarder's", fd);
  }

 private:
  UverbsCommand& command_;
  FdBridge* own_;
};

}  // namespace

std::optional<long> UverbsFile::IoctlAsForwarder(AppMemory& memory, HostDevice& host,
                                                 uint64_t arg, FdBridge* own_fds) {
  std::lock_guard lock(mutex_);
  ForwarderMemory app(memory, command_);
  ForwarderFds fds(command_, own_fds);
  ProbeScope scope(probe_, &host);
  if (auto begun = BeginIoctlAs(app, fds, arg, command_, /*as_forwarder=*/true); !begun) {
    if (command_.needs_app) return std::nullopt;
    return -begun.error().errnum;
  }
  const std::span<std::byte> image = command_.image.RelocateInPlace();
  auto r = host.Ioctl(RDMA_VERBS_IOCTL, image.data());
  const long result = r ? *r : -r.error().errnum;
  return Complete(command_, result, image, reinterpret_cast<uint64_t>(image.data()), app, fds);
}

std::optional<long> UverbsFile::WriteAsForwarder(AppMemory& memory, HostDevice& host,
                                                 uint64_t buffer, uint64_t length) {
  std::lock_guard lock(mutex_);
  // A first look, before anything is counted: only the doorbell goes this way.
  std::array<std::byte, sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_post_send)> head;
  if (length != head.size() || !memory.Read(buffer, head) || !IsSendDoorbell(head))
    return std::nullopt;
  ForwarderMemory app(memory, command_);
  ForwarderFds fds(command_, nullptr);
  if (auto begun = BeginWrite(app, fds, buffer, length, command_, &host); !begun)
    return -begun.error().errnum;  // refused, counted and logged as the app's write would be
  // The engine's own copy decides: the app may have changed its buffer since the first look.
  if (!IsSendDoorbell(command_.write_raw) || command_.outputs.size() != 1) {
    const Error e = Fail(EAGAIN, "{}: the command changed while the proxy read it",
                         command_.short_name);
    Abandon(command_, e);
    return -e.errnum;
  }
  const OutputCopy& response = command_.outputs.front();
  const size_t ioctl_at = AppendInvokeWrite(
      command_.image, {IB_USER_VERBS_CMD_POST_SEND, device_.driver_id, command_.write_core_at,
                       command_.write->core.size(), response.image_offset, response.length});
  const std::span<std::byte> image = command_.image.RelocateInPlace();
  auto r = host.Ioctl(RDMA_VERBS_IOCTL, image.data() + ioctl_at);
  // Settled as the write it answers: the byte count where the ioctl returned 0 (as
  // ib_uverbs_write() returns the count when the handler succeeds), the response copied out.
  const long result = r ? static_cast<long>(length) : -r.error().errnum;
  return Complete(command_, result, image, reinterpret_cast<uint64_t>(image.data()), app, fds);
}

long UverbsFile::Write(AppMemory& memory, FdBridge& fds, HostDevice& host, uint64_t buffer,
                       uint64_t length) {
  std::lock_guard lock(mutex_);
  if (auto begun = BeginWrite(memory, fds, buffer, length, command_, &host); !begun)
    return -begun.error().errnum;
  const std::span<std::byte> image = command_.image.RelocateInPlace();
  auto r = host.Write(image.data(), command_.write_raw.size());
  const long result = r ? *r : -r.error().errnum;
  return Complete(command_, result, image, reinterpret_cast<uint64_t>(image.data()), memory,
                  fds);
}

Result<void> UverbsFile::CheckMmap(uint64_t offset, uint64_t length, int prot) {
  std::lock_guard lock(mutex_);
  engine_.counters().commands++;
  auto r = mmaps_.Check(offset, length, prot);
  if (!r) {
    Refuse(r.error(), static_cast<int>(Refusal::kState));
    return r;
  }
  engine_.counters().mmaps++;
  return Ok();
}

Result<void> UverbsFile::Mapped(uint64_t offset) {
  std::lock_guard lock(mutex_);
  auto r = mmaps_.Mapped(offset);
  if (!r) Refuse(r.error(), static_cast<int>(Refusal::kState));
  return r;
}

void UverbsFile::Closed() {
  if (closed_) return;
  closed_ = true;
  objects_.ForEach(
      [&](uint32_t, const TrackedObject& o) { engine_.usage().Release(o.type, o.pinned); });
  for (const TrackedObject& o : unread_objects_) engine_.usage().Release(o.type, o.pinned);
  unread_objects_.clear();
  const uint64_t page = uint64_t{1} << MmapRules::HostPageShift();
  for (const auto& held : doorbell_pages_) {
    (void)held;
    engine_.usage().ReleasePinned(page);
  }
  doorbell_pages_.clear();
  if (has_context_) engine_.usage().Release(UVERBS_OBJECT_DEVICE, 0);
}

}  // namespace rxp::proxy
