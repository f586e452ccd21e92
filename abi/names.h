// Value-name tables for the trace printer: one table per kernel enum or flag set.
#pragma once

#include <cstdint>
#include <string_view>

#include "abi/schema.h"

namespace rxp::abi {

extern const NameTable kQpTypeNames;
extern const NameTable kQpStateNames;
extern const NameTable kAccessFlagNames;
extern const NameTable kWrOpcodeNames;
extern const NameTable kSrqTypeNames;
extern const NameTable kGidTypeNames;
extern const NameTable kMwTypeNames;
extern const NameTable kPortStateNames;
extern const NameTable kMtuNames;
extern const NameTable kLinkLayerNames;
extern const NameTable kQpAttrMaskNames;
extern const NameTable kPortSpaceNames;
extern const NameTable kCmEventNames;

// The name of `value` in `table`, or empty.
std::string_view NameOf(const NameTable& table, uint64_t value);

}  // namespace rxp::abi
