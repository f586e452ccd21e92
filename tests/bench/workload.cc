// rxp_bench_workload: the programs the harness benchmark times (tests/bench/harness_bench.cc).
// Each times its own loop and prints "ns_per_op=<x>", so process start-up does not count.
//
//   mix N             N iterations of syscalls the harness never stops: getppid, a 64-byte
//                     write+read through a pipe, a 4 KiB pread of a memfd, fstat, lseek and
//                     clock_gettime(CLOCK_PROCESS_CPUTIME_ID) (a real syscall, not the vDSO)
//   fd-stops PATH N   opens PATH and calls read(fd, buf, 0) N times: one stop each when PATH
//                     is proxied
//   path-stops N      N stat() calls on a missing path: one stop each (path lookup)
//   ioctl-stops PATH N T
//                     opens PATH, starts T threads that block in read(2) on a pipe, and calls
//                     ioctl(fd, 0, buf) N times: under the benchmark's scratch handler each
//                     call runs on a kernel-writable slot, so the T threads are frozen
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

int Report(double start, long n) {
  std::printf("ns_per_op=%.1f\n", (NowNs() - start) / static_cast<double>(n));
  return 0;
}

int Mix(long n) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return 1;
  // A file in memory (the page cache of a memfd), so that a pread costs the system call and a
  // copy, not the latency of whatever filesystem holds this binary (the VM's is 9p).
  char buf[4096] = {};
  int file = memfd_create("rxp-bench-mix", MFD_CLOEXEC);
  if (file < 0 || pwrite(file, buf, sizeof buf, 0) != static_cast<ssize_t>(sizeof buf)) return 1;
  struct stat st{};
  timespec ts{};
  const double start = NowNs();
  for (long i = 0; i < n; ++i) {
    syscall(SYS_getppid);
    if (write(pipefd[1], buf, 64) != 64 || read(pipefd[0], buf, 64) != 64) return 1;
    if (pread(file, buf, sizeof buf, 0) < 0) return 1;
    fstat(file, &st);
    lseek(file, 0, SEEK_SET);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  }
  return Report(start, n);
}

int FdStops(const char* path, long n) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "workload: open %s: %s\n", path, std::strerror(errno));
    return 1;
  }
  char buf[1];
  const double start = NowNs();
  for (long i = 0; i < n; ++i) (void)!read(fd, buf, 0);
  return Report(start, n);
}

int PathStops(long n) {
  struct stat st{};
  const double start = NowNs();
  for (long i = 0; i < n; ++i) stat("/rxp-bench-missing/x", &st);
  return Report(start, n);
}

int g_idle_pipe[2];

int IoctlStops(const char* path, long n, int threads) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0 || pipe2(g_idle_pipe, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "workload: open %s: %s\n", path, std::strerror(errno));
    return 1;
  }
  std::vector<pthread_t> idle(static_cast<size_t>(threads));
  for (auto& t : idle) {
    pthread_create(&t, nullptr, [](void*) -> void* {
      char byte;
      while (read(g_idle_pipe[0], &byte, 1) < 0 && errno == EINTR) {
      }
      return nullptr;
    }, nullptr);
  }
  usleep(10'000);  // they are asleep in read(2)
  char buf[64] = {};
  const double start = NowNs();
  for (long i = 0; i < n; ++i) (void)!ioctl(fd, 0, buf);
  const double end = NowNs();
  close(g_idle_pipe[1]);  // EOF: they return
  for (auto& t : idle) pthread_join(t, nullptr);
  std::printf("ns_per_op=%.1f\n", (end - start) / static_cast<double>(n));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string cmd = argv[1];
  if (cmd == "mix") return Mix(std::atol(argv[2]));
  if (cmd == "fd-stops" && argc > 3) return FdStops(argv[2], std::atol(argv[3]));
  if (cmd == "path-stops") return PathStops(std::atol(argv[2]));
  if (cmd == "ioctl-stops" && argc > 4)
    return IoctlStops(argv[2], std::atol(argv[3]), std::atoi(argv[4]));
  return 2;
}
