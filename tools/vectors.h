// ABI test vectors: the bytes real rdma-core programs sent to /dev/infiniband/* and what came
// back, captured inside the VM test bed (tests/tools/capture_preload.cc) and stored as JSON
// Lines under tests/data/vectors/. The first line describes the capture; each following line
// is one call:
//   {"file":"uverbs0","driver_id":14,"syscall":"ioctl","request":"<hex>",
//    "in":[{"addr":"0x7ffd...","data":"<hex>"}],"ret":0,"errno":0,
//    "attrs_after":"<hex>","out":[{"addr":"0x...","data":"<hex>"}]}
// `request` is what the syscall's argument points to (ioctl: header + attributes; write: the
// whole buffer); `in` / `out` are the app buffers it references, before and after the call.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "abi/payload.h"
#include "abi/result.h"

namespace rxp::tools {

struct VectorBuffer {
  uint64_t addr = 0;
  std::vector<std::byte> data;
};

struct VectorCall {
  std::string file;        // "uverbs0", "rdma_cm"
  uint32_t driver_id = 0;  // rdma_driver_id of the device (uverbs files)
  std::string syscall;     // "ioctl" or "write"
  std::vector<std::byte> request;
  std::vector<VectorBuffer> in;
  int64_t ret = 0;
  int errnum = 0;
  std::vector<std::byte> attrs_after;  // ioctl: the attribute array (no header) after the call
  std::vector<VectorBuffer> out;

  bool IsRdmaCm() const { return file == "rdma_cm"; }
};

struct VectorFile {
  std::string program;   // the command line that was captured
  std::string kernel;    // uname -r of the guest
  std::vector<VectorCall> calls;
};

// Reads a .jsonl vector file; errors name the line.
Result<VectorFile> LoadVectors(const std::string& path);

// Hex helpers shared by the capture shim and the loader.
std::string ToHex(std::span<const std::byte> bytes);
Result<std::vector<std::byte>> FromHex(std::string_view hex);

// A PayloadSource over a call's captured buffers.
class VectorPayloads final : public abi::PayloadSource {
 public:
  explicit VectorPayloads(const std::vector<VectorBuffer>& buffers) : buffers_(buffers) {}
  std::optional<std::span<const std::byte>> Read(uint64_t address,
                                                 size_t length) const override;

 private:
  const std::vector<VectorBuffer>& buffers_;
};

// Decodes and prints one call as the --trace line; errors when the request does not decode.
std::string TraceLine(const VectorCall& call);

}  // namespace rxp::tools
