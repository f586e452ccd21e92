"""An Azure ND H100 v5-like VM (Standard_ND96isr_H100_v5: 2 x 48-core Sapphire Rapids, 96
vCPUs without SMT, 2 NUMA nodes) under Hyper-V. Every passed-through device sits on a PCI root
bus of its own, created by pci-hyperv below its VMBus device rather than in /sys/devices:
8 H100 SXM (domains 0001-0008), 8 ConnectX-7 NDR InfiniBand VFs (0101-0108, renamed
mlx5_ib0-7 as Azure's HPC images do, IPoIB ib0-7) and an accelerated-networking ConnectX-5 VF
(mlx5_an0, netdev enP8253s1) whose synthetic netvsc twin eth0 lives on VMBus itself. No PCI
bridges are visible; NUMA affinity comes from the vPCI devices. nvidia-peermem loaded."""

from fakesysfs import Host, ib_port, ipoib_mac, roce_port, mac_guid


def build():
    h = Host("azure-ndv5")
    h.cpus(sockets=2, cores=48, threads=1)
    for k in range(8):
        node = 0 if k < 4 else 1
        h.hv_pci_root(0x0001 + k, node).add("%04x:00:00.0" % (0x0001 + k), "h100-sxm")
    nics = []
    for k in range(8):
        node = 0 if k < 4 else 1
        nics.append(h.hv_pci_root(0x0101 + k, node).add("%04x:00:00.0" % (0x0101 + k), "cx7-ib-vf"))
    an = h.hv_pci_root(0x203d, 0).add("203d:00:00.0", "cx5-vf")
    for k, fn in enumerate(nics):
        guid = "0015:5dff:fe33:%04x" % (0xff00 + k)
        h.ib_device("mlx5_ib%d" % k, fn, guid, [ib_port(guid, 0x100 + k)], hca="MT4126", board="MSF0000000032")
    an_mac = "00:0d:3a:6e:4b:3c"
    h.ib_device("mlx5_an0", an, mac_guid(an_mac), [roce_port("enP8253s1", an_mac, "10.0.0.4", rate="100 Gb/sec (2X HDR)")],
                hca="MT4120", board="MSF0000000012")
    for k, fn in enumerate(nics):
        h.netdev("ib%d" % k, fn, ipoib_mac("0015:5dff:fe33:%04x" % (0xff00 + k)), kind="ib", speed=400000)
    h.netdev("enP8253s1", an, an_mac, speed=100000, mtu=1500)
    netvsc = h.vmbus_device("000d3a6e-4b3c-000d-3a6e-4b3c000d3a6e", "f8615163-df3e-46c5-913f-f2d2f965ed0e", "hv_netvsc")
    h.netdev("eth0", None, an_mac, speed=100000, mtu=1500, parent=netvsc)
    h.peermem(nvidia_peermem="550.90.07")
    return h
