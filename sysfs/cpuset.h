// CPU sets in the two text forms sysfs uses: lists ("0-55,112-167": cpulist, local_cpulist)
// and masks ("ffffffff,00000000": cpumap, local_cpus; the kernel's "%*pb", comma-separated
// 32-bit words, most significant first). Used to check that a snapshot's NUMA view is
// self-consistent and to print affinities.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "abi/result.h"

namespace rxp::sysfs {

// The kernel's NR_CPUS upper bound (CONFIG_NR_CPUS_RANGE_END); larger indexes are refused.
inline constexpr uint32_t kMaxCpus = 8192;

class CpuSet {
 public:
  void Add(uint32_t cpu);
  bool Contains(uint32_t cpu) const;
  bool empty() const;
  uint32_t Count() const;
  // One past the highest CPU in the set (0 when empty).
  uint32_t End() const;
  bool operator==(const CpuSet& other) const;

  std::string ToList() const;               // "0-3,8"
  std::string ToMask(uint32_t nbits) const; // "%*pb" for nr_cpu_ids = nbits

 private:
  std::vector<uint64_t> words_;
};

Result<CpuSet> ParseCpuList(std::string_view text);
Result<CpuSet> ParseCpuMask(std::string_view text);

}  // namespace rxp::sysfs
