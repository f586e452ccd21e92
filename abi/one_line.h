// One log line from text that may hold bytes an app chose (a device path, a name, a policy
// entry): its control bytes become \xNN. A newline would start a second line that could pass
// for one the proxy wrote, and an escape sequence would rewrite the reader's terminal.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

namespace rxp {

inline bool IsControlByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

inline bool HasControlBytes(std::string_view text) {
  return std::any_of(text.begin(), text.end(), IsControlByte);
}

// `text` with every control byte (tabs and newlines too) written as \xNN.
inline std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (IsControlByte(c))
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out;
}

}  // namespace rxp
