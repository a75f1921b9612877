"""The TorchRec bridge, both ways.

from_torchrec builds a Braid model from TorchRec's EmbeddingBagConfig
objects (or dicts with their fields); plan_to_torchrec turns a Braid plan
into a TorchRec ShardingPlan (a dict of the same structure when torchrec is
not importable); plan_from_torchrec turns a ShardingPlan (or that dict) into
the plan.json that braid.compile(..., plan=...) prices and partitions.

TorchRec's names are Braid's: table_wise, row_wise, column_wise,
table_row_wise and data_parallel. A shard is rows [row_offset, +rows) and
columns [col_offset, +cols) of a table on one rank; TorchRec calls these
shard_offsets [row_offset, col_offset] and shard_sizes [rows, cols], placed
on "rank:R/cuda:R".
"""
from . import _native
from .model import load_model


def _torchrec():
    try:
        import torchrec  # noqa: F401
        from torchrec.distributed.types import (EmbeddingModuleShardingPlan,
                                                EnumerableShardingSpec, ParameterSharding,
                                                ShardingPlan, ShardMetadata)
        return {"EnumerableShardingSpec": EnumerableShardingSpec,
                "ParameterSharding": ParameterSharding, "ShardingPlan": ShardingPlan,
                "ShardMetadata": ShardMetadata,
                "EmbeddingModuleShardingPlan": EmbeddingModuleShardingPlan}
    except Exception:  # ImportError, or a torch/fbgemm that fails to load
        return None


def _field(table, name, default=None):
    if isinstance(table, dict):
        return table.get(name, default)
    return getattr(table, name, default)


def _pooling(table):
    pooling = _field(table, "pooling", "sum")
    name = getattr(pooling, "name", pooling)
    name = str(name).lower()
    if name not in ("sum", "mean", "max"):
        raise _native.Error(f"table '{_field(table, 'name')}': pooling {pooling!r} is not "
                            "sum, mean or max")
    return name


def from_torchrec(tables, batch_size, dense_features, bottom_mlp, top_mlp,
                  interaction="dot", pooling_factors=None, optimizer=None,
                  name="torchrec_model"):
    """A braid.Model from TorchRec table configs: `tables` are
    EmbeddingBagConfig objects or dicts with their fields (name,
    num_embeddings, embedding_dim, pooling, data_type); `pooling_factors`
    maps a table to its mean bag size (default 1)."""
    # The spec's own checks name a bad size; these arguments are walked
    # here first, so their kind is checked here.
    if isinstance(tables, (str, bytes)) or not hasattr(tables, "__iter__"):
        raise _native.Error("tables must be a list of EmbeddingBagConfig objects or dicts, "
                            f"not {type(tables).__name__}")
    for layers, argument in ((bottom_mlp, "bottom_mlp"), (top_mlp, "top_mlp")):
        if isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
            raise _native.Error(f"{argument} must be a list of layer widths, "
                                f"not {type(layers).__name__}")
    if pooling_factors is not None and not isinstance(pooling_factors, dict):
        raise _native.Error("pooling_factors must be a dict from table name to mean bag size, "
                            f"not {type(pooling_factors).__name__}")
    pooling_factors = pooling_factors or {}
    specs = []
    for table in tables:
        table_name = _field(table, "name")
        if not table_name:
            raise _native.Error("every table needs a name")
        spec = {"name": table_name,
                "num_embeddings": _field(table, "num_embeddings"),
                "embedding_dim": _field(table, "embedding_dim"),
                "pooling_factor": pooling_factors.get(table_name, 1),
                "pooling": _pooling(table)}
        data_type = _field(table, "data_type")
        data_type = str(getattr(data_type, "name", data_type or "fp32")).lower()
        dtypes = {"fp32": "f32", "fp16": "f16", "bf16": "bf16", "f32": "f32", "f16": "f16"}
        if data_type not in dtypes:
            raise _native.Error(f"table '{table_name}': data type {data_type!r} is not fp32, "
                                "fp16 or bf16")
        if dtypes[data_type] != "f32":
            spec["dtype"] = dtypes[data_type]
        specs.append(spec)
    model = {"name": name, "batch_size": batch_size, "dense_features": dense_features,
             "bottom_mlp": list(bottom_mlp), "top_mlp": list(top_mlp),
             "interaction": interaction, "tables": specs}
    if optimizer is not None:
        model["optimizer"] = optimizer
    return load_model(model)


def plan_to_torchrec(plan, world_size):
    """A Braid plan.json dict as a TorchRec ShardingPlan over the module ""
    (a dict {"": {table: {...}}} of the same fields without torchrec)."""
    tables = {}
    for table in plan["tables"]:
        shards = [{"rank": s["rank"], "shard_offsets": [s["row_offset"], s["col_offset"]],
                   "shard_sizes": [s["rows"], s["cols"]]} for s in table["shards"]]
        tables[table["name"]] = {
            "sharding_type": table["sharding"],
            "compute_kernel": "dense" if table["sharding"] == "data_parallel" else "fused",
            "ranks": [s["rank"] for s in table["shards"]],
            "shards": shards,
        }
    types = _torchrec()
    if types is None:
        return {"": tables}
    module = {}
    for name, table in tables.items():
        spec = None
        if table["sharding_type"] != "data_parallel":
            spec = types["EnumerableShardingSpec"]([
                types["ShardMetadata"](shard_offsets=s["shard_offsets"],
                                       shard_sizes=s["shard_sizes"],
                                       placement=f"rank:{s['rank']}/cuda:{s['rank'] % 8}")
                for s in table["shards"]])
        module[name] = types["ParameterSharding"](
            sharding_type=table["sharding_type"], compute_kernel=table["compute_kernel"],
            ranks=table["ranks"], sharding_spec=spec)
    return types["ShardingPlan"]({"": types["EmbeddingModuleShardingPlan"](module)})


def plan_from_torchrec(sharding_plan, tables=None):
    """A TorchRec ShardingPlan (or the dict plan_to_torchrec gives without
    torchrec) as a Braid plan.json dict. Data-parallel tables list every
    rank with the whole table, which needs the tables' sizes: `tables` maps
    a name to (num_embeddings, embedding_dim) when the plan lacks shards."""
    plan = getattr(sharding_plan, "plan", sharding_plan)
    if not isinstance(plan, dict) or not plan:
        raise _native.Error("a sharding plan maps module paths to their tables' shardings")
    entries = []
    try:
        for module in plan.values():
            for name, sharding in dict(module).items():
                entries.append(_table_from_torchrec(name, sharding, tables or {}))
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
        raise _native.Error(f"a malformed sharding plan: {type(error).__name__}: {error}") from None
    return {"tables": entries}


def _table_from_torchrec(name, sharding, sizes):
    get = (lambda key: sharding.get(key)) if isinstance(sharding, dict) else \
        (lambda key: getattr(sharding, key, None))
    kind = str(get("sharding_type"))
    ranks = list(get("ranks") or [])
    shards = []
    if isinstance(sharding, dict) and sharding.get("shards"):
        for s in sharding["shards"]:
            shards.append({"rank": s["rank"], "row_offset": s["shard_offsets"][0],
                           "col_offset": s["shard_offsets"][1], "rows": s["shard_sizes"][0],
                           "cols": s["shard_sizes"][1]})
    elif get("sharding_spec") is not None:
        for meta in get("sharding_spec").shards:
            rank = int(str(meta.placement).split("rank:")[1].split("/")[0])
            shards.append({"rank": rank, "row_offset": meta.shard_offsets[0],
                           "col_offset": meta.shard_offsets[1], "rows": meta.shard_sizes[0],
                           "cols": meta.shard_sizes[1]})
    elif name in sizes:
        rows, cols = sizes[name]
        shards = [{"rank": r, "row_offset": 0, "col_offset": 0, "rows": rows, "cols": cols}
                  for r in ranks]
    else:
        raise _native.Error(f"table '{name}': the plan gives no shards and no size")
    return {"name": name, "sharding": kind, "ranks": ranks, "shards": shards}
