#include "tools/harness/peer_memory.h"

#include <dirent.h>

#include <cstring>
#include <memory>

namespace rxp::harness {
namespace {

struct CloseDir {
  void operator()(DIR* d) const { ::closedir(d); }
};

}  // namespace

bool HostHasPeerMemoryClients(const std::string& sys_root) {
  const std::string path = sys_root + "/kernel/mm/memory_peers";
  const std::unique_ptr<DIR, CloseDir> dir(::opendir(path.c_str()));
  if (dir == nullptr) return false;
  while (const dirent* e = ::readdir(dir.get()))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) return true;
  return false;
}

}  // namespace rxp::harness
