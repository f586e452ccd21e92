"""Builds fake host sysfs roots (sys/ and proc/) for the rdmaproxy sysfs fixtures.

Written from the kernel's sysfs layout (drivers/pci/pci-sysfs.c, probe.c, drivers/base/node.c,
drivers/infiniband/core/sysfs.c, net/core/net-sysfs.c) and from real hosts, independently of
the C++ synthesizer: the tests compare what rdmaproxy renders against these trees, so the
oracle must not be the code under test.

A root looks like a real one, noise included (management NICs, a BMC VGA, ACPI and IOMMU
links, counters, umad devices, DMI...). One deliberate difference: an attribute whose read
fails with EINVAL in the kernel (an unpopulated GID's gid_attrs/types/N, a down link's speed)
is an empty file here, the convention rdmaproxy's reader and renderer share.
"""

import hashlib
import os
import stat

GEN = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}

# Device catalogue: real vendor/device/class IDs.
CATALOG = {
    "intel-host-bridge":  dict(vendor=0x8086, device=0x09a2, cls=0x060000, sub=(0x8086, 0x0000), gen=5, width=0),
    "intel-root-port":    dict(vendor=0x8086, device=0x352a, cls=0x060400, sub=(0x8086, 0x0000), gen=5, width=16, driver="pcieport"),
    "intel-pch-port":     dict(vendor=0x8086, device=0x1bb8, cls=0x060400, sub=(0x8086, 0x0000), gen=3, width=1, driver="pcieport"),
    "intel-ahci":         dict(vendor=0x8086, device=0x1bf2, cls=0x010601, sub=(0x15d9, 0x1d40), gen=0, width=0, driver="ahci"),
    "intel-xhci":         dict(vendor=0x8086, device=0x1bcd, cls=0x0c0330, sub=(0x15d9, 0x1d40), gen=0, width=0, driver="xhci_hcd"),
    "intel-x550":         dict(vendor=0x8086, device=0x1563, cls=0x020000, sub=(0x15d9, 0x1d40), gen=3, width=4, driver="ixgbe"),
    "amd-host-bridge":    dict(vendor=0x1022, device=0x1480, cls=0x060000, sub=(0x1022, 0x1480), gen=4, width=0),
    "amd-root-port":      dict(vendor=0x1022, device=0x1483, cls=0x060400, sub=(0x1022, 0x1453), gen=4, width=16, driver="pcieport"),
    "aspeed-bridge":      dict(vendor=0x1a03, device=0x1150, cls=0x060400, sub=(0x1a03, 0x1150), gen=2, width=1, driver=None),
    "aspeed-vga":         dict(vendor=0x1a03, device=0x2000, cls=0x030000, sub=(0x15d9, 0x1d40), gen=2, width=1, driver="ast"),
    "bcm-pex89144":       dict(vendor=0x1000, device=0xc030, cls=0x060400, sub=(0x1000, 0x100b), gen=5, width=16, driver="pcieport"),
    "bcm-pex88096":       dict(vendor=0x1000, device=0xc010, cls=0x060400, sub=(0x1000, 0xa064), gen=4, width=16, driver="pcieport"),
    "h100-sxm":           dict(vendor=0x10de, device=0x2330, cls=0x030200, sub=(0x10de, 0x16c1), gen=5, width=16, driver="nvidia"),
    "a100-sxm":           dict(vendor=0x10de, device=0x20b0, cls=0x030200, sub=(0x10de, 0x134f), gen=4, width=16, driver="nvidia"),
    "l40s":               dict(vendor=0x10de, device=0x26b9, cls=0x030200, sub=(0x10de, 0x1851), gen=4, width=16, driver="nvidia"),
    "nvswitch-h100":      dict(vendor=0x10de, device=0x22a3, cls=0x068000, sub=(0x10de, 0x1796), gen=4, width=2, driver="nvidia-nvswitch"),
    "cx7-ib":             dict(vendor=0x15b3, device=0x1021, cls=0x020700, sub=(0x15b3, 0x0041), gen=5, width=16, driver="mlx5_core"),
    "cx7-eth":            dict(vendor=0x15b3, device=0x1021, cls=0x020000, sub=(0x15b3, 0x0040), gen=5, width=16, driver="mlx5_core"),
    "cx6-ib":             dict(vendor=0x15b3, device=0x101b, cls=0x020700, sub=(0x15b3, 0x0006), gen=4, width=16, driver="mlx5_core"),
    "cx6dx":              dict(vendor=0x15b3, device=0x101d, cls=0x020000, sub=(0x15b3, 0x0016), gen=4, width=16, driver="mlx5_core"),
    "cx6dx-vf":           dict(vendor=0x15b3, device=0x101e, cls=0x020000, sub=(0x15b3, 0x0016), gen=0, width=0, driver="mlx5_core"),
    "cx7-ib-vf":          dict(vendor=0x15b3, device=0x101e, cls=0x020700, sub=(0x15b3, 0x0023), gen=0, width=0, driver="mlx5_core"),
    "cx5-vf":             dict(vendor=0x15b3, device=0x1018, cls=0x020000, sub=(0x15b3, 0x0080), gen=0, width=0, driver="mlx5_core"),
    "nvme-samsung":       dict(vendor=0x144d, device=0xa80a, cls=0x010802, sub=(0x144d, 0xa812), gen=4, width=4, driver="nvme"),
    "gvnic":              dict(vendor=0x1ae0, device=0x0042, cls=0x020000, sub=(0x1ae0, 0x0058), gen=0, width=0, pcie=False, driver="gve"),
    "gce-root-port":      dict(vendor=0x1b36, device=0x000c, cls=0x060400, sub=(0x1b36, 0x0000), gen=0, width=0, pcie=False, driver="pcieport"),
    "gce-switch":         dict(vendor=0x1b36, device=0x000e, cls=0x060400, sub=(0x1b36, 0x0000), gen=0, width=0, pcie=False, driver="pcieport"),
    "gce-host-bridge":    dict(vendor=0x8086, device=0x1237, cls=0x060000, sub=(0x1af4, 0x1100), gen=0, width=0, pcie=False),
}


def mask(cpus, nbits):
    """The kernel's "%*pb": 32-bit chunks, most significant first, the first chunk trimmed."""
    value = 0
    for c in cpus:
        value |= 1 << c
    chunks = (nbits + 31) // 32
    words = [(value >> (32 * i)) & 0xffffffff for i in range(chunks)]
    first_bits = nbits - 32 * (chunks - 1)
    text = "%0*x" % ((first_bits + 3) // 4, words[-1])
    for w in reversed(words[:-1]):
        text += ",%08x" % w
    return text


def cpulist(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def relpath(link_dir, target):
    """How the kernel spells a sysfs link (fs/sysfs/symlink.c, sysfs_get_target_path):
    climb from the link's directory until it contains the target's parent, then descend."""
    base = link_dir.strip("/").split("/")
    tparent = target.strip("/").split("/")[:-1]
    ups = 0
    while base and base != tparent[: len(base)]:
        base = base[:-1]
        ups += 1
    return "../" * ups + "/".join(target.strip("/").split("/")[len(base):])


def digest(*parts):
    return hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()


class Fn:
    """A PCI function in the tree."""

    def __init__(self, host, bdf, kind, parent, root, **extra):
        self.host, self.bdf, self.kind, self.parent, self.root = host, bdf, kind, parent, root
        self.children = []
        self.spec = dict(CATALOG[kind])
        self.spec.update(extra)
        self.secondary = extra.get("secondary")  # for an empty downstream port
        self.physfn = None
        self.vfs = []

    @property
    def bus(self):
        return int(self.bdf[5:7], 16)

    def add(self, bdf, kind, **extra):
        fn = Fn(self.host, bdf, kind, self, self.root, **extra)
        self.children.append(fn)
        self.host.functions[bdf] = fn
        return fn

    def add_vf(self, bdf, kind, **extra):
        vf = self.parent.add(bdf, kind, **extra)
        vf.physfn = self
        self.vfs.append(vf)
        return vf

    def is_bridge(self):
        return self.spec["cls"] >> 8 == 0x0604

    def path(self):
        chain, f = [], self
        while f is not None:
            chain.append(f.bdf)
            f = f.parent
        return "%s/%s" % (self.root.dir, "/".join(reversed(chain)))

    def buses(self):
        if not self.children:
            return (self.secondary, self.secondary) if self.secondary else (0, 0)
        sec = self.children[0].bus
        sub = max([c.bus for c in self.children] + [c.buses()[1] for c in self.children if c.is_bridge()])
        return sec, sub


class Root:
    def __init__(self, host, bus_id, numa, parent=None):
        self.host, self.bus_id, self.numa, self.parent = host, bus_id, numa, parent
        self.name = "pci" + bus_id
        self.children = []

    @property
    def dir(self):
        """pci_create_root_bus(): in /sys/devices, or below its parent device (Hyper-V)."""
        return "/sys/devices/%s%s" % (self.parent + "/" if self.parent else "", self.name)

    def add(self, bdf, kind, **extra):
        fn = Fn(self.host, bdf, kind, None, self, **extra)
        self.children.append(fn)
        self.host.functions[bdf] = fn
        return fn


class Host:
    def __init__(self, hostname):
        self.hostname = hostname
        self.entries = {}  # path -> ("f", bytes, mode) | ("l", target) | ("d",)
        self.roots = []
        self.functions = {}
        self.node_cpus = {}
        self.nbits = 0
        self.uverbs = 0
        self.ifindex = 2

    # ---- primitives ----
    def file(self, path, content, mode=0o444):
        if isinstance(content, str):
            content = content.encode()
        self.entries[path] = ("f", content, mode)

    def attr(self, path, value, mode=0o444):
        """A text attribute: value plus newline; None = the kernel fails the read (EINVAL)."""
        self.file(path, b"" if value is None else (str(value) + "\n").encode(), mode)

    def link(self, path, target_abs):
        self.entries[path] = ("l", relpath(os.path.dirname(path), target_abs))

    def mkdir(self, path):
        self.entries.setdefault(path, ("d",))

    # ---- CPUs and NUMA ----
    def cpus(self, sockets, cores, threads, nodes_per_socket=1, sibling_stride=None):
        """CPU ids the way x86 firmware numbers them: all first threads, then all second ones."""
        total_cores = sockets * cores
        self.nbits = total_cores * threads
        sibling_stride = sibling_stride or total_cores
        topo = {}
        for s in range(sockets):
            for c in range(cores):
                for t in range(threads):
                    cpu = t * sibling_stride + s * cores + c
                    node = s * nodes_per_socket + c * nodes_per_socket // cores
                    topo[cpu] = (s, c, node)
                    self.node_cpus.setdefault(node, []).append(cpu)
        allcpus = cpulist(range(self.nbits))
        base = "/sys/devices/system/cpu"
        for name in ("online", "possible", "present"):
            self.attr("%s/%s" % (base, name), allcpus)
        self.attr(base + "/kernel_max", 8191)
        self.attr(base + "/isolated", "")
        for cpu, (s, c, node) in topo.items():
            d = "%s/cpu%d" % (base, cpu)
            siblings = [x for x, v in topo.items() if v[0] == s and v[1] == c]
            package = [x for x, v in topo.items() if v[0] == s]
            t = d + "/topology"
            self.attr(t + "/physical_package_id", s)
            self.attr(t + "/die_id", 0)
            self.attr(t + "/core_id", c)
            for name, members in (("core_cpus", siblings), ("thread_siblings", siblings),
                                  ("package_cpus", package), ("core_siblings", package),
                                  ("die_cpus", package)):
                self.attr("%s/%s" % (t, name), mask(members, self.nbits))
                self.attr("%s/%s_list" % (t, name), cpulist(members))
            if cpu != 0:
                self.attr(d + "/online", 1, 0o644)
            self.link("%s/node%d" % (d, node), "/sys/devices/system/node/node%d" % node)
        nodes = sorted(self.node_cpus)
        nb = "/sys/devices/system/node"
        for name in ("online", "possible", "has_cpu", "has_memory", "has_normal_memory"):
            self.attr("%s/%s" % (nb, name), cpulist(nodes))
        self.attr(nb + "/has_generic_initiator", "")
        for n in nodes:
            d = "%s/node%d" % (nb, n)
            self.attr(d + "/cpumap", mask(self.node_cpus[n], self.nbits))
            self.attr(d + "/cpulist", cpulist(self.node_cpus[n]))
            same_socket = lambda a, b: a // nodes_per_socket == b // nodes_per_socket
            self.attr(d + "/distance", " ".join("10" if m == n else ("12" if same_socket(m, n) else "21") for m in nodes))
            self.file(d + "/meminfo", "Node %d MemTotal:       1056457216 kB\nNode %d MemFree:        1000000000 kB\n" % (n, n))
            for cpu in self.node_cpus[n]:
                self.link("%s/cpu%d" % (d, cpu), "%s/cpu%d" % (base, cpu))
        lines = []
        for cpu in sorted(topo):
            s, c, _ = topo[cpu]
            lines.append("processor\t: %d\nvendor_id\t: GenuineIntel\nmodel name\t: Fake CPU\nphysical id\t: %d\n"
                         "core id\t\t: %d\ncpu cores\t: %d\nsiblings\t: %d\n" % (cpu, s, c, cores, cores * threads))
        self.file("/proc/cpuinfo", "\n".join(lines) + "\n")
        self.file("/proc/meminfo", "MemTotal:       2112914432 kB\n")

    # ---- PCI ----
    def root(self, bus_id, numa, parent=None):
        r = Root(self, bus_id, numa, parent)
        self.roots.append(r)
        return r

    # ---- Hyper-V (Azure) ----
    VMBUS = "LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00"

    def vmbus_device(self, guid, class_id, driver, numa=0):
        """A VMBus device (drivers/hv/vmbus_drv.c vmbus_dev_groups) and the ACPI nodes above it;
        returns its directory below /sys/devices."""
        if "/sys/devices/" + self.VMBUS + "/hid" not in self.entries:
            acpi = "/sys/devices"
            for comp, hid, path in (("LNXSYSTM:00", "LNXSYSTM", "\\"), ("LNXSYBUS:00", "LNXSYBUS", "\\_SB_"),
                                    ("ACPI0004:00", "ACPI0004", "\\_SB_.VMOD"), ("VMBUS:00", "VMBUS", "\\_SB_.VMOD.VMBS")):
                acpi += "/" + comp
                self.attr(acpi + "/hid", hid)
                self.attr(acpi + "/path", path)
                self.attr(acpi + "/uevent", "MODALIAS=acpi:%s:" % hid, 0o644)
                self.link(acpi + "/subsystem", "/sys/bus/acpi")
        rel = "%s/%s" % (self.VMBUS, guid)
        d = "/sys/devices/" + rel
        self.attr(d + "/class_id", "{%s}" % class_id)
        self.attr(d + "/device_id", "{%s}" % guid)
        self.attr(d + "/modalias", "vmbus:" + class_id.replace("-", ""))
        self.attr(d + "/numa_node", numa)
        self.attr(d + "/state", 3)
        self.attr(d + "/id", 1 + len([p for p in self.entries if p.endswith("/device_id")]))
        self.attr(d + "/driver_override", "(null)", 0o644)
        self.link(d + "/subsystem", "/sys/bus/vmbus")
        self.link(d + "/driver", "/sys/bus/vmbus/drivers/" + driver)
        self.link("/sys/bus/vmbus/devices/" + guid, d)
        return rel

    def hv_pci_root(self, domain, numa):
        """hv_pci_probe(): one root bus per vPCI VMBus device, its 16-bit domain taken from bytes
        4-5 of the instance GUID (the second group of its text form), bus 00."""
        guid = "%08x-%04x-%04x-%04x-%012x" % (0x47505500 + numa, domain, 0x3130, 0x4445, 0x3144 + domain)
        parent = self.vmbus_device(guid, "44c4f61d-4444-4400-9d52-802e27ede19f", "hv_pci", numa)
        return self.root("%04x:00" % domain, numa, parent)

    def _config(self, fn):
        """A 256-byte header as root reads it, with a PCIe capability at 0x40."""
        s = fn.spec
        c = bytearray(256)
        c[0:2] = s["vendor"].to_bytes(2, "little")
        c[2:4] = s["device"].to_bytes(2, "little")
        c[4:6] = (0x0546).to_bytes(2, "little")
        c[6:8] = (0x0010).to_bytes(2, "little")
        c[8] = s.get("revision", 0)
        c[9:12] = s["cls"].to_bytes(3, "little")
        multi = any(o.bdf[:10] == fn.bdf[:10] and o is not fn for o in self.functions.values())
        c[0x0e] = (0x01 if fn.is_bridge() else 0x00) | (0x80 if multi and fn.bdf.endswith(".0") else 0)
        if fn.is_bridge():
            sec, sub = fn.buses()
            c[0x18], c[0x19], c[0x1a] = fn.bus, sec, sub
        else:
            c[0x2c:0x2e] = s["sub"][0].to_bytes(2, "little")
            c[0x2e:0x30] = s["sub"][1].to_bytes(2, "little")
            c[0x10:0x14] = digest(fn.bdf, "bar")[:4]
        c[0x34] = 0x40
        gen, width = s.get("gen", 0), s.get("width", 0)
        if gen:
            c[0x40], c[0x41] = 0x10, 0x00
            c[0x42:0x44] = (0x0002 | ((4 if fn.is_bridge() else 0) << 4)).to_bytes(2, "little")
            c[0x4c:0x50] = (gen | (width << 4)).to_bytes(4, "little")
            c[0x52:0x54] = (gen | (width << 4)).to_bytes(2, "little")
        return bytes(c)

    def _write_function(self, fn):
        s, d = fn.spec, fn.path()
        node = fn.root.numa
        cpus = self.node_cpus.get(node, list(range(self.nbits))) if node is not None else list(range(self.nbits))
        cls = s["cls"]
        self.attr(d + "/class", "0x%06x" % cls)
        self.attr(d + "/vendor", "0x%04x" % s["vendor"])
        self.attr(d + "/device", "0x%04x" % s["device"])
        self.attr(d + "/subsystem_vendor", "0x%04x" % s["sub"][0])
        self.attr(d + "/subsystem_device", "0x%04x" % s["sub"][1])
        self.attr(d + "/revision", "0x%02x" % s.get("revision", 0))
        self.attr(d + "/numa_node", -1 if node is None else node)
        self.attr(d + "/local_cpus", mask(cpus, self.nbits))
        self.attr(d + "/local_cpulist", cpulist(cpus))
        if s.get("pcie", True):  # pcie_dev_attrs: PCIe functions only; a VF's link is "Unknown"
            for prefix in ("max", "current"):
                self.attr("%s/%s_link_speed" % (d, prefix), GEN[s["gen"]] if s.get("gen") else "Unknown")
                self.attr("%s/%s_link_width" % (d, prefix), s["width"])
        modalias = "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
            s["vendor"], s["device"], s["sub"][0], s["sub"][1], cls >> 16, (cls >> 8) & 0xff, cls & 0xff)
        self.attr(d + "/modalias", modalias)
        uevent = []
        if s.get("driver"):
            uevent.append("DRIVER=" + s["driver"])
        uevent += ["PCI_CLASS=%X" % cls, "PCI_ID=%04X:%04X" % (s["vendor"], s["device"]),
                   "PCI_SUBSYS_ID=%04X:%04X" % s["sub"], "PCI_SLOT_NAME=" + fn.bdf, "MODALIAS=" + modalias]
        self.attr(d + "/uevent", "\n".join(uevent), 0o644)
        base = int.from_bytes(digest(fn.bdf)[:3], "big") << 20 | 0x380000000000
        res = ["0x%016x 0x%016x 0x%016x" % (base, base + 0xfffff, 0x140204)]
        res += ["0x%016x 0x%016x 0x%016x" % (0, 0, 0)] * 12
        self.attr(d + "/resource", "\n".join(res))
        self.file(d + "/config", self._config(fn), 0o644)
        if fn.is_bridge():
            sec, sub = fn.buses()
            self.attr(d + "/secondary_bus_number", sec)
            self.attr(d + "/subordinate_bus_number", sub)
        # Noise the snapshot must leave out.
        self.attr(d + "/enable", 1, 0o644)
        self.attr(d + "/irq", 16 + digest(fn.bdf)[0] % 200)
        self.attr(d + "/dma_mask_bits", 64)
        self.attr(d + "/d3cold_allowed", 1, 0o644)
        self.file(d + "/remove", b"", 0o200)
        self.file(d + "/rescan", b"", 0o200)
        self.attr(d + "/power/control", "on", 0o644)
        self.link(d + "/firmware_node", "/sys/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0A08:%02x/device:%02x" % (fn.bus, digest(fn.bdf)[1]))
        self.link(d + "/iommu_group", "/sys/kernel/iommu_groups/%d" % (digest(fn.bdf)[2] + 1))
        self.link(d + "/subsystem", "/sys/bus/pci")
        self.link("/sys/bus/pci/devices/" + fn.bdf, d)
        if s.get("driver"):
            drv = "/sys/bus/pci/drivers/" + s["driver"]
            self.link(d + "/driver", drv)
            self.link(drv + "/" + fn.bdf, d)
            self.attr(drv + "/uevent", "", 0o200)
        if fn.physfn is not None:
            self.link(d + "/physfn", fn.physfn.path())
        for i, vf in enumerate(fn.vfs):
            self.link("%s/virtfn%d" % (d, i), vf.path())
        if fn.vfs:
            self.attr(d + "/sriov_totalvfs", 8)
            self.attr(d + "/sriov_numvfs", len(fn.vfs), 0o644)
            first = fn.vfs[0]
            rid = lambda f: int(f.bdf[5:7], 16) << 8 | int(f.bdf[8:10], 16) << 3 | int(f.bdf[11])
            self.attr(d + "/sriov_offset", rid(first) - rid(fn))
            self.attr(d + "/sriov_stride", 1)
        if fn.is_bridge():
            sec, _ = fn.buses()
            if sec:
                self._pci_bus(d, "%s:%02x" % (fn.bdf[:4], sec), cpus)

    def _pci_bus(self, host_dir, bus_id, cpus):
        b = "%s/pci_bus/%s" % (host_dir, bus_id)
        self.link(b + "/device", host_dir)
        self.link(b + "/subsystem", "/sys/class/pci_bus")
        self.attr(b + "/cpuaffinity", mask(cpus, self.nbits))
        self.attr(b + "/cpulistaffinity", cpulist(cpus))
        self.link("/sys/class/pci_bus/" + bus_id, b)

    def _walk(self):
        for r in self.roots:
            stack = list(reversed(r.children))
            while stack:
                fn = stack.pop()
                yield fn
                stack.extend(reversed(fn.children))

    # ---- RDMA, verbs, net ----
    def ib_device(self, name, fn, guid, ports, hca="MT4129", board="MT_0000000838", fw="28.39.1002"):
        """ports: list of dicts(link_layer, state, phys_state, rate, lid, gids=[(idx, gid, type, ndev)],
        gid_len, pkeys)."""
        d = ("%s/infiniband/%s" % (fn.path(), name)) if fn is not None else "/sys/devices/virtual/infiniband/" + name
        self.attr(d + "/node_type", "1: CA")
        self.attr(d + "/node_guid", guid)
        self.attr(d + "/sys_image_guid", guid)
        self.attr(d + "/fw_ver", fw)
        self.attr(d + "/hca_type", hca)
        self.attr(d + "/hw_rev", "0x0")
        self.attr(d + "/board_id", board)
        self.attr(d + "/node_desc", "%s %s" % (self.hostname, name), 0o644)
        self.attr(d + "/uevent", "NAME=" + name, 0o644)
        self.attr(d + "/hw_counters/lifespan", 10, 0o644)
        if fn is not None:
            self.link(d + "/device", fn.path())
        self.link(d + "/subsystem", "/sys/class/infiniband")
        self.link("/sys/class/infiniband/" + name, d)
        for num, p in enumerate(ports, start=1):
            pd = "%s/ports/%d" % (d, num)
            ib = p["link_layer"] == "InfiniBand"
            self.attr(pd + "/link_layer", p["link_layer"])
            self.attr(pd + "/state", p.get("state", "4: ACTIVE"))
            self.attr(pd + "/phys_state", p.get("phys_state", "5: LinkUp"))
            self.attr(pd + "/rate", p["rate"])
            self.attr(pd + "/lid", p.get("lid", "0x0"))
            self.attr(pd + "/lid_mask_count", 0)
            self.attr(pd + "/sm_lid", p.get("sm_lid", "0x1" if ib else "0x0"))
            self.attr(pd + "/sm_sl", 0)
            self.attr(pd + "/cap_mask", "0xa751e848" if ib else "0x00010000")
            self.attr(pd + "/counters/port_xmit_data", 123456789)
            gids = {g[0]: g for g in p["gids"]}
            for i in range(p["gid_len"]):
                g = gids.get(i)
                self.attr("%s/gids/%d" % (pd, i), g[1] if g else "0000:0000:0000:0000:0000:0000:0000:0000")
                self.attr("%s/gid_attrs/types/%d" % (pd, i), g[2] if g else None)
                self.attr("%s/gid_attrs/ndevs/%d" % (pd, i), g[3] if g and g[3] else None)
            for i, pk in enumerate(p["pkeys"]):
                self.attr("%s/pkeys/%d" % (pd, i), pk)
        # The uverbs device and a umad device per port.
        uv = "uverbs%d" % self.uverbs
        ud = ("%s/infiniband_verbs/%s" % (fn.path(), uv)) if fn is not None else "/sys/devices/virtual/infiniband_verbs/" + uv
        self.attr(ud + "/ibdev", name)
        self.attr(ud + "/abi_version", 1 if fn is not None else 2)
        self.attr(ud + "/dev", "231:%d" % (192 + self.uverbs))
        self.attr(ud + "/uevent", "MAJOR=231\nMINOR=%d\nDEVNAME=infiniband/%s" % (192 + self.uverbs, uv), 0o644)
        if fn is not None:
            self.link(ud + "/device", fn.path())
        self.link(ud + "/subsystem", "/sys/class/infiniband_verbs")
        self.link("/sys/class/infiniband_verbs/" + uv, ud)
        self.attr("/sys/class/infiniband_verbs/abi_version", 6)
        umad = "umad%d" % self.uverbs
        md = ("%s/infiniband_mad/%s" % (fn.path(), umad)) if fn is not None else "/sys/devices/virtual/infiniband_mad/" + umad
        self.attr(md + "/ibdev", name)
        self.attr(md + "/port", 1)
        self.link("/sys/class/infiniband_mad/" + umad, md)
        self.attr("/sys/class/infiniband_mad/abi_version", 5)
        self.uverbs += 1

    def netdev(self, name, fn, mac, kind="ether", speed=100000, up=True, dev_port=0, mtu=None, parent=None):
        """fn: the PCI function; or parent: another device's directory below /sys/devices (a
        Hyper-V netvsc netdev's VMBus device); neither: a virtual netdev."""
        if fn is not None:
            d = "%s/net/%s" % (fn.path(), name)
        elif parent is not None:
            d = "/sys/devices/%s/net/%s" % (parent, name)
        else:
            d = "/sys/devices/virtual/net/" + name
        ib = kind == "ib"
        self.attr(d + "/address", mac)
        self.attr(d + "/broadcast", "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff" if ib else "ff:ff:ff:ff:ff:ff")
        self.attr(d + "/addr_len", 20 if ib else 6)
        self.attr(d + "/addr_assign_type", 0)
        self.attr(d + "/type", 32 if ib else (772 if kind == "loopback" else 1))
        self.attr(d + "/dev_id", "0x0")
        self.attr(d + "/dev_port", dev_port)
        self.attr(d + "/mtu", mtu or (4092 if ib else 9000), 0o644)
        self.attr(d + "/speed", speed if up else None)
        self.attr(d + "/duplex", "full" if up else None)
        self.attr(d + "/operstate", "up" if up else "down")
        self.attr(d + "/carrier", 1 if up else 0, 0o644)
        self.attr(d + "/ifindex", self.ifindex)
        self.attr(d + "/iflink", self.ifindex)
        self.attr(d + "/flags", "0x1003" if up else "0x1002", 0o644)
        self.attr(d + "/tx_queue_len", 1000 if not ib else 256, 0o644)
        self.attr(d + "/link_mode", 0)
        self.attr(d + "/statistics/rx_bytes", 987654321)
        self.attr(d + "/queues/rx-0/rps_cpus", "0", 0o644)
        self.ifindex += 1
        if fn is not None:
            self.link(d + "/device", fn.path())
        elif parent is not None:
            self.link(d + "/device", "/sys/devices/" + parent)
        self.link(d + "/subsystem", "/sys/class/net")
        self.link("/sys/class/net/" + name, d)

    # ---- Everything else ----
    def peermem(self, nvidia_peermem=None, nv_mem=None):
        if nvidia_peermem:
            self.attr("/sys/module/nvidia_peermem/version", nvidia_peermem)
            self.attr("/sys/module/nvidia_peermem/refcnt", 0)
        if nv_mem:
            self.attr("/sys/kernel/mm/memory_peers/nv_mem/version", nv_mem)
            self.attr("/sys/kernel/mm/memory_peers/nv_mem/num_alloc_mrs", 0)

    def write(self, out):
        for fn in self._walk():
            self._write_function(fn)
        for r in self.roots:
            d = r.dir
            cpus = self.node_cpus.get(r.numa, list(range(self.nbits)))
            self._pci_bus(d, r.bus_id, cpus)
            if r.parent is None:  # an ACPI host bridge; hv_pci's roots have no firmware node
                self.link(d + "/firmware_node", "/sys/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0A08:%s" % r.bus_id[5:])
            self.attr(d + "/uevent", "", 0o644)
        self.netdev("lo", None, "00:00:00:00:00:00", kind="loopback", speed=None, mtu=65536)
        self.attr("/sys/class/dmi/id/product_name", "Fake " + self.hostname)
        self.attr("/sys/class/dmi/id/product_uuid", "4c4c4544-0047-4710-8052-b4c04f4b5a33", 0o400)
        self.attr("/sys/firmware/acpi/tables/DSDT", "fake")
        self.attr("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never", 0o644)
        self.attr("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", 0, 0o644)
        self.attr("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids")
        self.attr("/proc/sys/kernel/random/boot_id", "2e8b2c5a-4b8e-4a0c-9c6f-0d1f2e3a4b5c")
        for path in sorted(self.entries):
            e = self.entries[path]
            full = os.path.join(out, path.lstrip("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            if e[0] == "d":
                os.makedirs(full, exist_ok=True)
            elif e[0] == "l":
                os.symlink(e[1], full)
            else:
                with open(full, "wb") as f:
                    f.write(e[1])
                os.chmod(full, e[2])
        # Directories read-only like sysfs? No: the tests must be able to delete the tree.
        return len(self.entries)


# ---- Helpers for host descriptions ----

def eui64_gid(mac):
    """The RoCE link-local GID of a MAC (EUI-64 with the U/L bit flipped)."""
    b = [int(x, 16) for x in mac.split(":")]
    eui = [b[0] ^ 0x02, b[1], b[2], 0xff, 0xfe, b[3], b[4], b[5]]
    return "fe80:0000:0000:0000:" + ":".join("%02x%02x" % (eui[i], eui[i + 1]) for i in range(0, 8, 2))


def ipv4_gid(ip):
    a, b, c, d = (int(x) for x in ip.split("."))
    return "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % (a, b, c, d)


def roce_port(ndev, mac, ipv4=None, up=True, rate="100 Gb/sec (2X HDR)", gid_len=256):
    ll = eui64_gid(mac)
    gids = [(0, ll, "IB/RoCE v1", ndev), (1, ll, "RoCE v2", ndev)]
    if ipv4:
        gids += [(2, ipv4_gid(ipv4), "IB/RoCE v1", ndev), (3, ipv4_gid(ipv4), "RoCE v2", ndev)]
    return dict(link_layer="Ethernet", state="4: ACTIVE" if up else "1: DOWN",
                phys_state="5: LinkUp" if up else "3: Disabled", rate=rate, gids=gids,
                gid_len=gid_len, pkeys=["0xffff"])


def ib_port(guid, lid, up=True, rate="400 Gb/sec (4X NDR)", gid_len=128, npkeys=128):
    return dict(link_layer="InfiniBand", state="4: ACTIVE" if up else "1: DOWN",
                phys_state="5: LinkUp" if up else "2: Polling", rate=rate if up else "10 Gb/sec (4X SDR)",
                lid="0x%x" % lid if up else "0x0", sm_lid="0x1" if up else "0x0",
                gids=[(0, "fe80:0000:0000:0000:" + guid, "IB/RoCE v1", None)],
                gid_len=gid_len, pkeys=["0xffff"] + ["0x0000"] * (npkeys - 1))


def ipoib_mac(guid):
    return "00:00:10:29:fe:80:00:00:00:00:00:00:" + ":".join(
        guid.replace(":", "")[i:i + 2] for i in range(0, 16, 2))


def mac_guid(mac):
    b = mac.split(":")
    return "%s%s:%sff:fe%s:%s%s" % (b[0], b[1], b[2], b[3], b[4], b[5])
