"""Prints the kernels braid-compile --target cuda listed in OUT/kernels,
one per line: name, chip, whether its cubin is an ELF file, whether the
kernel's fat binary (what the program embeds) holds an ELF image for that
chip, and its spills (read from kernels.json, whose paths, relative to
OUT/kernels, must exist)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fatbin_images import images  # noqa: E402

kernels = os.path.join(sys.argv[1], "kernels")
listing = json.load(open(os.path.join(kernels, "kernels.json")))
print("chips", " ".join(listing["chips"]))
for kernel in listing["kernels"]:
    ptx = open(os.path.join(kernels, kernel["ptx"])).read()
    assert ".entry " + kernel["name"] + "(" in ptx, kernel["name"]
    with open(os.path.join(kernels, kernel["cubin"]), "rb") as cubin:
        elf = cubin.read(4) == b"\x7fELF"
    embedded = any(kind == "elf" and arch == kernel["chip"] and body[:4] == b"\x7fELF"
                   for kind, arch, body in images(os.path.join(kernels, kernel["fatbin"])))
    spills = kernel["spill_store_bytes"] + kernel["spill_load_bytes"]
    print(kernel["name"], kernel["chip"], "cubin=" + ("ELF" if elf else "bad"),
          "fatbin=" + ("yes" if embedded else "no"), "spills=%d" % spills)
print(len(listing["kernels"]), "objects")
