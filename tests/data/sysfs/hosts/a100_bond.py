"""An A100 node (2 x 64-core EPYC, 256 CPUs, 2 NUMA nodes; PEX88096 switches) with
mlx5_0 (ConnectX-6 HDR) link down, mlx5_1 up, and a dual-port ConnectX-6 Dx bonded into
bond0, whose RDMA device is the Ethernet mlx5_bond_0 with its GIDs on the virtual bond0."""

from fakesysfs import Host, ib_port, ipoib_mac, roce_port, mac_guid


def build():
    h = Host("a100-node")
    h.cpus(sockets=2, cores=64, threads=2)
    r0 = h.root("0000:00", numa=0)
    r0.add("0000:00:00.0", "amd-host-bridge")
    mgmt = r0.add("0000:00:07.1", "amd-root-port").add("0000:01:00.0", "intel-x550")
    r0.add("0000:00:08.1", "amd-root-port").add("0000:02:00.0", "aspeed-bridge").add("0000:03:00.0", "aspeed-vga")

    def tray(root_bus, port, node, ib_name, guid, lid, up):
        root = h.root("0000:%02x" % root_bus, numa=node)
        root.add("0000:%02x:00.0" % root_bus, "amd-host-bridge")
        sw = root.add("0000:%02x:%s" % (root_bus, port), "amd-root-port").add("0000:%02x:00.0" % (root_bus + 1), "bcm-pex88096")
        g0 = sw.add("0000:%02x:00.0" % (root_bus + 2), "bcm-pex88096").add("0000:%02x:00.0" % (root_bus + 3), "a100-sxm")
        nic = sw.add("0000:%02x:04.0" % (root_bus + 2), "bcm-pex88096").add("0000:%02x:00.0" % (root_bus + 4), "cx6-ib")
        g1 = sw.add("0000:%02x:08.0" % (root_bus + 2), "bcm-pex88096").add("0000:%02x:00.0" % (root_bus + 5), "a100-sxm")
        h.ib_device(ib_name, nic, guid, [ib_port(guid, lid, up=up, rate="200 Gb/sec (4X HDR)")],
                    hca="MT4123", board="MT_0000000223", fw="20.35.2000")
        return nic

    n0 = tray(0x20, "01.1", 0, "mlx5_0", "1070:fd03:00b2:c3d0", 0x21, up=False)
    n1 = tray(0xa0, "03.1", 1, "mlx5_1", "1070:fd03:00b2:c3d4", 0x22, up=True)
    rp = h.root("0000:c0", numa=1).add("0000:c0:01.1", "amd-root-port")
    pf0 = rp.add("0000:c1:00.0", "cx6dx")
    pf1 = rp.add("0000:c1:00.1", "cx6dx")
    bond_mac = "0c:42:a1:d4:e5:f0"
    h.ib_device("mlx5_bond_0", pf0, mac_guid(bond_mac), [roce_port("bond0", bond_mac, "192.168.10.5")],
                hca="MT4125", board="MT_0000000359", fw="22.35.2000")
    h.netdev("ibp36s0", n0, ipoib_mac("1070:fd03:00b2:c3d0"), kind="ib", up=False)
    h.netdev("ibp164s0", n1, ipoib_mac("1070:fd03:00b2:c3d4"), kind="ib", speed=200000)
    h.netdev("ens1f0np0", pf0, bond_mac, speed=100000)
    h.netdev("ens1f1np1", pf1, bond_mac, speed=100000, dev_port=1)
    h.netdev("bond0", None, bond_mac, speed=200000)
    h.netdev("eno1", mgmt, "3c:ec:ef:01:02:03", speed=10000)
    h.peermem(nvidia_peermem="525.105.17")
    return h
