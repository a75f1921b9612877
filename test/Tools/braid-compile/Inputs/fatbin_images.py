"""Lists the images in a CUDA fat binary, one per line: kind (elf or ptx)
and architecture, and for an ELF image whether it is one (its magic).

The layout read here is what fatbinary writes: a 16-byte header (magic
0xBA55ED50, version, header size, then the size of what follows as a
64-bit count), then each image as its own header (kind at offset 0: 1 PTX,
2 ELF; header size at 4; payload size at 8; architecture at 28) and its
payload."""
import struct
import sys


def images(path):
    """The fat binary's images as (kind, "sm_NN", payload) triples."""
    data = open(path, "rb").read()
    magic, _version, header, size = struct.unpack_from("<IHHQ", data, 0)
    assert magic == 0xBA55ED50, "%s: not a fat binary (magic %#x)" % (path, magic)
    offset, end = header, header + size
    assert end <= len(data), "%s: truncated: %d of %d bytes" % (path, len(data), end)
    found = []
    while offset < end:
        kind, _, image_header, payload = struct.unpack_from("<HHIQ", data, offset)
        (arch,) = struct.unpack_from("<I", data, offset + 28)
        body = data[offset + image_header:offset + image_header + payload]
        found.append(({1: "ptx", 2: "elf"}.get(kind, "kind%d" % kind), "sm_%d" % arch, body))
        offset += image_header + payload
    return found


if __name__ == "__main__":
    for kind, arch, body in images(sys.argv[1]):
        extra = ""
        if kind == "elf":
            extra = " magic=" + ("ELF" if body[:4] == b"\x7fELF" else "bad")
        print("%s %s%s" % (kind, arch, extra))
