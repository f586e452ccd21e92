#include "sysfs/cpuset.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "sysfs/names.h"

namespace rxp::sysfs {

void CpuSet::Add(uint32_t cpu) {
  size_t w = cpu / 64;
  if (words_.size() <= w) words_.resize(w + 1, 0);
  words_[w] |= uint64_t{1} << (cpu % 64);
}

bool CpuSet::Contains(uint32_t cpu) const {
  size_t w = cpu / 64;
  return w < words_.size() && ((words_[w] >> (cpu % 64)) & 1) != 0;
}

bool CpuSet::empty() const {
  return std::all_of(words_.begin(), words_.end(), [](uint64_t w) { return w == 0; });
}

uint32_t CpuSet::Count() const {
  uint32_t n = 0;
  for (uint64_t w : words_) n += static_cast<uint32_t>(std::popcount(w));
  return n;
}

uint32_t CpuSet::End() const {
  for (size_t i = words_.size(); i-- > 0;)
    if (words_[i] != 0)
      return static_cast<uint32_t>(i * 64 + 64 - static_cast<size_t>(std::countl_zero(words_[i])));
  return 0;
}

bool CpuSet::operator==(const CpuSet& other) const {
  size_t n = std::max(words_.size(), other.words_.size());
  for (size_t i = 0; i < n; ++i) {
    uint64_t a = i < words_.size() ? words_[i] : 0;
    uint64_t b = i < other.words_.size() ? other.words_[i] : 0;
    if (a != b) return false;
  }
  return true;
}

std::string CpuSet::ToList() const {
  // bitmap_print_to_pagebuf(true, ...): ranges "a-b", singles "a", comma-separated.
  std::string out;
  uint32_t end = End();
  for (uint32_t cpu = 0; cpu < end;) {
    if (!Contains(cpu)) {
      ++cpu;
      continue;
    }
    uint32_t last = cpu;
    while (last + 1 < end && Contains(last + 1)) ++last;
    if (!out.empty()) out += ',';
    out += last == cpu ? fmt::format("{}", cpu) : fmt::format("{}-{}", cpu, last);
    cpu = last + 1;
  }
  return out;
}

std::string CpuSet::ToMask(uint32_t nbits) const {
  // bitmap_print_to_pagebuf(false, ...) = "%*pb": 32-bit chunks, most significant first; the
  // first chunk only as wide as the bits it holds.
  if (nbits == 0) return "";
  std::string out;
  uint32_t chunks = (nbits + 31) / 32;
  for (uint32_t c = chunks; c-- > 0;) {
    uint32_t word = 0;
    for (uint32_t b = 0; b < 32; ++b)
      if (Contains(c * 32 + b)) word |= 1u << b;
    if (c == chunks - 1) {
      uint32_t bits = nbits - c * 32;
      out += fmt::format("{:0{}x}", word, (bits + 3) / 4);
    } else {
      out += fmt::format(",{:08x}", word);
    }
  }
  return out;
}

Result<CpuSet> ParseCpuList(std::string_view text) {
  CpuSet set;
  if (text.empty()) return set;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    size_t dash = item.find('-');
    auto first = ParseDecimal("cpu list", item.substr(0, dash), kMaxCpus - 1);
    if (!first) return std::move(first).error();
    uint64_t last = *first;
    if (dash != std::string_view::npos) {
      auto l = ParseDecimal("cpu list", item.substr(dash + 1), kMaxCpus - 1);
      if (!l) return std::move(l).error();
      last = *l;
      if (last < *first) return Fail(EINVAL, "cpu list: range {} is reversed", Quote(item));
    }
    for (uint64_t c = *first; c <= last; ++c) set.Add(static_cast<uint32_t>(c));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return set;
}

Result<CpuSet> ParseCpuMask(std::string_view text) {
  CpuSet set;
  if (text.empty()) return Fail(EINVAL, "cpu mask: empty");
  // Split into 32-bit chunks from the right.
  std::vector<std::string_view> chunks;
  size_t pos = 0;
  for (;;) {
    size_t comma = text.find(',', pos);
    chunks.push_back(text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (chunks.size() > kMaxCpus / 32)
    return Fail(EINVAL, "cpu mask: more than {} CPUs", kMaxCpus);
  for (size_t i = 0; i < chunks.size(); ++i) {
    std::string_view chunk = chunks[chunks.size() - 1 - i];
    if (chunk.empty() || chunk.size() > 8 || chunk.starts_with("0x"))
      return Fail(EINVAL, "cpu mask: bad chunk {}", Quote(chunk));
    auto word = ParseHex("cpu mask", chunk, 0xffffffff);
    if (!word) return std::move(word).error();
    for (uint32_t b = 0; b < 32; ++b)
      if ((*word >> b) & 1) set.Add(static_cast<uint32_t>(i * 32 + b));
  }
  return set;
}

}  // namespace rxp::sysfs
