// The uverbs / rdma_cm ABI schema: one declarative entry per legacy write() command, per ioctl
// (object, method) with its attributes, per driver payload and per rdma_cm command. The
// decoders, the trace printer, the proxy's translator and docs/ABI.md all read these tables;
// no other file encodes ABI knowledge.
//
// Facts come from the kernel (drivers/infiniband/core/uverbs_std_types_*.c, uverbs_cmd.c,
// ucma.c, hw/mlx5/*.c, sw/rxe/*.c of Linux 6.12) and the installed UAPI headers (uapi.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "abi/uapi.h"

namespace rxp::abi {

// A uverbs object type: UVERBS_OBJECT_* (core) or MLX5_IB_OBJECT_* (driver namespace).
using ObjectId = uint16_t;
inline constexpr ObjectId kNoObject = 0xffff;
// UVERBS_IDR_ANY_OBJECT: DEVX modify/query take a handle of any type.
inline constexpr ObjectId kAnyObject = 0xfffe;

// Which schema an entry belongs to. kCore entries exist on every device; driver entries only
// on a device whose ioctl driver_id names that driver.
enum class Driver : uint8_t { kCore, kMlx5, kRxe };

// The driver behind one uverbs file: the ioctl header's driver_id must equal `driver_id`
// (ib_uverbs_cmd_verbs), and driver payloads are read with `driver`'s layouts. A device whose
// driver the schema does not model (generic) has driver == kCore.
struct DeviceAbi {
  uint32_t driver_id = RDMA_DRIVER_UNKNOWN;  // enum rdma_driver_id
  Driver driver = Driver::kCore;
};
DeviceAbi DeviceAbiFor(uint32_t rdma_driver_id);
std::string_view DriverName(Driver driver);

// ---------------------------------------------------------------------------------------------
// Payload layouts: the structs carried inside commands, field by field.

struct NameEntry {
  uint64_t value;
  std::string_view name;
};
using NameTable = std::span<const NameEntry>;

enum class FieldKind : uint8_t {
  kU8, kU16, kU32, kU64, kS32,  // numbers, printed in decimal
  kHex32, kHex64,               // numbers printed in hex (keys, QPNs, masks, offsets)
  kHandle,       // a uverbs object handle of this file (Field::object names the type)
  kUserHandle,   // an opaque app cookie the kernel echoes in events: passed through untouched
  kResponsePtr,  // legacy embedded response pointer: the kernel copy_to_user()s the response there
  kPinnedVa,     // a user VA the kernel pins (ib_umem_get) or maps: must be usable by the host
  kUserPtr,      // a user VA the kernel copies to/from without pinning (bounced in sentry mode)
  kFdIn,         // an fd number in the caller's fd table (-1 = none)
  kFdOut,        // an fd number the kernel installed in the caller's fd table
  kGid,          // 16-byte GID
  kMac,          // 6-byte MAC address
  kSockaddr,     // sockaddr_in / sockaddr_in6 / sockaddr_ib in a sockaddr_storage-sized field
  kBytes,        // opaque bytes
  kReserved,     // padding the kernel requires (or rdma-core sends) as zero
  kStruct,       // a nested layout (Field::nested)
  kEnum,         // a value with names (Field::names)
  kFlags,        // a bitmask with names (Field::names)
};

struct Layout;

struct PayloadContext;
// kPinnedVa fields whose length the driver derives from the request (mlx5 queue buffers:
// entries times entry size, computed in the kernel): how many bytes it pins at the field's
// address, from `context` (the driver request and the core sizes). Two values say more:
inline constexpr uint64_t kPinsNothing = 0;              // this request pins nothing there
inline constexpr uint64_t kPinSizeInvalid = UINT64_MAX;  // sizes the driver refuses or truncates
using PinLength = uint64_t (*)(const PayloadContext& context);

// How a kernel handler uses one handle field of one request, where the request decides it:
// the object type the handle must name (kNoObject: the handler does not read the field this
// time), and the errno the handler answers when that lookup fails (0: the lookup's own --
// ENOENT for an unknown handle, EINVAL for one of another type; rdma_lookup_get_uobject).
struct HandleUse {
  ObjectId object = kNoObject;
  int lookup_errno = 0;
};
// Reads `request` -- the bytes of the top-level layout that holds the field -- and says how
// the handler uses the field. create_qp(): pd_handle names an XRCD for IB_QPT_XRC_TGT.
using HandleRule = HandleUse (*)(std::span<const std::byte> request);

struct Field {
  std::string_view name;
  uint16_t offset = 0;
  uint16_t size = 0;
  FieldKind kind = FieldKind::kU32;
  ObjectId object = kNoObject;          // kHandle: the type it names (the usual one, with `rule`)
  HandleRule rule = nullptr;            // kHandle: set when the request decides (HandleUseOf)
  const Layout* nested = nullptr;       // kStruct
  const NameTable* names = nullptr;     // kEnum, kFlags
  // kPinnedVa / kUserPtr: the sibling field holding the buffer's length, in units of
  // `length_unit` bytes (a count of elements when the kernel copies an array).
  std::string_view length_field;
  uint16_t length_unit = 1;
  // kPinnedVa: the driver's own length (PinLength), or the page holding the address
  // (mlx5_ib_db_map_user pins exactly that page). Neither: `length_field`, else one byte.
  PinLength pin_length = nullptr;
  bool pins_page = false;

  static constexpr Field Make(std::string_view name, size_t offset, size_t size, FieldKind kind) {
    Field f;
    f.name = name;
    f.offset = static_cast<uint16_t>(offset);
    f.size = static_cast<uint16_t>(size);
    f.kind = kind;
    return f;
  }
  constexpr Field Obj(ObjectId o) const { Field f = *this; f.object = o; return f; }
  constexpr Field Rule(HandleRule r) const { Field f = *this; f.rule = r; return f; }
  constexpr Field Nested(const Layout* l) const { Field f = *this; f.nested = l; return f; }
  constexpr Field Names(const NameTable* n) const { Field f = *this; f.names = n; return f; }
  constexpr Field Pins(PinLength l) const { Field f = *this; f.pin_length = l; return f; }
  constexpr Field PinsPage() const { Field f = *this; f.pins_page = true; return f; }
  constexpr Field Len(std::string_view l, size_t unit = 1) const {
    Field f = *this;
    f.length_field = l;
    f.length_unit = static_cast<uint16_t>(unit);
    return f;
  }
};

// How the kernel uses kHandle field `field` of `request` (the top-level layout's bytes): the
// field's rule, else always as a handle of Field::object.
HandleUse HandleUseOf(const Field& field, std::span<const std::byte> request);

// RXP_FIELD(struct ib_uverbs_reg_mr, start, kPinnedVa): a field of a kernel UAPI struct, with
// its offset and size taken from the header itself.
#define RXP_FIELD(Struct, member, kind) \
  ::rxp::abi::Field::Make(#member, offsetof(Struct, member), sizeof(Struct::member), \
                          ::rxp::abi::FieldKind::kind)

struct Layout {
  std::string_view c_name;  // the kernel struct, e.g. "ib_uverbs_reg_mr"
  uint16_t size = 0;
  std::span<const Field> fields;
  // Entries of `trailing` that follow the struct, as many as the field `trailing_count` says
  // (mlx5_ib_create_flow's data[]: the driver copies that many from the request).
  const Layout* trailing = nullptr;
  std::string_view trailing_count;

  // The field named `path`; "base.cq_handle" descends into nested structs.
  const Field* Find(std::string_view path) const;
  // The absolute offset of the field named `path`, or -1.
  int OffsetOf(std::string_view path) const;
  // Both in one walk: the field named `path` (nullptr if none) and its absolute offset.
  const Field* Locate(std::string_view path, size_t& offset) const;
};

// What a payload selector may look at: the facts of the request that decide a driver layout.
struct PayloadContext {
  uint32_t qp_type = 0;          // QP creation: enum ib_uverbs_qp_type
  uint32_t create_flags = 0;     // QP creation: enum ib_uverbs_qp_create_flags
  bool has_rwq_ind_table = false;
  // QP creation: IB_QP_CREATE_SOURCE_QPN -- a create flag in EX_CREATE_QP, the presence of the
  // SOURCE_QPN attribute in QP.CREATE (which rdma-core sends instead of the flag).
  bool has_source_qpn = false;
  // The core sizes a driver derives a queue buffer's pinned length from (Field::pin_length):
  uint32_t cqe = 0;          // CQ creation and RESIZE_CQ: the entries asked for
  uint32_t srq_max_wr = 0;   // SRQ creation
  uint32_t srq_max_sge = 0;
  std::span<const std::byte> driver_in;  // the driver request itself
};

// A driver payload choice: what rides in udata (UHW_IN / UHW_OUT, or after the core struct
// in a write). `select_in` picks a variant when the layout depends on the request (mlx5
// create_qp: plain, raw-packet, RSS, DCT, XRC target); `variants` lists every layout it may
// return (docs, tests).
using PayloadSelector = const Layout* (*)(const PayloadContext& context);
struct DriverPayload {
  const Layout* in = nullptr;
  const Layout* out = nullptr;
  PayloadSelector select_in = nullptr;
  std::span<const Layout* const> variants;

  // The request layout for `context`: select_in's choice, else `in`.
  const Layout* InFor(const PayloadContext& context) const;
};

// Per-driver payloads of one command or method.
struct DriverPayloads {
  const DriverPayload* mlx5 = nullptr;
  const DriverPayload* rxe = nullptr;

  const DriverPayload* For(Driver driver) const;
};

// ---------------------------------------------------------------------------------------------
// Policy: what the proxy does with an entry by default. The engine's configurable policy may
// relax or tighten it; docs/ABI.md shows the default.

enum class Disposition : uint8_t {
  kAllow,        // forwarded (after translating what the entry carries)
  kDeny,         // refused with `errnum` and `reason`, never forwarded
  kUnsupported,  // the kernel implements no handler: refused as the kernel would refuse it
};

struct Policy {
  Disposition disposition = Disposition::kAllow;
  int errnum = 0;
  std::string_view reason;
};

// ---------------------------------------------------------------------------------------------
// Legacy write() commands (enum ib_uverbs_write_cmds, IB_USER_VERBS_EX_CMD_*).

// Variable data after the core request that the kernel parses.
enum class Trailer : uint8_t {
  kNone,
  kSendWrs,     // POST_SEND: wr_count x wqe_size send WRs, then sge_count SGEs
  kRecvWrs,     // POST_RECV / POST_SRQ_RECV: wr_count x wqe_size recv WRs, then SGEs
  kFlowSpecs,   // EX_CREATE_FLOW: flow_attr.num_of_specs flow specs
  kWqHandles,   // EX_CREATE_RWQ_IND_TBL: 1 << log_ind_tbl_size u32 WQ handles
};

struct WriteCommand {
  uint32_t command;             // on the wire: n, or IB_USER_VERBS_CMD_FLAG_EXTENDED | n
  std::string_view name;        // the kernel constant, e.g. "IB_USER_VERBS_CMD_REG_MR"
  std::string_view short_name;  // for traces, e.g. "REG_MR"
  const Layout* request = nullptr;   // nullptr: no kernel handler (kUnsupported)
  uint16_t req_size = 0;             // the kernel's method_elm->req_size
  const Layout* response = nullptr;
  uint16_t resp_size = 0;            // the kernel's method_elm->resp_size
  bool has_resp = false;             // non-ex: the request starts with `response`
  bool has_udata = false;            // non-ex: driver data follows the core structs
  Trailer trailer = Trailer::kNone;
  ObjectId creates = kNoObject;      // object created; its handle is response field `created`
  std::string_view created;
  ObjectId destroys = kNoObject;     // object destroyed; its handle is request field `destroyed`
  std::string_view destroyed;
  DriverPayloads drivers;
  Policy policy;
  std::string_view path;        // how rdma-core reaches it (docs)

  constexpr bool extended() const { return (command & IB_USER_VERBS_CMD_FLAG_EXTENDED) != 0; }
  // The request struct in whole 8-byte words, as a header's in_words counts it: the length a
  // short extended request is zero-extended to (PaddedExtendedWrite, INVOKE_WRITE's CORE_IN).
  size_t padded_request_bytes() const {
    return request == nullptr ? 0 : (request->size + 7) & ~size_t{7};
  }
};

std::span<const WriteCommand> WriteCommands();
// The entry for a command word, or nullptr (not in the schema at all).
const WriteCommand* FindWriteCommand(uint32_t command);

// ---------------------------------------------------------------------------------------------
// ioctl objects, methods and attributes (RDMA_VERBS_IOCTL).

enum class AttrType : uint8_t {
  kPtrIn,      // UVERBS_ATTR_PTR_IN: inline in `data` when len <= 8, else a pointer
  kPtrOut,     // UVERBS_ATTR_PTR_OUT: always a pointer
  kConstIn,    // UVERBS_ATTR_CONST_IN: PTR_IN of exactly 8 bytes, read as a u64 (inline)
  kFlagsIn,    // UVERBS_ATTR_FLAGS_IN: PTR_IN of 4 or 8 bytes (inline)
  kEnumIn,     // UVERBS_ATTR_ENUM_IN: elem_id selects a PTR_IN sub-spec
  kIdr,        // UVERBS_ATTR_IDR: an object handle, len 0
  kFd,         // UVERBS_ATTR_FD: an fd-object (event file), len 0, data_s64 = fd
  kRawFd,      // UVERBS_ATTR_RAW_FD: any fd of the caller (dma-buf), len 0
  kIdrsArray,  // UVERBS_ATTR_IDRS_ARR: u32 handles, inline when len <= 8
};

enum class Access : uint8_t { kNone, kRead, kWrite, kNew, kDestroy };

// The pointer part of a uverbs_attr_spec (u.ptr.min_len, u.ptr.len, zero_trailing): the
// lengths a PTR_IN / PTR_OUT accepts. An ENUM_IN attribute has one per element
// (u2.enum_def.ids[elem_id]); uverbs_process_attr() checks the data against the element
// elem_id selects.
struct PtrSpec {
  uint16_t min_len = 0;
  uint16_t max_len = 0;        // 0xffff = protocol maximum
  bool zero_trailing = false;  // UVERBS_ATTR_STRUCT: bytes past max_len must be zero
};

// What an attribute's value means, beyond its encoding: drives translation.
enum class AttrMeaning : uint8_t {
  kPlain,      // numbers or a struct without pointers or fds
  kPinnedVa,   // inline u64 user VA the kernel pins (DEVX UMEM ADDR)
  kPinnedLength,  // inline u64: how many bytes from the kPinnedVa the kernel pins (DEVX UMEM LEN)
  kDmabufFd,   // a dma-buf fd: with it the kPinnedVa is an offset into the dma-buf, not a VA
  kFdInline,   // inline u32 fd number of the caller (REG_DMABUF_MR_FD, DEVX FD_NUM)
  kUdataIn,    // UHW_IN: the driver request payload
  kUdataOut,   // UHW_OUT: the driver response payload
  kWriteCmd,   // INVOKE_WRITE: the legacy command number
  kCoreIn,     // INVOKE_WRITE: the legacy core request (without ib_uverbs_cmd_hdr)
  kCoreOut,    // INVOKE_WRITE: the legacy core response
  kPrmMailbox, // mlx5 DEVX: a raw firmware command / response mailbox
  // An output u64: an mmap offset in the file's rdma_user_mmap_entry range that the kernel
  // hands out with a new object (mlx5 UAR_OBJ_ALLOC, VAR_OBJ_ALLOC), mappable on the same fd
  // until the object is destroyed (rdma_user_mmap_entry_remove); and its u32 length.
  kMmapEntryOffset,
  kMmapEntryLength,
};

struct Attr {
  uint16_t id = 0;
  std::string_view name;        // the kernel constant, e.g. "UVERBS_ATTR_CREATE_QP_PD_HANDLE"
  std::string_view short_name;  // for traces, e.g. "pd"
  AttrType type = AttrType::kPtrIn;
  bool mandatory = false;       // UA_MANDATORY: the kernel fails (EINVAL) without it
  uint16_t min_len = 0;         // PTR kinds: uverbs_attr_spec u.ptr.min_len
  uint16_t max_len = 0;         // PTR kinds: u.ptr.len (0xffff = protocol maximum)
  bool zero_trailing = false;   // UVERBS_ATTR_STRUCT: bytes past max_len must be zero
  ObjectId object = kNoObject;  // IDR / FD / IDRS: the object type
  Access access = Access::kNone;
  uint16_t min_count = 0, max_count = 0;  // IDRS: array length bounds
  AttrMeaning meaning = AttrMeaning::kPlain;
  const Layout* layout = nullptr;    // PTR structs, for printing
  const NameTable* names = nullptr;  // CONST_IN enums, FLAGS_IN bits
  std::span<const PtrSpec> enum_elems;  // ENUM_IN: the element specs, indexed by elem_id
  bool hex = false;                  // print scalar values in hex (keys, QPNs, cookies)

  // PTR kinds: the lengths this attribute accepts (ENUM_IN: per element; IoctlAttr::Ptr).
  constexpr PtrSpec Ptr() const { return {min_len, max_len, zero_trailing}; }
};

struct Method {
  ObjectId object = 0;
  uint16_t id = 0;
  std::string_view name;        // "UVERBS_METHOD_QP_CREATE"
  std::string_view short_name;  // "QP.CREATE"
  Driver driver = Driver::kCore;
  std::span<const Attr> attrs;
  bool has_udata = false;       // UVERBS_ATTR_UHW(): accepts UHW_IN / UHW_OUT
  DriverPayloads drivers;       // what UHW carries per driver
  Policy policy;
  std::string_view path;        // how rdma-core reaches it (docs)
};

// Attributes a driver adds to a core method (ADD_UVERBS_ATTRIBUTES_SIMPLE).
struct DriverAttrs {
  Driver driver;
  ObjectId object;
  uint16_t method;
  std::span<const Attr> attrs;
};

struct Object {
  ObjectId id;
  std::string_view name;        // "UVERBS_OBJECT_QP"
  std::string_view short_name;  // "QP"
  Driver driver = Driver::kCore;
  bool fd_object = false;       // instances are fds (COMP_CHANNEL, ASYNC_EVENT, DEVX fds)
};

std::span<const Object> Objects();
std::span<const Method> Methods();
std::span<const DriverAttrs> DriverAttributes();
const Object* FindObject(ObjectId id);
// The method for (object, method) on a device of `driver`, or nullptr.
const Method* FindMethod(Driver driver, ObjectId object, uint16_t method);
// An attribute of `method` on a device of `driver` (core attrs plus the driver's additions).
const Attr* FindAttr(const Method& method, Driver driver, uint16_t attr_id);
// Every driver attribute added to `method` for `driver` (may be empty).
std::span<const Attr> DriverAttrsFor(const Method& method, Driver driver);
// The short name of an object type ("PD", "CQ", "DEVX_OBJ") for traces.
std::string_view ObjectShortName(ObjectId id);

// ---------------------------------------------------------------------------------------------
// rdma_cm: the ucma write() commands on /dev/infiniband/rdma_cm (rdma_user_cm.h).

struct UcmaCommand {
  uint32_t cmd;
  std::string_view name;        // "RDMA_USER_CM_CMD_CREATE_ID"
  std::string_view short_name;  // "CREATE_ID"
  const Layout* request = nullptr;  // nullptr: no kernel handler (ENOSYS)
  uint16_t req_size = 0;            // bytes the kernel copies (copy_from_user(&cmd, sizeof cmd))
  const Layout* response = nullptr;
  uint16_t resp_min = 0;            // smallest `out` the kernel accepts
  // The handler writes exactly resp_min bytes to `response` whatever `out` says, and checks
  // no `out` (ucma_migrate_id()).
  bool out_unchecked = false;
  bool variable_response = false;   // QUERY: the response layout depends on the option
  Policy policy;
  std::string_view path;
};

std::span<const UcmaCommand> UcmaCommands();
const UcmaCommand* FindUcmaCommand(uint32_t cmd);

}  // namespace rxp::abi
