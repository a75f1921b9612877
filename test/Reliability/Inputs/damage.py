"""Damages a library: damage.py PATH truncate|flip|edit-manifest."""
import sys

path, how = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
if how == "truncate":
    data = data[: len(data) // 2]
elif how == "flip":
    data[len(data) // 3] ^= 0x01
elif how == "edit-manifest":
    # Change a dtype inside the embedded manifest, keeping the length.
    at = data.index(b'"dtype": "f32"')
    data[at : at + 14] = b'"dtype": "f64"'
open(path, "wb").write(data)
