"""DGX-H100-like: 2 x 56-core Xeon (224 CPUs, 2 NUMA nodes), 8 H100 SXM each sharing a
Broadcom PEX89144 switch with a ConnectX-7 NDR NIC (GPU BDFs as on a real DGX H100), 4
NVSwitches behind their own switch, 2 dual-port ConnectX-7 Ethernet storage NICs, a BMC VGA
and a management NIC, nvidia-peermem loaded."""

from fakesysfs import Host, ib_port, ipoib_mac, roce_port, mac_guid


def build():
    h = Host("dgx-h100")
    h.cpus(sockets=2, cores=56, threads=2)
    pch = h.root("0000:00", numa=0)
    pch.add("0000:00:00.0", "intel-host-bridge")
    pch.add("0000:00:14.0", "intel-xhci")
    pch.add("0000:00:17.0", "intel-ahci")
    bmc = pch.add("0000:00:1c.0", "intel-pch-port").add("0000:01:00.0", "aspeed-bridge")
    bmc.add("0000:02:00.0", "aspeed-vga")
    mgmt = pch.add("0000:00:1c.4", "intel-pch-port").add("0000:03:00.0", "intel-x550")

    # NVSwitches behind a switch of their own.
    up = h.root("0000:04", numa=0).add("0000:04:01.0", "intel-root-port").add("0000:05:00.0", "bcm-pex89144")
    for i in range(4):
        up.add("0000:06:%02x.0" % i, "bcm-pex89144").add("0000:%02x:00.0" % (7 + i), "nvswitch-h100")

    # GPU trays: root port -> switch -> {NIC, GPU, (NVMe)}; GPUs land on 1b, 43, 52, 61, ...
    compute = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    nics = {}
    for k, r in enumerate([0x17, 0x3f, 0x4e, 0x5d, 0x99, 0xbf, 0xcd, 0xdb]):
        node = 0 if k < 4 else 1
        rp = h.root("0000:%02x" % r, numa=node).add("0000:%02x:01.0" % r, "intel-root-port")
        sw = rp.add("0000:%02x:00.0" % (r + 1), "bcm-pex89144")
        nic = sw.add("0000:%02x:00.0" % (r + 2), "bcm-pex89144").add("0000:%02x:00.0" % (r + 3), "cx7-ib")
        sw.add("0000:%02x:01.0" % (r + 2), "bcm-pex89144").add("0000:%02x:00.0" % (r + 4), "h100-sxm")
        if k % 2 == 0:
            sw.add("0000:%02x:02.0" % (r + 2), "bcm-pex89144").add("0000:%02x:00.0" % (r + 5), "nvme-samsung")
        sw.add("0000:%02x:03.0" % (r + 2), "bcm-pex89144", secondary=r + 6)  # empty hot-plug slot
        nics[compute[k]] = ("ib", nic, "a088:c203:00%02x:%04x" % (k, 0x1e40 + k), 0x10 + k)

    # Storage / in-band: a dual-port ConnectX-7 (Ethernet) per socket.
    for node, r, first in ((0, 0x29, 1), (1, 0xa9, 7)):
        rp = h.root("0000:%02x" % r, numa=node).add("0000:%02x:01.0" % r, "intel-root-port")
        for port in (0, 1):
            fn = rp.add("0000:%02x:00.%d" % (r + 1, port), "cx7-eth")
            nics["mlx5_%d" % (first + port)] = ("eth", fn, node, port, r + 1)

    for name in sorted(nics, key=lambda n: int(n.split("_")[1])):
        spec = nics[name]
        if spec[0] == "ib":
            _, fn, guid, lid = spec
            h.ib_device(name, fn, guid, [ib_port(guid, lid)], hca="MT4129", board="MT_0000000838")
        else:
            _, fn, node, port, bus = spec
            ndev = "enp%ds0f%dnp%d" % (bus, port, port)
            mac = "94:6d:ae:%02x:%02x:%02x" % (node, bus, port)
            up = not (node == 0 and port == 1)  # one storage port without a cable
            ip = "10.%d.%d.11" % (100 + node, port) if up else None
            h.ib_device(name, fn, mac_guid(mac), [roce_port(ndev, mac, ip, up=up, rate="400 Gb/sec (4X NDR)")],
                        hca="MT4129", board="MT_0000000884")
    for name, spec in nics.items():
        if spec[0] == "ib":
            _, fn, guid, _ = spec
            h.netdev("ibp%ds0" % int(fn.bdf[5:7], 16), fn, ipoib_mac(guid), kind="ib", speed=400000)
        else:
            _, fn, node, port, bus = spec
            up = not (node == 0 and port == 1)
            h.netdev("enp%ds0f%dnp%d" % (bus, port, port), fn, "94:6d:ae:%02x:%02x:%02x" % (node, bus, port),
                     speed=400000, up=up, dev_port=port)
    h.netdev("eno3", mgmt, "7c:c2:55:0a:0b:0c", speed=10000)
    h.netdev("docker0", None, "02:42:ac:11:00:01", speed=None, up=False)
    h.peermem(nvidia_peermem="535.161.08", nv_mem="1.0-0")
    return h
