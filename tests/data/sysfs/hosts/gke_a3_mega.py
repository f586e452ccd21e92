"""A GKE a3-megagpu-8g-like VM (2 x 52-core Sapphire Rapids, 208 vCPUs, 2 NUMA nodes): 8 H100
behind four emulated PCIe switches, each switch with two GPUs and two gVNIC slots. This is
the broken node of NVIDIA/aicr #381 / PR #420: an extra gVNIC (additional pod network, eth9)
took GPU-NIC slot 0000:06:00.0, so gpu-nic-7 (eth8) landed on slot 0000:00:0d.0 of the root
bus and RxDM counted 7 GPU/NIC pairs. No RDMA devices; GPUDirect-TCPXO, no peer memory."""

from fakesysfs import Host


def build():
    h = Host("gke-a3-mega")
    h.cpus(sockets=2, cores=52, threads=2)
    r0 = h.root("0000:00", numa=0)
    r0.add("0000:00:00.0", "gce-host-bridge")
    eth0 = r0.add("0000:00:04.0", "gvnic")
    r80 = h.root("0000:80", numa=1)
    nics = {}
    trees = [(r0, "0000:00:02.0", 0x02), (r0, "0000:00:03.0", 0x08), (r80, "0000:80:02.0", 0x82), (r80, "0000:80:03.0", 0x88)]
    slot_names = [["eth9", "eth1"], ["eth2", "eth3"], ["eth4", "eth5"], ["eth6", None]]
    for t, (root, rp_bdf, b) in enumerate(trees):
        up = root.add(rp_bdf, "gce-root-port").add("0000:%02x:00.0" % b, "gce-switch")
        for i in range(2):
            up.add("0000:%02x:%02x.0" % (b + 1, i), "gce-switch").add("0000:%02x:00.0" % (b + 2 + i), "h100-sxm")
        for i, name in enumerate(slot_names[t]):
            port = up.add("0000:%02x:%02x.0" % (b + 1, 2 + i), "gce-switch", secondary=b + 4 + i)
            if name:
                port.secondary = None
                nics[name] = port.add("0000:%02x:00.0" % (b + 4 + i), "gvnic")
    nics["eth8"] = r0.add("0000:00:0d.0", "gvnic")
    h.netdev("eth0", eth0, "42:01:0a:80:00:02", speed=100000)
    for name in sorted(nics, key=lambda n: int(n[3:])):
        h.netdev(name, nics[name], "42:01:c0:a8:%02x:02" % int(name[3:]), speed=200000)
    return h
