"""A NumPy DLRM forward pass, written from the model spec alone.

It shares no code with Braid, so agreeing with it checks the importer and
the reference semantics together. Computes in float64.
"""
import numpy as np


def embedding_bag(table, indices, offsets, mode):
    bags = len(offsets) - 1
    out = np.zeros((bags, table.shape[1]))
    for b in range(bags):
        rows = table[indices[offsets[b]:offsets[b + 1]]].astype(np.float64)
        if len(rows) == 0:
            continue
        out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


def forward(spec, load_input, load_weight):
    relu = lambda v: np.maximum(v, 0)
    x = load_input("dense").astype(np.float64)
    for i in range(len(spec["bottom_mlp"])):
        x = relu(x @ load_weight(f"bottom_mlp.{i}.weight").T + load_weight(f"bottom_mlp.{i}.bias"))
    embeddings = [
        embedding_bag(load_weight(t["name"]), load_input(t["name"] + ".indices"),
                      load_input(t["name"] + ".offsets"), t.get("pooling", "sum"))
        for t in spec["tables"]
    ]
    if spec["interaction"] == "dot":
        stacked = np.stack([x] + embeddings, axis=1)          # [B, F+1, d]
        gram = stacked @ stacked.transpose(0, 2, 1)            # [B, F+1, F+1]
        li, lj = np.tril_indices(len(embeddings) + 1, k=-1)    # i > j, row-major
        z = np.concatenate([x, gram[:, li, lj]], axis=1)
    else:
        z = np.concatenate([x] + embeddings, axis=1)
    if spec["interaction"] == "dcn":
        # DCN-v2's low-rank cross layers: x_{l+1} = x0 * (W_l (V_l x_l) + b_l) + x_l.
        x0 = z
        for l in range(spec["dcn_num_layers"]):
            low = z @ load_weight(f"dcn.{l}.V").T
            z = x0 * (low @ load_weight(f"dcn.{l}.W").T + load_weight(f"dcn.{l}.bias")) + z
    layers = len(spec["top_mlp"])
    for i in range(layers):
        z = z @ load_weight(f"top_mlp.{i}.weight").T + load_weight(f"top_mlp.{i}.bias")
        z = 1 / (1 + np.exp(-z)) if i == layers - 1 else relu(z)
    return z
