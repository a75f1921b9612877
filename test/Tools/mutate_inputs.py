"""Feeds mutated versions of Braid's test inputs to its tools and fails on a crash.

Tools: braid-opt (plain, with the sharding passes or the CPU lowering),
braid-translate,
braid-compile, braid-run and braid-sim.

Every mutant must end with exit code 0 or 1 (a clean diagnostic), within a
time limit, and without a stack dump or assertion message. The mutations are
seeded, so a failure reproduces: the failing mutant is written next to the
report.

usage: mutate_inputs.py TOOLS_DIR SOURCE_ROOT OUT_DIR [--count N] [--seed S] [--timeout SECONDS]
"""
import argparse
import glob
import os
import random
import re
import subprocess
import sys

TOKENS = [
    "braid.all_reduce", "braid.all_to_all", "braid.embedding_bag", "braid.table",
    "braid.linear", "braid.interaction", "braid.wait", "braid.permute",
    "groups [[0, 1], [2, 3]]", "groups [[]]", "split_sizes = [1, -2]",
    "tensor<?x?xf32>", "tensor<0xi64>", "tensor<4xf16>", "!braid.token<f32>",
    "#braid.row_wise<ranks = [0], row_offsets = [0, 5]>", "#braid.cluster<hardware = \"x\", nodes = 0, ranks_per_node = 1>",
    "dim = 7", "root = -3", "-1", "0", "9223372036854775807", "1e308", "@missing",
    "%arg0", "{", "}", "(", ")", "[", "]", "<", ">", ",", ":", "\"", "nan",
    "pooling_factor = -1.0", "unique_ratio = 0.0", "relu", "max", "cat", "dot",
]
JSON_TOKENS = ["-1", "0", "1e400", "null", "true", "\"\"", "[]", "{}", "\"dot\"", "\"cat\"",
               "\"pooling\": \"max\"", "\"dtype\": \"bf16\"", "9223372036854775807", ",", "]", "}"]


def mutate(text, rng, tokens):
    """Applies 1-3 random edits: delete, duplicate, swap lines, insert or replace tokens."""
    for _ in range(rng.randint(1, 3)):
        if not text:
            return rng.choice(tokens)
        choice = rng.randrange(6)
        i = rng.randrange(len(text))
        j = min(len(text), i + rng.randint(1, 40))
        if choice == 0:
            text = text[:i] + text[j:]
        elif choice == 1:
            text = text[:i] + text[i:j] + text[i:]
        elif choice == 2:
            text = text[:i] + rng.choice(tokens) + text[i:]
        elif choice == 3:
            numbers = list(re.finditer(r"-?\d+", text))
            if numbers:
                m = rng.choice(numbers)
                text = text[:m.start()] + rng.choice(["0", "-1", "1", "3", "64", "100000000000", "-7"]) + text[m.end():]
        elif choice == 4:
            lines = text.split("\n")
            a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
        else:
            words = list(re.finditer(r"[A-Za-z_][A-Za-z0-9_.]*", text))
            if words:
                m = rng.choice(words)
                text = text[:m.start()] + rng.choice(tokens) + text[m.end():]
    return text


def run(cmd, timeout):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        return None, "timed out after %ss" % timeout
    return proc.returncode, proc.stdout + proc.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tools")
    parser.add_argument("source_root")
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--timeout", type=float, default=30,
                        help="seconds a run may take before it counts as hung")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)

    mlir_files = sorted(glob.glob(os.path.join(args.source_root, "test", "**", "*.mlir"), recursive=True))
    json_files = sorted(glob.glob(os.path.join(args.source_root, "examples", "*.json")))
    if not mlir_files or not json_files:
        print("no inputs found under", args.source_root)
        return 1
    corpus = [(f, open(f).read()) for f in mlir_files]
    json_corpus = [(f, open(f).read()) for f in json_files]
    opt = os.path.join(args.tools, "braid-opt")
    translate = os.path.join(args.tools, "braid-translate")
    braid_run = os.path.join(args.tools, "braid-run")
    braid_sim = os.path.join(args.tools, "braid-sim")
    compile_ = os.path.join(args.tools, "braid-compile")

    failures = 0
    runs = 0
    for n in range(args.count):
        if n % 5 == 4:
            source, text = rng.choice(json_corpus)
            mutant = os.path.join(args.out, "mutant%d.json" % n)
            with open(mutant, "w") as f:
                f.write(mutate(text, rng, JSON_TOKENS))
            commands = [[translate, "--import-model-json", mutant, "-o", os.devnull],
                        [compile_, mutant, "--cluster", "dgx-h100", "--nodes", "1",
                         "--ranks-per-node", str(rng.randint(1, 8)),
                         "-o", os.path.join(args.out, "compiled%d" % n)]]
        else:
            source, text = rng.choice(corpus)
            # Split files are fed whole and also one case at a time.
            cases = text.split("// -----")
            text = rng.choice(cases)
            mutant = os.path.join(args.out, "mutant%d.mlir" % n)
            with open(mutant, "w") as f:
                f.write(mutate(text, rng, TOKENS))
            commands = [[opt, mutant, "-o", os.devnull],
                        [opt, mutant, "-canonicalize", "-o", os.devnull]]
            if n % 4 == 0:
                commands.append([opt, mutant, "--braid-partition", "-o", os.devnull])
            elif n % 4 == 2:
                commands.append([opt, mutant, "--braid-lower-cpu", "-o", os.devnull])
            else:
                commands.append([opt, mutant, "--braid-plan-sharding=cluster=dgx-h100 nodes=2 "
                                 "ranks-per-node=%d" % rng.randint(1, 4), "--braid-partition",
                                 "-o", os.devnull])
            # The simulator's tests describe GPU-sized work (4096^3 GEMMs) that
            # the reference interpreter legitimately needs minutes for.
            sized_for_interpreter = os.sep + "braid-sim" + os.sep not in source
            if n % 3 == 0 and sized_for_interpreter:
                commands.append([braid_run, mutant, "--reference", "--ranks", str(rng.randint(1, 4))])
            elif n % 3 == 1:
                commands.append([braid_sim, mutant, "--hardware", "dgx-h100", "--ranks", str(rng.randint(1, 16))])
        mutant_failed = False
        for cmd in commands:
            runs += 1
            code, output = run(cmd, timeout=args.timeout)
            crashed = (code is None or code not in (0, 1) or "Stack dump" in output
                       or "Assertion" in output or "LLVM ERROR" in output)
            if crashed:
                failures += 1
                mutant_failed = True
                print("CRASH (exit %s) from %s mutated from %s:\n  %s\n%s" %
                      (code, " ".join(cmd), source, mutant, output[-2000:]))
        if not mutant_failed:
            os.remove(mutant)
    print("%d runs on %d mutants, %d crashes" % (runs, args.count, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
