#!/usr/bin/env python3
"""Oracle checks for one sysfs fixture (tests/sysfs/CMakeLists.txt registers them).

  prepare    generate the fake root (or take the captured snapshot), snapshot it, render it,
             snapshot the rendered tree; also render a selection of devices
  golden     the snapshot of the generated root equals the committed NAME.snapshot.json
  roundtrip  snapshot -> render -> snapshot gives the same snapshot
  select     a rendered selection reads back as `rdmaproxy sysfs select` says
  nccl_walk  NCCL's realpath/pci_bus/subsystem walk succeeds for every GPU and NIC of the
             rendered tree and gives the same result as on the source root
  ibverbs    libibverbs' sysfs fallback (NETLINK_RDMA refused, SYSFS_PATH) lists the
             snapshot's devices with their GUIDs from the rendered tree (and the source root)
  hwloc      lstopo (hwloc, Debian) places every GPU, NIC and NVSwitch under the same bridges
             and NUMA node on the rendered tree as on the source root
  selftest   the oracles fail on a damaged copy of the rendered tree (NUMA flattened, a
             subsystem link and a modalias removed): they are not tautologies
  cleanup    removes the work directory (unless RXP_KEEP_SYSFS_WORK is set)
Every check prints what it compared and exits 1 with the differences when they disagree.
"""

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        sys.exit("oracle: %s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout


def load(path):
    with open(path) as f:
        j = json.load(f)
    j.pop("comment", None)
    return j


def same(a_path, b_path, what):
    a, b = load(a_path), load(b_path)
    if a == b:
        print("oracle: %s: %s and %s agree" % (what, a_path, b_path))
        return
    diff = difflib.unified_diff(json.dumps(a, indent=1, sort_keys=True).splitlines(),
                                json.dumps(b, indent=1, sort_keys=True).splitlines(),
                                a_path, b_path, lineterm="", n=2)
    sys.exit("oracle: %s: they differ:\n%s" % (what, "\n".join(list(diff)[:80])))


def cls(fn):
    return int(fn["attrs"]["class"], 16)


def gpus_and_nics(snap):
    """PCI functions NCCL and RxDM care about: GPUs, NVSwitches, NICs."""
    out = []
    for fn in snap["pci_functions"]:
        c = cls(fn)
        if c >> 16 in (0x02, 0x03) or (c >> 8 == 0x0680 and fn["attrs"]["vendor"] == "0x10de"):
            out.append(fn["bdf"])
    return out


def natural(name):
    import re
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def rendered_dir(a):
    return a.rendered or os.path.join(a.work, "rendered")


# ---- prepare ----

def prepare(a):
    w = a.work
    if os.path.exists(w):
        shutil.rmtree(w)
    os.makedirs(w)
    tool = a.tool
    if a.generated:
        run([sys.executable, os.path.join(a.data, "mkfakeroot.py"), a.fixture, os.path.join(w, "root")])
        run([tool, "sysfs", "snapshot", "--root", os.path.join(w, "root", "sys"), "-o", os.path.join(w, "host.json")])
    else:
        shutil.copy(os.path.join(a.data, a.fixture + ".snapshot.json"), os.path.join(w, "host.json"))
    run([tool, "sysfs", "render", os.path.join(w, "host.json"), "-o", os.path.join(w, "rendered")])
    run([tool, "sysfs", "snapshot", "--root", os.path.join(w, "rendered"), "-o", os.path.join(w, "rendered.json")])
    snap = load(os.path.join(w, "host.json"))
    devices = sorted((d["name"] for d in snap["rdma_devices"]), key=natural)
    if len(devices) >= 2:
        pick = ["--devices", "%s,%s" % (devices[0], devices[-1])]
    else:
        pick = ["--netdevs", sorted(n["name"] for n in snap["netdevs"])[0]]
    run([tool, "sysfs", "render", os.path.join(w, "host.json"), "-o", os.path.join(w, "rendered-sel"),
         "--write-selected", os.path.join(w, "selected.json")] + pick)
    run([tool, "sysfs", "snapshot", "--root", os.path.join(w, "rendered-sel"), "-o", os.path.join(w, "rendered-sel.json")])
    print("oracle: prepared %s in %s (selection: %s)" % (a.fixture, w, " ".join(pick)))


# ---- checks ----

def golden(a):
    same(os.path.join(a.data, a.fixture + ".snapshot.json"), os.path.join(a.work, "host.json"),
         "golden snapshot (regenerate with tests/data/sysfs/regen-goldens.sh after an intended change)")


def roundtrip(a):
    same(os.path.join(a.work, "host.json"), os.path.join(a.work, "rendered.json"), "snapshot -> render -> snapshot")


def select(a):
    same(os.path.join(a.work, "selected.json"), os.path.join(a.work, "rendered-sel.json"), "select -> render -> snapshot")


def nccl_walk(a):
    snap = load(os.path.join(a.work, "host.json"))
    args = []
    for bdf in gpus_and_nics(snap):
        fn = next(f for f in snap["pci_functions"] if f["bdf"] == bdf)
        if cls(fn) >> 16 == 0x03 or cls(fn) >> 8 == 0x0680:  # GPUs and NVSwitches
            args += ["--gpu", bdf]
    for d in snap["rdma_devices"]:
        args += ["--ib", d["name"]]
    for n in snap["netdevs"]:
        args += ["--net", n["name"]]
    rendered = run([a.walk, rendered_dir(a)] + args)
    print(rendered, end="")
    if a.generated:
        source = run([a.walk, os.path.join(a.work, "root", "sys")] + args)
        if source != rendered:
            diff = difflib.unified_diff(source.splitlines(), rendered.splitlines(), "source", "rendered", lineterm="")
            sys.exit("oracle: NCCL walk differs between source and rendered:\n" + "\n".join(diff))
        print("oracle: NCCL walk identical on the source root and the rendered tree")


def ibv_devices(sysfs, names, a):
    out = run([a.ibv_fallback, sysfs, " ".join(names), a.deny, "ibv_devices"])
    found = {}
    for line in out.splitlines()[2:]:
        parts = line.split()
        if len(parts) == 2:
            found[parts[0]] = parts[1]
    return found


def ibverbs(a):
    snap = load(os.path.join(a.work, "host.json"))
    if not snap["rdma_devices"]:
        # Like a kernel without ib_uverbs: no class/infiniband_verbs, libibverbs finds nothing.
        rendered = os.path.join(a.work, "rendered")
        if os.path.exists(os.path.join(rendered, "class", "infiniband_verbs")):
            sys.exit("oracle: a host without RDMA devices got class/infiniband_verbs")
        r = subprocess.run([a.ibv_fallback, rendered, "", a.deny, "ibv_devices"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if "Function not implemented" not in r.stdout and len(r.stdout.splitlines()) > 2:
            sys.exit("oracle: libibverbs found devices on a host without any:\n" + r.stdout)
        print("oracle: no RDMA devices, and libibverbs finds none: " + r.stdout.strip().splitlines()[-1])
        return
    expected = {d["name"]: d["attrs"]["node_guid"].replace(":", "")
                for d in snap["rdma_devices"] if d.get("uverbs")}
    names = sorted({d["uverbs"]["name"] for d in snap["rdma_devices"] if d.get("uverbs")})
    rendered = rendered_dir(a)
    got = ibv_devices(rendered, names, a)
    if got != expected:
        sys.exit("oracle: libibverbs' sysfs fallback on the rendered tree lists %s, expected %s" % (got, expected))
    print("oracle: libibverbs sysfs fallback lists %d devices from the rendered tree: %s" %
          (len(got), ", ".join(sorted(got, key=natural))))
    # Controls: without /dev nodes libibverbs drops every device (so the listing above did
    # come from the tree and its uverbs entries), and the source root lists the same.
    if expected and ibv_devices(rendered, [], a):
        sys.exit("oracle: libibverbs listed devices without their /dev nodes: the check proves nothing")
    if a.generated:
        src = ibv_devices(os.path.join(a.work, "root", "sys"), names, a)
        if src != got:
            sys.exit("oracle: the source root lists %s but the rendered tree %s" % (src, got))
        print("oracle: the source root lists the same devices")


def lstopo(fsroot):
    env = dict(os.environ)
    env.pop("HWLOC_COMPONENTS", None)
    xml = run(["lstopo-no-graphics", "-i", fsroot, "--of", "xml", "--whole-io"], env=env)
    root = ET.fromstring(xml)
    parent = {c: p for p in root.iter() for c in p}
    return root, parent


def placement(obj, parent):
    """The I/O ancestors of obj (bridges by BDF) and the normal object it hangs from."""
    chain = []
    p = parent.get(obj)
    while p is not None and p.get("type") in ("Bridge", "PCIDev", "OSDev"):
        chain.append(p.get("pci_busid") or "HostBridge")
        p = parent.get(p)
    where = "%s#%s nodeset=%s" % (p.get("type"), p.get("os_index"), p.get("nodeset")) if p is not None else "?"
    return " > ".join(reversed(chain)) + " | " + where


def hwloc(a):
    snap = load(os.path.join(a.work, "host.json"))
    # The sandbox's view: the rendered tree, plus what the policy passes through (the CPU
    # topology) from the host, plus the host's /proc.
    # A directory of its own: selftest runs this check on damaged trees, possibly in parallel.
    view = tempfile.mkdtemp(prefix="hwloc-view-", dir=a.work)
    shutil.copytree(rendered_dir(a), os.path.join(view, "sys"), symlinks=True)
    # The passthrough points (synthesize.cc kPassthroughRules: the CPU topology and the
    # cgroup tree, whose cpuset limits hwloc applies) get the source's own, as a sandbox would.
    for rel in (("devices", "system", "cpu"), ("fs", "cgroup")):
        point = os.path.join(view, "sys", *rel)
        source = os.path.join(a.work, "root", "sys", *rel)
        if os.path.isdir(point) and os.path.isdir(source):
            os.rmdir(point)
            shutil.copytree(source, point, symlinks=True)
    # Everything of the source root besides sys: its /proc, and the cgroup mounts /proc/mounts
    # may name outside /sys (hwloc's captures keep them at /dev/cpuset or /cgroup).
    for top in sorted(os.listdir(os.path.join(a.work, "root"))):
        if top != "sys" and os.path.isdir(os.path.join(a.work, "root", top)):
            shutil.copytree(os.path.join(a.work, "root", top), os.path.join(view, top), symlinks=True)
    try:
        trees = {"source": lstopo(os.path.join(a.work, "root")), "rendered": lstopo(view)}
    finally:  # lstopo failing (an fsroot it does not recognize) exits: leave no view behind
        shutil.rmtree(view)
    wanted = [("pci", b) for b in gpus_and_nics(snap)]
    wanted += [("osdev", d["name"]) for d in snap["rdma_devices"] if d["pci"]]
    wanted += [("osdev", n["name"]) for n in snap["netdevs"] if n["pci"]]
    bad = []
    for kind, key in wanted:
        places = {}
        for side, (root, parent) in trees.items():
            if kind == "pci":
                objs = [o for o in root.iter("object") if o.get("pci_busid") == key]
            else:
                objs = [o for o in root.iter("object") if o.get("type") == "OSDev" and o.get("name") == key]
            places[side] = placement(objs[0], parent) if objs else "MISSING"
        line = "%s %s: %s" % (kind, key, places["rendered"])
        if places["source"] != places["rendered"] or places["rendered"] == "MISSING":
            bad.append("%s\n    source:   %s\n    rendered: %s" % (line, places["source"], places["rendered"]))
        else:
            print("oracle: " + line)
    # NUMA nodes by OS index, with their size (local_memory, from nodeN/meminfo's MemTotal).
    numa = [{o.get("os_index"): o.get("local_memory") for o in r.iter("object") if o.get("type") == "NUMANode"}
            for r, _ in trees.values()]
    if numa[0] != numa[1]:
        bad.append("NUMA nodes (os_index: local_memory): source %s, rendered %s" % tuple(numa))
    if bad:
        sys.exit("oracle: hwloc places these differently:\n" + "\n".join(bad))
    print("oracle: hwloc agrees on %d objects and %d NUMA nodes with their memory" % (len(wanted), len(numa[0])))


def selftest(a):
    """Each oracle must reject a tree damaged the way a careless synthesizer would."""
    snap = load(os.path.join(a.work, "host.json"))
    gpu = next(f for f in snap["pci_functions"] if cls(f) >> 16 == 0x03 and f["attrs"]["vendor"] == "0x10de")
    nics = [d["pci"] for d in snap["rdma_devices"] if d["pci"]] + [n["pci"] for n in snap["netdevs"] if n["pci"]]
    nic = nics[0]
    other_node = next(n for n in snap["numa"]["nodes"] if str(n["id"]) != gpu["attrs"]["numa_node"])

    def top(bdf):
        fn = next(f for f in snap["pci_functions"] if f["bdf"] == bdf)
        return top(fn["parent"]) if fn["parent"] else bdf

    def rewrite(path, text):
        os.chmod(path, 0o644)
        with open(path, "w") as f:
            f.write(text + "\n")

    def flatten_numa(d):  # gVisor-style: the GPU's root port moved to the other NUMA node
        for fn in snap["pci_functions"]:
            if top(fn["bdf"]) == top(gpu["bdf"]):
                base = os.path.join(d, "bus", "pci", "devices", fn["bdf"])
                rewrite(os.path.join(base, "numa_node"), str(other_node["id"]))
                rewrite(os.path.join(base, "local_cpus"), other_node["cpumap"])
                rewrite(os.path.join(base, "local_cpulist"), other_node["cpulist"])

    def drop_subsystem(d):
        os.unlink(os.path.join(d, "bus", "pci", "devices", nic, "subsystem"))

    def drop_modalias(d):
        os.unlink(os.path.join(d, "bus", "pci", "devices", nic, "modalias"))

    def drop_meminfo(d):  # NUMA nodes without their size
        node_dir = os.path.join(d, "devices", "system", "node")
        for n in snap["numa"]["nodes"]:
            path = os.path.join(node_dir, "node%d" % n["id"], "meminfo")
            if os.path.exists(path):
                os.chmod(os.path.dirname(path), 0o755)
                os.unlink(path)

    cases = [("hwloc", flatten_numa), ("nccl_walk", drop_subsystem)]
    if any("mem_total_kb" in n for n in snap["numa"]["nodes"]):
        cases.append(("hwloc", drop_meminfo))
    if snap["rdma_devices"]:
        cases.append(("ibverbs", drop_modalias))
    for check, damage in cases:
        d = os.path.join(a.work, "damaged-" + damage.__name__)
        if os.path.exists(d):
            shutil.rmtree(d)
        shutil.copytree(os.path.join(a.work, "rendered"), d, symlinks=True)
        damage(d)
        argv = [sys.executable, __file__, check, "--rendered", d] + [x for x in sys.argv[2:]]
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode == 0:
            sys.exit("oracle: selftest: %s passed on a tree damaged by %s:\n%s" % (check, damage.__name__, r.stdout))
        lines = r.stdout.splitlines()
        why = ([l for l in lines if "FAILED" in l] + [l for l in lines if "rendered:" in l or "lists" in l]
               + lines[-1:])
        print("oracle: selftest: %s rejects %s: %s" % (check, damage.__name__, why[0][:200]))
        shutil.rmtree(d)


def cleanup(a):
    if os.environ.get("RXP_KEEP_SYSFS_WORK"):
        print("oracle: keeping %s" % a.work)
    elif os.path.exists(a.work):
        # Only the fixture's own directory: removing the shared per-build-tree parent would
        # race with another fixture's prepare creating its directory in it (ctest -j).
        shutil.rmtree(a.work)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("check", choices=["prepare", "golden", "roundtrip", "select", "nccl_walk", "ibverbs", "hwloc",
                                     "selftest", "cleanup"])
    p.add_argument("--rendered", help="check this tree instead of the fixture's rendering")
    p.add_argument("--tool", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--fixture", required=True)
    p.add_argument("--generated", action="store_true")
    p.add_argument("--walk")
    p.add_argument("--deny")
    p.add_argument("--ibv-fallback")
    a = p.parse_args()
    globals()[a.check](a)


if __name__ == "__main__":
    main()
