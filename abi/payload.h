// Reading payloads through their layouts: walking every field of a struct (nested structs
// included) with its absolute offset, so the translator can find every pinned address,
// pointer, fd and handle a request carries, and the printer can show them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "abi/schema.h"

namespace rxp::abi {

// Calls `visit(field, absolute_offset)` for every leaf field of `layout` that lies entirely
// within `size` bytes, descending into kStruct fields.
void ForEachField(const Layout& layout, size_t size,
                  const std::function<void(const Field&, size_t)>& visit);

// The same, inlined for the command path (no std::function, no allocation): `visit` returns
// false to stop the walk. Returns false if it was stopped.
template <typename Visit>
bool VisitFields(const Layout& layout, size_t base, size_t size, Visit&& visit) {
  for (const Field& f : layout.fields) {
    const size_t at = base + f.offset;
    if (at + f.size > size) continue;
    if (f.kind == FieldKind::kStruct && f.nested != nullptr) {
      if (!VisitFields(*f.nested, at, size, visit)) return false;
      continue;
    }
    if (!visit(f, at)) return false;
  }
  return true;
}

// A leaf field of a layout and its absolute offset in the layout's bytes.
struct FieldAt {
  const Field* field = nullptr;
  size_t offset = 0;
};

// The leaf fields of `layout` whose kind `want` accepts, in VisitFields' order: for callers
// that look at a few kinds of field of the same layout on every command, and list them once.
template <typename Want>
std::vector<FieldAt> FieldsOf(const Layout& layout, Want&& want) {
  std::vector<FieldAt> out;
  VisitFields(layout, 0, SIZE_MAX, [&](const Field& f, size_t at) {
    if (want(f.kind)) out.push_back({&f, at});
    return true;
  });
  return out;
}

// App memory the printer may look at: the buffers the engine copied in (requests) or out
// (responses). Read returns nullopt when the bytes were not captured.
class PayloadSource {
 public:
  virtual ~PayloadSource() = default;
  virtual std::optional<std::span<const std::byte>> Read(uint64_t address,
                                                         size_t length) const = 0;
};

// A PayloadSource with nothing in it (printing headers and inline values only).
class EmptyPayloadSource final : public PayloadSource {
 public:
  std::optional<std::span<const std::byte>> Read(uint64_t, size_t) const override {
    return std::nullopt;
  }
};

// Appends "f1=v1 f2=v2 ..." for the fields of `layout` present in `bytes`. Response pointers
// and reserved fields are left out; nested structs print as name={...}.
void AppendFields(std::string& out, const Layout& layout, std::span<const std::byte> bytes);

// One value of a field as the printer shows it ("RC", "0x11", "LOCAL_WRITE|REMOTE_READ").
std::string FormatFieldValue(const Field& field, std::span<const std::byte> bytes);

// A value with names: the name, or the number.
std::string FormatNamed(const NameTable* names, uint64_t value, bool flags);

}  // namespace rxp::abi
