/*
 * rdmaproxy C API: the library in "sentry mode", for sandbox runtimes written in C, Rust, Go
 * or anything with a C FFI. The library holds the host RDMA device files and issues the
 * syscalls itself; the runtime keeps its own memory manager and fd table and reaches them
 * through the callbacks in struct rxp_app_ops. docs/embedding.md has the rules (ownership,
 * threading, mmap, fds) and a complete example.
 *
 * Conventions:
 *  - every function returns 0 (or a count, an fd, ...) on success and -errno on failure;
 *    rxp_last_error() then gives a one-line reason, valid until the thread's next call;
 *  - handles are opaque tokens, never reused: a destroyed or closed handle, NULL or a made-up
 *    value is reported (-EINVAL for configs, sentries and sysfs handles, -EBADF for files),
 *    never crashes;
 *  - no C++ type or exception crosses this header; every function may be called from any
 *    thread.
 */
#ifndef RDMAPROXY_RDMAPROXY_H_
#define RDMAPROXY_RDMAPROXY_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: rxp_config_set_rdma_cm_netns. */
#define RXP_API_VERSION 2

typedef struct rxp_config rxp_config; /* what a sentry is made from */
typedef struct rxp_sentry rxp_sentry; /* one sandbox: policy, quotas, counters */
typedef struct rxp_file rxp_file;     /* one open file of the app the library serves */

/* What a file is (rxp_file_kind) or what a host fd the runtime hands over is. */
enum rxp_file_kind {
  RXP_FILE_OTHER = 0,        /* not an RDMA file */
  RXP_FILE_UVERBS = 1,       /* /dev/infiniband/uverbsN */
  RXP_FILE_RDMA_CM = 2,      /* /dev/infiniband/rdma_cm */
  RXP_FILE_ASYNC_EVENT = 3,  /* a uverbs context's async event fd */
  RXP_FILE_COMP_CHANNEL = 4, /* a completion channel */
  RXP_FILE_DMA_BUF = 5,      /* a dma-buf exported by a GPU driver */
};

/* What an app fd stands for (filled by rxp_app_ops.resolve_fd). */
struct rxp_fd_target {
  rxp_file *file; /* a file of this library the app fd refers to, or NULL and: */
  int host_fd;    /* a host fd of another kind, valid for the call (-1: none) */
  int kind;       /* enum rxp_file_kind of host_fd (RXP_FILE_OTHER, RXP_FILE_DMA_BUF) */
};

/*
 * The runtime's side. `app` is the pointer the runtime passed to the call being served (its
 * task or process). Each callback returns 0 or -errno unless said otherwise.
 */
struct rxp_app_ops {
  size_t size; /* sizeof(struct rxp_app_ops) */
  /* Copy `length` bytes of app memory at `address` to / from `buffer`; -EFAULT if any byte
   * is not mapped (not writable, for write_memory). */
  int (*read_memory)(void *app, uint64_t address, void *buffer, size_t length);
  int (*write_memory)(void *app, uint64_t address, const void *buffer, size_t length);
  /* The address in this process where the host kernel can use (pin for DMA, write) the same
   * pages as app range [address, address + length): the runtime's mirror of app memory.
   * -EFAULT if the range is not backed by one contiguous mirror. */
  int (*host_address)(void *app, uint64_t address, uint64_t length, uint64_t *host_address);
  /* What app fd `app_fd` is; -EBADF if the app has no such fd. */
  int (*resolve_fd)(void *app, int app_fd, struct rxp_fd_target *target);
  /* Install `file` (a new async event fd or completion channel the kernel created) as a new
   * fd of the app. Returns the app's fd number (>= 0) or -errno. On success the runtime owns
   * the handle and calls rxp_close when the app closes the fd; on failure the library closes
   * it and the command fails with that -errno (the app's copy of the fd reads -1). */
  int (*install_fd)(void *app, rxp_file *file);
};

/* Counters of a sentry (rxp_sentry_stats). */
struct rxp_stats {
  uint64_t commands;       /* writes, ioctls and mmaps the app issued on its RDMA files, and
                            * reads refused (a file opened without read access) */
  uint64_t forwarded;      /* handed to the host kernel */
  uint64_t refused_decode; /* malformed */
  uint64_t refused_policy; /* denied by the policy */
  uint64_t refused_quota;  /* over a sandbox quota */
  uint64_t refused_state;  /* bad handle, wrong fd, unknown mmap offset, unreadable memory */
  uint64_t kernel_errors;  /* forwarded and failed in the kernel */
  uint64_t mmaps;          /* device mappings granted */
  uint64_t pinned_bytes;   /* pinned by the sandbox now: whole pages, as the memlock limit counts */
};

typedef void (*rxp_line_sink)(void *context, const char *line);

/* The reason of this thread's last failed call ("" if none). */
const char *rxp_last_error(void);
/* RXP_API_VERSION of the library actually linked. */
int rxp_api_version(void);

/* ---- configuration ---------------------------------------------------------------------- */

int rxp_config_create(rxp_config **config);
int rxp_config_destroy(rxp_config *config);
/* The app's callbacks (required before rxp_sentry_create); ops->size must be set. */
int rxp_config_set_app_ops(rxp_config *config, const struct rxp_app_ops *ops);
/* Adds a device the app sees as /dev/infiniband/<sandbox_name>, served by host device file
 * `host_path`. driver_id: its enum rdma_driver_id, or -1 to ask the kernel (NETLINK_RDMA). */
int rxp_config_add_device(rxp_config *config, const char *sandbox_name, const char *host_path,
                          int64_t driver_id);
/* Adds host devices by name, as `rdmaproxy run --devices`: "rxe0,uverbs1=mlx5_2"; "" adds
 * every host device. -ENODEV names a device the host does not have. */
int rxp_config_select_devices(rxp_config *config, const char *spec);
/* Serve /dev/infiniband/rdma_cm (default on). */
int rxp_config_set_rdma_cm(rxp_config *config, int enabled);
/* The sandbox's network namespace for rdma_cm, as an absolute path (/proc/<pid>/ns/net,
 * /run/netns/NAME): every rdma_cm id is created from a library thread in that namespace, so the
 * app's addresses bind and resolve there (the kernel takes the creating thread's namespace).
 * NULL or "": the namespace of the thread calling rxp_write. Checked by rxp_sentry_create:
 * the errno of open(2), -EINVAL if it is not a network namespace, -EPERM without
 * CAP_SYS_ADMIN over it. */
int rxp_config_set_rdma_cm_netns(rxp_config *config, const char *path);
/* The policy (docs/user-guide.md#policy) from JSON text or a file; replaces the default or the
 * policy set before, its quotas too, but not quotas set one by one (rxp_config_set_quota). */
int rxp_config_set_policy_json(rxp_config *config, const char *json);
int rxp_config_load_policy(rxp_config *config, const char *path);
/* One quota by its policy-file name: "pinned_bytes", "qps", "cqs", "mrs", "pds", "srqs",
 * "ahs", "mws", "wqs", "contexts", "dms", "uars". Applies on top of the policy set before or after. */
int rxp_config_set_quota(rxp_config *config, const char *name, uint64_t value);
/* Where denials (one line each) and traces (one line per command) go; NULL sink: log to
 * stderr, no trace. Control bytes in a line (and in rxp_last_error) are written \xNN. */
int rxp_config_set_log(rxp_config *config, rxp_line_sink sink, void *context);
int rxp_config_set_trace(rxp_config *config, rxp_line_sink sink, void *context);

/* ---- sentry ----------------------------------------------------------------------------- */

/* A sentry from a complete config (the config may be destroyed afterwards). */
int rxp_sentry_create(const rxp_config *config, rxp_sentry **sentry);
/* Ends the handle. Open files stay valid until closed. */
int rxp_sentry_destroy(rxp_sentry *sentry);
int rxp_sentry_stats(rxp_sentry *sentry, struct rxp_stats *stats);

/* A device of a sentry, for the runtime to create the app's /dev/infiniband node: a
 * character device with the host node's number (dev_major, dev_minor) named sandbox_name. */
struct rxp_device_info {
  char sandbox_name[64]; /* "uverbs0": the app opens /dev/infiniband/<sandbox_name> */
  char host_path[256];   /* "/dev/infiniband/uverbs3" */
  char ibdev[64];        /* "rxe1"; "" when added with an explicit driver id */
  uint32_t driver_id;    /* enum rdma_driver_id */
  uint32_t dev_major;    /* st_rdev of host_path */
  uint32_t dev_minor;
};
/* The sentry's index-th device (in configuration order); -ENOENT past the last one, -ENODEV
 * for one whose host node is missing or not a character device (the reason says which). */
int rxp_sentry_device(rxp_sentry *sentry, unsigned index, struct rxp_device_info *info);

/* ---- files: one entry point per file operation the app makes ----------------------------- */

/* open(2) of a canonical sandbox path: /dev/infiniband/<device>, /dev/infiniband/rdma_cm (the
 * runtime resolves the app's path first: "//dev/infiniband/uverbs0" is -ENOENT here).
 * `flags` as open(2) (O_RDWR, O_NONBLOCK). -ENOENT for a device the sandbox does not have;
 * then, as open(2) on a character device, -ENOTDIR with O_DIRECTORY and -EEXIST with
 * O_CREAT | O_EXCL; -EINVAL with O_PATH (a path-only fd is the runtime's to answer). */
int rxp_open(rxp_sentry *sentry, const char *path, int flags, rxp_file **file);
/* Another handle to the same open file (dup(2), fork). */
int rxp_file_dup(rxp_file *file, rxp_file **copy);
/* Ends one handle; the host file closes with the last handle (its RDMA objects with it). */
int rxp_close(rxp_file *file);
/* enum rxp_file_kind, or -EBADF. */
int rxp_file_kind(rxp_file *file);
/* The host fd, to wait on with the runtime's own poller; never read or write it. */
int rxp_file_host_fd(rxp_file *file);

/* ioctl(2), write(2), read(2) of the app: what the app's syscall returns (>= 0 or -errno).
 * `arg` / `buffer` are app addresses, reached through rxp_app_ops. A write of a file not
 * opened for writing (O_RDONLY; every async event fd and completion channel) and a read of
 * one not opened for reading are -EBADF, as vfs_write()/vfs_read() answer first. */
long rxp_ioctl(rxp_file *file, void *app, unsigned long request, uint64_t arg);
long rxp_write(rxp_file *file, void *app, uint64_t buffer, uint64_t length);
long rxp_read(rxp_file *file, void *app, uint64_t buffer, uint64_t length);
/* poll(2) without waiting: the ready events among `events` in *revents. */
int rxp_poll(rxp_file *file, short events, short *revents);
/* fcntl(F_SETFL) O_NONBLOCK of the app's file: sets it on the host file, the open file
 * description behind rxp_file_host_fd() (a dup of that fd shares it; F_GETFL of it tells). */
int rxp_set_nonblocking(rxp_file *file, int nonblocking);

/* mmap(2) of a uverbs file (queues, doorbells, UAR pages), one of two ways:
 *  - rxp_mmap maps the pages into this process (MAP_SHARED or MAP_SHARED_VALIDATE; MAP_FIXED
 *    is -EINVAL: the library picks the address) and returns where;
 *  - rxp_mmap_prepare checks the offset and gives the host fd to map from (at `offset`) into
 *    the app's address space by the runtime's own means; then rxp_mmap_commit, which is
 *    -EINVAL for an offset no rxp_mmap_prepare passed or one committed already (and -ENODEV
 *    on a file that cannot be mapped, as rxp_mmap_prepare).
 * Offsets the driver never handed out, or handed out once and already mapped, are refused. */
int rxp_mmap(rxp_file *file, uint64_t length, int prot, int flags, uint64_t offset,
             void **address);
int rxp_mmap_prepare(rxp_file *file, uint64_t offset, uint64_t length, int prot, int *host_fd);
int rxp_mmap_commit(rxp_file *file, uint64_t offset);

/* ---- the app's /sys ---------------------------------------------------------------------- */

/*
 * A synthesized /sys for the app (docs/sysfs.md): a host snapshot -- the JSON text
 * `rdmaproxy sysfs snapshot` writes -- narrowed to the sentry's devices, each uverbs node under
 * its sandbox name, with the PCI ancestry, NUMA nodes, GPUs and peer-memory markers of the
 * host. rdma-core, hwloc and NCCL discover the sandbox's devices from it. Paths are absolute
 * and start with /sys; errors are the kernel's (-ENOENT, -ENOTDIR, -EISDIR, -EINVAL, -ELOOP,
 * -ENAMETOOLONG). A path the tree does not describe is hidden (-ENOENT), except below the few
 * passthrough points (/sys/devices/system/cpu, ...) that the runtime serves from the host's
 * /sys: rxp_sysfs_resolve says which, and the other calls answer -EXDEV for them.
 * Immutable once made: every call may run concurrently.
 */
typedef struct rxp_sysfs rxp_sysfs;

/* -ENODEV: a device of the sentry the snapshot does not describe. A malformed snapshot: the
 * reason names the field; -EINVAL for text that is not the schema's JSON or a field of the
 * wrong type or value, else the errno of the rule it breaks: -EPROTONOSUPPORT (version),
 * -EEXIST (named twice), -ENOENT (names what it lacks), -ERANGE, -E2BIG, -ENAMETOOLONG,
 * -ELOOP (docs/embedding.md). */
int rxp_sysfs_create(rxp_sentry *sentry, const char *snapshot_json, rxp_sysfs **sysfs);
int rxp_sysfs_destroy(rxp_sysfs *sysfs);

enum rxp_sysfs_source {
  RXP_SYSFS_SYNTHESIZED = 0, /* served by the calls below */
  RXP_SYSFS_HOST = 1,        /* the host's file at host_path: the runtime serves it */
};
/* Where `path` leads (`follow`: through a final symlink): an enum rxp_sysfs_source, or
 * -errno. For RXP_SYSFS_HOST the host path is written to host_path (NUL-terminated;
 * -ENAMETOOLONG if host_path_size is too small). Below a passthrough point the path is walked
 * on the host's /sys component by component, as one tree: a ".." or a host symlink that
 * leaves the passthrough directory goes on in the synthesized tree (so
 * /sys/devices/system/cpu/../../../class/infiniband is the synthesized directory, and nothing
 * outside a passthrough directory or hidden by the tree is ever a host path). host_path then
 * has no symlink in it but, without `follow`, its last component; the runtime opens it with
 * O_NOFOLLOW and sends what a link names back through rxp_sysfs_resolve. The calls below
 * resolve a path that leaves a passthrough point the same way, and answer -EXDEV only where
 * it ends on the host. */
int rxp_sysfs_resolve(rxp_sysfs *sysfs, const char *path, int follow, char *host_path,
                      size_t host_path_size);

struct rxp_sysfs_statbuf {
  uint32_t mode; /* st_mode: S_IFDIR / S_IFREG / S_IFLNK and permissions */
  uint64_t size; /* 4096 for attributes, as sysfs reports */
  uint64_t ino;  /* stable for the rxp_sysfs's lifetime */
};
/* stat(2) (follow != 0) or lstat(2). */
int rxp_sysfs_stat(rxp_sysfs *sysfs, const char *path, int follow, struct rxp_sysfs_statbuf *st);
/* readlink(2): the target's length (no NUL written; truncated to `size` as readlink does;
 * -EINVAL for a size of 0, as readlink's). */
long rxp_sysfs_readlink(rxp_sysfs *sysfs, const char *path, char *buffer, size_t size);
/* pread(2) of an attribute: bytes copied, 0 at or past its end. */
long rxp_sysfs_read(rxp_sysfs *sysfs, const char *path, uint64_t offset, void *buffer,
                    size_t size);
/* readdir without "." and "..": `entry` once per name, in a stable order; a nonzero return
 * from `entry` stops the walk and is returned. `type` is S_IFDIR, S_IFREG or S_IFLNK. */
typedef int (*rxp_sysfs_dirent)(void *context, const char *name, uint32_t type, uint64_t ino);
int rxp_sysfs_readdir(rxp_sysfs *sysfs, const char *path, rxp_sysfs_dirent entry,
                      void *context);
/* Writes the tree under `dir` (absent or empty; nothing is written outside it), for a
 * runtime that bind-mounts it on the app's /sys. Passthrough points are empty directories:
 * mount points for the host's own. */
int rxp_sysfs_materialize(rxp_sysfs *sysfs, const char *dir);

#ifdef __cplusplus
}
#endif

#endif /* RDMAPROXY_RDMAPROXY_H_ */
