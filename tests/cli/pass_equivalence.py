#!/usr/bin/env python3
"""Every optional pass of the training pipeline is exact: 3 Adam steps of each parity model
(tests/parity/data: mlp, cnn, transformer) and of models/fashion_cnn.onnx (random data; its
Linear + Relu folds into one MatMul, passes/epilogue_fusion.h) with all passes, and again with one
pass disabled
(`--disable-pass P`), end with the same checkpoint — every parameter, Adam moment and running
statistic — bit for bit, and log the same losses.

usage: pass_equivalence.py PATH/TO/dlc [-v]
"""
import json
import os
import sys
import tempfile

import numpy as np

from cli_harness import Checks

HERE = os.path.dirname(os.path.abspath(__file__))
PARITY_DATA = os.path.join(os.path.dirname(HERE), "parity", "data")
MODELS = ["mlp", "cnn", "transformer"]
FASHION_CNN = os.path.join(os.path.dirname(os.path.dirname(HERE)), "models", "fashion_cnn.onnx")
# The passes that only transform: `--disable-pass` may switch them off without changing what is
# computed (training-mode changes BatchNorm and Dropout on purpose; loss, autodiff and optimizer
# are required).
OPTIONAL_PASSES = ["canonicalize", "fusion", "dce", "schedule"]


def train(checks, name, model, data, out, extra):
    """Trains 3 Adam steps; returns (checkpoint arrays, logged losses) or None."""
    ckpt, log = os.path.join(out, f"{name}.npz"), os.path.join(out, f"{name}.jsonl")
    args = ["train", model, "--data", data, "--batch", "8", "--optimizer", "adam", "--lr", "0.001",
            "--steps", "3", "--threads", "2", "--save", ckpt, "--log", log, *extra]
    if checks.run(name, args) is None:
        return None
    with np.load(ckpt) as z:  # the state tensors; the metadata holds the plan's fingerprint
        arrays = {k: z[k].copy() for k in z.files if not k.startswith("__dlc.")}
    with open(log) as f:
        losses = [json.loads(line)["loss"] for line in f if line.strip()]
    return arrays, losses


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    checks = Checks(os.path.abspath(sys.argv[1]), "-v" in sys.argv[2:])
    with tempfile.TemporaryDirectory(prefix="dlc_passes_") as tmp:
        fashion_data = os.path.join(tmp, "fashion.npz")
        rng = np.random.default_rng(0)
        np.savez(fashion_data, input=rng.standard_normal((32, 1, 28, 28)).astype(np.float32),
                 label=rng.integers(0, 10, 32).astype(np.int64))
        models = [(m, os.path.join(PARITY_DATA, m, "model.onnx"), os.path.join(PARITY_DATA, m, "data.npz"))
                  for m in MODELS] + [("fashion_cnn", FASHION_CNN, fashion_data)]
        for model_name, model, data in models:
            reference = train(checks, f"{model_name}_all_passes", model, data, tmp, [])
            if reference is None:
                continue
            for p in OPTIONAL_PASSES:
                name = f"{model_name}_without_{p}"
                result = train(checks, name, model, data, tmp, ["--disable-pass", p])
                if result is None:
                    continue
                (want, want_losses), (got, got_losses) = reference, result
                differ = sorted(k for k in want.keys() | got.keys()
                                if k not in want or k not in got or want[k].tobytes() != got[k].tobytes())
                checks.expect(f"{name}_same_state", not differ, f"arrays differ: {differ[:6]}")
                checks.expect(f"{name}_same_losses", want_losses == got_losses, f"{got_losses} != {want_losses}")
    return checks.summary("pass equivalence")


if __name__ == "__main__":
    sys.exit(main())
