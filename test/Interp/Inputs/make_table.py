"""Writes a table NAME.npy of ROWS x DIM with t[r][c] = SCALE * (10 * r + c).

Readable values let the lit tests state expected pooled results exactly.
usage: make_table.py DIR NAME ROWS DIM [DTYPE [SCALE]]
"""
import os
import sys

import numpy as np

out_dir, name, rows, dim = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
dtype = sys.argv[5] if len(sys.argv) > 5 else "float32"
scale = float(sys.argv[6]) if len(sys.argv) > 6 else 1.0
os.makedirs(out_dir, exist_ok=True)
table = (scale * (10 * np.arange(rows)[:, None] + np.arange(dim)[None, :])).astype(dtype)
np.save(os.path.join(out_dir, name + ".npy"), table)
