"""Writes a NumPy array given as a Python literal: write_npy.py PATH LITERAL DTYPE."""
import ast
import os
import sys

import numpy as np

path, literal, dtype = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
np.save(path, np.array(ast.literal_eval(literal), dtype=dtype))
