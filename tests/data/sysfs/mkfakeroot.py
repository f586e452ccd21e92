#!/usr/bin/env python3
"""mkfakeroot.py NAME OUT: builds the fake host root of fixture NAME (hosts/NAME.py) into
OUT/{sys,proc}, deterministically. OUT must not exist. Fixtures: dgx_h100, a100_bond,
gke_a3_mega, roce_vfs, azure_ndv5."""

import importlib
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "hosts"))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    name, out = sys.argv[1], sys.argv[2]
    if os.path.exists(out):
        sys.exit("mkfakeroot: %s exists; remove it first" % out)
    host = importlib.import_module(name).build()
    tmp = out + ".tmp"
    if os.path.exists(tmp):
        import shutil
        shutil.rmtree(tmp)
    count = host.write(tmp)
    os.rename(tmp, out)
    print("mkfakeroot: %s: %d entries in %s" % (name, count, out))


if __name__ == "__main__":
    main()
