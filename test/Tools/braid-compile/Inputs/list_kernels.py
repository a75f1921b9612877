"""Prints the kernels braid-compile --target cuda listed in OUT/kernels,
one per line: name, chip, whether its cubin is an ELF file, and its spills
(read from kernels.json, whose paths must exist)."""
import json
import os
import sys

out = sys.argv[1]
listing = json.load(open(os.path.join(out, "kernels", "kernels.json")))
print("chips", " ".join(listing["chips"]))
for kernel in listing["kernels"]:
    ptx = open(os.path.join(out, kernel["ptx"])).read()
    assert ".entry " + kernel["name"] + "(" in ptx, kernel["name"]
    with open(os.path.join(out, kernel["cubin"]), "rb") as cubin:
        elf = cubin.read(4) == b"\x7fELF"
    spills = kernel["spill_store_bytes"] + kernel["spill_load_bytes"]
    print(kernel["name"], kernel["chip"], "cubin=" + ("ELF" if elf else "bad"),
          "spills=%d" % spills)
print(len(listing["kernels"]), "objects")
