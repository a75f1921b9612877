"""Checks a braid-compile plan.json against the documented schema: every
table's shards tile it exactly, the ranks match the shards, and the
predicted per-rank lists have one entry per rank."""
import json
import sys

SHARDINGS = {"table_wise", "row_wise", "column_wise", "table_row_wise",
             "data_parallel"}


def main(path):
    plan = json.load(open(path))
    for key in ("planner", "planning_seconds", "lower_bound_ms", "predicted",
                "tables"):
        assert key in plan, f"missing {key}"
    predicted = plan["predicted"]
    ranks = len(predicted["per_rank_ms"])
    assert len(predicted["peak_memory_bytes"]) == ranks
    assert predicted["iteration_ms"] >= max(predicted["per_rank_ms"]) - 1e-9
    assert plan["lower_bound_ms"] <= predicted["iteration_ms"]
    # The forward pass is the embedding stage plus the dense stage.
    assert predicted["dense_ms"] >= 0
    assert abs(predicted["forward_ms"] - predicted["iteration_ms"] - predicted["dense_ms"]) <= 1e-9
    for table in plan["tables"]:
        assert table["sharding"] in SHARDINGS, table["sharding"]
        shards = table["shards"]
        assert table["ranks"] == [s["rank"] for s in shards]
        assert all(0 <= s["rank"] < ranks for s in shards)
        if table["sharding"] == "data_parallel":
            continue
        area = sum(s["rows"] * s["cols"] for s in shards)
        rows = max(s["row_offset"] + s["rows"] for s in shards)
        cols = max(s["col_offset"] + s["cols"] for s in shards)
        assert area == rows * cols, f"{table['name']}: shards do not tile"
    print(f"plan.json ok: {len(plan['tables'])} tables on {ranks} ranks")


if __name__ == "__main__":
    main(sys.argv[1])
