#!/usr/bin/env bash
# The ResNet-50 forward benchmark, dlc against PyTorch eager, in one command:
#
#   tools/bench/run_forward_bench.sh [--batch 8] [--threads $(nproc)] [--iters 10] [--warmup 2]
#                                    [--build build-bench] [--out BUILD/bench] [--rtol 1e-3]
#
# Exports the model (random weights, seed 0) into OUT if absent, writes one fixed input, runs
# torch_forward.py and dlc_bench_forward on it with the same batch and threads, checks that
# dlc's logits match PyTorch's and prints a side-by-side table. Needs /usr/bin/python3 with
# torch and torchvision (Debian: python3-torch python3-torchvision) and a built
# dlc_bench_forward (ninja -C BUILD dlc_bench_forward).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
batch=8
threads="$(nproc)"
iters=10
warmup=2
build="$root/build-bench"
out=""
rtol=1e-3
python=/usr/bin/python3

while [[ $# -gt 0 ]]; do
  case "$1" in
    --batch) batch="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --rtol) rtol="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "run_forward_bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
out="${out:-$build/bench}"
bench_bin="$build/tools/bench/dlc_bench_forward"
[[ -x "$bench_bin" ]] || { echo "error: $bench_bin not built (ninja -C $build dlc_bench_forward)" >&2; exit 1; }
"$python" -c "import torch, torchvision" 2>/dev/null ||
  { echo "error: $python lacks torch/torchvision (apt-get install python3-torch python3-torchvision)" >&2; exit 1; }

mkdir -p "$out"
model="$out/resnet50.onnx"
if [[ ! -f "$model" || ! -f "$out/resnet50.pt" ]]; then
  echo "exporting ResNet-50 to $model" >&2
  "$python" "$here/export_resnet50.py" "$model"
fi

run_dir="$out/b${batch}_t${threads}"
mkdir -p "$run_dir"
"$python" -c "import numpy as np, sys
np.save(sys.argv[1], np.random.default_rng(0).standard_normal((int(sys.argv[2]), 3, 224, 224), dtype=np.float32))" \
  "$run_dir/input.npy" "$batch"

common=(--batch "$batch" --threads "$threads" --iters "$iters" --warmup "$warmup")
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "running PyTorch eager ..." >&2
(cd "$here" && "$python" torch_forward.py "$out/resnet50.pt" "${common[@]}" --input "$run_dir/input.npy" \
  --dump-output "$run_dir/torch_logits.npy") > "$run_dir/torch.json"
echo "running dlc ..." >&2
"$bench_bin" "$model" "${common[@]}" --input "input=$run_dir/input.npy" --dump-output "$run_dir/dlc" \
  > "$run_dir/dlc.json"
"$python" "$here/report_forward.py" "$run_dir/dlc.json" "$run_dir/torch.json" --rtol "$rtol" \
  --dlc-logits "$run_dir/dlc/logits.npy" --torch-logits "$run_dir/torch_logits.npy"
echo "results: $run_dir/{dlc,torch}.json"
