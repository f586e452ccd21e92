#include "abi/schema.h"

namespace rxp::abi {

DeviceAbi DeviceAbiFor(uint32_t rdma_driver_id) {
  switch (rdma_driver_id) {
    case RDMA_DRIVER_MLX5: return {rdma_driver_id, Driver::kMlx5};
    case RDMA_DRIVER_RXE: return {rdma_driver_id, Driver::kRxe};
    default: return {rdma_driver_id, Driver::kCore};
  }
}

std::string_view DriverName(Driver driver) {
  switch (driver) {
    case Driver::kCore: return "core";
    case Driver::kMlx5: return "mlx5";
    case Driver::kRxe: return "rxe";
  }
  return "?";
}

const Field* Layout::Find(std::string_view path) const {
  // "base.cq_handle": descend through nested structs (nested offsets are relative to their
  // struct; OffsetOf gives absolute ones).
  const auto dot = path.find('.');
  const std::string_view head = path.substr(0, dot);
  for (const auto& f : fields) {
    if (f.name != head) continue;
    if (dot == std::string_view::npos) return &f;
    return f.nested != nullptr ? f.nested->Find(path.substr(dot + 1)) : nullptr;
  }
  return nullptr;
}

int Layout::OffsetOf(std::string_view path) const {
  const auto dot = path.find('.');
  const std::string_view head = path.substr(0, dot);
  for (const auto& f : fields) {
    if (f.name != head) continue;
    if (dot == std::string_view::npos) return f.offset;
    if (f.nested == nullptr) return -1;
    const int inner = f.nested->OffsetOf(path.substr(dot + 1));
    return inner < 0 ? -1 : f.offset + inner;
  }
  return -1;
}

HandleUse HandleUseOf(const Field& field, std::span<const std::byte> request) {
  if (field.rule != nullptr) return field.rule(request);
  return {field.object, 0};
}

const DriverPayload* DriverPayloads::For(Driver driver) const {
  switch (driver) {
    case Driver::kMlx5: return mlx5;
    case Driver::kRxe: return rxe;
    case Driver::kCore: return nullptr;
  }
  return nullptr;
}

const Layout* DriverPayload::InFor(const PayloadContext& context) const {
  return select_in != nullptr ? select_in(context) : in;
}

}  // namespace rxp::abi
