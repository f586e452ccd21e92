#include "rdmaproxy/cm_file.h"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cstring>
#include <span>

#include "abi/payload.h"
#include "abi/trace_printer.h"
#include "abi/write_decoder.h"
#include "rdmaproxy/copy_out.h"
#include "rdmaproxy/engine.h"
#include "rdmaproxy/translate.h"

namespace rxp::proxy {
namespace {

// enum rdma_cm_event_type: RDMA_CM_EVENT_CONNECT_REQUEST creates a new id for the connection.
constexpr uint32_t kConnectRequest = 4;

// Commands that make an id or a multicast membership, or take an event off the file's queue.
bool MakesOrTakes(uint32_t cmd) {
  return cmd == RDMA_USER_CM_CMD_CREATE_ID || cmd == RDMA_USER_CM_CMD_JOIN_IP_MCAST ||
         cmd == RDMA_USER_CM_CMD_JOIN_MCAST || cmd == RDMA_USER_CM_CMD_GET_EVENT;
}

}  // namespace

namespace {

// The bytes of an `out` of `out_len` that a ucma handler copies to its response: its struct,
// no more (ucma_create_id(), ucma_query_route() and ucma_get_event() copy
// min(out_len, sizeof(resp)); ucma_migrate_id() exactly its struct, response_len already says
// so). ucma_query() sizes the response by its option (ucma_query_path() by the number of
// paths), so for QUERY no byte is known in advance.
size_t ResponseBytesWritten(const abi::UcmaCommand& cmd, size_t out_len) {
  if (cmd.variable_response || cmd.response == nullptr) return std::min<size_t>(out_len, cmd.resp_min);
  return std::min<size_t>(out_len, cmd.response->size);
}

}  // namespace

CmFile::CmFile(Engine& engine, uint64_t id, std::string label)
    : engine_(engine), id_(id), label_(std::move(label)) {}

Result<std::unique_ptr<CmCommand>> CmFile::BeginWrite(AppMemory& memory, FdBridge& fds,
                                                      uint64_t buffer, uint64_t length) {
  engine_.counters().commands++;
  auto c = std::make_unique<CmCommand>();
  c->app_buffer = buffer;
  c->app_length = length;
  c->identity = memory.IdentityMapped();
  auto fail = [&](Error e, Refusal why) -> Error {
    engine_.Refused(label_, e, why);
    if (engine_.tracing()) engine_.Trace(abi::FormatRefused("write", label_, "?", e));
    return e;
  };
  // ucma_write(): a count shorter than the header is EINVAL before anything is read; then the
  // header, and the handler reads `in` bytes of request. Nothing past them is read, so a longer
  // count is fine (and the write forwarded is the header and its `in` bytes).
  if (length < sizeof(rdma_ucm_cmd_hdr))
    return fail(Fail(EINVAL, "rdma_cm write of {} bytes is shorter than the command header",
                     length),
                Refusal::kDecode);
  rdma_ucm_cmd_hdr hdr;
  if (auto r = memory.Read(buffer, std::as_writable_bytes(std::span(&hdr, 1))); !r)
    return fail(Fail(EFAULT, "cannot read the rdma_cm command header at {:#x}", buffer),
                Refusal::kDecode);
  c->raw.resize(static_cast<size_t>(
      std::min<uint64_t>(length, sizeof(rdma_ucm_cmd_hdr) + uint64_t{hdr.in})));
  if (auto r = memory.Read(buffer, c->raw); !r)
    return fail(Fail(EFAULT, "cannot read the rdma_cm command at {:#x}", buffer),
                Refusal::kDecode);
  auto req = abi::DecodeUcmaWrite(c->raw);
  if (!req) return fail(std::move(req).error(), Refusal::kDecode);
  // The handlers read at most their struct of `in` (copy_from_user of sizeof(cmd), or of
  // min(in, sizeof(cmd))): what is forwarded is that much, with `in` saying so, whatever the
  // app's `in` was -- never more than a command of its own.
  if (const size_t whole = req->command->request->size; req->header.in > whole) {
    c->raw.resize(sizeof(rdma_ucm_cmd_hdr) + whole);
    const auto in = static_cast<uint16_t>(whole);
    std::memcpy(c->raw.data() + offsetof(rdma_ucm_cmd_hdr, in), &in, sizeof(in));
    req = abi::DecodeUcmaWrite(c->raw);
    if (!req) return fail(std::move(req).error(), Refusal::kDecode);
  }
  c->request = *req;
  const abi::UcmaCommand& cmd = *req->command;
  if (auto e = CheckEntry(engine_.policy(), cmd.policy, cmd.short_name, cmd.name); !e)
    return fail(std::move(e).error(), Refusal::kPolicy);

  const size_t base = c->image.Append(c->raw);
  const size_t body_at = base + sizeof(rdma_ucm_cmd_hdr);
  TranslateContext t{c->image, c->outputs, c->produced, memory, c->identity, true,
                     cmd.short_name, {}};
  // MIGRATE_ID.fd: another rdma_cm file of the app. ucma_migrate_id() answers an fd that is not
  // open with ENOENT (fdget) and an open file that is not rdma_cm with EINVAL (f_op check).
  t.resolve_fd = [&](const abi::Field&, int fd) -> Result<int> {
    auto f = fds.Resolve(fd);
    if (!f && f.error().errnum == EBADF)
      return Fail(ENOENT, "fd {} is not open in the app", fd);
    if (!f) return std::move(f).error();
    if (f->kind != FileKind::kRdmaCm)
      return Fail(EINVAL, "fd {} is a {} file, not rdma_cm", fd, FileKindName(f->kind));
    return f->host_fd;
  };
  if (auto e = TranslateFields(t, *cmd.request, body_at, c->request.body.size()); !e)
    return fail(std::move(e).error(), Refusal::kState);

  c->response = {false, c->request.response, c->request.response_len};
  if (c->request.response != 0 && !c->identity) {
    const size_t bounce = c->image.Reserve(c->request.response_len);
    const abi::Field* f = cmd.request->Find("response");
    c->image.PointTo(body_at + f->offset, bounce);
    c->outputs.push_back({bounce, c->request.response, c->request.response_len, -1});
    c->response = {true, bounce, c->request.response_len};
    // Natively the bytes of `out` past the handler's struct are never touched: the bounce
    // starts as the app's own bytes, so that what goes back past the struct is only what the
    // kernel changed (Complete). An `out` that runs into an unmapped page has its readable
    // start read, and the rest starts as zeros: a kernel write there (nonzero) goes back and
    // fails as the kernel's copy would; where its struct ends before, nothing is lost. A
    // QUERY's struct size depends on its option (resp_min 0), so the readable start, not
    // only the struct's fixed part, is what the kernel's bytes are compared with.
    c->response_written = ResponseBytesWritten(cmd, c->request.response_len);
    c->response_before.resize(c->request.response_len);
    ReadReadablePrefix(memory, c->request.response, c->response_before);
    std::memcpy(c->image.bytes().data() + bounce, c->response_before.data(),
                c->response_before.size());
    // What makes an id, or takes an event off the queue, is undone natively when its response
    // cannot be copied (ucma_create_id and ucma_join destroy what they made; ucma_get_event's
    // err_ctx leaves the event queued): so it is checked before it is forwarded (copy_out.h),
    // as far as the kernel's copy reaches.
    OutputCopy copied = c->outputs.back();
    copied.length = static_cast<uint32_t>(c->response_written);
    if (MakesOrTakes(cmd.cmd))
      if (auto e = CheckOutputsWritable(std::span(&copied, 1), memory, cmd.short_name); !e) {
        if (cmd.cmd != RDMA_USER_CM_CMD_GET_EVENT) return fail(std::move(e).error(), Refusal::kState);
        c->unwritable_event = std::move(e).error();  // Write() asks the queue first
        return c;
      }
  }
  if (engine_.tracing()) c->trace_request = abi::FormatUcma(label_, c->request, nullptr);
  engine_.counters().forwarded++;
  return c;
}

long CmFile::Complete(CmCommand& c, long result, std::span<std::byte> image_after,
                      AppMemory& memory) {
  engine_.counters().Settled(result);
  if (result >= 0) {
    for (const auto& o : c.outputs) {
      const auto after = image_after.subspan(o.image_offset, o.length);
      // The handler's struct, then up to the last byte past it the kernel changed (none on a
      // kernel whose struct is the proxy's; a newer kernel's longer struct is not cut short).
      // (The response is the only bounced output; response_before is its size.)
      size_t length = o.length;
      if (c.response_before.size() == o.length) {
        length = c.response_written;
        for (size_t i = o.length; i > length; --i)
          if (after[i - 1] != c.response_before[i - 1]) {
            length = i;
            break;
          }
      }
      auto w = memory.Write(o.app_address, after.first(length));
      if (!w && result >= 0) {
        // Checked before forwarding where it matters (MakesOrTakes); otherwise the kernel's
        // own copy_to_user() fails the command after it ran, as this does.
        engine_.Log(fmt::format("rdmaproxy: {}: {} succeeded but its response cannot be "
                                "copied back to the app ({}); it fails with EFAULT",
                                label_, c.request.command->short_name, w.error().reason));
        result = -EFAULT;
      }
    }
    // Ids: CREATE_ID / JOIN_* answer with a new id; GET_EVENT's CONNECT_REQUEST carries one;
    // DESTROY_ID ends one.
    auto read_u32 = [&](uint32_t offset) -> std::optional<uint32_t> {
      uint32_t v = 0;
      if (offset + 4 > c.response.length) return std::nullopt;
      if (c.response.in_image) {
        std::memcpy(&v, image_after.data() + c.response.where + offset, 4);
        return v;
      }
      if (!memory.Read(c.response.where + offset, std::as_writable_bytes(std::span(&v, 1))))
        return std::nullopt;
      return v;
    };
    const uint32_t cmd = c.request.command->cmd;
    std::lock_guard lock(ids_mutex_);
    if (cmd == RDMA_USER_CM_CMD_CREATE_ID || cmd == RDMA_USER_CM_CMD_JOIN_MCAST ||
        cmd == RDMA_USER_CM_CMD_JOIN_IP_MCAST) {
      if (auto id = read_u32(offsetof(rdma_ucm_create_id_resp, id))) ids_.insert(*id);
    } else if (cmd == RDMA_USER_CM_CMD_DESTROY_ID) {
      ids_.erase(static_cast<uint32_t>(
          abi::ReadField(c.request.body, offsetof(rdma_ucm_destroy_id, id), 4)));
    } else if (cmd == RDMA_USER_CM_CMD_GET_EVENT) {
      auto event = read_u32(offsetof(rdma_ucm_event_resp, event));
      if (event && *event == kConnectRequest)
        if (auto id = read_u32(offsetof(rdma_ucm_event_resp, id))) ids_.insert(*id);
    }
  }
  if (engine_.tracing()) {
    abi::CallOutcome outcome;
    outcome.ret = result;
    outcome.errnum = result < 0 ? static_cast<int>(-result) : 0;
    class AppRead final : public abi::PayloadSource {
     public:
      explicit AppRead(AppMemory& m) : m_(m) {}
      std::optional<std::span<const std::byte>> Read(uint64_t a, size_t n) const override {
        buf_.resize(n);
        if (!m_.Read(a, buf_)) return std::nullopt;
        return std::span<const std::byte>(buf_);
      }

     private:
      AppMemory& m_;
      mutable std::vector<std::byte> buf_;
    } after(memory);
    outcome.out = &after;
    engine_.Trace(abi::FormatUcma(label_, c.request, &outcome));
  }
  return result < 0 ? result : static_cast<long>(c.app_length);
}

void CmFile::Abandon(const Error& why) {
  engine_.counters().forwarded--;
  engine_.Refused(label_, why, Refusal::kState);
}

// ucma_get_event() copies an event out only once there is one: an empty queue is EAGAIN on a
// nonblocking file and a wait on a blocking one, and only a queued event meets the app's
// unwritable buffer (EFAULT, the event left queued). The proxy cannot let the kernel take the
// event it could not copy, so it asks the queue with poll() and never forwards the command.
// The EAGAIN and a signal during the wait are counted as those answers of a forwarded
// GET_EVENT are. Another thread's GET_EVENT on the same file may take the event between the
// poll and the answer (the kernel holds file->mut across both); this thread then answers
// EFAULT where the kernel would have gone on waiting.
long CmFile::AnswerUnwritableEvent(CmCommand& c, HostDevice& host) {
  const int fd = host.fd();
  if (fd >= 0) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0) return -errno;  // not counted: nothing was answered
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, (flags & O_NONBLOCK) != 0 ? 0 : -1);
    // A signal during the wait (wait_event_interruptible()'s -ERESTARTSYS: the runtime
    // restarts or fails the call), or nonblocking and nothing queued (EAGAIN).
    const long answer = ready < 0 ? -errno : ready == 0 ? -EAGAIN : 0;
    if (answer != 0) {
      engine_.counters().forwarded++;
      engine_.counters().Settled(answer);
      return answer;
    }
  }
  engine_.Refused(label_, *c.unwritable_event, Refusal::kState);
  if (engine_.tracing())
    engine_.Trace(abi::FormatRefused("write", label_, "GET_EVENT", *c.unwritable_event));
  return -c.unwritable_event->errnum;
}

long CmFile::Write(AppMemory& memory, FdBridge& fds, HostDevice& host, uint64_t buffer,
                   uint64_t length) {
  auto c = BeginWrite(memory, fds, buffer, length);
  if (!c) return -c.error().errnum;
  if ((*c)->unwritable_event) return AnswerUnwritableEvent(**c, host);
  std::vector<std::byte> image((*c)->image.size());
  const auto base = reinterpret_cast<uint64_t>(image.data());
  (*c)->image.RelocateInto(image, base);
  auto r = host.Write(image.data(), (*c)->raw.size());
  const long result = r ? *r : -r.error().errnum;
  return Complete(**c, result, image, memory);
}

}  // namespace rxp::proxy
