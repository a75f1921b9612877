"""Checks bench/collectives/data (see collectives_corpus.test)."""
import json
import pathlib
import sys

data, root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
split = json.loads((data / "split.json").read_text())["files"]
factor = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
          "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n}
problems = []
sweeps = sorted(p for p in data.glob("*.json") if p.name != "split.json")
# The halves in their order; a blind half whose sweeps have joined the
# calibration half is not printed.
halves = {"calibration": 0, "validation": 0, "fresh3": 0, "fresh4": 0, "fresh5": 0,
          "excluded": 0}
cover = {"calibration": set(), "validation": set()}
for path in sweeps:
    sweep = json.loads(path.read_text())
    entry = split.get(path.stem)
    if entry is None:
        problems.append(f"{path.name}: not in split.json")
        continue
    halves[entry["half"]] += 1
    if entry["half"] == "excluded" and not entry.get("why"):
        problems.append(f"{path.name}: excluded without a reason")
    if "known_gap" in entry and (entry["half"] == "excluded" or not entry["known_gap"]):
        problems.append(f"{path.name}: a known_gap must explain a predicted sweep")
    # An excluded sweep may have no description (a GPU none covers).
    hw = entry["hardware"]
    hw_path = root / hw if hw.endswith(".json") else root / "examples" / "clusters" / f"{hw}.json"
    if not hw_path.exists() and not (entry["half"] == "excluded" and hw == "none"):
        problems.append(f"{path.name}: no description {hw}")
    for key in ("source", "system", "collective", "nodes", "gpus_per_node", "points"):
        if not sweep.get(key):
            problems.append(f"{path.name}: no {key}")
    ranks = sweep["nodes"] * sweep["gpus_per_node"]
    sizes = [p["bytes"] for p in sweep["points"]]
    if sizes != sorted(set(sizes)):
        problems.append(f"{path.name}: sizes do not rise")
    for p in sweep["points"]:
        alg, bus = p.get("algbw_GBps"), p.get("busbw_GBps")
        if alg and bus and alg >= 1 and abs(bus / alg / factor[sweep["collective"]](ranks) - 1) > 0.03:
            problems.append(f"{path.name}: {p['bytes']} B: busbw/algbw off the nccl-tests factor")
    if entry["half"] in cover and sweep["nodes"] > 1:
        cover[entry["half"]].add("H100" if sweep["gpu"].startswith(("H100", "H200")) else "A100")
for stem in split:
    if not (data / f"{stem}.json").exists():
        problems.append(f"split.json: {stem} has no file")
print(f"sweeps {len(sweeps)}, " + ", ".join(
    f"{half} {count}" for half, count in halves.items()
    if count or half in ("calibration", "validation", "excluded")))
print(f"problems: {len(problems)}")
for problem in problems:
    print("  " + problem)
print("halves cover A100 and H100 across nodes:",
      all(c == {"A100", "H100"} for c in cover.values()))
