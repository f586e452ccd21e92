"""A RoCE host with SR-IOV: one 32-core EPYC in NPS2 (64 CPUs, 2 NUMA nodes), a dual-port
ConnectX-6 Dx with four VFs on port 0 (each with an RDMA device: one VF has an IPv4 GID, one
only link-local GIDs, one is down, one has IPv4), and an L40S GPU on the other NUMA node."""

from fakesysfs import Host, roce_port, mac_guid


def build():
    h = Host("roce-vfs")
    h.cpus(sockets=1, cores=32, threads=2, nodes_per_socket=2)
    r0 = h.root("0000:00", numa=0)
    r0.add("0000:00:00.0", "amd-host-bridge")
    mgmt = r0.add("0000:00:07.1", "amd-root-port").add("0000:01:00.0", "intel-x550")
    rp = h.root("0000:40", numa=0).add("0000:40:01.1", "amd-root-port")
    pf0 = rp.add("0000:41:00.0", "cx6dx")
    pf1 = rp.add("0000:41:00.1", "cx6dx")
    vfs = [pf0.add_vf("0000:41:00.%d" % (2 + i), "cx6dx-vf") for i in range(4)]
    h.root("0000:c0", numa=1).add("0000:c0:01.1", "amd-root-port").add("0000:c1:00.0", "l40s")
    devices = [
        ("mlx5_0", pf0, "ens2f0np0", "b8:ce:f6:10:20:30", "10.0.0.5", True, 0),
        ("mlx5_1", pf1, "ens2f1np1", "b8:ce:f6:10:20:31", "10.0.1.5", True, 1),
        ("mlx5_2", vfs[0], "ens2f0v0", "6a:11:22:33:44:00", "10.0.0.6", True, 0),
        ("mlx5_3", vfs[1], "ens2f0v1", "6a:11:22:33:44:01", None, True, 0),
        ("mlx5_4", vfs[2], "ens2f0v2", "6a:11:22:33:44:02", None, False, 0),
        ("mlx5_5", vfs[3], "ens2f0v3", "6a:11:22:33:44:03", "10.0.0.9", True, 0),
    ]
    for name, fn, ndev, mac, ip, up, port in devices:
        h.ib_device(name, fn, mac_guid(mac), [roce_port(ndev, mac, ip, up=up)],
                    hca="MT4125" if fn.physfn is None else "MT4126", board="MT_0000000359", fw="22.36.1010")
    for name, fn, ndev, mac, ip, up, port in devices:
        h.netdev(ndev, fn, mac, speed=100000, up=up, dev_port=port)
    h.netdev("eno1", mgmt, "3c:ec:ef:04:05:06", speed=10000)
    return h
