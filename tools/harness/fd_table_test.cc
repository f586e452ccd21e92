#include "tools/harness/fd_table.h"

#include <catch2/catch.hpp>

namespace rxp::harness {
namespace {

class CountingHandler final : public ProxiedFileHandler {
 public:
  explicit CountingHandler(std::vector<CloseReason>& closes) : closes_(closes) {}
  EntryDecision OnEntry(const SyscallView&, TraceeAccess&) override { return EntryDecision::Allow(); }
  ExitDecision OnExit(const SyscallView&, long, TraceeAccess&) override { return ExitDecision::Keep(); }
  void OnClose(CloseReason reason) override { closes_.push_back(reason); }

 private:
  std::vector<CloseReason>& closes_;
};

std::shared_ptr<OpenFile> MakeFile(std::vector<CloseReason>& closes) {
  return std::make_shared<OpenFile>(std::make_unique<CountingHandler>(closes), "dev");
}

TEST_CASE("an open file closes when its last fd goes, in any table", "[fd_table]") {
  std::vector<CloseReason> closes;
  auto parent = std::make_shared<FdTable>();
  parent->Insert(800, MakeFile(closes));
  parent->Insert(801, parent->Find(800));  // dup
  auto child = parent->Clone();            // fork
  CHECK(parent->Erase(800, CloseReason::kClosed));
  CHECK(parent->Erase(801, CloseReason::kClosed));
  CHECK(closes.empty());  // the child still has it
  CHECK_FALSE(parent->Erase(802, CloseReason::kClosed));
  child.reset();  // the child exits
  REQUIRE(closes.size() == 1);
  CHECK(closes[0] == CloseReason::kExit);
}

TEST_CASE("replacing an fd drops the file it named and EraseIf gives the reason", "[fd_table]") {
  std::vector<CloseReason> closes;
  FdTable table;
  table.Insert(800, MakeFile(closes));
  table.Insert(800, MakeFile(closes));  // dup2 over it
  REQUIRE(closes.size() == 1);
  CHECK(closes[0] == CloseReason::kClosed);
  table.Insert(900, MakeFile(closes));
  table.EraseIf([](int fd) { return fd >= 900; }, CloseReason::kExec);
  REQUIRE(closes.size() == 2);
  CHECK(closes[1] == CloseReason::kExec);
  CHECK(table.size() == 1);
}

TEST_CASE("a table torn down at harness exit says so", "[fd_table]") {
  std::vector<CloseReason> closes;
  {
    FdTable table;
    table.Insert(800, MakeFile(closes));
    table.set_teardown_reason(CloseReason::kHarnessExit);
  }
  REQUIRE(closes.size() == 1);
  CHECK(closes[0] == CloseReason::kHarnessExit);
}

}  // namespace
}  // namespace rxp::harness
