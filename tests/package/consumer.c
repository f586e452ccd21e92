/* A C program built against the installed rdmaproxy package (find_package or pkg-config):
 * the C API end to end, without a real RDMA device: a sentry whose "uverbs0" is /dev/null. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include <rdmaproxy/rdmaproxy.h>

static unsigned char memory[4096];

static int read_memory(void *app, uint64_t address, void *buffer, size_t length) {
  (void)app;
  if (address < 4096 || address - 4096 + length > sizeof(memory)) return -EFAULT;
  memcpy(buffer, memory + (address - 4096), length);
  return 0;
}
static int write_memory(void *app, uint64_t address, const void *buffer, size_t length) {
  (void)app;
  if (address < 4096 || address - 4096 + length > sizeof(memory)) return -EFAULT;
  memcpy(memory + (address - 4096), buffer, length);
  return 0;
}
static int host_address(void *app, uint64_t address, uint64_t length, uint64_t *host) {
  (void)app;
  (void)length;
  *host = (uint64_t)(uintptr_t)memory + (address - 4096);
  return 0;
}
static int resolve_fd(void *app, int app_fd, struct rxp_fd_target *target) {
  (void)app;
  (void)app_fd;
  (void)target;
  return -EBADF;
}
static int install_fd(void *app, rxp_file *file) {
  (void)app;
  (void)file;
  return -EMFILE;
}

#define CHECK(expr)                                                          \
  do {                                                                       \
    if (!(expr)) {                                                           \
      fprintf(stderr, "consumer-c: %s failed (%s)\n", #expr, rxp_last_error()); \
      return 1;                                                              \
    }                                                                        \
  } while (0)

int main(void) {
  const struct rxp_app_ops ops = {sizeof(ops), read_memory, write_memory, host_address,
                                  resolve_fd, install_fd};
  rxp_config *config = NULL;
  rxp_sentry *sentry = NULL;
  rxp_file *file = NULL;
  struct rxp_stats stats;
  CHECK(rxp_api_version() == RXP_API_VERSION);
  CHECK(rxp_config_create(&config) == 0);
  CHECK(rxp_config_set_app_ops(config, &ops) == 0);
  CHECK(rxp_config_add_device(config, "uverbs0", "/dev/null", 0) == 0);
  CHECK(rxp_config_set_quota(config, "pinned_bytes", 1u << 20) == 0);
  CHECK(rxp_config_set_quota(config, "no_such_quota", 1) == -EINVAL);
  CHECK(rxp_sentry_create(config, &sentry) == 0);
  CHECK(rxp_config_destroy(config) == 0);
  CHECK(rxp_open(sentry, "/dev/infiniband/uverbs9", O_RDWR, &file) == -ENOENT);
  CHECK(rxp_open(sentry, "/dev/infiniband/uverbs0", O_RDWR, &file) == 0);
  CHECK(rxp_file_kind(file) == RXP_FILE_UVERBS);
  /* A truncated ioctl is refused by the proxy, with a reason, and never forwarded. */
  CHECK(rxp_ioctl(file, NULL, 0xc0181b01ul /* RDMA_VERBS_IOCTL */, 4096 + 4090) == -EFAULT);
  CHECK(strstr(rxp_last_error(), "EFAULT") != NULL);
  CHECK(rxp_sentry_stats(sentry, &stats) == 0);
  CHECK(stats.forwarded == 0 && stats.refused_decode == 1);
  CHECK(rxp_close(file) == 0);
  CHECK(rxp_close(file) == -EBADF);
  /* The app's /sys: an empty host snapshot gives a /sys without RDMA devices, and this
   * sentry's "uverbs0" (/dev/null) is not in it. */
  {
    rxp_sysfs *sys = NULL;
    struct rxp_sysfs_statbuf st;
    CHECK(rxp_sysfs_create(sentry, "{\"schema\": \"rdmaproxy-sysfs-snapshot\", \"version\": 1}", &sys) == -ENODEV);
    CHECK(strstr(rxp_last_error(), "uverbs0") != NULL);
    CHECK(rxp_sysfs_create(sentry, "not json", &sys) == -EINVAL);
    CHECK(rxp_sysfs_stat(sys, "/sys", 1, &st) == -EINVAL);
  }
  CHECK(rxp_sentry_destroy(sentry) == 0);
  printf("consumer-c: ok\n");
  return 0;
}
