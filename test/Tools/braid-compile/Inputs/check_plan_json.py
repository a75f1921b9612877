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
                "planner_estimate", "tables", "dense_layers"):
        assert key in plan, f"missing {key}"
    predicted = plan["predicted"]
    ranks = len(predicted["per_rank_ms"])
    assert len(predicted["table_bytes"]) == ranks
    # The iteration is the simulated program's makespan: the last rank's end.
    assert abs(predicted["iteration_ms"] - max(predicted["per_rank_ms"])) <= 1e-9
    assert predicted["per_rank_ms"][predicted["critical_rank"]] == max(predicted["per_rank_ms"])
    breakdown = predicted["breakdown"]
    assert all(v >= 0 for v in breakdown.values()), breakdown
    assert breakdown["exposed_comm_ms"] <= predicted["iteration_ms"] + 1e-9
    # The planner's embedding stage, its bound, and its forward pass: the
    # embedding stage plus its dense stage.
    estimate = plan["planner_estimate"]
    assert len(estimate["per_rank_ms"]) == ranks
    assert plan["lower_bound_ms"] <= estimate["embedding_stage_ms"] + 1e-9
    assert estimate["dense_stage_ms"] >= 0
    assert abs(estimate["forward_ms"] - estimate["embedding_stage_ms"] - estimate["dense_stage_ms"]) <= 1e-9
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
