#include "tools/vectors.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "abi/ioctl_decoder.h"
#include "abi/trace_printer.h"
#include "abi/ucma_decoder.h"
#include "abi/write_decoder.h"

namespace rxp::tools {
namespace {

using nlohmann::json;

Result<uint64_t> ParseAddr(const json& j) {
  if (!j.is_string()) return Fail(EINVAL, "address is not a string");
  const std::string s = j.get<std::string>();
  try {
    size_t used = 0;
    const uint64_t v = std::stoull(s, &used, 0);
    if (used != s.size()) return Fail(EINVAL, "bad address '{}'", s);
    return v;
  } catch (const std::exception&) {
    return Fail(EINVAL, "bad address '{}'", s);
  }
}

Result<std::vector<VectorBuffer>> ParseBuffers(const json& j) {
  std::vector<VectorBuffer> out;
  if (j.is_null()) return out;
  if (!j.is_array()) return Fail(EINVAL, "buffer list is not an array");
  for (const auto& b : j) {
    if (!b.is_object() || !b.contains("addr") || !b.contains("data"))
      return Fail(EINVAL, "buffer needs addr and data");
    auto addr = ParseAddr(b["addr"]);
    if (!addr) return std::move(addr).error();
    if (!b["data"].is_string()) return Fail(EINVAL, "buffer data is not a string");
    auto data = FromHex(b["data"].get<std::string>());
    if (!data) return std::move(data).error();
    out.push_back({*addr, std::move(*data)});
  }
  return out;
}

Result<VectorCall> ParseCall(const json& j) {
  VectorCall c;
  try {
    c.file = j.at("file").get<std::string>();
    c.driver_id = j.value("driver_id", 0u);
    c.syscall = j.at("syscall").get<std::string>();
    c.ret = j.at("ret").get<int64_t>();
    c.errnum = j.value("errno", 0);
    auto req = FromHex(j.at("request").get<std::string>());
    if (!req) return std::move(req).error();
    c.request = std::move(*req);
    if (j.contains("attrs_after")) {
      auto after = FromHex(j["attrs_after"].get<std::string>());
      if (!after) return std::move(after).error();
      c.attrs_after = std::move(*after);
    }
  } catch (const json::exception& e) {
    return Fail(EINVAL, "malformed call: {}", e.what());
  }
  if (c.syscall != "ioctl" && c.syscall != "write")
    return Fail(EINVAL, "unknown syscall '{}'", c.syscall);
  auto in = ParseBuffers(j.value("in", json()));
  if (!in) return std::move(in).error();
  c.in = std::move(*in);
  auto out = ParseBuffers(j.value("out", json()));
  if (!out) return std::move(out).error();
  c.out = std::move(*out);
  return c;
}

}  // namespace

std::string ToHex(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (std::byte b : bytes) {
    const auto v = std::to_integer<unsigned>(b);
    s += kDigits[v >> 4];
    s += kDigits[v & 15];
  }
  return s;
}

Result<std::vector<std::byte>> FromHex(std::string_view hex) {
  if (hex.size() % 2 != 0) return Fail(EINVAL, "hex string of odd length {}", hex.size());
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<std::byte> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return Fail(EINVAL, "bad hex digit at {}", 2 * i);
    out[i] = static_cast<std::byte>(hi << 4 | lo);
  }
  return out;
}

Result<VectorFile> LoadVectors(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Fail(ENOENT, "cannot open {}", path);
  VectorFile f;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Fail(EINVAL, "{}:{}: not a JSON object", path, n);
    if (n == 1) {
      if (j.value("format", "") != "rdmaproxy-abi-vectors" || j.value("version", 0) != 1)
        return Fail(EINVAL, "{}: not an rdmaproxy-abi-vectors v1 file", path);
      f.program = j.value("program", "");
      f.kernel = j.value("kernel", "");
      continue;
    }
    auto call = ParseCall(j);
    if (!call) return Fail(EINVAL, "{}:{}: {}", path, n, call.error().reason);
    f.calls.push_back(std::move(*call));
  }
  if (n == 0) return Fail(EINVAL, "{}: empty vector file", path);
  return f;
}

std::optional<std::span<const std::byte>> VectorPayloads::Read(uint64_t address,
                                                               size_t length) const {
  for (const auto& b : buffers_)
    if (b.addr == address && b.data.size() >= length)
      return std::span<const std::byte>(b.data.data(), length);
  return std::nullopt;
}

std::string TraceLine(const VectorCall& c) {
  const VectorPayloads in(c.in), out(c.out);
  abi::CallOutcome outcome;
  outcome.ret = c.ret;
  outcome.errnum = c.errnum;
  outcome.attrs_after = c.attrs_after;
  outcome.out = &out;
  const abi::DeviceAbi device = abi::DeviceAbiFor(c.driver_id);
  if (c.IsRdmaCm()) {
    auto r = abi::DecodeUcmaWrite(c.request);
    if (!r) return abi::FormatRefused("write", c.file, "?", r.error());
    return abi::FormatUcma(c.file, *r, &outcome);
  }
  if (c.syscall == "ioctl") {
    abi::IoctlRequest r;
    if (auto res = abi::DecodeIoctl(c.request, device, r); !res)
      return abi::FormatRefused("ioctl", c.file, r.method ? r.method->short_name : "?",
                                res.error());
    return abi::FormatIoctl(c.file, r, device, in, &outcome);
  }
  auto r = abi::DecodeWrite(c.request, device);
  if (!r) return abi::FormatRefused("write", c.file, "?", r.error());
  return abi::FormatWrite(c.file, *r, device, &outcome);
}

}  // namespace rxp::tools
