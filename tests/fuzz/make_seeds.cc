// rxp_fuzz_seeds VECTOR_DIR OUT_DIR: turns the captured ABI vectors into libFuzzer seed
// corpora, one file per request: OUT_DIR/{ioctl,write,ucma}/<n>. The first byte selects the
// device driver the way decoder_fuzz.cc reads it (0 generic, 1 mlx5, 2 rxe).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tools/vectors.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc != 3) {
    std::cerr << "usage: rxp_fuzz_seeds VECTOR_DIR OUT_DIR\n";
    return 2;
  }
  const fs::path out = argv[2];
  for (const char* kind : {"ioctl", "write", "ucma"}) fs::create_directories(out / kind);
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(argv[1])) {
    if (e.path().extension() != ".jsonl") continue;
    auto v = rxp::tools::LoadVectors(e.path().string());
    if (!v) {
      std::cerr << v.error().ToString() << "\n";
      return 1;
    }
    for (const auto& c : v->calls) {
      const char* kind = c.IsRdmaCm() ? "ucma" : c.syscall == "ioctl" ? "ioctl" : "write";
      const char selector = c.driver_id == RDMA_DRIVER_MLX5 ? 1 : c.driver_id == RDMA_DRIVER_RXE ? 2 : 0;
      std::ofstream f(out / kind / std::to_string(n++), std::ios::binary);
      f.put(selector);
      f.write(reinterpret_cast<const char*>(c.request.data()),
              static_cast<std::streamsize>(c.request.size()));
    }
  }
  std::cout << "wrote " << n << " seeds to " << out.string() << "\n";
  return 0;
}
