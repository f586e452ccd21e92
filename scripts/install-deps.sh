#!/usr/bin/env bash
# Installs every Debian package rdmaproxy needs to build, test and run its VM test bed.
# Idempotent: when everything is already installed it does nothing (no apt-get update).
# Both README commands call it. Debian 12 (bookworm) packages only.
set -euo pipefail

# Build and link.
build_pkgs=(
  build-essential cmake ninja-build pkg-config git
  libibverbs-dev ibverbs-providers librdmacm-dev rdma-core
  libseccomp-dev libfmt-dev catch2 nlohmann-json3-dev libcli11-dev
  clang libclang-rt-14-dev   # libFuzzer + sanitizer runtimes for clang
)
# The soft-RoCE VM test bed and the programs the conformance suite runs inside it.
test_pkgs=(
  qemu-system-x86 busybox-static cpio kmod xz-utils
  ibverbs-utils perftest rdmacm-utils iproute2 hwloc
  python3   # sysfs fixture generator and oracles (tests/data/sysfs, tests/sysfs)
  python3-pyverbs   # rdma-core's own Python tests (conformance case rdma_core_tests)
  qperf ucx-utils libfabric-bin   # third-party verbs programs (cases qperf, ucx_perftest, libfabric)
  infiniband-diags   # ibstat: libibumad's view of /sys (case ibstat)
  procps util-linux coreutils
)

missing=()
for p in "${build_pkgs[@]}" "${test_pkgs[@]}"; do
  # dpkg-query prints "install ok installed" only for a fully installed package.
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#build_pkgs[@]}+${#test_pkgs[@]} packages present"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or install them with apt-get) and try again" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
