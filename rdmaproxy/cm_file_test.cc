#include "rdmaproxy/cm_file.h"

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <rdma/rdma_user_cm.h>
#include <unistd.h>

#include "rdmaproxy/engine.h"
#include "rdmaproxy/testing/fakes.h"

namespace rxp::proxy {
namespace {

using testing::FakeAppMemory;
using testing::FakeFdBridge;
using testing::FakeHostDevice;

constexpr uint64_t kMirror = 0x100000000;  // sentry mode: the host sees app pages 4 GiB up

struct CmFixture {
  CmFixture() {
    EngineOptions o;
    o.log = [this](std::string_view l) { log.emplace_back(l); };
    engine = std::make_unique<Engine>(std::move(o));
    file = engine->OpenRdmaCm("rdma_cm");
  }
  // write() of `cmd` with body `body` (whose `response` field the caller set).
  template <typename Body>
  long Write(uint32_t cmd, const Body& body, uint16_t out) {
    std::vector<std::byte> bytes(sizeof(rdma_ucm_cmd_hdr) + sizeof(Body));
    const rdma_ucm_cmd_hdr hdr{cmd, static_cast<uint16_t>(sizeof(Body)), out};
    std::memcpy(bytes.data(), &hdr, sizeof(hdr));
    std::memcpy(bytes.data() + sizeof(hdr), &body, sizeof(Body));
    return file->Write(memory, fds, host, memory.PutBytes(bytes), bytes.size());
  }

  FakeAppMemory memory{kMirror};
  FakeFdBridge fds;
  FakeHostDevice host;
  std::vector<std::string> log;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<CmFile> file;
};

// The fake ucma answers a command by writing `resp` where the forwarded body's `response`
// field (at `field` in the body) points: the bounce buffer, in sentry mode.
template <typename Resp>
void Answer(FakeHostDevice& host, size_t field, const Resp& resp) {
  host.on_write = [field, resp](const void* buf, size_t len) {
    uint64_t response = 0;
    std::memcpy(&response,
                static_cast<const std::byte*>(buf) + sizeof(rdma_ucm_cmd_hdr) + field, 8);
    std::memcpy(reinterpret_cast<void*>(response), &resp, sizeof(resp));
    return static_cast<long>(len);
  };
}

rdma_ucm_create_id CreateId(uint64_t response) {
  rdma_ucm_create_id c{};
  c.response = response;
  c.ps = RDMA_PS_TCP;
  c.qp_type = 2;  // IB_QPT_RC
  return c;
}

TEST_CASE("rdma_cm: a CREATE_ID whose response the app cannot take is not forwarded",
          "[engine][rdma_cm]") {
  CmFixture f;
  Answer(f.host, offsetof(rdma_ucm_create_id, response), rdma_ucm_create_id_resp{5});
  const uint64_t resp = f.memory.Alloc(sizeof(rdma_ucm_create_id_resp));
  f.memory.Protect(resp);
  // Natively ucma_create_id destroys the id it made when copy_to_user() fails: EFAULT and no id.
  CHECK(f.Write(RDMA_USER_CM_CMD_CREATE_ID, CreateId(resp), sizeof(rdma_ucm_create_id_resp)) ==
        -EFAULT);
  CHECK(f.host.calls == 0);
  CHECK(f.file->live_ids() == 0);
  CHECK(f.engine->counters().refused_state == 1);
  REQUIRE(!f.log.empty());
  CHECK(f.log.back().find("not writable") != std::string::npos);

  // A writable response: forwarded, the id tracked, the app's copy filled.
  const uint64_t good = f.memory.Alloc(sizeof(rdma_ucm_create_id_resp));
  const auto body = CreateId(good);
  CHECK(f.Write(RDMA_USER_CM_CMD_CREATE_ID, body, sizeof(rdma_ucm_create_id_resp)) ==
        static_cast<long>(sizeof(rdma_ucm_cmd_hdr) + sizeof(body)));
  CHECK(f.host.calls == 1);
  CHECK(f.file->live_ids() == 1);
  CHECK(f.memory.Get<rdma_ucm_create_id_resp>(good).id == 5);
}

TEST_CASE("rdma_cm: a DESTROY_ID whose response cannot be copied back fails with EFAULT after "
          "the kernel destroyed the id", "[engine][rdma_cm]") {
  CmFixture f;
  Answer(f.host, offsetof(rdma_ucm_create_id, response), rdma_ucm_create_id_resp{5});
  const uint64_t created = f.memory.Alloc(sizeof(rdma_ucm_create_id_resp));
  REQUIRE(f.Write(RDMA_USER_CM_CMD_CREATE_ID, CreateId(created),
                  sizeof(rdma_ucm_create_id_resp)) > 0);
  REQUIRE(f.file->live_ids() == 1);

  // ucma_destroy_id destroys first and copies events_reported after: natively the id is gone
  // and the app gets EFAULT. So the command runs, and fails the same way.
  Answer(f.host, offsetof(rdma_ucm_destroy_id, response), rdma_ucm_destroy_id_resp{0});
  rdma_ucm_destroy_id d{};
  d.response = f.memory.Alloc(sizeof(rdma_ucm_destroy_id_resp));
  d.id = 5;
  f.memory.Protect(d.response);
  CHECK(f.Write(RDMA_USER_CM_CMD_DESTROY_ID, d, sizeof(rdma_ucm_destroy_id_resp)) == -EFAULT);
  CHECK(f.host.calls == 2);
  CHECK(f.file->live_ids() == 0);
  REQUIRE(!f.log.empty());
  CHECK(f.log.back().find("fails with EFAULT") != std::string::npos);
}

// ucma_write() refuses a count shorter than the header before it reads, and reads nothing past
// the header's `in` bytes: a longer count is fine, and returned whole.
TEST_CASE("rdma_cm: write counts as ucma_write() takes them", "[engine][rdma_cm]") {
  CmFixture f;
  CHECK(f.file->Write(f.memory, f.fds, f.host, 0x10, 4) == -EINVAL);  // 0x10: unmapped
  CHECK(f.host.calls == 0);
  size_t forwarded = 0;
  f.host.on_write = [&](const void* buf, size_t len) {
    forwarded = len;
    uint64_t response = 0;
    std::memcpy(&response,
                static_cast<const std::byte*>(buf) + sizeof(rdma_ucm_cmd_hdr) +
                    offsetof(rdma_ucm_create_id, response), 8);
    const rdma_ucm_create_id_resp resp{5};
    std::memcpy(reinterpret_cast<void*>(response), &resp, sizeof(resp));
    return static_cast<long>(len);
  };
  std::vector<std::byte> bytes(8192);
  const auto body = CreateId(f.memory.Alloc(sizeof(rdma_ucm_create_id_resp)));
  const rdma_ucm_cmd_hdr hdr{RDMA_USER_CM_CMD_CREATE_ID, sizeof(body),
                             sizeof(rdma_ucm_create_id_resp)};
  std::memcpy(bytes.data(), &hdr, sizeof(hdr));
  std::memcpy(bytes.data() + sizeof(hdr), &body, sizeof(body));
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(bytes), bytes.size()) == 8192);
  CHECK(forwarded == sizeof(hdr) + sizeof(body));
  CHECK(f.file->live_ids() == 1);
  // An `in` past the struct: the handler reads its struct only, and so much is forwarded.
  uint16_t forwarded_in = 0;
  const auto answer = f.host.on_write;
  f.host.on_write = [&](const void* buf, size_t len) {
    std::memcpy(&forwarded_in, static_cast<const std::byte*>(buf) + 4, 2);
    return answer(buf, len);
  };
  const rdma_ucm_cmd_hdr wide{RDMA_USER_CM_CMD_CREATE_ID, 6000, sizeof(rdma_ucm_create_id_resp)};
  std::memcpy(bytes.data(), &wide, sizeof(wide));
  CHECK(f.file->Write(f.memory, f.fds, f.host, f.memory.PutBytes(bytes), bytes.size()) == 8192);
  CHECK(forwarded == sizeof(hdr) + sizeof(body));
  CHECK(forwarded_in == sizeof(body));
}

// ucma_migrate_id(): fdget() failing is ENOENT, a file that is not rdma_cm EINVAL.
TEST_CASE("rdma_cm: MIGRATE_ID's fd is answered as ucma_migrate_id() answers it",
          "[engine][rdma_cm]") {
  CmFixture f;
  f.fds.Add(7, {70, FileKind::kOther, 0});
  f.fds.Add(8, {80, FileKind::kUverbs, 0});
  rdma_ucm_migrate_id m{};
  m.response = f.memory.Alloc(sizeof(rdma_ucm_migrate_resp));
  m.id = 1;
  m.fd = 9999;
  CHECK(f.Write(RDMA_USER_CM_CMD_MIGRATE_ID, m, sizeof(rdma_ucm_migrate_resp)) == -ENOENT);
  m.fd = 7;
  CHECK(f.Write(RDMA_USER_CM_CMD_MIGRATE_ID, m, sizeof(rdma_ucm_migrate_resp)) == -EINVAL);
  m.fd = 8;
  CHECK(f.Write(RDMA_USER_CM_CMD_MIGRATE_ID, m, sizeof(rdma_ucm_migrate_resp)) == -EINVAL);
  CHECK(f.host.calls == 0);
  REQUIRE(!f.log.empty());
  CHECK(f.log.back().find("not rdma_cm") != std::string::npos);
}

// ucma_migrate_id() checks no `out`: it copies its whole response to `response` whatever `out`
// says, so a write with out = 0 works natively and writes the 4 bytes; the proxy forwards it
// and copies those 4 bytes back (sentry mode: from its bounce buffer).
TEST_CASE("rdma_cm: MIGRATE_ID's response is written whatever `out` says", "[engine][rdma_cm]") {
  CmFixture f;
  f.fds.Add(7, {70, FileKind::kRdmaCm, 0});
  rdma_ucm_migrate_id m{};
  m.response = f.memory.Alloc(sizeof(rdma_ucm_migrate_resp));
  m.id = 1;
  m.fd = 7;
  Answer(f.host, offsetof(rdma_ucm_migrate_id, response), rdma_ucm_migrate_resp{42});
  CHECK(f.Write(RDMA_USER_CM_CMD_MIGRATE_ID, m, 0) ==
        static_cast<long>(sizeof(rdma_ucm_cmd_hdr) + sizeof(m)));
  CHECK(f.host.calls == 1);
  CHECK(f.memory.Get<rdma_ucm_migrate_resp>(m.response).events_reported == 42);
  // A larger `out`: still exactly the 4 bytes, the app's bytes after them untouched.
  std::vector<std::byte> marked(64, std::byte{0xaa});
  m.response = f.memory.PutBytes(marked);
  CHECK(f.Write(RDMA_USER_CM_CMD_MIGRATE_ID, m, 64) ==
        static_cast<long>(sizeof(rdma_ucm_cmd_hdr) + sizeof(m)));
  CHECK(f.memory.Get<rdma_ucm_migrate_resp>(m.response).events_reported == 42);
  std::array<std::byte, 60> untouched;
  untouched.fill(std::byte{0xaa});
  CHECK(f.memory.Get<std::array<std::byte, 60>>(m.response + 4) == untouched);
}

// ucma_create_id() copies its 4-byte struct and no more, however large `out` is: the app's bytes
// after it stay as they were (sentry mode: the bounce buffer starts as those bytes and only the
// kernel's changes go back). A kernel whose struct is longer than the proxy's writes more of
// `out`, and that comes back too.
TEST_CASE("rdma_cm: only what the kernel wrote of a larger `out` comes back", "[engine][rdma_cm]") {
  CmFixture f;
  Answer(f.host, offsetof(rdma_ucm_create_id, response), rdma_ucm_create_id_resp{5});
  std::vector<std::byte> marked(64, std::byte{0xaa});
  const uint64_t resp = f.memory.PutBytes(marked);
  REQUIRE(f.Write(RDMA_USER_CM_CMD_CREATE_ID, CreateId(resp), 64) > 0);
  CHECK(f.memory.Get<rdma_ucm_create_id_resp>(resp).id == 5);
  std::array<std::byte, 60> untouched;
  untouched.fill(std::byte{0xaa});
  CHECK(f.memory.Get<std::array<std::byte, 60>>(resp + 4) == untouched);

  // A newer kernel's 8-byte struct: all 8 bytes reach the app, the rest stays.
  struct Longer {
    uint32_t id;
    uint32_t added;
  };
  Answer(f.host, offsetof(rdma_ucm_create_id, response), Longer{6, 0x01020304});
  const uint64_t resp2 = f.memory.PutBytes(marked);
  REQUIRE(f.Write(RDMA_USER_CM_CMD_CREATE_ID, CreateId(resp2), 64) > 0);
  CHECK(f.memory.Get<Longer>(resp2).id == 6);
  CHECK(f.memory.Get<Longer>(resp2).added == 0x01020304);
  std::array<std::byte, 56> rest;
  rest.fill(std::byte{0xaa});
  CHECK(f.memory.Get<std::array<std::byte, 56>>(resp2 + 8) == rest);
  CHECK(f.file->live_ids() == 2);
}

// An `out` that runs into an unmapped page past the handler's struct: natively the kernel's
// copy of its struct succeeds and the id is the app's; the unreadable tail is not written.
TEST_CASE("rdma_cm: an `out` whose tail past the struct is unmapped still gets the struct",
          "[engine][rdma_cm]") {
  CmFixture f;
  Answer(f.host, offsetof(rdma_ucm_create_id, response), rdma_ucm_create_id_resp{5});
  const uint64_t resp = f.memory.Alloc(16);  // 16 bytes mapped, 64 declared
  REQUIRE(f.Write(RDMA_USER_CM_CMD_CREATE_ID, CreateId(resp), 64) > 0);
  CHECK(f.memory.Get<rdma_ucm_create_id_resp>(resp).id == 5);
  CHECK(f.file->live_ids() == 1);
  // An unmapped struct is refused before the kernel makes the id (ucma_create_id's err1).
  const int calls = f.host.calls;
  CHECK(f.Write(RDMA_USER_CM_CMD_CREATE_ID, CreateId(0x7000'0000), 64) == -EFAULT);
  CHECK(f.host.calls == calls);
  CHECK(f.file->live_ids() == 1);

  // QUERY's struct size depends on its option (ucma_query_addr writes 280 bytes, zeros at the
  // end): an `out` of 512 whose last 212 bytes are past the end of its page gets all 280.
  std::array<std::byte, 280> answer{};
  std::fill(answer.begin(), answer.begin() + 270, std::byte{0x11});
  Answer(f.host, offsetof(rdma_ucm_query, response), answer);
  const uint64_t page = f.memory.PutBytes(std::vector<std::byte>(4096, std::byte{0xaa}));
  REQUIRE(page % 4096 == 0);
  const uint64_t out = page + 4096 - 300;
  rdma_ucm_query query{};
  query.response = out;
  query.id = 5;
  query.option = RDMA_USER_CM_QUERY_ADDR;
  REQUIRE(f.Write(RDMA_USER_CM_CMD_QUERY, query, 512) > 0);
  CHECK(f.memory.Get<std::array<std::byte, 280>>(out) == answer);
  CHECK(f.memory.Get<std::array<std::byte, 20>>(out + 280)[0] == std::byte{0xaa});
}

// ucma_get_event(): the queue is looked at before the response is copied. An unwritable
// response is EFAULT only when an event is queued (and it stays queued); an empty queue is
// EAGAIN on a nonblocking file. The proxy asks the queue with poll() and forwards nothing.
TEST_CASE("rdma_cm: GET_EVENT into an unwritable buffer answers as the queue says",
          "[engine][rdma_cm]") {
  CmFixture f;
  int queue[2];
  REQUIRE(::pipe2(queue, O_CLOEXEC | O_NONBLOCK) == 0);
  f.host.poll_fd = queue[0];  // its readability stands for the host file's event queue
  rdma_ucm_get_event get{};
  get.response = f.memory.Alloc(sizeof(rdma_ucm_event_resp));
  f.memory.Protect(get.response);
  CHECK(f.Write(RDMA_USER_CM_CMD_GET_EVENT, get, sizeof(rdma_ucm_event_resp)) == -EAGAIN);
  // Counted as a forwarded GET_EVENT's EAGAIN is: forwarded, a kernel error, no refusal.
  CHECK(f.engine->counters().commands == 1);
  CHECK(f.engine->counters().forwarded == 1);
  CHECK(f.engine->counters().kernel_errors == 1);
  CHECK(f.engine->counters().refused() == 0);
  REQUIRE(::write(queue[1], "e", 1) == 1);
  CHECK(f.Write(RDMA_USER_CM_CMD_GET_EVENT, get, sizeof(rdma_ucm_event_resp)) == -EFAULT);
  // Blocking: with an event queued, no wait.
  REQUIRE(::fcntl(queue[0], F_SETFL, 0) == 0);
  CHECK(f.Write(RDMA_USER_CM_CMD_GET_EVENT, get, sizeof(rdma_ucm_event_resp)) == -EFAULT);
  CHECK(f.host.calls == 0);
  CHECK(f.engine->counters().refused_state == 2);
  ::close(queue[0]);
  ::close(queue[1]);
}

}  // namespace
}  // namespace rxp::proxy
