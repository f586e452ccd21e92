// Driver payload choices: which driver request layout a command carries, as the driver decides.
#include "abi/driver_payloads.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

namespace rxp::abi {
namespace {

// The mlx5 create_qp layout mlx5_ib_create_qp() reads for a QP of `qp_type` whose driver
// request carries vendor `flags`.
std::string Mlx5CreateQpLayout(uint32_t qp_type, uint32_t flags, bool rss = false) {
  mlx5_ib_create_qp ucmd{};
  ucmd.flags = flags;
  std::byte bytes[sizeof(ucmd)];
  std::memcpy(bytes, &ucmd, sizeof(ucmd));
  PayloadContext c;
  c.qp_type = qp_type;
  c.has_rwq_ind_table = rss;
  c.driver_in = bytes;
  return std::string(drivers::kMlx5CreateQp.InFor(c)->c_name);
}

// process_vendor_flags() (hw/mlx5/qp.c) makes a QP a DCT on MLX5_QP_FLAG_TYPE_DCT alone, for
// any qp_type; create_qp() then calls create_dct(), which pins no buffer.
TEST_CASE("mlx5: the DCT flag alone makes any QP a DCT", "[driver][mlx5]") {
  const std::string kDct = "mlx5_ib_create_qp (DCT)";
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_DRIVER, MLX5_QP_FLAG_TYPE_DCT) == kDct);
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_RC, MLX5_QP_FLAG_TYPE_DCT) == kDct);
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_UD, MLX5_QP_FLAG_TYPE_DCT) == kDct);
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_XRC_TGT, MLX5_QP_FLAG_TYPE_DCT) == kDct);
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_RAW_PACKET, MLX5_QP_FLAG_TYPE_DCT) == kDct);
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_RC,
                           MLX5_QP_FLAG_TYPE_DCT | MLX5_QP_FLAG_SIGNATURE) == kDct);
  // DCT together with DCI is not a DCT (the switch's default branch): the qp_type decides.
  constexpr uint32_t kBoth = MLX5_QP_FLAG_TYPE_DCT | MLX5_QP_FLAG_TYPE_DCI;
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_RC, kBoth) == "mlx5_ib_create_qp");
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_XRC_TGT, kBoth) == "mlx5_ib_create_qp (XRC target)");
  // A DCI (create_dci) pins its buffers like any user QP.
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_DRIVER, MLX5_QP_FLAG_TYPE_DCI) == "mlx5_ib_create_qp");
  // An indirection table means the RSS struct whatever its flags say (params.is_rss_raw).
  CHECK(Mlx5CreateQpLayout(IB_UVERBS_QPT_RAW_PACKET, MLX5_QP_FLAG_TYPE_DCT, true) ==
        "mlx5_ib_create_qp_rss");
}

}  // namespace
}  // namespace rxp::abi
