#!/usr/bin/env bash
# The main job, for a newcomer: import an example DLRM, verify it, run it
# through the reference semantics and show what happened. Installs what is
# missing and builds first.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BRAID_BUILD_DIR:-build}
BIN=$BUILD_DIR/bin

echo "== 0. Install what is missing and build Braid"
# setup.sh's own lines say what it installs; apt's and pip's details are
# kept out of the way.
bash scripts/setup.sh | { grep --line-buffered '^setup:' || true; } | sed 's/^/   /'
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "   building Braid in $BUILD_DIR: the first build takes a few minutes on 2 cores"
else
  echo "   building Braid in $BUILD_DIR (only what changed)"
fi
# Ninja's [done/total] lines, one in ten, and every compiler message.
bash scripts/build.sh | awk '
  /^\[[0-9]+\/[0-9]+\]/ {
    split(substr($1, 2), n, "/"); n[2] = n[2] + 0
    if (n[1] % 10 == 0 || n[1] == n[2]) printf "   build: %d of %d steps\n", n[1], n[2]
    fflush(); next
  }
  /^(ninja: no work to do|-- )/ { next }
  { print "   " $0; fflush() }'
echo
MODEL=${1:-examples/dlrm_small.json}
OUT=$(mktemp -d -t braid-demo.XXXXXX)

echo "== 1. Import the model spec $MODEL into Braid IR"
"$BIN/braid-translate" --import-model-json "$MODEL" -o "$OUT/model.mlir"
grep -E "braid\.(table|embedding_bag|interaction)|sigmoid" "$OUT/model.mlir" | sed 's/^ */   /' | cut -c1-150

echo
echo "== 2. Verify it and round-trip it through braid-opt (with canonicalization)"
"$BIN/braid-opt" "$OUT/model.mlir" -canonicalize -o "$OUT/model.canonical.mlir"
echo "   $(grep -c 'braid\.' "$OUT/model.canonical.mlir") Braid ops verified"

echo
echo "== 3. Run the reference semantics on seeded random inputs and weights"
"$BIN/braid-run" "$OUT/model.mlir" --reference --seed 42 --dump "$OUT/run" --print-values | sed 's/^/   /'

echo
echo "== 4. Re-run from the dumped .npy files: the result must be identical"
"$BIN/braid-run" "$OUT/model.mlir" --reference --inputs "$OUT/run/inputs" --weights "$OUT/run/weights" --dump "$OUT/rerun" >/dev/null
if cmp -s "$OUT/run/output.npy" "$OUT/rerun/output.npy"; then
  echo "   identical: $OUT/run/output.npy"
else
  echo "   MISMATCH between $OUT/run/output.npy and $OUT/rerun/output.npy" >&2
  exit 1
fi

echo
echo "== 5. A collective on 4 simulated ranks: hierarchical all-reduce (intra-node, then inter-node)"
cat > "$OUT/collective.mlir" <<'MLIR'
func.func @forward() -> tensor<1xf32> {
  %r = braid.rank : index
  %ri = arith.index_cast %r : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %x = tensor.splat %rf : tensor<1xf32>
  %intra = braid.all_reduce sum %x groups [[0, 1], [2, 3]] : tensor<1xf32>
  %global = braid.all_reduce sum %intra groups [[0, 2], [1, 3]] : tensor<1xf32>
  return %global : tensor<1xf32>
}
MLIR
"$BIN/braid-run" "$OUT/collective.mlir" --reference --ranks 4 --print-values | sed 's/^/   /'

echo
echo "== 6. Compile MLPerf DLRM-DCNv2 for 2 DGX-H100 nodes (16 ranks): plan, partition, and simulate"
echo "      the per-rank program it writes (the predicted iteration)"
"$BIN/braid-compile" examples/mlperf_dcnv2.json --cluster dgx-h100 --nodes 2 -o "$OUT/dcnv2" \
  --max-table-rows 6 | sed 's/^/   /' | grep -v '^   [0-9]\{1,3\} \|^   rank ' | head -14
echo "   (each rank's predicted time and memory are in $OUT/dcnv2/plan.json)"

echo
echo "== 7. Compile the small DLRM for 2 x 4 ranks with every table row-wise, and check the"
echo "      per-rank program against the global one on seeded inputs"
"$BIN/braid-compile" examples/dlrm_small.json --cluster dgx-h100 --nodes 2 --ranks-per-node 4 \
  --force-sharding row_wise -o "$OUT/small" >/dev/null
"$BIN/braid-run" "$OUT/small" --reference --check --seed 3 | sed 's/^/   /'

echo
echo "== 8. This machine: calibrate it (2 MPI ranks; --cluster local-cpu reads the result), compile"
echo "      the small DLRM for it with --target cpu, run it on 2 real ranks and check it against"
echo "      the reference semantics. The demo keeps its calibration in $OUT/cache"
echo "      (BRAID_CACHE_DIR), so the one in ~/.cache/braid is left as it is"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export BRAID_CACHE_DIR="$OUT/cache"
mpirun -n 2 --oversubscribe "$BIN/braid-calibrate" | sed 's/^/   /'
"$BIN/braid-compile" examples/dlrm_small.json --cluster local-cpu --nodes 1 \
  --ranks-per-node 2 --target cpu -o "$OUT/cpu" | sed 's/^/   /'
mpirun -n 2 --oversubscribe "$BIN/braid-run" "$OUT/cpu" --check --iterations 100 | sed 's/^/   /'
echo "   The same model with every table row-wise: the ranks exchange indices (all_to_all_v)"
echo "   and reduce-scatter their partial sums over MPI"
"$BIN/braid-compile" examples/dlrm_small.json --cluster local-cpu --nodes 1 \
  --ranks-per-node 2 --force-sharding row_wise --target cpu -o "$OUT/cpu-rows" >/dev/null
mpirun -n 2 --oversubscribe "$BIN/braid-run" "$OUT/cpu-rows" --check --iterations 100 | sed 's/^/   /'
echo
echo "== 9. Time a mid-size DLRM (8 tables of 200K x 64, pooling 20, batch 2048) on 2 ranks:"
echo "      measured beside PyTorch (when installed: scripts/install-torch.sh) and predicted"
python3 bench/cpu_vs_torch/run.py --build "$BUILD_DIR" --rows 200000 --batch 2048 --iterations 20 --repeats 1 \
  --json "$OUT/cpu_vs_torch.json" | sed 's/^/   /'
echo
echo "== 10. Train the small DLRM on this machine. braid-compile --train --target cpu derives the"
echo "       per-rank training step (loss, backward, gradient all_reduce, row-wise Adagrad fused into"
echo "       the embedding backward, Adagrad for the dense layers); braid-run trains it 100 steps on a"
echo "       synthetic click dataset (a fresh batch of 128 per step, clicks planted in the dense"
echo "       features), on 1 rank and on 2 MPI ranks with row-wise tables. The loss falls from"
echo "       ln 2 = 0.693, the same on both"
if grep -q 'braid.optimizer' "$OUT/model.mlir"; then
  # The small model's batch of 8 is for tests; training wants more samples.
  sed 's/"batch_size": *[0-9]*/"batch_size": 128/' "$MODEL" > "$OUT/train.json"
  "$BIN/braid-compile" "$OUT/train.json" --cluster local-cpu --nodes 1 --ranks-per-node 1 \
    --train --target cpu -o "$OUT/train-1" >/dev/null
  # Forced row-wise, the max-pooled table is split by rows, which the planner
  # avoids for training: braid-compile warns, naming it (docs/design.md).
  "$BIN/braid-compile" "$OUT/train.json" --cluster local-cpu --nodes 1 --ranks-per-node 2 \
    --force-sharding row_wise --train --target cpu -o "$OUT/train-2" 2>&1 >/dev/null | sed -n "/warning:/s/^/   /p" | cut -c1-150
  "$BIN/braid-run" "$OUT/train-1" --steps 100 --json > "$OUT/train-1.json"
  mpirun -n 2 --oversubscribe "$BIN/braid-run" "$OUT/train-2" --steps 100 --json --dump "$OUT/trained" \
    > "$OUT/train-2.json"
  python3 - "$OUT/train-1.json" "$OUT/train-2.json" <<'PY' | sed 's/^/   /'
import json, sys
one, two = (json.load(open(path)) for path in sys.argv[1:3])
print(f"{'step':>5} {'loss, 1 rank':>13} {'loss, 2 ranks':>14}")
for step in [1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]:
    print(f"{step:5d} {one['losses'][step - 1]:13.6f} {two['losses'][step - 1]:14.6f}")
def worst(steps):
    pairs = list(zip(one["losses"], two["losses"]))[:steps]
    return max(abs(a - b) / abs(b) for a, b in pairs)
print(f"largest relative difference of the two curves: {worst(50):.2g} over the first 50 steps, "
      f"{worst(100):.2g} over 100 (the ranks' f32 sums run in another order, and training "
      "amplifies the last bits)")
print(f"step time: {one['step_ms']:.2f} ms on 1 rank, {two['step_ms']:.2f} ms on 2 ranks (median)")
PY
  echo "   the trained weights, optimizer state and losses are in $OUT/trained"
  echo "   5 steps on 2 ranks checked against the global reference training step:"
  mpirun -n 2 --oversubscribe "$BIN/braid-run" "$OUT/train-2" --steps 5 --check | tail -n 1 | sed 's/^/   /'
else
  echo "   skipped: $MODEL has no \"optimizer\""
fi
echo
echo "== 11. The same from Python: import braid, compile MLPerf DLRM-DCNv2 for 2 DGX-H100 nodes,"
echo "       inspect its plan and plot it (per-rank load, the simulated timeline, the losses of step 10)"
if [ -n "$(ls "$BUILD_DIR"/python/braid/_braid*.so 2>/dev/null)" ]; then
  PYTHONPATH="$BUILD_DIR/python" BRAID_BUILD_DIR="$BUILD_DIR" python3 - "$OUT" <<'PY' | sed 's/^/   /'
import json, pathlib, sys
import braid
out = pathlib.Path(sys.argv[1])
art = braid.compile(braid.load_model("examples/mlperf_dcnv2.json"), cluster="dgx-h100",
                    nodes=2, train=True, out=out / "python")
p = art.predicted
print(f"art = braid.compile(...): {art.ranks} ranks, forward {p['iteration_ms']:.3f} ms, "
      f"training step {p['train_step_ms']:.3f} ms predicted")
print("sharding of the first tables:",
      ", ".join(f"{t['name']} {t['sharding']}" for t in art.plan["tables"][:4]))
try:
    written = [braid.plot.load(art, out / "python" / "load.png"),
               braid.plot.timeline(art, out / "python" / "timeline.png")]
    trained = out / "train-2.json"
    if trained.exists():
        written.append(braid.plot.losses(json.loads(trained.read_text())["losses"],
                                         out / "python" / "losses.png"))
    print("plots:", ", ".join(str(path) for path in written))
except braid.Error as error:
    print(f"plots skipped: {error}")
PY
else
  echo "   skipped: $BUILD_DIR has no Python package (scripts/setup.sh installs nanobind)"
fi
echo
echo "== 12. Tensor parallelism: examples/tp_mlp.mlir, a Megatron-style block whose layers the model"
echo "       places column- and row-parallel over 8 DGX-A100 GPUs. At --opt-level 0 the partial sums"
echo "       are all_reduced and each rank keeps its rows; the default co-optimization reduce-scatters"
echo "       them. Then a smaller copy of the block on 4 MPI ranks of this machine, checked"
for level in 0 2; do
  "$BIN/braid-compile" examples/tp_mlp.mlir --cluster dgx-a100 --train --target none \
    --opt-level "$level" -o "$OUT/tp-o$level" >/dev/null
  echo "   --opt-level $level: $("$BIN/braid-sim" "$OUT/tp-o$level" --function train_step | head -n 1)," \
    "$(grep -c 'reduce_scatter' "$OUT/tp-o$level/program.mlir") reduce_scatters"
done
sed -e 's/ranks = \[0, 1, 2, 3, 4, 5, 6, 7\]/ranks = [0, 1, 2, 3]/' -e 's/4096/256/g' \
  -e 's/8192/512/g' -e 's/2048/128/g' examples/tp_mlp.mlir > "$OUT/tp_small.mlir"
"$BIN/braid-compile" "$OUT/tp_small.mlir" --cluster local-cpu --nodes 1 --ranks-per-node 4 \
  --train --target cpu -o "$OUT/tp-cpu" >/dev/null
mpirun -n 4 --oversubscribe -x OMP_NUM_THREADS=1 "$BIN/braid-run" "$OUT/tp-cpu" --steps 3 --check \
  | tail -n 1 | sed 's/^/   /'
echo
echo "== 13. The CUDA target: the same kernels lowered to PTX and, with ptxas, cubins for sm_80 and"
echo "       sm_90 packed in one fat binary per kernel (the driver loads the GPU's cubin), named after"
echo "       their work, with their registers (no kernel may spill); the artifact launches them"
echo "       through libbraidrt_cuda (cuBLASLt, NCCL). It runs where a GPU is."
if [ -e "$BUILD_DIR/lib/libbraidrt_cuda.so" ] && { command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ]; }; then
  "$BIN/braid-compile" "$MODEL" --cluster dgx-h100 --nodes 1 --ranks-per-node 2 --train \
    --target cuda -o "$OUT/cuda" | tail -n 1 | sed 's/^/   /'
  python3 - "$OUT/cuda/kernels/kernels.json" <<'PY'
import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]:
    if k["chip"] == "sm_90":
        print(f"   {k['name']:<28} {k['registers']:>4} registers, {k['spill_store_bytes']} bytes spilled")
PY
  # Two ranks need two GPUs: NCCL refuses two ranks on one device.
  gpus=0
  if command -v nvidia-smi >/dev/null; then
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  fi
  if [ "$gpus" -ge 2 ]; then
    mpirun -n 2 --oversubscribe "$BIN/braid-run" "$OUT/cuda" --steps 3 --check | tail -n 1 | sed 's/^/   /'
  else
    echo "   ($gpus GPU(s) here and the artifact has 2 ranks: it is built, not run)"
  fi
else
  echo "   skipped: no ptxas or no CUDA runtime in $BUILD_DIR (the CUDA toolkit and NCCL)"
fi
echo
echo "== 14. Asked-for co-optimization: the small DLRM (batch 128) for 2 nodes x 2 ranks with its"
echo "       tables sharded, compiled with --pipeline-input-dist. Its training step's pipelined form"
echo "       (OUT/pipelined) runs the next batch's routing and index exchanges inside each step;"
echo "       it trains on 4 MPI ranks beside the plain step, bit for bit. (--exchange-precision bf16,"
echo "       lossy, moves pooled rows in bf16 where that pays: bench/coopt/run.py prints where)"
if [ -e "$OUT/train.json" ]; then
  "$BIN/braid-compile" "$OUT/train.json" --cluster dgx-h100 --nodes 2 --ranks-per-node 2 \
    --force-sharding table_wise --train --target cpu --pipeline-input-dist -o "$OUT/piped" \
    | sed -nE -e 's/^(predicted training step: [0-9.]+ ms).*/   \1/p' \
        -e 's/^pipelined @train_step .*: ([0-9.]+ ms);.*/   its pipelined form: \1 predicted/p'
  if [ -d "$OUT/piped/pipelined" ]; then
    mpirun -n 4 --oversubscribe -x OMP_NUM_THREADS=1 "$BIN/braid-run" "$OUT/piped" --steps 20 \
      --json --dump "$OUT/piped-trained" > "$OUT/piped-plain.json"
    mpirun -n 4 --oversubscribe -x OMP_NUM_THREADS=1 "$BIN/braid-run" "$OUT/piped" --pipelined \
      --steps 20 --json --dump "$OUT/piped-trained-pipelined" > "$OUT/piped-pipelined.json"
    python3 - "$OUT/piped-plain.json" "$OUT/piped-pipelined.json" <<'PY' | sed 's/^/   /'
import json, sys
plain, piped = (json.load(open(path)) for path in sys.argv[1:3])
same = plain["losses"] == piped["losses"]
print(f"20 steps on 4 ranks: losses {'the same, bit for bit' if same else 'DIFFER'} "
      f"({plain['losses'][0]:.6f} -> {plain['losses'][-1]:.6f}); median step "
      f"{plain['step_ms']:.2f} ms plain, {piped['step_ms']:.2f} ms pipelined (4 ranks share "
      "this machine's cores)")
PY
    diff -r "$OUT/piped-trained" "$OUT/piped-trained-pipelined" >/dev/null \
      && echo "   the trained weights and optimizer state are the same too"
  else
    echo "   (the simulator added no pipelined form)"
  fi
else
  echo "   skipped: $MODEL has no \"optimizer\""
fi
echo
echo "Artifacts are in $OUT"
