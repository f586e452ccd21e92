// A C++ program built against the installed rdmaproxy package: the C++ API (Sentry, policy,
// counters) through find_package(rdmaproxy) and rdmaproxy::rdmaproxy.
#include <fcntl.h>

#include <cstdio>
#include <rdmaproxy/policy.h>
#include <rdmaproxy/sentry.h>

int main() {
  auto policy = rxp::proxy::PolicyConfig::FromJson(
      R"({"version": 1, "quotas": {"qps": 8, "pinned_bytes": "64MiB"}})");
  if (!policy) {
    std::fprintf(stderr, "consumer-cxx: policy: %s\n", policy.error().ToString().c_str());
    return 1;
  }
  rxp::proxy::SentryConfig config;
  config.policy = *policy;
  config.devices.push_back({"uverbs0", "/dev/null", 0, "null"});
  config.log = [](std::string_view) {};
  auto sentry = rxp::proxy::Sentry::Create(std::move(config));
  if (!sentry) return 2;
  auto missing = (*sentry)->Open("/dev/infiniband/uverbs1", O_RDWR);
  if (missing || missing.error().errnum != ENOENT) return 3;
  auto file = (*sentry)->Open("/dev/infiniband/uverbs0", O_RDWR);
  if (!file || (*file)->kind() != rxp::proxy::FileKind::kUverbs) return 4;
  if ((*sentry)->engine().policy().quotas.qps != 8u) return 5;
  std::printf("consumer-cxx: ok (%s)\n", (*file)->label().c_str());
  return 0;
}
