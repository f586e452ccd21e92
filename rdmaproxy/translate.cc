#include "rdmaproxy/translate.h"

#include <cstring>

#include "abi/payload.h"
#include "abi/write_decoder.h"
#include "rdmaproxy/mmap_rules.h"

namespace rxp::proxy {

namespace {

// A queue buffer or doorbell the driver pins for a length it derives itself (mlx5: entries
// times entry size; the doorbell's whole page, mlx5_ib_db_map_user): the embedder must vouch
// for all of it, or the app could get the host to pin and the NIC to write the runtime's own
// memory past the app's. The app's own syscall (identity) pins the app's pages, as natively,
// but the embedder still vouches: the harness refuses a range that is not mapped (the kernel's
// own EFAULT, given before it sees the command) or lies in its scratch region, where the NIC
// writing CQEs (with payload, for scatter-to-CQE) would reach an ioctl's validated copy. Either
// way a buffer counts against the pinned budget, and so does a doorbell page, once per file
// (the driver shares it between a context's queues: UverbsFile counts its holders).
bool TranslateDriverPin(TranslateContext& t, size_t at, const abi::Field& f, size_t off,
                        uint64_t value, Result<void>& status) {
  uint64_t start = value;
  uint64_t len = 0;
  if (f.pins_page) {
    static const uint64_t kPage = uint64_t{1} << MmapRules::HostPageShift();
    start = value & ~(kPage - 1);
    len = kPage;
  } else {
    if (t.payload == nullptr) {
      status = Fail(EINVAL, "{}: no request context to size {}", t.what, f.name);
      return false;
    }
    len = f.pin_length(t.PayloadNow());
    if (len == abi::kPinsNothing) return true;  // the driver pins nothing there
    if (len == abi::kPinSizeInvalid) {
      status = Fail(EINVAL, "{}: the queue sizes behind {} overflow what the driver pins",
                    t.what, f.name);
      return false;
    }
    t.queue_bytes += PinnedPageBytes(start, len);  // ib_umem_get charges whole pages
  }
  auto host = t.memory.HostAddress(start, len);
  if (!host) {
    status = Fail(EFAULT, "{}: {} {:#x} (+{} bytes the driver pins) is not app memory the host "
                  "can pin: {}", t.what, f.name, start, len, host.error().reason);
    return false;
  }
  const uint64_t translated = *host + (value - start);
  if (translated != value) t.image.WriteU64(at + off, translated);
  // mlx5_ib_db_map_user finds a context's doorbell page by the address the kernel is given:
  // the host's, so that an app page remapped to other host memory is a new pin there too.
  if (f.pins_page)
    t.doorbell_page = translated & ~((uint64_t{1} << MmapRules::HostPageShift()) - 1);
  return true;
}

// ib_umem_get(), which pins a REG_MR / REREG_MR range for every driver: a range whose end
// wraps, even once rounded up to a page, is EINVAL, and so is one of no page or of more than
// UINT_MAX pages (ib_umem_num_pages). These come before the proxy's own address check so the
// app gets the kernel's answer. An on-demand-paging MR goes to ib_umem_odp_get() instead, whose
// answers differ by driver: it is left to the address check.
Result<void> CheckUmemRange(const abi::Layout& layout, std::span<const std::byte> request,
                            const abi::Field& f, uint64_t start, uint64_t length,
                            std::string_view what) {
  constexpr uint64_t kAccessOnDemand = 1u << 6;  // IB_ACCESS_ON_DEMAND (ib_verbs.h)
  if (const abi::Field* access = layout.Find("access_flags");
      access != nullptr && (abi::ReadField(request, access->offset, access->size) &
                            kAccessOnDemand) != 0)
    return Ok();
  const uint64_t page = uint64_t{1} << MmapRules::HostPageShift();
  const uint64_t end = start + length;
  if (end < start || ((end + page - 1) & ~(page - 1)) < end)
    return Fail(EINVAL, "{}: {} {:#x} + {} wraps around the address space", what, f.name, start,
                length);
  const uint64_t pages = (((end + page - 1) & ~(page - 1)) - (start & ~(page - 1))) / page;
  if (pages == 0 || pages > UINT32_MAX)
    return Fail(EINVAL, "{}: {} {:#x} + {} spans {} pages; the kernel pins 1 to {}", what,
                f.name, start, length, pages, UINT32_MAX);
  return Ok();
}

// Translates field `f` at `off` of the request at image offset `at` (a kind that needs it);
// false stops the walk with `status` set.
bool TranslateField(TranslateContext& t, const abi::Layout& layout, size_t at, size_t length,
                    const abi::Field& f, size_t off, Result<void>& status) {
  const auto bytes = t.image.bytes().subspan(at, length);
  const uint64_t value = abi::ReadField(bytes, off, f.size);
  switch (f.kind) {
    case abi::FieldKind::kPinnedVa: {
      if (t.pin && value != 0 && (f.pin_length != nullptr || f.pins_page))
        return TranslateDriverPin(t, at, f, off, value, status);
      uint64_t len = 1;
      size_t len_at = 0;
      const abi::Field* lf =
          f.length_field.empty() ? nullptr : layout.Locate(f.length_field, len_at);
      if (lf != nullptr) len = abi::ReadField(bytes, len_at, lf->size);
      if (!t.pin) {
        // A range the request does not use (REREG_MR without IB_MR_REREG_TRANS): the core
        // ignores it, but a 6.12 mlx5 driver recreating an ODP or dma-buf MR registers it
        // anyway (mlx5_ib_rereg_user_mr: recreate -> mlx5_ib_reg_user_mr -> ib_umem_get), a
        // range no check or budget would see. So the kernel gets an empty one, in both modes:
        // never an app address a sentry's kernel would pin, and never the harness's scratch
        // region or uncharged memory of the program's. Such a recreate then fails, the MR kept;
        // IB_MR_REREG_TRANS with the range does what it meant.
        std::memset(bytes.data() + off, 0, f.size);
        if (lf != nullptr) std::memset(bytes.data() + len_at, 0, lf->size);
        return true;
      }
      // 0 is "no buffer" in driver fields without a length (an XRC target QP's buf_addr). With
      // a length it names memory like any address: REG_MR's implicit ODP MR (start 0, length
      // 2^64-1: mlx5 create_user_odp_mr) spans the address space of the process that issues
      // it. The app's own syscall (identity) registers the app's, as natively; anyone else
      // must ask the embedder, so the forwarder leaves it to the app and the sentry refuses it.
      if (value == 0 && (lf == nullptr || len == 0 || t.identity)) return true;
      if (lf != nullptr)
        if (auto r = CheckUmemRange(layout, bytes, f, value, len, t.what); !r) {
          status = std::move(r).error();
          return false;
        }
      auto host = t.memory.HostAddress(value, len);
      if (!host) {
        status = Fail(EFAULT, "{}: {} {:#x} (+{}) is not app memory the host can pin: {}",
                      t.what, f.name, value, len, host.error().reason);
        return false;
      }
      if (*host != value) t.image.WriteU64(at + off, *host);
      return true;
    }
    case abi::FieldKind::kFdIn: {
      const auto fd = static_cast<int32_t>(value);
      if (fd < 0) return true;  // -1: none
      auto host = t.resolve_fd(f, fd);
      if (!host) {
        status = std::move(host).error();
        return false;
      }
      const auto h = static_cast<uint32_t>(*host);
      std::memcpy(t.image.bytes().data() + at + off, &h, sizeof(h));
      return true;
    }
    case abi::FieldKind::kUserPtr: {
      if (value == 0) return true;
      if (t.identity) {
        // The kernel writes into the app's own buffer; a struct mminfo there (rxe
        // MODIFY_SRQ's resized queue) still names an mmap offset the proxy must allow.
        if (f.length_field.empty()) {
          Produced p{Produced::What::kRxeMmapInfo};
          p.place = {false, value, sizeof(mminfo)};
          t.produced.push_back(p);
        }
        return true;
      }
      // A pointer the kernel copies from (rdma_cm SET_OPTION optval, with its length) or into
      // (rxe MODIFY_SRQ mmap_info_addr: a struct mminfo): give it a copy / a bounce buffer.
      if (!f.length_field.empty()) {
        size_t len_at = 0;
        const abi::Field* lf = layout.Locate(f.length_field, len_at);
        // A count of `length_unit`-byte elements (mlx5 counters_data: at most 8191
        // descriptors of 8 bytes, MAX_COUNTERS_NUM in hw/mlx5/counters.c).
        const uint64_t len = abi::ReadField(bytes, len_at, lf->size) * f.length_unit;
        if (len > 65536) {
          status = Fail(EINVAL, "{}: {} of {} bytes is too large", t.what, f.name, len);
          return false;
        }
        std::vector<std::byte> in(len);
        if (auto r = t.memory.Read(value, in); !r) {
          status = Fail(EFAULT, "{}: cannot read {} at {:#x}", t.what, f.name, value);
          return false;
        }
        const size_t copy = t.image.Append(in);
        t.image.PointTo(at + off, copy);
        return true;
      }
      const size_t bounce = t.image.Reserve(sizeof(mminfo));
      t.image.PointTo(at + off, bounce);
      t.outputs.push_back({bounce, value, sizeof(mminfo), -1});
      Produced p{Produced::What::kRxeMmapInfo};
      p.place = {true, bounce, sizeof(mminfo)};
      t.produced.push_back(p);
      return true;
    }
    default:
      return true;
  }
}

}  // namespace

uint64_t PinnedPageBytes(uint64_t start, uint64_t length) {
  if (length == 0) return 0;
  const uint64_t page = uint64_t{1} << MmapRules::HostPageShift();
  const uint64_t last = start + (length - 1);
  if (last < start) return UINT64_MAX;
  const uint64_t first_page = start / page, last_page = last / page;
  const uint64_t pages = last_page - first_page + 1;
  return pages > UINT64_MAX / page ? UINT64_MAX : pages * page;
}

Result<void> TranslateFields(TranslateContext& t, const abi::Layout& layout, size_t at,
                             size_t length) {
  Result<void> status = Ok();
  abi::VisitFields(layout, 0, length, [&](const abi::Field& f, size_t off) -> bool {
    // Most fields are plain values: only these kinds need translating. The test stays in the
    // walk; the work is a call.
    return !Translated(f.kind) || TranslateField(t, layout, at, length, f, off, status);
  });
  if (!status || layout.trailing == nullptr) return status;
  // The entries after the struct that the request carries (a count past them is the
  // driver's to refuse: it copies no more than the request holds).
  size_t count_at = 0;
  const abi::Field* count = layout.Locate(layout.trailing_count, count_at);
  const uint64_t n =
      abi::ReadField(t.image.bytes().subspan(at, length), count_at, count->size);
  const size_t entry = layout.trailing->size;
  for (uint64_t i = 0; i < n && layout.size + (i + 1) * entry <= length; ++i)
    RXP_TRY(TranslateFields(t, *layout.trailing, at + layout.size + i * entry, entry));
  return status;
}

Result<void> TranslateFields(TranslateContext& t, const abi::Layout& layout, size_t at,
                             size_t length, std::span<const abi::FieldAt> fields) {
  Result<void> status = Ok();
  for (const abi::FieldAt& f : fields) {
    if (f.offset + f.field->size > length) continue;  // as VisitFields skips it
    if (!TranslateField(t, layout, at, length, *f.field, f.offset, status)) break;
  }
  return status;
}

}  // namespace rxp::proxy
