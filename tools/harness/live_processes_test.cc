#include "tools/harness/live_processes.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

namespace rxp::harness {
namespace {

std::vector<pid_t> Listed(const LiveProcesses& live) {
  std::vector<pid_t> pids;
  live.ForEach([&](pid_t pid) { pids.push_back(pid); });
  std::sort(pids.begin(), pids.end());
  return pids;
}

TEST_CASE("live processes: added ones are listed until removed, and freed slots are reused",
          "[live_processes]") {
  auto live = std::make_unique<LiveProcesses>();
  CHECK(Listed(*live).empty());
  live->Add(100);
  live->Add(200);
  live->Add(300);
  CHECK(Listed(*live) == std::vector<pid_t>{100, 200, 300});
  live->Remove(200);
  live->Remove(200);  // twice, as the first program's exit does: no effect the second time
  live->Remove(999);  // never added
  CHECK(Listed(*live) == std::vector<pid_t>{100, 300});
  live->Add(400);  // takes the freed slot
  live->Add(500);
  CHECK(Listed(*live) == std::vector<pid_t>{100, 300, 400, 500});
  live->Clear();
  CHECK(Listed(*live).empty());
  live->Add(600);
  CHECK(Listed(*live) == std::vector<pid_t>{600});
}

TEST_CASE("live processes: past kSlots at once, further ones are not tracked", "[live_processes]") {
  auto live = std::make_unique<LiveProcesses>();
  for (pid_t p = 1; p <= static_cast<pid_t>(LiveProcesses::kSlots) + 10; ++p) live->Add(p);
  auto pids = Listed(*live);
  REQUIRE(pids.size() == LiveProcesses::kSlots);
  CHECK(pids.back() == static_cast<pid_t>(LiveProcesses::kSlots));
  live->Remove(7);
  live->Add(5000);  // a freed slot is found again once full
  pids = Listed(*live);
  CHECK(pids.size() == LiveProcesses::kSlots);
  CHECK(std::find(pids.begin(), pids.end(), 7) == pids.end());
  CHECK(pids.back() == 5000);
}

}  // namespace
}  // namespace rxp::harness
