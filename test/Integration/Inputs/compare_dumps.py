"""Compares two braid-run --dump directories file by file: every .npy of
the first must exist in the second with the same shape and values within
a relative tolerance. Prints one line: the files compared and the largest
difference, or the first mismatch (exit 1)."""
import os
import sys

import numpy as np

first, second, tolerance = sys.argv[1], sys.argv[2], float(sys.argv[3])
worst, compared = 0.0, 0
for root, _, files in os.walk(first):
    for name in sorted(files):
        if not name.endswith(".npy"):
            continue
        path = os.path.join(root, name)
        other = os.path.join(second, os.path.relpath(path, first))
        a, b = np.load(path), np.load(other)
        if a.shape != b.shape:
            print("shape mismatch:", os.path.relpath(path, first), a.shape, b.shape)
            sys.exit(1)
        scale = max(1.0, float(np.max(np.abs(a))) if a.size else 1.0)
        difference = float(np.max(np.abs(a - b))) / scale if a.size else 0.0
        if not difference <= tolerance:
            print("mismatch:", os.path.relpath(path, first), difference)
            sys.exit(1)
        worst = max(worst, difference)
        compared += 1
print("compared %d files, largest relative difference %s" %
      (compared, "within tolerance" if compared else "none"))
