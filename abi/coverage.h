// The ABI coverage table, generated from the schema: every legacy command, ioctl method,
// driver payload and rdma_cm command with its status (forwarded / translated / denied /
// unsupported) and what is translated. docs/ABI.md is this text; a test keeps it current.
#pragma once

#include <string>
#include <string_view>

#include "abi/schema.h"

namespace rxp::abi {

enum class Status { kForwarded, kTranslated, kDenied, kUnsupported };

std::string_view StatusName(Status status);

// What an entry's default status is, and the translated items ("start: pinned VA").
struct Coverage {
  Status status = Status::kForwarded;
  std::string translated;  // comma-separated, empty when nothing is translated
};

Coverage CoverageOf(const WriteCommand& command);
Coverage CoverageOf(const Method& method);
Coverage CoverageOf(const UcmaCommand& command);

// The whole of docs/ABI.md.
std::string CoverageMarkdown();

}  // namespace rxp::abi
