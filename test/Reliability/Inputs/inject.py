"""Copies a braid-run --dump directory and sets one element of one .npy:
inject.py SRC DST FILE INDEX VALUE (VALUE a float: nan, inf, -inf, ...).
INDEX is a flat index, or first:T / last:T for column 0 of the row that
the first or last index of table T's bags looks up."""
import os
import shutil
import sys

import numpy as np

src, dst, name, index, value = sys.argv[1:6]
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst)
path = os.path.join(dst, name)
array = np.load(path)
if ":" in index:
    which, table = index.split(":")
    looked_up = np.load(os.path.join(dst, "inputs", table + ".indices.npy"))
    row = int(looked_up[0 if which == "first" else -1])
    array[row, 0] = float(value)
else:
    array.flat[int(index)] = float(value)
np.save(path, array)
