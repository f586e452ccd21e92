// Decode + validate time per command, measured on real captured requests
// (tests/data/vectors): the ioctl header and attributes, and for INVOKE_WRITE the wrapped
// legacy request body, as the proxy does before every forward. Prints the median ns per
// command over many batches. Target: <= 200 ns each on the build machines.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "abi/ioctl_decoder.h"
#include "abi/write_decoder.h"
#include "tools/vectors.h"

namespace {

using rxp::tools::VectorCall;

struct Case {
  std::string name;
  const VectorCall* call = nullptr;
};

// Decode + validate one captured request the way the engine does.
bool DecodeOnce(const VectorCall& c, rxp::abi::IoctlRequest& scratch) {
  const auto device = rxp::abi::DeviceAbiFor(c.driver_id);
  if (c.syscall == "write") return rxp::abi::DecodeWrite(c.request, device).ok();
  if (!rxp::abi::DecodeIoctl(c.request, device, scratch).ok()) return false;
  if (scratch.write_command != nullptr) {
    const auto* in = scratch.Find(UVERBS_ATTR_CORE_IN);
    for (const auto& b : c.in)
      if (in != nullptr && b.addr == in->data)
        return rxp::abi::ValidateWriteBody(*scratch.write_command,
                                           std::span(b.data).first(in->len))
            .ok();
  }
  return true;
}

double MedianNs(const VectorCall& c) {
  rxp::abi::IoctlRequest scratch;
  constexpr int kBatches = 301, kPerBatch = 2000;
  std::vector<double> per_call;
  per_call.reserve(kBatches);
  for (int b = 0; b < kBatches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    bool ok = true;
    for (int i = 0; i < kPerBatch; ++i) ok &= DecodeOnce(c, scratch);
    const auto t1 = std::chrono::steady_clock::now();
    if (!ok) return -1;
    per_call.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kPerBatch);
  }
  std::nth_element(per_call.begin(), per_call.begin() + kBatches / 2, per_call.end());
  return per_call[kBatches / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "tests/data/vectors";
  std::vector<rxp::tools::VectorFile> files;
  for (const char* f : {"rc_pingpong_client.jsonl", "ib_write_bw_client.jsonl"}) {
    auto v = rxp::tools::LoadVectors(dir + "/" + f);
    if (!v) {
      fmt::print(stderr, "{}\n", v.error().ToString());
      return 1;
    }
    files.push_back(std::move(*v));
  }
  // The first captured instance of each command of interest.
  std::vector<Case> cases = {{"GET_CONTEXT"}, {"REG_MR"}, {"CQ.CREATE"}, {"QP.CREATE"},
                             {"MODIFY_QP"},   {"POST_SEND (write)"}};
  for (const auto& f : files)
    for (const auto& c : f.calls) {
      const std::string line = rxp::tools::TraceLine(c);
      auto match = [&](const char* needle, const char* name) {
        for (auto& k : cases)
          if (k.name == name && k.call == nullptr && line.find(needle) != std::string::npos)
            k.call = &c;
      };
      match("DEVICE.GET_CONTEXT{", "GET_CONTEXT");
      match("INVOKE_WRITE REG_MR{", "REG_MR");
      match("CQ.CREATE{", "CQ.CREATE");
      match("QP.CREATE{", "QP.CREATE");
      match("INVOKE_WRITE MODIFY_QP{", "MODIFY_QP");
      match("write(uverbs0, POST_SEND{", "POST_SEND (write)");
    }
  fmt::print("abi decode+validate, median ns per command (real captured requests, rxe):\n");
  int status = 0;
  for (const auto& k : cases) {
    if (k.call == nullptr) {
      fmt::print("  {:<20} not found in the vectors\n", k.name);
      status = 1;
      continue;
    }
    const double ns = MedianNs(*k.call);
    fmt::print("  {:<20} {:>8.1f} ns  ({} request bytes){}\n", k.name, ns, k.call->request.size(),
               ns > 200 ? "  [above the 200 ns target]" : "");
    if (ns < 0) status = 1;
  }
  return status;
}
