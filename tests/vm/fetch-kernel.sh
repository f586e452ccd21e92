#!/usr/bin/env bash
# fetch-kernel.sh SERIES OUTDIR
#
# Downloads Debian's own kernel image package for SERIES (e.g. 6.12, 6.1) with
# `apt-get download`, unpacks it into OUTDIR/root and generates modules.dep (the package ships
# none). Writes OUTDIR/kernel.env (KVER, VMLINUZ, MODDIR) last, so a present kernel.env means
# a complete cache: a second run with the same package version does nothing.
set -euo pipefail

series=${1:?usage: fetch-kernel.sh SERIES OUTDIR}
out=${2:?usage: fetch-kernel.sh SERIES OUTDIR}
mkdir -p "$out"

# The image package that a meta package depends on, e.g. linux-image-6.12.117+deb12-amd64.
image_of_meta() {
  apt-cache depends "$1" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | sed -n 1p
}

resolve() {
  local pkg
  pkg=$(image_of_meta "linux-image-${series}-amd64")
  if [[ -z "$pkg" ]]; then
    # Debian 12's default kernel (6.1) has no series meta package; linux-image-amd64 is it.
    pkg=$(image_of_meta linux-image-amd64)
    [[ "$pkg" == linux-image-"${series}".* ]] || pkg=""
  fi
  echo "$pkg"
}

pkg=$(resolve)
if [[ -z "$pkg" ]]; then
  # A fresh machine may have empty apt lists: refresh once (needs root) and retry.
  if [[ $(id -u) -eq 0 ]]; then
    apt-get update -q >&2
    pkg=$(resolve)
  fi
fi
if [[ -z "$pkg" ]]; then
  echo "fetch-kernel: no Debian kernel package found for series $series" \
       "(apt-cache depends linux-image-${series}-amd64 / linux-image-amd64)" >&2
  exit 1
fi
kver=${pkg#linux-image-}

if [[ -f "$out/kernel.env" ]] && grep -qx "KVER=$kver" "$out/kernel.env"; then
  exit 0  # cached
fi

rm -rf "$out/root" "$out/kernel.env" "$out"/*.deb
echo "fetch-kernel: downloading $pkg" >&2
# APT::Sandbox::User=root: the build tree need not be writable by the _apt user.
(cd "$out" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2)
deb=$(ls "$out"/*.deb)
dpkg-deb -x "$deb" "$out/root"
rm -f "$deb"

vmlinuz="$out/root/boot/vmlinuz-$kver"
moddir="$out/root/lib/modules/$kver"
[[ -f "$vmlinuz" && -d "$moddir" ]] || { echo "fetch-kernel: $pkg has no kernel or modules" >&2; exit 1; }
depmod -b "$out/root" "$kver"

cat > "$out/kernel.env.tmp" <<ENV
KVER=$kver
VMLINUZ=$vmlinuz
MODDIR=$moddir
ENV
mv "$out/kernel.env.tmp" "$out/kernel.env"
