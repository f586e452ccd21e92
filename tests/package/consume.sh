#!/bin/bash
# consume.sh BUILD_DIR: installs the build into a temporary prefix and builds programs outside
# the tree against it -- with find_package(rdmaproxy) (shared and static library, C and C++)
# and with pkg-config -- then runs them; then builds the Debian packages and checks their
# contents. The installed-package consumer test of issue 6.
set -euo pipefail
build=$(cd "${1:?usage: consume.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== cmake --install into $tmp/prefix"
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -x "$tmp/prefix/bin/rdmaproxy"
"$tmp/prefix/bin/rdmaproxy" --version

echo "== find_package(rdmaproxy): C, C (static), C++"
cmake -S "$here" -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DCMAKE_BUILD_RPATH="$tmp/prefix/lib" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer_c"
"$tmp/consumer/consumer_c_static"
"$tmp/consumer/consumer_cxx"
# The static build carries no dependency on librdmaproxy.so.
if grep -q librdmaproxy <<<"$(ldd "$tmp/consumer/consumer_c_static")"; then
  echo "consumer_c_static links librdmaproxy.so" >&2
  exit 1
fi

echo "== pkg-config: C, shared and static"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
pkg-config --modversion rdmaproxy
cc -std=c11 -Wall -Wextra -Werror "$here/consumer.c" -o "$tmp/pc_shared" \
   $(pkg-config --cflags --libs rdmaproxy) -Wl,-rpath,"$tmp/prefix/lib"
"$tmp/pc_shared"
cc -std=c11 -Wall -Wextra -Werror "$here/consumer.c" -o "$tmp/pc_static" \
   $(pkg-config --cflags rdmaproxy) "$tmp/prefix/lib/librdmaproxy.a" \
   $(pkg-config --static --libs-only-l --libs-only-other rdmaproxy | sed 's/-lrdmaproxy//')
"$tmp/pc_static"

echo "== cpack: Debian packages"
(cd "$build" && cpack -G DEB -B "$tmp/deb" >/dev/null)
runtime=$(ls "$tmp"/deb/rdmaproxy_*.deb)
dev=$(ls "$tmp"/deb/rdmaproxy-dev_*.deb)
dpkg-deb -f "$runtime" Package Version Depends
dpkg-deb -f "$dev" Package Depends
dpkg-deb -c "$runtime" >"$tmp/runtime.list"
dpkg-deb -c "$dev" >"$tmp/dev.list"
expect() {  # expect LIST PATTERN: the package lists a path matching PATTERN
  grep -qE -- "$2" "$1" || { echo "consume: no $2 in $(basename "$1" .list) package" >&2; exit 1; }
}
expect "$tmp/runtime.list" ' \./usr/bin/rdmaproxy$'
expect "$tmp/runtime.list" '/librdmaproxy\.so\.0'
expect "$tmp/dev.list" '/include/rdmaproxy/rdmaproxy/rdmaproxy\.h$'
expect "$tmp/dev.list" '/include/rdmaproxy/rdmaproxy/sentry\.h$'
expect "$tmp/dev.list" '/include/rdmaproxy/sysfs/vfs\.h$'
expect "$tmp/dev.list" '/librdmaproxy\.a$'
expect "$tmp/dev.list" '/cmake/rdmaproxy/rdmaproxyConfig\.cmake$'
expect "$tmp/dev.list" '/pkgconfig/rdmaproxy\.pc$'
if grep -qE 'testing/|c_handles\.h|c_api_internal\.h' "$tmp/dev.list"; then
  echo "consume: test helpers or internal headers in the dev package" >&2
  exit 1
fi
[[ $(dpkg-deb -f "$runtime" Depends) == *libfmt* ]]
echo "consume: ok ($(basename "$runtime"), $(basename "$dev"))"
