#!/usr/bin/env bash
# The benchmark's optional peer, ONNX Runtime Training, in a virtual environment beside Debian's
# Python (whose torch, numpy and onnx the benchmark uses):
#
#   tools/bench/setup_bench_venv.sh [VENV]      (default build/bench-venv)
#
# Creates VENV with --system-site-packages from /usr/bin/python3 and installs PyPI's
# onnxruntime-training-cpu wheel (1.19.2, the CPU build of ORT's on-device training API) with
# --no-deps, plus the two small packages it imports that Debian's Python lacks here (flatbuffers,
# packaging): its declared dependencies would replace Debian's numpy 1.24 and onnx 1.12 that
# torch 1.13 is built against. tools/bench/run_train_bench.sh uses VENV's python when it exists.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${1:-$root/build/bench-venv}"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-deps onnxruntime-training-cpu==1.19.2 flatbuffers packaging
"$venv/bin/python" -c "import onnxruntime.training.api, torch; print('onnxruntime', __import__('onnxruntime').__version__, 'torch', torch.__version__)"
