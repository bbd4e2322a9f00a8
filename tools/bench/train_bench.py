#!/usr/bin/python3
"""Training-step benchmark, dlc against PyTorch eager, side by side in one run.

    train_bench.py --dlc BUILD/tools/dlc [--models fashion_cnn,mlp,cnn,transformer] [--batch 64]
                   [--steps 50] [--warmup 5] [--threads N] [--out DIR] [--json FILE]

Each model is trained with Adam (lr 1e-3, mean cross-entropy) on one fixed batch, from the same
weights (the ONNX model's initializers, loaded into the PyTorch module by name), with the same
batch size and thread count (dlc --threads, torch.set_num_threads), one after the other:
  fashion_cnn   models/fashion_cnn.onnx, the first BATCH rows of Fashion-MNIST's training set
                (converted by scripts/fashion_mnist_to_npz.py into OUT if absent)
  mlp, cnn, transformer
                the parity models (tests/parity/data/<model>/model.onnx) on a random batch
dlc's steps/s come from its --log (per-step time of feeding the batch and running the plan,
compilation excluded); PyTorch's from timing zero_grad + forward + loss + backward + step. The
first WARMUP steps are not counted. Prints a table and writes JSON (stdout, or --json FILE)
with the machine's core count and load averages before and after.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "parity"))
import make_parity_models  # noqa: E402  (the parity models' PyTorch definitions)
from make_fashion_cnn import build_fashion_cnn  # noqa: E402

PARITY_DATA = os.path.join(ROOT, "tests", "parity", "data")
LR = 1e-3


def load_onnx_weights(module: torch.nn.Module, onnx_path: str) -> None:
    """Copies the ONNX initializers into the module's tensors of the same name."""
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(onnx_path).graph.initializer}
    state = module.state_dict()
    missing = [k for k in state if k not in inits and not k.endswith("num_batches_tracked")]
    if missing:
        raise SystemExit(f"{onnx_path}: no initializers for {missing}")
    module.load_state_dict({k: torch.from_numpy(inits[k].copy()) if k in inits else v for k, v in state.items()})


def fashion_batch(out_dir: str, batch: int) -> tuple:
    train = os.path.join(out_dir, "fashion_train.npz")
    if not os.path.exists(train):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "fashion_mnist_to_npz.py"), out_dir], check=True,
                       stdout=sys.stderr)
    d = np.load(train)
    return d["input"][:batch], d["label"][:batch]


def make_case(name: str, batch: int, out_dir: str) -> tuple:
    """(onnx path, torch module with the ONNX weights, input array, label array)."""
    if name == "fashion_cnn":
        path = os.path.join(ROOT, "models", "fashion_cnn.onnx")
        module = build_fashion_cnn(0)
        x, y = fashion_batch(out_dir, batch)
    else:
        spec = make_parity_models.MODELS[name]
        path = os.path.join(PARITY_DATA, name, "model.onnx")
        module = spec.build()
        rng = np.random.default_rng(0)
        x, classes = spec.make_batch(rng, batch)
        y = rng.integers(0, classes, batch, dtype=np.int64)
    load_onnx_weights(module, path)
    return path, module, x, y


def dlc_steps_per_s(dlc: str, model: str, data: str, batch: int, steps: int, warmup: int, threads: int,
                    log: str) -> float:
    cmd = [dlc, "train", model, "--data", data, "--batch", str(batch), "--steps", str(warmup + steps),
           "--optimizer", "adam", "--lr", str(LR), "--threads", str(threads), "--log", log]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"dlc train failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
    with open(log) as f:
        sps = [json.loads(line)["samples_per_s"] for line in f if line.strip()][warmup:]
    return 1.0 / statistics.mean(batch / s for s in sps)


def torch_steps_per_s(module: torch.nn.Module, x: np.ndarray, y: np.ndarray, steps: int, warmup: int) -> float:
    module.train()
    opt = torch.optim.Adam(module.parameters(), lr=LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    elapsed = 0.0
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(module(xt), yt).backward()
        opt.step()
        if step >= warmup:
            elapsed += time.perf_counter() - t0
    return steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dlc", required=True, help="the dlc binary")
    parser.add_argument("--models", default="fashion_cnn,mlp,cnn,transformer")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50, help="timed steps")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "train_bench"), help="work folder")
    parser.add_argument("--json", help="write the JSON here instead of stdout")
    args = parser.parse_args()

    threads = args.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    os.makedirs(args.out, exist_ok=True)
    report = {"cores": os.cpu_count(), "threads": threads, "batch": args.batch, "steps": args.steps,
              "warmup": args.warmup, "torch": torch.__version__, "load_average_before": os.getloadavg(),
              "results": []}
    for name in args.models.split(","):
        model, module, x, y = make_case(name, args.batch, args.out)
        data = os.path.join(args.out, f"{name}_b{args.batch}.npz")
        np.savez(data, input=x, label=y)
        result = {"model": name}
        try:
            result["dlc_steps_per_s"] = dlc_steps_per_s(args.dlc, model, data, args.batch, args.steps, args.warmup,
                                                        threads, os.path.join(args.out, f"{name}_log.jsonl"))
        except RuntimeError as e:
            result["dlc_error"] = str(e)
        result["torch_steps_per_s"] = torch_steps_per_s(module, x, y, args.steps, args.warmup)
        if "dlc_steps_per_s" in result:
            result["dlc_over_torch"] = result["dlc_steps_per_s"] / result["torch_steps_per_s"]
        report["results"].append(result)
    report["load_average_after"] = os.getloadavg()

    print(f"batch {args.batch}, {threads} threads, {args.steps} timed steps after {args.warmup}; "
          f"load average {report['load_average_before'][0]:.2f} before, {report['load_average_after'][0]:.2f} after",
          file=sys.stderr)
    print(f"{'model':12s} {'dlc steps/s':>12s} {'torch steps/s':>14s} {'dlc/torch':>10s}", file=sys.stderr)
    for r in report["results"]:
        dlc = f"{r['dlc_steps_per_s']:.1f}" if "dlc_steps_per_s" in r else "error"
        ratio = f"{r['dlc_over_torch']:.2f}" if "dlc_over_torch" in r else r.get("dlc_error", "")
        print(f"{r['model']:12s} {dlc:>12s} {r['torch_steps_per_s']:>14.1f} {ratio:>10s}", file=sys.stderr)
    text = json.dumps(report, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
