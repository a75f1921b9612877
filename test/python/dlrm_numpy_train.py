"""A NumPy DLRM training step, written from the model spec and the training
issue's formulas alone: forward, BCE-with-logits loss (mean over the batch),
hand-written backward, and the optimizers (torch.optim's SGD, Adagrad and
Adam; FBGEMM's exact row-wise Adagrad for tables). It shares no code with
Braid. Computes in float64.
"""
import numpy as np


def _pool(table, indices, offsets, mode):
    """Pooled bags and, per bag, the rows read and how each column's gradient
    goes back to them."""
    bags = len(offsets) - 1
    out = np.zeros((bags, table.shape[1]))
    routes = []
    for b in range(bags):
        rows = indices[offsets[b]:offsets[b + 1]]
        if len(rows) == 0:
            routes.append(None)
            continue
        values = table[rows]
        if mode == "sum":
            out[b] = values.sum(0)
        elif mode == "mean":
            out[b] = values.mean(0)
        else:
            out[b] = values.max(0)
        routes.append((rows, values))
    return out, routes


def _unpool(grad, routes, mode, dim):
    """Row gradients {row: [dim]} of one table."""
    rows_grad = {}
    for b, route in enumerate(routes):
        if route is None:
            continue
        rows, values = route
        if mode == "max":
            winners = values.argmax(0)  # the first row holding the max
            for c in range(dim):
                row = rows[winners[c]]
                rows_grad.setdefault(row, np.zeros(dim))[c] += grad[b, c]
        else:
            scale = 1.0 / len(rows) if mode == "mean" else 1.0
            for row in rows:
                rows_grad.setdefault(row, np.zeros(dim))
                rows_grad[row] += grad[b] * scale
    return rows_grad


def _update(opt, step, w, g, state, key):
    kind, lr = opt["type"], opt["lr"]
    if kind == "sgd":
        return w - lr * g
    if kind == "adagrad":
        s = state.get(key, np.zeros_like(w)) + g * g
        state[key] = s
        return w - lr * g / (np.sqrt(s) + opt.get("eps", 1e-10))
    if kind == "rowwise_adagrad":
        s = state.get(key, 0.0) + np.mean(g * g)
        state[key] = s
        return w - lr * g / (np.sqrt(s) + opt.get("eps", 1e-8))
    b1, b2, eps = opt.get("beta1", 0.9), opt.get("beta2", 0.999), opt.get("eps", 1e-8)
    m = b1 * state.get(key + ".m", np.zeros_like(w)) + (1 - b1) * g
    v = b2 * state.get(key + ".v", np.zeros_like(w)) + (1 - b2) * g * g
    state[key + ".m"], state[key + ".v"] = m, v
    return w - lr * (m / (1 - b1 ** step)) / (np.sqrt(v / (1 - b2 ** step)) + eps)


def train(spec, inputs, weights, labels, steps):
    """Returns (losses, weights after `steps` steps, optimizer state)."""
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    opt = spec["optimizer"]
    state, losses = {}, []
    nb, nt = len(spec["bottom_mlp"]), len(spec["top_mlp"])
    relu = lambda v: np.maximum(v, 0)
    for step in range(1, steps + 1):
        grads = {}
        # Forward.
        acts = [inputs["dense"].astype(np.float64)]
        for i in range(nb):
            acts.append(relu(acts[-1] @ w[f"bottom_mlp.{i}.weight"].T + w[f"bottom_mlp.{i}.bias"]))
        x = acts[-1]
        pooled, routes = [], []
        for t in spec["tables"]:
            p, r = _pool(w[t["name"]], inputs[t["name"] + ".indices"],
                         inputs[t["name"] + ".offsets"], t.get("pooling", "sum"))
            pooled.append(p)
            routes.append(r)
        if spec["interaction"] == "dot":
            stacked = np.stack([x] + pooled, axis=1)
            li, lj = np.tril_indices(len(pooled) + 1, k=-1)
            z = np.concatenate([x, (stacked @ stacked.transpose(0, 2, 1))[:, li, lj]], axis=1)
        else:
            z = np.concatenate([x] + pooled, axis=1)
        cross = []
        if spec["interaction"] == "dcn":
            x0 = z
            for l in range(spec["dcn_num_layers"]):
                low = z @ w[f"dcn.{l}.V"].T
                mixed = low @ w[f"dcn.{l}.W"].T + w[f"dcn.{l}.bias"]
                cross.append((z, low, mixed))
                z = x0 * mixed + z
        top = [z]
        for i in range(nt):
            pre = top[-1] @ w[f"top_mlp.{i}.weight"].T + w[f"top_mlp.{i}.bias"]
            top.append(pre if i == nt - 1 else relu(pre))
        logit = top[-1][:, 0]
        y = labels.astype(np.float64)
        losses.append(np.mean(np.maximum(logit, 0) - logit * y + np.log1p(np.exp(-np.abs(logit)))))
        # Backward.
        g = ((1 / (1 + np.exp(-logit)) - y) / len(y))[:, None]
        for i in reversed(range(nt)):
            if i != nt - 1:
                g = g * (top[i + 1] > 0)
            grads[f"top_mlp.{i}.weight"] = g.T @ top[i]
            grads[f"top_mlp.{i}.bias"] = g.sum(0)
            g = g @ w[f"top_mlp.{i}.weight"]
        if cross:
            g_x0 = np.zeros_like(g)
            for l in reversed(range(len(cross))):
                xl, low, mixed = cross[l]
                g_mixed = g * x0
                g_x0 += g * mixed
                grads[f"dcn.{l}.W"] = g_mixed.T @ low
                grads[f"dcn.{l}.bias"] = g_mixed.sum(0)
                g_low = g_mixed @ w[f"dcn.{l}.W"]
                grads[f"dcn.{l}.V"] = g_low.T @ xl
                g = g + g_low @ w[f"dcn.{l}.V"]
            g = g + g_x0
        d = x.shape[1]
        if spec["interaction"] == "dot":
            gx = g[:, :d].copy()
            feats = [x] + pooled
            gf = [gx] + [np.zeros_like(p) for p in pooled]
            column = d
            for i in range(1, len(feats)):
                for k in range(i):
                    gf[i] += g[:, column:column + 1] * feats[k]
                    gf[k] += g[:, column:column + 1] * feats[i]
                    column += 1
            gx, gp = gf[0], gf[1:]
        else:
            gx = g[:, :d]
            gp, column = [], d
            for p in pooled:
                gp.append(g[:, column:column + p.shape[1]])
                column += p.shape[1]
        row_grads = {t["name"]: _unpool(gp[j], routes[j], t.get("pooling", "sum"), pooled[j].shape[1])
                     for j, t in enumerate(spec["tables"])}
        g = gx
        for i in reversed(range(nb)):
            g = g * (acts[i + 1] > 0)
            grads[f"bottom_mlp.{i}.weight"] = g.T @ acts[i]
            grads[f"bottom_mlp.{i}.bias"] = g.sum(0)
            g = g @ w[f"bottom_mlp.{i}.weight"]
        # Updates.
        for name, grad in grads.items():
            w[name] = _update(opt["dense"], step, w[name], grad, state, name)
        for table, rows in row_grads.items():
            for row, grad in rows.items():
                w[table][row] = _update(opt["embedding"], step, w[table][row], grad,
                                        state, f"{table}[{row}]")
    return np.array(losses), w, state
