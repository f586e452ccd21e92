#include "tools/harness/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tools/harness/ptrace_ops.h"
#include "abi/unique_fd.h"

extern char** environ;

namespace rxp::harness {
namespace {

// What the child reports through the error pipe when it cannot exec.
struct ChildFailure {
  char stage;  // 'f': filter, 'e': execve
  int errnum;
};

// What execvp(3) makes of a PATH candidate: a regular file it may execute, something there that
// it may not (a directory, no execute permission), or nothing.
enum class Candidate { kRunnable, kDenied, kAbsent };
Candidate Classify(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return Candidate::kAbsent;
  return S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0 ? Candidate::kRunnable
                                                                 : Candidate::kDenied;
}

// TracerPid of /proc/self/status: who traces this process (0: no one, -1: unknown).
pid_t TracerOfSelf() {
  std::FILE* status = std::fopen("/proc/self/status", "re");
  if (status == nullptr) return -1;
  char line[256];
  pid_t tracer = -1;
  while (std::fgets(line, sizeof line, status) != nullptr)
    if (std::sscanf(line, "TracerPid: %d", &tracer) == 1) break;
  std::fclose(status);
  return tracer;
}

// The exit status of a program that did not start is the shell's and env(1)'s: 127 when
// there is no such file, 126 when there is one that cannot be run (EACCES, ENOEXEC, ...).
int NotStartedStatus(int errnum) { return errnum == ENOENT ? 127 : 126; }

[[noreturn]] void ChildFail(int fd, char stage, int errnum) {
  ChildFailure failure{stage, errnum};
  ssize_t ignored = write(fd, &failure, sizeof failure);
  (void)ignored;
  _exit(NotStartedStatus(errnum));
}

}  // namespace

Result<std::string> FindProgram(const std::string& name) {
  if (name.empty()) return Fail(ENOENT, "empty program name");
  if (name.find('/') != std::string::npos) return name;
  const char* path_env = std::getenv("PATH");
  std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  // As execvp(3): a match that cannot be run (not executable, a directory) does not end the
  // search, but if nothing better comes, the answer is EACCES (env(1): 126), not ENOENT.
  bool denied = false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    // Appended piecewise: GCC 12 reports a false -Wrestrict on dir + "/" + name.
    std::string candidate = end > start ? path.substr(start, end - start) : std::string(".");
    candidate += '/';
    candidate += name;
    const Candidate found = Classify(candidate);
    if (found == Candidate::kRunnable) return candidate;
    if (found == Candidate::kDenied) denied = true;
    start = end + 1;
  }
  if (denied) return Fail(EACCES, "{}: Permission denied", name);
  return Fail(ENOENT, "{}: command not found in PATH", name);
}

Result<Launched> LaunchTraced(const std::string& program, const std::vector<std::string>& argv,
                              const BpfProgram& filter) {
  // Everything the child needs is prepared before fork: it must not allocate.
  std::vector<char*> child_argv;
  for (const std::string& arg : argv) child_argv.push_back(const_cast<char*>(arg.c_str()));
  child_argv.push_back(nullptr);
  // A file the kernel cannot execute (ENOEXEC: a script without "#!") runs under /bin/sh, as
  // execvp(3) -- and so env(1) and the shells -- run it: sh FILE ARGS...
  static char kShell[] = "/bin/sh";
  std::vector<char*> shell_argv{kShell, const_cast<char*>(program.c_str())};
  for (size_t i = 1; i < argv.size(); ++i) shell_argv.push_back(const_cast<char*>(argv[i].c_str()));
  shell_argv.push_back(nullptr);
  const sock_fprog prog = filter.prog();

  int go[2], err[2];
  if (pipe2(go, O_CLOEXEC) != 0) return Fail(errno, "pipe2: {}", std::strerror(errno));
  UniqueFd go_read(go[0]), go_write(go[1]);
  if (pipe2(err, O_CLOEXEC) != 0) return Fail(errno, "pipe2: {}", std::strerror(errno));
  UniqueFd err_read(err[0]), err_write(err[1]);

  const pid_t pid = fork();
  if (pid < 0) return Fail(errno, "fork: {}", std::strerror(errno));
  if (pid == 0) {
    // Child: wait until the parent has seized us, then filter and exec.
    char byte = 0;
    ssize_t got;
    do {
      got = read(go_read.get(), &byte, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1) _exit(127);  // the harness went away
    // Memory registration pins pages against RLIMIT_MEMLOCK (ib_umem_get); the proxy enforces
    // the sandbox's own budget (its pinned_bytes quota), so the program may use all the host
    // allows it: soft limit up to the hard one.
    if (rlimit memlock{}; getrlimit(RLIMIT_MEMLOCK, &memlock) == 0 &&
                          memlock.rlim_cur < memlock.rlim_max) {
      memlock.rlim_cur = memlock.rlim_max;
      (void)setrlimit(RLIMIT_MEMLOCK, &memlock);
    }
    if (int e = InstallFilter(prog); e != 0) ChildFail(err_write.get(), 'f', e);
    execve(program.c_str(), child_argv.data(), environ);
    if (errno == ENOEXEC) {
      execve(kShell, shell_argv.data(), environ);
      errno = ENOEXEC;  // no shell to run it: the file's own error, as execvp reports it
    }
    ChildFail(err_write.get(), 'e', errno);
  }
  go_read.reset();
  err_write.reset();
  // The tracer holds a descriptor of each of the program's proxied files (pidfd_getfd), so its
  // own soft RLIMIT_NOFILE (the program's, say `ulimit -Sn 64`) must not be what runs out: it
  // takes its hard limit, now that the child has inherited the limits as they were.
  if (rlimit nofile{}; getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &nofile);
  }
  if (ptrace(PTRACE_SEIZE, pid, nullptr, kPtraceOptions) != 0) {
    const int e = errno;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    // Traced ourselves (`rdmaproxy run` inside `rdmaproxy run`, or under strace/gdb): the
    // outer tracer is what refuses (the harness refuses ptrace to its own programs).
    if (const pid_t tracer = TracerOfSelf(); tracer > 0)
      return Fail(e, "cannot trace the child (PTRACE_SEIZE: {}): this process is itself traced "
                     "(by pid {}: a debugger, strace, or an outer `rdmaproxy run`), and a "
                     "traced program cannot trace others here",
                  std::strerror(e), tracer);
    return Fail(e, "cannot trace the child (PTRACE_SEIZE: {}); is ptrace restricted "
                   "(kernel.yama.ptrace_scope >= 2, a container seccomp profile)?",
                std::strerror(e));
  }
  // The program runs as this process's user, so the kernel's ptrace access check lets it
  // attach this process (where Yama's ptrace_scope is 0), write its memory (process_vm_writev,
  // /proc/<pid>/mem) and take its descriptors (pidfd_getfd, /proc/<pid>/fd): the policy with
  // them. A process that is not dumpable fails that check for any caller without
  // CAP_SYS_PTRACE (__ptrace_may_access()). Not before the fork: the child's copy would be
  // undumpable too, and could not be seized.
  if (prctl(PR_SET_DUMPABLE, 0) != 0) {
    const int e = errno;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return Fail(e, "prctl(PR_SET_DUMPABLE, 0): {}", std::strerror(e));
  }
  char byte = 'g';
  if (write(go_write.get(), &byte, 1) != 1) {
    const int e = errno;
    kill(pid, SIGKILL);
    return Fail(e, "cannot start the child: {}", std::strerror(e));
  }
  go_write.reset();
  // EOF means the exec happened (close-on-exec closed the pipe before the exec event stop,
  // begin_new_exec -> do_close_on_exec); a record means it did not.
  Launched launched;
  launched.pid = pid;
  ChildFailure failure{};
  ssize_t got;
  do {
    got = read(err_read.get(), &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    launched.exec_error =
        failure.stage == 'f'
            ? Fail(failure.errnum, "cannot install the seccomp filter: {}",
                   std::strerror(failure.errnum))
            : Fail(failure.errnum, "cannot execute {}: {}", program,
                   std::strerror(failure.errnum));
  }
  return launched;
}

}  // namespace rxp::harness
