#!/usr/bin/python3
"""Training-step benchmark: dlc with all passes, dlc with --disable-pass fusion, and PyTorch
eager, side by side in one run.

    train_bench.py --dlc BUILD/tools/dlc [--models fashion_cnn,mlp,cnn,transformer] [--batch 64]
                   [--steps 50] [--warmup 5] [--rounds 3] [--unfused-passes fusion]
                   [--threads N] [--out DIR] [--json FILE]

Each model is trained with Adam (lr 1e-3, mean cross-entropy) on one fixed batch, from the same
weights (the ONNX model's initializers, loaded into the PyTorch module by name), with the same
batch size and thread count (dlc --threads, torch.set_num_threads), three ways:
  dlc           `dlc train` with every pass of the pipeline
  dlc_unfused   `dlc train --disable-pass fusion` (--unfused-passes: the comma list of passes
                to disable, e.g. when more fusion passes exist)
  torch         PyTorch eager, a fresh copy of the module each round
on these models:
  fashion_cnn   models/fashion_cnn.onnx, the first BATCH rows of Fashion-MNIST's training set
                (converted by scripts/fashion_mnist_to_npz.py into OUT if absent)
  mlp, cnn, transformer
                the parity models (tests/parity/data/<model>/model.onnx) on a random batch
The three alternate: ROUNDS rounds per model, each running all three once, the order rotated
each round (so slow drift of the machine does not favour one), and each variant's steps/s is the
median over the rounds (every round's value is in the JSON). dlc's steps/s come from its --log
(per-step time of feeding the batch and running the plan, compilation excluded); PyTorch's from
timing zero_grad + forward + loss + backward + step. The first WARMUP steps of each run are not
counted. Prints a table (steps/s and the ratios fused/unfused and fused/torch) and writes JSON
(stdout, or --json FILE) with the machine's core count and load averages before and after.
"""
import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "parity"))
import make_parity_models  # noqa: E402  (the parity models' PyTorch definitions)
from make_fashion_cnn import build_fashion_cnn  # noqa: E402
from report_json import write_report  # noqa: E402
from torch_weights import load_onnx_weights  # noqa: E402

PARITY_DATA = os.path.join(ROOT, "tests", "parity", "data")
LR = 1e-3


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
                    log: str, extra: list) -> float:
    cmd = [dlc, "train", model, "--data", data, "--batch", str(batch), "--steps", str(warmup + steps),
           "--optimizer", "adam", "--lr", str(LR), "--threads", str(threads), "--log", log, *extra]
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


VARIANTS = ["dlc", "dlc_unfused", "torch"]


def run_variant(variant: str, args, name: str, case: tuple, data: str, threads: int) -> float:
    """Steps/s of one run of `variant` on model `name`; raises RuntimeError when dlc fails."""
    model, module, x, y = case
    if variant == "torch":
        return torch_steps_per_s(copy.deepcopy(module), x, y, args.steps, args.warmup)
    extra = ["--disable-pass", args.unfused_passes] if variant == "dlc_unfused" else []
    return dlc_steps_per_s(args.dlc, model, data, args.batch, args.steps, args.warmup, threads,
                           os.path.join(args.out, f"{name}_{variant}_log.jsonl"), extra)


def bench_model(args, name: str, threads: int) -> dict:
    """Runs the variants alternately for args.rounds rounds; the median steps/s of each, and ratios."""
    case = make_case(name, args.batch, args.out)
    data = os.path.join(args.out, f"{name}_b{args.batch}.npz")
    np.savez(data, input=case[2], label=case[3])
    result = {"model": name}
    rounds = {v: [] for v in VARIANTS}
    for r in range(args.rounds):
        for k in range(len(VARIANTS)):
            variant = VARIANTS[(r + k) % len(VARIANTS)]
            if f"{variant}_error" in result:
                continue
            try:
                rounds[variant].append(run_variant(variant, args, name, case, data, threads))
            except RuntimeError as e:
                result[f"{variant}_error"] = str(e)
    for v in VARIANTS:
        if rounds[v] and f"{v}_error" not in result:
            result[f"{v}_steps_per_s"] = statistics.median(rounds[v])
            result[f"{v}_rounds"] = rounds[v]
    ratios = {"fused_over_unfused": ("dlc", "dlc_unfused"), "dlc_over_torch": ("dlc", "torch"),
              "unfused_over_torch": ("dlc_unfused", "torch")}
    for key, (a, b) in ratios.items():
        if f"{a}_steps_per_s" in result and f"{b}_steps_per_s" in result:
            result[key] = result[f"{a}_steps_per_s"] / result[f"{b}_steps_per_s"]
    return result


def print_table(report: dict, args, threads: int) -> None:
    print(f"batch {args.batch}, {threads} threads, {args.steps} timed steps after {args.warmup}, median of "
          f"{args.rounds} alternating round(s); unfused: --disable-pass {args.unfused_passes}; load average "
          f"{report['load_average_before'][0]:.2f} before, {report['load_average_after'][0]:.2f} after",
          file=sys.stderr)
    print(f"{'model':12s} {'dlc':>9s} {'dlc unfused':>12s} {'torch':>9s} {'fused/unfused':>14s} {'fused/torch':>12s}"
          "   (steps/s)", file=sys.stderr)
    for r in report["results"]:
        cell = lambda key, fmt: format(r[key], fmt) if key in r else "error"
        print(f"{r['model']:12s} {cell('dlc_steps_per_s', '.1f'):>9s} {cell('dlc_unfused_steps_per_s', '.1f'):>12s} "
              f"{cell('torch_steps_per_s', '.1f'):>9s} {cell('fused_over_unfused', '.2f'):>14s} "
              f"{cell('dlc_over_torch', '.2f'):>12s}", file=sys.stderr)
        for v in VARIANTS:
            if f"{v}_error" in r:
                print(f"  {v}: {r[f'{v}_error']}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dlc", required=True, help="the dlc binary")
    parser.add_argument("--models", default="fashion_cnn,mlp,cnn,transformer")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50, help="timed steps")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating rounds of the three variants; each reports the median (default 3)")
    parser.add_argument("--unfused-passes", default="fusion",
                        help="the passes dlc_unfused disables, a comma list (default fusion)")
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "train_bench"), help="work folder")
    parser.add_argument("--json", help="write the JSON here instead of stdout")
    args = parser.parse_args()

    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    threads = args.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    os.makedirs(args.out, exist_ok=True)
    report = {"cores": os.cpu_count(), "threads": threads, "batch": args.batch, "steps": args.steps,
              "warmup": args.warmup, "rounds": args.rounds, "unfused_passes": args.unfused_passes,
              "torch": torch.__version__, "load_average_before": os.getloadavg(), "results": []}
    for name in args.models.split(","):
        report["results"].append(bench_model(args, name, threads))
    report["load_average_after"] = os.getloadavg()
    print_table(report, args, threads)
    write_report(report, args.json)


if __name__ == "__main__":
    main()
