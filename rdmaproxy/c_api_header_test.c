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
  (void)stats;
  (void)target;
  if (rxp_api_version() != RXP_API_VERSION) return 1;
  if (rxp_config_create(&config) != 0) return 2;
  if (rxp_config_set_quota(config, "mrs", 8) != 0) return 3;
  if (rxp_config_set_quota(config, "nonsense", 8) != -EINVAL) return 4;
  if (rxp_last_error()[0] == '\0') return 5;
  if (rxp_config_destroy(config) != 0) return 6;
  if (rxp_config_destroy(config) != -EINVAL) return 7;
  return 0;
}
