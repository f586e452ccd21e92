#include "rdmaproxy/content_rules.h"

#include <cerrno>
#include <cstring>
#include <iterator>
#include <utility>

#include "abi/write_decoder.h"

namespace rxp::proxy {
namespace {

bool IsMethod(const CommandView& v, abi::ObjectId object, uint16_t method) {
  return v.method != nullptr && v.method->object == object && v.method->id == method;
}
bool IsWrite(const CommandView& v, uint32_t command) {
  return v.write_command != nullptr && v.write_command->command == command;
}
uint64_t InlineAttr(const CommandView& v, uint16_t id, bool* present = nullptr) {
  const abi::IoctlAttr* a = v.ioctl != nullptr ? v.ioctl->Find(id) : nullptr;
  if (present != nullptr) *present = a != nullptr;
  return a != nullptr && !a->IsPointer() ? a->InlineValue() : 0;
}
uint64_t CoreField(const CommandView& v, std::string_view name) {
  if (v.write_command == nullptr || v.write_command->request == nullptr) return 0;
  const abi::Field* f = v.write_command->request->Find(name);
  return f != nullptr ? abi::ReadField(v.core, f->offset, f->size) : 0;
}

bool CreatesQp(const CommandView& v) {
  return IsMethod(v, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE) ||
         IsWrite(v, IB_USER_VERBS_CMD_CREATE_QP) ||
         IsWrite(v, IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_QP);
}

// RAW_PACKET QPs and QPs with a chosen source QPN send arbitrary Ethernet frames / spoof QPNs:
// the kernel wants CAP_NET_RAW (rdma_uattrs_has_raw_cap) -- which the forwarder may have and
// the sandbox must not inherit.
Result<void> RawPacket(const PolicyConfig& p, const CommandView& v) {
  if (p.raw_packet_qps) return Ok();
  bool source_qpn = false;
  uint64_t type = 0;
  // QP.CREATE carries them as attributes; a legacy CREATE_QP / EX_CREATE_QP, written or
  // wrapped in INVOKE_WRITE (whose method is INVOKE_WRITE, not QP.CREATE), in its request.
  if (v.write_command == nullptr) {
    type = InlineAttr(v, UVERBS_ATTR_CREATE_QP_TYPE);
    InlineAttr(v, UVERBS_ATTR_CREATE_QP_SOURCE_QPN, &source_qpn);
  } else {
    type = CoreField(v, "qp_type");
    constexpr uint64_t kSourceQpn = 1u << 10;  // IB_QP_CREATE_SOURCE_QPN
    source_qpn = (CoreField(v, "create_flags") & kSourceQpn) != 0;
  }
  if (type == IB_UVERBS_QPT_RAW_PACKET)
    return Fail(EPERM, "raw-packet QPs need CAP_NET_RAW and are denied by the sandbox policy");
  if (source_qpn)
    return Fail(EPERM, "QPs with a chosen source QPN are denied by the sandbox policy");
  return Ok();
}

bool GetContextOnMlx5(const CommandView& v) {
  return v.driver == abi::Driver::kMlx5 &&
         (IsMethod(v, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT) ||
          IsWrite(v, IB_USER_VERBS_CMD_GET_CONTEXT));
}

// mlx5_ib_alloc_ucontext(): MLX5_IB_ALLOC_UCTX_DEVX makes the context a DEVX uid, the key to
// raw firmware commands. rdma-core's mlx5 provider asks for one at every ibv_open_device
// (mlx5_alloc_context: always_devx) and retries without it when that fails. The refusal is
// the kernel's answer on a device without DEVX (mlx5_ib_devx_create: -EINVAL when
// log_max_uctx is 0), so the program takes the path it takes on such a device. Not
// EPROTONOSUPPORT: libibverbs reads that as "no GET_CONTEXT method" (_execute_ioctl_fallback)
// and opens every later context of the process through the legacy command.
Result<void> Mlx5DevxContext(const PolicyConfig& p, const CommandView& v) {
  if (p.devx != DevxMode::kDeny) return Ok();
  const uint64_t flags =
      abi::ReadField(v.driver_in, offsetof(mlx5_ib_alloc_ucontext_req_v2, flags), 4);
  if ((flags & MLX5_IB_ALLOC_UCTX_DEVX) != 0)
    return Fail(EINVAL, "mlx5 DEVX contexts are denied by the sandbox policy");
  return Ok();
}

bool DmAllocOnMlx5(const CommandView& v) {
  return v.driver == abi::Driver::kMlx5 &&
         IsMethod(v, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC);
}

// DM types other than MEMIC are steering ICM (hw/mlx5/dm.c): NIC forwarding memory.
Result<void> Mlx5DmType(const PolicyConfig&, const CommandView& v) {
  const uint64_t type = InlineAttr(v, MLX5_IB_ATTR_ALLOC_DM_REQ_TYPE);
  if (type != MLX5_IB_UAPI_DM_TYPE_MEMIC)
    return Fail(EPERM, "mlx5 device memory of type {} (steering ICM) is denied", type);
  return Ok();
}

bool DevxOther(const CommandView& v) {
  return IsMethod(v, MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_OTHER);
}

// With devx "query": only read-only PRM commands (mlx5_ifc.h opcodes) -- what rdma-core's
// mlx5 provider issues at open (mlx5_query_device_ctx: HCA caps; LAG state).
Result<void> DevxQueryOnly(const PolicyConfig& p, const CommandView& v) {
  if (p.devx != DevxMode::kQuery) return Ok();  // "allow", or the entry policy decided
  static constexpr uint16_t kQueryOpcodes[] = {
      0x100,  // QUERY_HCA_CAP
      0x101,  // QUERY_ADAPTER
      0x842,  // QUERY_LAG
  };
  const auto in = v.AttrBytes(MLX5_IB_ATTR_DEVX_OTHER_CMD_IN);
  if (in.size() < 2) return Fail(EINVAL, "DEVX_OTHER without a PRM command");
  const uint16_t opcode = static_cast<uint16_t>(std::to_integer<uint16_t>(in[0]) << 8 |
                                                std::to_integer<uint16_t>(in[1]));
  for (uint16_t op : kQueryOpcodes)
    if (op == opcode) return Ok();
  return Fail(EPERM, "DEVX_OTHER opcode {:#x} is not a permitted read-only query", opcode);
}

bool EspWithEncap(const CommandView& v) {
  return (IsMethod(v, UVERBS_OBJECT_FLOW_ACTION, UVERBS_METHOD_FLOW_ACTION_ESP_CREATE) ||
          IsMethod(v, UVERBS_OBJECT_FLOW_ACTION, UVERBS_METHOD_FLOW_ACTION_ESP_MODIFY)) &&
         v.ioctl->Find(UVERBS_ATTR_FLOW_ACTION_ESP_ENCAP) != nullptr;
}

// An ESP flow action's ENCAP is a user-space list the core walks with copy_from_user
// (val_ptr, next_ptr: flow_action_esp_get_encap), from the caller's memory -- in sentry mode
// the runtime's. The one driver with ESP actions refuses any encap after that walk
// (mlx5_ib_create_flow_action_esp / _modify_: attr->encap gives -EOPNOTSUPP), so the kernel's
// answer is given here and the pointers never reach it, whatever the policy allows.
Result<void> EspEncap(const PolicyConfig&, const CommandView&) {
  return Fail(EOPNOTSUPP, "ESP flow action encapsulation is not supported (mlx5 refuses it; "
                          "its val_ptr/next_ptr list is not forwarded)");
}

struct ContentRule {
  const char* name;
  bool (*applies)(const CommandView&);
  Result<void> (*check)(const PolicyConfig&, const CommandView&);
};

constexpr ContentRule kRules[] = {
    {"raw-packet QPs", &CreatesQp, &RawPacket},
    {"mlx5 DEVX contexts", &GetContextOnMlx5, &Mlx5DevxContext},
    {"mlx5 device memory types", &DmAllocOnMlx5, &Mlx5DmType},
    {"DEVX read-only queries", &DevxOther, &DevxQueryOnly},
    {"ESP encapsulation", &EspWithEncap, &EspEncap},
};

}  // namespace

std::span<const std::byte> CommandView::AttrBytes(uint16_t attr_id) const {
  const abi::IoctlAttr* a = ioctl != nullptr ? ioctl->Find(attr_id) : nullptr;
  if (a == nullptr || !a->IsPointer() || inputs == nullptr) return {};
  auto b = inputs->Read(a->data, a->len);
  return b ? *b : std::span<const std::byte>();
}

// Every rule of kRules in order, the first failure stopping the walk. Unrolled over the
// constant table, so the calls are direct and the `applies` tests inline: every command runs
// them, and almost none is one a rule applies to.
template <size_t... I>
Result<void> CheckRules(const PolicyConfig& policy, const CommandView& view,
                        std::index_sequence<I...>) {
  Result<void> status;
  (void)((!kRules[I].applies(view) || (status = kRules[I].check(policy, view))) && ...);
  return status;
}

Result<void> CheckContent(const PolicyConfig& policy, const CommandView& view) {
  return CheckRules(policy, view, std::make_index_sequence<std::size(kRules)>());
}

}  // namespace rxp::proxy
