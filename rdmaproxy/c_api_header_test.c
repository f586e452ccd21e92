/* The C API header as a C program sees it (compiled as C11 with the project's warnings):
 * types, constants and a round trip through the config entry points. */
#include <errno.h>
#include <stddef.h>

#include "rdmaproxy/rdmaproxy.h"

int rxp_c_header_smoke(void);

int rxp_c_header_smoke(void) {
  rxp_config *config = NULL;
  struct rxp_stats stats = {0};
  struct rxp_fd_target target = {NULL, -1, RXP_FILE_DMA_BUF};
  struct rxp_device_info info = {{0}, {0}, {0}, 0, 0, 0};
  struct rxp_sysfs_statbuf st = {0, 0, 0};
  rxp_sysfs *sysfs = NULL;
  (void)stats;
  (void)target;
  if (rxp_api_version() != RXP_API_VERSION) return 1;
  if (rxp_config_create(&config) != 0) return 2;
  if (rxp_config_set_quota(config, "mrs", 8) != 0) return 3;
  if (rxp_config_set_quota(config, "nonsense", 8) != -EINVAL) return 4;
  if (rxp_last_error()[0] == '\0') return 5;
  if (rxp_config_destroy(config) != 0) return 6;
  if (rxp_config_destroy(config) != -EINVAL) return 7;
  if (rxp_sentry_device(NULL, 0, &info) != -EINVAL) return 8;
  if (rxp_sysfs_create(NULL, "{}", &sysfs) != -EINVAL || sysfs != NULL) return 9;
  if (rxp_sysfs_stat(sysfs, "/sys", 1, &st) != -EINVAL) return 10;
  if (RXP_SYSFS_HOST == RXP_SYSFS_SYNTHESIZED) return 11;
  return 0;
}
