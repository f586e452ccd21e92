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
  size_t offset = 0;
  return Locate(path, offset);
}

int Layout::OffsetOf(std::string_view path) const {
  size_t offset = 0;
  return Locate(path, offset) != nullptr ? static_cast<int>(offset) : -1;
}

const Field* Layout::Locate(std::string_view path, size_t& offset) const {
  // "base.cq_handle": descend through nested structs, whose offsets are relative to their
  // struct; `offset` is the absolute one.
  const auto dot = path.find('.');
  const std::string_view head = path.substr(0, dot);
  for (const auto& f : fields) {
    if (f.name != head) continue;
    if (dot == std::string_view::npos) {
      offset = f.offset;
      return &f;
    }
    if (f.nested == nullptr) return nullptr;
    size_t inner = 0;
    const Field* found = f.nested->Locate(path.substr(dot + 1), inner);
    if (found != nullptr) offset = f.offset + inner;
    return found;
  }
  return nullptr;
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
