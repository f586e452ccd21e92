// Every captured vector (tests/data/vectors/*.jsonl: real rdma-core programs in the VM test
// bed) decodes the way the kernel judged it, prints exactly its golden trace (.trace), and
// every malformed variant of it is refused with the errno the kernel would return.
#include "tools/vectors.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <fstream>
#include <sstream>

#include "abi/ioctl_decoder.h"
#include "abi/ucma_decoder.h"
#include "abi/write_decoder.h"

namespace rxp::tools {
namespace {

namespace fs = std::filesystem;
const fs::path kVectorDir = "tests/data/vectors";

std::vector<fs::path> VectorFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kVectorDir))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The decoder's verdict on a call: 0 (accepted) or the errno it refuses with.
int Verdict(const VectorCall& c, std::span<const std::byte> request) {
  const abi::DeviceAbi device = abi::DeviceAbiFor(c.driver_id);
  if (c.IsRdmaCm()) {
    auto r = abi::DecodeUcmaWrite(request);
    return r.ok() ? 0 : r.error().errnum;
  }
  if (c.syscall == "ioctl") {
    abi::IoctlRequest r;
    auto res = abi::DecodeIoctl(request, device, r);
    if (!res.ok()) return res.error().errnum;
    if (r.write_command == nullptr) return 0;
    // INVOKE_WRITE: the wrapped command's body too, as the engine checks it once copied in
    // (ValidateWriteBody: EX_CREATE_RWQ_IND_TBL's handles, EX_CREATE_FLOW's specs, ...).
    const abi::IoctlAttr* in = r.Find(UVERBS_ATTR_CORE_IN);
    const auto core = in->IsPointer()
                          ? VectorPayloads(c.in).Read(in->data, in->len)
                          : std::as_bytes(std::span(&in->data, 1)).first(in->len);
    if (!core) return 0;  // not captured
    auto body = abi::ValidateWriteBody(*r.write_command, *core);
    return body.ok() ? 0 : body.error().errnum;
  }
  auto r = abi::DecodeWrite(request, device);
  return r.ok() ? 0 : r.error().errnum;
}

TEST_CASE("the vector set covers the programs the conformance suite runs", "[vectors]") {
  std::set<std::string> names;
  for (const auto& f : VectorFiles()) names.insert(f.stem().string());
  for (const char* n : {"ibv_devinfo", "rc_pingpong_client", "rc_pingpong_events_server",
                        "ud_pingpong_server", "srq_pingpong_client", "ib_write_bw_client",
                        "ib_read_bw_server", "ib_send_bw_client", "ib_atomic_bw_client",
                        "rping_client", "rping_server", "ucmatose_server",
                        // rdma-core's mlx5 provider against the fake mlx5 kernel
                        // (tests/tools/capture-mlx5-vectors.sh)
                        "mlx5_devinfo", "mlx5_verbs", "mlx5_verbs_write", "mlx5_verbs_ib",
                        "mlx5_rc_pingpong_client", "mlx5_ud_pingpong_server"})
    CHECK(names.count(n) == 1);
}

TEST_CASE("every captured call decodes as the kernel judged it", "[vectors]") {
  size_t calls = 0, ioctls = 0, writes = 0, cm = 0;
  for (const auto& path : VectorFiles()) {
    auto v = LoadVectors(path.string());
    REQUIRE(v.ok());
    for (const auto& c : v->calls) {
      INFO(path.filename().string() << ": " << TraceLine(c));
      const int verdict = Verdict(c, c.request);
      if (c.ret >= 0) {
        CHECK(verdict == 0);  // the kernel accepted it: the decoder must too
      } else if (verdict != 0 && c.errnum != ENOTTY) {
        // Refused by both: for the same reason. ENOTTY is no reason: the file had no ioctl
        // framework at all (a kernel before 4.17; the fake mlx5 kernel's write-only mode),
        // so the kernel never looked at the request.
        CHECK(verdict == c.errnum);
      }
      ++calls;
      (c.IsRdmaCm() ? cm : c.syscall == "ioctl" ? ioctls : writes)++;
    }
  }
  CHECK(calls > 500);
  CHECK(ioctls > 300);
  CHECK(writes > 20);  // the rxe POST_SEND doorbell
  CHECK(cm > 50);
}

TEST_CASE("every vector prints its golden trace", "[vectors]") {
  for (const auto& path : VectorFiles()) {
    auto v = LoadVectors(path.string());
    REQUIRE(v.ok());
    std::string text = "# " + v->program + " (" + std::to_string(v->calls.size()) +
                       " calls, kernel " + v->kernel + ")\n";
    for (const auto& c : v->calls) text += TraceLine(c) + "\n";
    fs::path golden = path;
    golden.replace_extension(".trace");
    std::ifstream in(golden);
    REQUIRE(in.good());
    std::stringstream expected;
    expected << in.rdbuf();
    INFO("regenerate with: build/tools/rdmaproxy abi decode " << path.string() << " > "
                                                                << golden.string());
    CHECK(text == expected.str());
  }
}

// --- handles --------------------------------------------------------------------------------

// Each captured file's objects as the engine's table tracks them (handle -> type), replayed
// from the calls the kernel accepted: ioctl IDR attributes created and destroyed, legacy
// commands' created response fields and destroyed request fields.
class HandleReplay {
 public:
  // Checks the handles of one accepted call against what the file created before it, then
  // records what the call created and destroyed.
  void Accepted(const VectorCall& c) {
    auto& table = files_[c.file];
    const abi::DeviceAbi device = abi::DeviceAbiFor(c.driver_id);
    const VectorPayloads in(c.in), out(c.out);
    const abi::WriteCommand* wc = nullptr;
    std::span<const std::byte> core;
    std::optional<std::span<const std::byte>> resp;
    abi::IoctlRequest r;
    if (c.syscall == "ioctl") {
      REQUIRE(abi::DecodeIoctl(c.request, device, r).ok());
      for (const abi::IoctlAttr& a : r.Attrs()) {
        if (a.spec == nullptr || a.spec->type != abi::AttrType::kIdr) continue;
        if (a.spec->access == abi::Access::kNew) {
          const size_t at = sizeof(ib_uverbs_attr) * a.index + offsetof(ib_uverbs_attr, data);
          table[abi::ReadField(c.attrs_after, at, 8)] = a.spec->object;
        } else if (a.spec->access == abi::Access::kDestroy) {
          table.erase(a.data);
        }
      }
      wc = r.write_command;
      if (wc == nullptr) return;
      const abi::IoctlAttr* ci = r.Find(UVERBS_ATTR_CORE_IN);
      core = ci->IsPointer() ? in.Read(ci->data, ci->len).value_or(core)
                             : std::as_bytes(std::span(&ci->data, 1)).first(ci->len);
      if (const abi::IoctlAttr* co = r.Find(UVERBS_ATTR_CORE_OUT))
        resp = out.Read(co->data, co->len);
    } else {
      auto w = abi::DecodeWrite(c.request, device);  // its spans point into c.request
      REQUIRE(w.ok());
      wc = w->command;
      core = w->core;
      if (w->response != 0) resp = out.Read(w->response, w->response_len);
    }
    REQUIRE(!core.empty());
    // What the engine checks (ObjectTable::CheckHandles): every handle the kernel read.
    abi::VisitFields(*wc->request, 0, core.size(), [&](const abi::Field& f, size_t at) {
      if (f.kind != abi::FieldKind::kHandle) return true;
      const abi::HandleUse use = abi::HandleUseOf(f, core);
      if (use.object == abi::kNoObject) return true;
      const uint64_t h = abi::ReadField(core, at, f.size);
      INFO(wc->short_name << "." << f.name << " = " << h << ", read as a "
                          << abi::ObjectShortName(use.object));
      CHECK(table.count(h) == 1);
      if (table.count(h) == 1) CHECK(table[h] == use.object);
      ++checked_;
      return true;
    });
    if (wc->creates != abi::kNoObject && !abi::FindObject(wc->creates)->fd_object && resp) {
      const int at = wc->response->OffsetOf(wc->created);
      table[abi::ReadField(*resp, static_cast<size_t>(at), 4)] = wc->creates;
    }
    if (wc->destroys != abi::kNoObject)
      table.erase(
          abi::ReadField(core, static_cast<size_t>(wc->request->OffsetOf(wc->destroyed)), 4));
  }
  size_t checked() const { return checked_; }

 private:
  std::map<std::string, std::map<uint64_t, abi::ObjectId>> files_;
  size_t checked_ = 0;
};

TEST_CASE("every handle an accepted legacy command names is one its file created, of the type "
          "its handle rule says",
          "[vectors][handles]") {
  size_t checked = 0;
  for (const auto& path : VectorFiles()) {
    auto v = LoadVectors(path.string());
    REQUIRE(v.ok());
    HandleReplay replay;
    for (const auto& c : v->calls) {
      if (c.IsRdmaCm() || c.ret < 0) continue;
      INFO(path.filename().string() << ": " << TraceLine(c));
      replay.Accepted(c);
    }
    checked += replay.checked();
  }
  CHECK(checked > 100);
}

// --- malformed variants ---------------------------------------------------------------------

std::vector<std::byte> WithHeader(std::vector<std::byte> b, void (*edit)(abi::IoctlHeader&)) {
  abi::IoctlHeader h;
  std::memcpy(&h, b.data(), sizeof(h));
  edit(h);
  std::memcpy(b.data(), &h, sizeof(h));
  return b;
}

void CheckIoctlMutations(const VectorCall& c) {
  const auto& r = c.request;
  abi::IoctlHeader h;
  std::memcpy(&h, r.data(), sizeof(h));
  // Truncated header, truncated attributes.
  CHECK(Verdict(c, std::span(r).first(23)) == EINVAL);
  if (h.num_attrs > 0) CHECK(Verdict(c, std::span(r).first(r.size() - 8)) == EINVAL);
  // A length that lies about the attribute count, and an overflowing count.
  CHECK(Verdict(c, WithHeader(r, [](abi::IoctlHeader& x) { x.length += 16; })) == EINVAL);
  CHECK(Verdict(c, WithHeader(r, [](abi::IoctlHeader& x) { x.num_attrs = 0xffff; })) == EINVAL);
  // Reserved fields, another driver's id.
  CHECK(Verdict(c, WithHeader(r, [](abi::IoctlHeader& x) { x.reserved1 = 1; })) ==
        EPROTONOSUPPORT);
  CHECK(Verdict(c, WithHeader(r, [](abi::IoctlHeader& x) { x.driver_id ^= 0x40; })) == EINVAL);
  // Unknown object and method.
  CHECK(Verdict(c, WithHeader(r, [](abi::IoctlHeader& x) { x.object_id = 0x0abc; })) ==
        EPROTONOSUPPORT);
  CHECK(Verdict(c, WithHeader(r, [](abi::IoctlHeader& x) { x.method_id = 0x0abc; })) ==
        EPROTONOSUPPORT);
  if (h.num_attrs == 0 || h.num_attrs >= abi::kMaxIoctlAttrs) return;
  // The first attribute twice.
  std::vector<std::byte> dup = r;
  dup.insert(dup.end(), r.begin() + sizeof(h), r.begin() + sizeof(h) + 16);
  dup = WithHeader(dup, [](abi::IoctlHeader& x) {
    x.num_attrs++;
    x.length += 16;
  });
  CHECK(Verdict(c, dup) == EINVAL);
  // Unknown flag bits on the first attribute: ignored, as uverbs_set_attr() ignores them.
  std::vector<std::byte> flags = r;
  flags[sizeof(h) + 4] |= std::byte{0x80};
  CHECK(Verdict(c, flags) == 0);
}

void CheckWriteMutations(const VectorCall& c) {
  const auto& r = c.request;
  CHECK(Verdict(c, std::span(r).first(7)) == EINVAL);
  std::vector<std::byte> lie = r;
  lie[4] = std::byte{static_cast<uint8_t>(std::to_integer<uint8_t>(lie[4]) + 1)};  // in_words
  CHECK(Verdict(c, lie) == EINVAL);
  std::vector<std::byte> bits = r;
  bits[2] = std::byte{0x10};  // command bits outside 0xff | 0x80000000
  CHECK(Verdict(c, bits) == EINVAL);
  std::vector<std::byte> unknown = r;
  unknown[0] = std::byte{62};  // no such command
  CHECK(Verdict(c, unknown) == EOPNOTSUPP);
}

void CheckUcmaMutations(const VectorCall& c) {
  const auto& r = c.request;
  CHECK(Verdict(c, std::span(r).first(7)) == EINVAL);
  std::vector<std::byte> unknown = r;
  unknown[0] = std::byte{99};
  CHECK(Verdict(c, unknown) == EINVAL);
  std::vector<std::byte> lie = r;
  uint16_t in;
  std::memcpy(&in, lie.data() + 4, 2);
  in = static_cast<uint16_t>(in + 8);
  std::memcpy(lie.data() + 4, &in, 2);
  CHECK(Verdict(c, lie) == EINVAL);
}

TEST_CASE("malformed variants of every vector are refused with the kernel's errno",
          "[vectors][hostile]") {
  size_t mutated = 0;
  for (const auto& path : VectorFiles()) {
    auto v = LoadVectors(path.string());
    REQUIRE(v.ok());
    for (const auto& c : v->calls) {
      if (Verdict(c, c.request) != 0) continue;
      INFO(path.filename().string() << ": " << TraceLine(c));
      if (c.IsRdmaCm()) {
        CheckUcmaMutations(c);
      } else if (c.syscall == "ioctl") {
        CheckIoctlMutations(c);
      } else {
        CheckWriteMutations(c);
      }
      ++mutated;
    }
  }
  CHECK(mutated > 500);
}

TEST_CASE("malformed vector files are refused with a reason", "[vectors]") {
  const fs::path dir = fs::temp_directory_path() / "rxp_vectors_test";
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  CHECK_FALSE(LoadVectors(write("empty.jsonl", "")).ok());
  CHECK_FALSE(LoadVectors(write("nohdr.jsonl", "{\"file\":\"x\"}\n")).ok());
  const std::string hdr = "{\"format\":\"rdmaproxy-abi-vectors\",\"version\":1}\n";
  CHECK_FALSE(LoadVectors(write("badhex.jsonl", hdr + R"({"file":"uverbs0","syscall":"ioctl","request":"zz","ret":0})" "\n")).ok());
  CHECK_FALSE(LoadVectors(write("badsys.jsonl", hdr + R"({"file":"uverbs0","syscall":"read","request":"00","ret":0})" "\n")).ok());
  CHECK_FALSE(LoadVectors(write("notjson.jsonl", hdr + "{oops\n")).ok());
  CHECK(LoadVectors(write("ok.jsonl", hdr + R"({"file":"uverbs0","syscall":"ioctl","request":"00","ret":0})" "\n")).ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rxp::tools
