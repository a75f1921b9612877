"""Writes a copy of a model spec with fields replaced:
edit_model.py IN OUT PATH=VALUE..., PATH like batch_size or
tables.0.pooling_factor, VALUE a JSON literal."""
import json
import sys

src, dst = sys.argv[1:3]
model = json.load(open(src))
for edit in sys.argv[3:]:
    path, value = edit.split("=", 1)
    node = model
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last = keys[-1]
    node[int(last) if isinstance(node, list) else last] = json.loads(value)
json.dump(model, open(dst, "w"))
