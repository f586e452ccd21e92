// The schema against the installed headers (nothing they name is missing) and against itself
// (layouts fit their structs, lifecycle fields exist, attribute ids are unique).
#include "abi/schema.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "abi/driver_payloads.h"
#include "abi/payload.h"

#ifndef RDMAPROXY_UAPI_DIR
#error "RDMAPROXY_UAPI_DIR must name the directory of the installed rdma UAPI headers"
#endif

namespace rxp::abi {
namespace {

// True when `line` declares one enumerator (not a #define) whose name starts with one of
// `prefixes` and goes on in [A-Z0-9_]: optional "= value", optional comma, optional comment.
// Hand-written rather than std::regex: gcc 12's <regex> trips -Wmaybe-uninitialized in the
// ASan + UBSan build once optimizing (-O1 and up), and the grammar is this small.
std::optional<std::string> EnumeratorName(std::string_view line,
                                          std::initializer_list<std::string_view> prefixes) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  auto skip_space = [&](size_t i) {
    while (i < line.size() && is_space(line[i])) ++i;
    return i;
  };
  const size_t start = skip_space(0);
  const std::string_view rest = line.substr(start);
  const auto prefix = std::find_if(prefixes.begin(), prefixes.end(),
                                   [&](std::string_view p) { return rest.starts_with(p); });
  if (prefix == prefixes.end()) return std::nullopt;
  size_t i = start + prefix->size();
  const size_t tail = i;
  while (i < line.size() && ((line[i] >= 'A' && line[i] <= 'Z') ||
                             (line[i] >= '0' && line[i] <= '9') || line[i] == '_'))
    ++i;
  if (i == tail) return std::nullopt;
  const std::string name(line.substr(start, i - start));
  i = skip_space(i);
  if (i < line.size() && line[i] == '=') {
    while (i < line.size() && line[i] != ',') ++i;
  }
  if (i < line.size() && line[i] == ',') ++i;
  i = skip_space(i);
  if (i == line.size() || line.substr(i).starts_with("/*")) return name;
  return std::nullopt;
}

// Every enumerator in `header` whose name starts with one of `prefixes`.
std::set<std::string> Enumerators(const std::string& header,
                                  std::initializer_list<std::string_view> prefixes) {
  std::ifstream in(std::string(RDMAPROXY_UAPI_DIR) + "/" + header);
  REQUIRE(in.good());
  std::set<std::string> names;
  std::string line;
  while (std::getline(in, line))
    if (auto name = EnumeratorName(line, prefixes)) names.insert(*std::move(name));
  return names;
}

TEST_CASE("the header scanner reads enumerators, not defines or prose", "[schema][headers]") {
  const auto name = [](std::string_view line) {
    return EnumeratorName(line, {"UVERBS_ATTR_"}).value_or("");
  };
  CHECK(name("\tUVERBS_ATTR_UHW_IN = UVERBS_UDATA_DRIVER_DATA_FLAG,") == "UVERBS_ATTR_UHW_IN");
  CHECK(name("  UVERBS_ATTR_CORE_OUT,") == "UVERBS_ATTR_CORE_OUT");
  CHECK(name("\tUVERBS_ATTR_X /* last */") == "UVERBS_ATTR_X");
  CHECK(name("\tUVERBS_ATTR_Y = 3 /* no comma */") == "UVERBS_ATTR_Y");
  CHECK(name("#define UVERBS_ATTR_Z 1").empty());
  CHECK(name("\tUVERBS_ATTR_ = 1,").empty());
  CHECK(name("\tUVERBS_ATTR_A = 1, UVERBS_ATTR_B = 2,").empty());
  CHECK(name("\tUVERBS_ATTR_lower,").empty());
  CHECK(name("\tUVERBS_ATTR_C(x),").empty());
}

std::set<std::string> SchemaWriteNames() {
  std::set<std::string> s;
  for (const auto& c : WriteCommands()) s.insert(std::string(c.name));
  return s;
}
std::set<std::string> SchemaMethodNames() {
  std::set<std::string> s;
  for (const auto& m : Methods()) s.insert(std::string(m.name));
  return s;
}
std::set<std::string> SchemaAttrNames() {
  std::set<std::string> s;
  for (const auto& m : Methods())
    for (const auto& a : m.attrs) s.insert(std::string(a.name));
  for (const auto& d : DriverAttributes())
    for (const auto& a : d.attrs) s.insert(std::string(a.name));
  return s;
}

void RequireCovered(const std::set<std::string>& header, const std::set<std::string>& schema,
                    std::string_view what) {
  std::vector<std::string> missing;
  for (const auto& n : header)
    if (schema.count(n) == 0) missing.push_back(n);
  INFO(fmt::format("{} in the installed headers but not in the schema: {}", what,
                   fmt::join(missing, ", ")));
  CHECK(missing.empty());
}

TEST_CASE("every legacy command in the headers is in the schema", "[schema][headers]") {
  auto names = Enumerators("ib_user_verbs.h", {"IB_USER_VERBS_CMD_", "IB_USER_VERBS_EX_CMD_"});
  REQUIRE(names.size() >= 41 + 12);
  RequireCovered(names, SchemaWriteNames(), "write commands");
}

TEST_CASE("every ioctl method in the headers is in the schema", "[schema][headers]") {
  auto core = Enumerators("ib_user_ioctl_cmds.h", {"UVERBS_METHOD_"});
  REQUIRE(core.size() >= 30);
  RequireCovered(core, SchemaMethodNames(), "uverbs methods");
  auto mlx5 = Enumerators("mlx5_user_ioctl_cmds.h", {"MLX5_IB_METHOD_"});
  REQUIRE(mlx5.size() >= 25);
  RequireCovered(mlx5, SchemaMethodNames(), "mlx5 methods");
}

TEST_CASE("every ioctl attribute in the headers is in the schema", "[schema][headers]") {
  auto core = Enumerators("ib_user_ioctl_cmds.h", {"UVERBS_ATTR_"});
  core.erase("UVERBS_ATTR_F_MANDATORY");
  core.erase("UVERBS_ATTR_F_VALID_OUTPUT");
  RequireCovered(core, SchemaAttrNames(), "uverbs attributes");
  auto mlx5 = Enumerators("mlx5_user_ioctl_cmds.h", {"MLX5_IB_ATTR_"});
  // Values of enum mlx5_ib_create_flow_flags (bits of MLX5_IB_ATTR_CREATE_FLOW_FLAGS).
  mlx5.erase("MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DEFAULT_MISS");
  mlx5.erase("MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DROP");
  RequireCovered(mlx5, SchemaAttrNames(), "mlx5 attributes");
}

TEST_CASE("every rdma_cm command in the headers is in the schema", "[schema][headers]") {
  auto names = Enumerators("rdma_user_cm.h", {"RDMA_USER_CM_CMD_"});
  REQUIRE(names.size() >= 23);
  std::set<std::string> schema;
  for (const auto& c : UcmaCommands()) schema.insert(std::string(c.name));
  RequireCovered(names, schema, "rdma_cm commands");
}

void CheckLayout(const Layout& layout, std::set<const Layout*>& seen) {
  if (!seen.insert(&layout).second) return;
  INFO(layout.c_name);
  for (const auto& f : layout.fields) {
    INFO(f.name);
    CHECK(size_t{f.offset} + f.size <= layout.size);
    CHECK(f.size > 0);
    if (f.kind == FieldKind::kStruct) {
      REQUIRE(f.nested != nullptr);
      CHECK(f.nested->size == f.size);
      // A handle rule reads the request from offset 0: only top-level layouts may have one.
      for (const auto& g : f.nested->fields) CHECK(g.rule == nullptr);
      CheckLayout(*f.nested, seen);
    }
    if (f.kind == FieldKind::kHandle) CHECK(f.object != kNoObject);
    if (f.rule != nullptr) CHECK(f.kind == FieldKind::kHandle);
    if (f.kind == FieldKind::kEnum || f.kind == FieldKind::kFlags) CHECK(f.names != nullptr);
    if (!f.length_field.empty()) CHECK(layout.Find(f.length_field) != nullptr);
    CHECK(f.length_unit >= 1);
  }
}

void CheckPayload(const DriverPayload* p, std::set<const Layout*>& seen) {
  if (p == nullptr) return;
  if (p->in != nullptr) CheckLayout(*p->in, seen);
  if (p->out != nullptr) CheckLayout(*p->out, seen);
  for (const Layout* v : p->variants) CheckLayout(*v, seen);
}

TEST_CASE("every layout fits its struct", "[schema]") {
  std::set<const Layout*> seen;
  for (const auto& c : WriteCommands()) {
    if (c.request != nullptr) CheckLayout(*c.request, seen);
    if (c.response != nullptr) CheckLayout(*c.response, seen);
    CheckPayload(c.drivers.mlx5, seen);
    CheckPayload(c.drivers.rxe, seen);
  }
  for (const auto& m : Methods()) {
    for (const auto& a : m.attrs)
      if (a.layout != nullptr) CheckLayout(*a.layout, seen);
    CheckPayload(m.drivers.mlx5, seen);
    CheckPayload(m.drivers.rxe, seen);
  }
  for (const auto& c : UcmaCommands()) {
    if (c.request != nullptr) CheckLayout(*c.request, seen);
    if (c.response != nullptr) CheckLayout(*c.response, seen);
  }
  CHECK(seen.size() > 100);
}

// HandleUseOf for field `name` of the request of legacy command `command`.
template <typename Cmd>
HandleUse UseOf(uint32_t command, std::string_view name, const Cmd& cmd) {
  const WriteCommand* c = FindWriteCommand(command);
  REQUIRE(c != nullptr);
  const Field* f = c->request->Find(name);
  REQUIRE(f != nullptr);
  return HandleUseOf(*f, std::as_bytes(std::span(&cmd, 1)));
}

TEST_CASE("handle rules: the object a handle names follows the kernel handler", "[schema]") {
  constexpr uint32_t kExCreateQp = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_QP;
  const auto object = [](HandleUse u) { return u.object; };
  // create_qp(): an XRC target QP's pd_handle is its XRCD, and a failed lookup is EINVAL; it
  // has no CQs or SRQ. Other QPs name a PD.
  ib_uverbs_create_qp qp{};
  qp.qp_type = IB_UVERBS_QPT_XRC_TGT;
  const HandleUse xrcd = UseOf(IB_USER_VERBS_CMD_CREATE_QP, "pd_handle", qp);
  CHECK(xrcd.object == UVERBS_OBJECT_XRCD);
  CHECK(xrcd.lookup_errno == EINVAL);
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "send_cq_handle", qp)) == kNoObject);
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "recv_cq_handle", qp)) == kNoObject);
  qp.is_srq = 1;
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "srq_handle", qp)) == kNoObject);
  qp.qp_type = IB_UVERBS_QPT_RC;
  const HandleUse pd = UseOf(IB_USER_VERBS_CMD_CREATE_QP, "pd_handle", qp);
  CHECK(pd.object == UVERBS_OBJECT_PD);
  CHECK(pd.lookup_errno == 0);
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "send_cq_handle", qp)) == UVERBS_OBJECT_CQ);
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "recv_cq_handle", qp)) == UVERBS_OBJECT_CQ);
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "srq_handle", qp)) == UVERBS_OBJECT_SRQ);
  qp.is_srq = 0;
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "srq_handle", qp)) == kNoObject);
  qp.qp_type = IB_UVERBS_QPT_XRC_INI;  // a send CQ, no receive side
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "send_cq_handle", qp)) == UVERBS_OBJECT_CQ);
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "recv_cq_handle", qp)) == kNoObject);
  qp.qp_type = 1;  // IB_QPT_GSI: EINVAL before any handle is read
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_QP, "pd_handle", qp)) == kNoObject);

  // The same in EX_CREATE_QP, plus the indirection table (only with its comp_mask bit), which
  // drops the receive CQ, and the send CQ when there is no send queue.
  ib_uverbs_ex_create_qp ex{};
  ex.qp_type = IB_UVERBS_QPT_XRC_TGT;
  CHECK(object(UseOf(kExCreateQp, "pd_handle", ex)) == UVERBS_OBJECT_XRCD);
  ex.qp_type = IB_UVERBS_QPT_RAW_PACKET;
  CHECK(object(UseOf(kExCreateQp, "pd_handle", ex)) == UVERBS_OBJECT_PD);
  CHECK(object(UseOf(kExCreateQp, "rwq_ind_tbl_handle", ex)) == kNoObject);
  ex.comp_mask = IB_UVERBS_CREATE_QP_MASK_IND_TABLE;
  CHECK(object(UseOf(kExCreateQp, "rwq_ind_tbl_handle", ex)) == UVERBS_OBJECT_RWQ_IND_TBL);
  CHECK(object(UseOf(kExCreateQp, "recv_cq_handle", ex)) == kNoObject);
  CHECK(object(UseOf(kExCreateQp, "send_cq_handle", ex)) == kNoObject);
  ex.max_send_wr = 1;
  CHECK(object(UseOf(kExCreateQp, "send_cq_handle", ex)) == UVERBS_OBJECT_CQ);

  // REREG_MR reads the PD only with IB_MR_REREG_PD; CREATE_XSRQ the XRCD only for XRC SRQs
  // and the CQ for XRC and TM ones; OPEN_QP always names an XRCD.
  ib_uverbs_rereg_mr rereg{};
  rereg.flags = kMrReregTrans;
  CHECK(object(UseOf(IB_USER_VERBS_CMD_REREG_MR, "pd_handle", rereg)) == kNoObject);
  CHECK(object(UseOf(IB_USER_VERBS_CMD_REREG_MR, "mr_handle", rereg)) == UVERBS_OBJECT_MR);
  rereg.flags = kMrReregPd;
  CHECK(object(UseOf(IB_USER_VERBS_CMD_REREG_MR, "pd_handle", rereg)) == UVERBS_OBJECT_PD);
  ib_uverbs_create_xsrq xsrq{};
  xsrq.srq_type = IB_UVERBS_SRQT_BASIC;
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_XSRQ, "xrcd_handle", xsrq)) == kNoObject);
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_XSRQ, "cq_handle", xsrq)) == kNoObject);
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_XSRQ, "pd_handle", xsrq)) == UVERBS_OBJECT_PD);
  xsrq.srq_type = IB_UVERBS_SRQT_TM;
  CHECK(object(UseOf(IB_USER_VERBS_CMD_CREATE_XSRQ, "cq_handle", xsrq)) == UVERBS_OBJECT_CQ);
  xsrq.srq_type = IB_UVERBS_SRQT_XRC;
  CHECK(UseOf(IB_USER_VERBS_CMD_CREATE_XSRQ, "xrcd_handle", xsrq).lookup_errno == EINVAL);
  ib_uverbs_open_qp open{};
  CHECK(UseOf(IB_USER_VERBS_CMD_OPEN_QP, "pd_handle", open).object == UVERBS_OBJECT_XRCD);
}

TEST_CASE("write commands: sizes and lifecycle fields are consistent", "[schema]") {
  for (const auto& c : WriteCommands()) {
    INFO(c.name);
    CHECK(FindWriteCommand(c.command) == &c);
    if (c.request == nullptr) {
      CHECK(c.policy.disposition == Disposition::kUnsupported);
      continue;
    }
    CHECK(c.req_size <= c.request->size);
    CHECK(c.req_size > 0);
    if (c.response != nullptr) CHECK(c.resp_size <= c.response->size);
    // Legacy commands with a response start with the embedded response pointer.
    if (c.has_resp && !c.extended()) {
      REQUIRE(!c.request->fields.empty());
      CHECK(c.request->fields.front().kind == FieldKind::kResponsePtr);
      CHECK(c.request->fields.front().offset == 0);
    }
    if (c.creates != kNoObject) {
      REQUIRE(c.response != nullptr);
      const Field* f = c.response->Find(c.created);
      REQUIRE(f != nullptr);
      const bool fd_object = FindObject(c.creates)->fd_object;
      CHECK(f->kind == (fd_object ? FieldKind::kFdOut : FieldKind::kHandle));
      if (!fd_object) CHECK(f->object == c.creates);
    }
    if (c.destroys != kNoObject) {
      const Field* f = c.request->Find(c.destroyed);
      REQUIRE(f != nullptr);
      CHECK(f->kind == FieldKind::kHandle);
      CHECK(f->object == c.destroys);
    }
  }
}

TEST_CASE("ioctl methods: attribute ids unique, specs sane, lookups find them",
          "[schema]") {
  for (const auto& m : Methods()) {
    INFO(m.name);
    CHECK(FindMethod(m.driver == Driver::kCore ? Driver::kRxe : m.driver, m.object, m.id) == &m);
    CHECK(FindObject(m.object) != nullptr);
    std::set<uint16_t> ids;
    int news = 0;
    for (const auto& a : m.attrs) {
      INFO(a.name);
      CHECK(ids.insert(a.id).second);
      CHECK(!a.short_name.empty());
      if (a.type == AttrType::kIdr || a.type == AttrType::kFd || a.type == AttrType::kIdrsArray)
        CHECK(a.object != kNoObject);
      if (a.type == AttrType::kPtrIn || a.type == AttrType::kPtrOut) CHECK(a.min_len <= a.max_len);
      if (a.access == Access::kNew) ++news;
      if (a.meaning == AttrMeaning::kUdataIn || a.meaning == AttrMeaning::kUdataOut)
        CHECK(m.has_udata);
    }
    CHECK(news <= 1);
    for (Driver d : {Driver::kMlx5, Driver::kRxe})
      for (const auto& a : DriverAttrsFor(m, d)) CHECK(ids.count(a.id) == 0);
  }
}

TEST_CASE("every pinned address and every fd is typed", "[schema]") {
  // The fields the translator must handle; the counts pin the schema's knowledge.
  int pinned = 0, fds = 0, user_ptrs = 0;
  std::set<const Layout*> seen;
  auto count = [&](const Layout& l) {
    if (!seen.insert(&l).second) return;
    ForEachField(l, l.size, [&](const Field& f, size_t) {
      pinned += f.kind == FieldKind::kPinnedVa;
      fds += f.kind == FieldKind::kFdIn || f.kind == FieldKind::kFdOut;
      user_ptrs += f.kind == FieldKind::kUserPtr;
    });
  };
  for (const auto& c : WriteCommands()) {
    if (c.request) count(*c.request);
    if (c.response) count(*c.response);
    for (const DriverPayload* p : {c.drivers.mlx5, c.drivers.rxe}) {
      if (p == nullptr) continue;
      if (p->in) count(*p->in);
      for (const Layout* v : p->variants) count(*v);
    }
  }
  for (const auto& c : UcmaCommands()) {
    if (c.request) count(*c.request);
  }
  // REG_MR.start, REREG_MR.start; mlx5 cq buf/db, resize buf, srq buf/db, qp buf/db (plain),
  // qp buf/db/sq_buf (raw), wq buf/db.
  CHECK(pinned == 2 + 2 + 1 + 2 + 2 + 3 + 2);
  // GET_CONTEXT async_fd, CREATE_COMP_CHANNEL fd, CREATE_CQ and EX_CREATE_CQ comp_channel,
  // OPEN_XRCD fd, rdma_cm MIGRATE_ID fd.
  CHECK(fds == 6);
  // rxe MODIFY_SRQ mmap_info_addr, rdma_cm SET_OPTION optval.
  CHECK(user_ptrs == 2);
}

// A translator bounces length_field * length_unit bytes. mlx5_ib_flow_counters_data.ncounters
// counts 8-byte descriptors: mlx5_ib_flow_counters_set_data (hw/mlx5/counters.c) copies
// sizeof(struct mlx5_ib_flow_counters_desc) * ncounters bytes from counters_data (libmlx5 sends
// ncounters = 2 for a packets + bytes counter: mlx5_verbs.jsonl, EX_CREATE_FLOW).
TEST_CASE("buffer lengths are in bytes or in elements of the kernel's array", "[schema]") {
  const Field* counters = drivers::kMlx5FlowCountersData.Find("counters_data");
  REQUIRE(counters != nullptr);
  CHECK(counters->length_field == "ncounters");
  CHECK(counters->length_unit == sizeof(mlx5_ib_flow_counters_desc));
  const WriteCommand* reg_mr = FindWriteCommand(IB_USER_VERBS_CMD_REG_MR);
  REQUIRE(reg_mr != nullptr);
  CHECK(reg_mr->request->Find("start")->length_unit == 1);
}

}  // namespace
}  // namespace rxp::abi
