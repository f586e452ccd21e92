// rxp_sentry_cm_netns DST_IPV4 [NETNS_PATH]: through the C API in sentry mode, creates an
// rdma_cm id and resolves DST_IPV4 with it, with rxp_config_set_rdma_cm_netns(NETNS_PATH) when
// given, then destroys the id. Prints one line:
//   resolve: ok, event ADDR_RESOLVED       (the address resolved in the id's namespace)
//   resolve: ENETUNREACH                   (no route there), or another errno / event
// tests/vm/cases/sentry_cm_netns.sh runs it from namespaces with and without a route to node1.
#include <arpa/inet.h>
#include <fcntl.h>
#include <rdma/rdma_user_cm.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include "tests/bench/sentry_bench_app.h"

namespace {

using rxp_bench::App;
using rxp_bench::Die;

// One rdma_cm command at the start of the app's memory: header, body, response after them.
template <typename Body>
long Command(rxp_file* file, App& app, uint32_t cmd, Body body, uint16_t out_size) {
  rdma_ucm_cmd_hdr header{cmd, static_cast<uint16_t>(sizeof(Body)), out_size};
  std::memcpy(app.host, &header, sizeof(header));
  std::memcpy(app.host + sizeof(header), &body, sizeof(body));
  return rxp_write(file, &app, reinterpret_cast<uint64_t>(app.app),
                   sizeof(header) + sizeof(body));
}

// The response area (an app address, and where the library writes it in the host view).
constexpr size_t kResponse = 4096;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rxp_sentry_cm_netns DST_IPV4 [NETNS_PATH]\n");
    return 2;
  }
  in_addr dst{};
  if (inet_pton(AF_INET, argv[1], &dst) != 1) Die("destination address", -EINVAL);
  App app;
  rxp_config* config = nullptr;
  const rxp_app_ops ops = App::Ops();
  if (int r = rxp_config_create(&config); r) Die("config", r);
  if (int r = rxp_config_set_app_ops(config, &ops); r) Die("config", r);
  if (argc > 2)
    if (int r = rxp_config_set_rdma_cm_netns(config, argv[2]); r) Die("rdma_cm netns", r);
  rxp_sentry* sentry = nullptr;
  if (int r = rxp_sentry_create(config, &sentry); r) Die("sentry", r);
  rxp_config_destroy(config);
  rxp_file* file = nullptr;
  if (int r = rxp_open(sentry, "/dev/infiniband/rdma_cm", O_RDWR, &file); r) Die("open", r);

  const uint64_t response = reinterpret_cast<uint64_t>(app.app) + kResponse;
  rdma_ucm_create_id create{};
  create.uid = 1;
  create.response = response;
  create.ps = RDMA_PS_TCP;
  create.qp_type = 2;  // IB_QPT_RC
  if (long r = Command(file, app, RDMA_USER_CM_CMD_CREATE_ID, create,
                       sizeof(rdma_ucm_create_id_resp));
      r < 0)
    Die("CREATE_ID", r);
  uint32_t id;
  std::memcpy(&id, app.host + kResponse, sizeof(id));

  rdma_ucm_resolve_addr resolve{};
  resolve.id = id;
  resolve.timeout_ms = 10000;  // an ARP on a loaded emulated guest; the refusals are synchronous
  resolve.dst_size = sizeof(sockaddr_in);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(7999);
  sin.sin_addr = dst;
  std::memcpy(&resolve.dst_addr, &sin, sizeof(sin));
  const long resolved = Command(file, app, RDMA_USER_CM_CMD_RESOLVE_ADDR, resolve, 0);
  std::string outcome;
  if (resolved < 0) {
    outcome = strerrorname_np(static_cast<int>(-resolved));
  } else {
    rdma_ucm_get_event get{};
    get.response = response;
    if (long r = Command(file, app, RDMA_USER_CM_CMD_GET_EVENT, get, sizeof(rdma_ucm_event_resp));
        r < 0)
      Die("GET_EVENT", r);
    rdma_ucm_event_resp event{};
    std::memcpy(&event, app.host + kResponse, sizeof(event));
    // enum rdma_cm_event_type: ADDR_RESOLVED 0, ADDR_ERROR 1.
    outcome = event.event == 0   ? "ok, event ADDR_RESOLVED"
              : event.event == 1 ? "event ADDR_ERROR, status " + std::to_string(event.status)
                                 : "event " + std::to_string(event.event);
  }
  rdma_ucm_destroy_id destroy{};
  destroy.response = response;
  destroy.id = id;
  if (long r = Command(file, app, RDMA_USER_CM_CMD_DESTROY_ID, destroy,
                       sizeof(rdma_ucm_destroy_id_resp));
      r < 0)
    Die("DESTROY_ID", r);
  rxp_close(file);
  rxp_sentry_destroy(sentry);
  std::printf("resolve: %s\n", outcome.c_str());
  return 0;
}
