#!/bin/busybox sh
# /init of the test-bed initramfs (busybox only). It loads the kernel modules shipped in the
# initramfs, mounts the host's root read-only over 9p under a tmpfs overlay (so the guest can
# write anywhere without touching the host and still sees the host's /tmp, where a build tree
# may live), mounts the writable results share at its host path, and hands over to the agent
# with chroot. Parameters come from the kernel command line: rxp.agent=, rxp.share=.
/bin/busybox --install -s /bin
export PATH=/bin

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

param() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" /proc/cmdline; }
agent=$(param rxp.agent)
share=$(param rxp.share)

die() {
  echo "rxp-init: $*" >/dev/console
  echo o >/proc/sysrq-trigger  # power off: qemu runs with -no-reboot
  sleep 60
}

while read -r m; do
  insmod "/modules/$m" || echo "rxp-init: insmod $m failed" >/dev/console
done </modules/load-order

mkdir -p /lower /upper /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro hostroot /lower ||
  die "cannot mount the host root over 9p"
mount -t tmpfs -o mode=0755 upper /upper
mkdir -p /upper/data /upper/work
mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work rootfs /newroot ||
  die "cannot mount the overlay root"

for d in proc sys dev; do mount --move /$d /newroot/$d; done
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs shm /newroot/dev/shm
mount -t tmpfs run /newroot/run
mount -t cgroup2 cgroup2 /newroot/sys/fs/cgroup
mount -t debugfs debugfs /newroot/sys/kernel/debug 2>/dev/null

if [ -n "$share" ]; then
  mkdir -p "/newroot$share"
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rxpshare "/newroot$share" ||
    die "cannot mount the results share at $share"
fi

[ -n "$agent" ] || die "no rxp.agent= on the kernel command line"
exec chroot /newroot /bin/bash "$agent"
