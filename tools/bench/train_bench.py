#!/usr/bin/python3
"""Training-step benchmark: dlc with all passes, dlc with --disable-pass fusion, PyTorch eager and
ONNX Runtime Training, side by side in one run.

    train_bench.py --dlc BUILD/tools/dlc [--models fashion_cnn,mlp,cnn,transformer] [--batch 64]
                   [--steps 50] [--warmup 5] [--rounds 3] [--unfused-passes fusion]
                   [--threads N] [--variants dlc,dlc_unfused,torch,ort] [--out DIR] [--json FILE]

Each model is trained with Adam (lr 1e-3, mean cross-entropy) on one fixed batch, from the same
weights (the ONNX model's initializers, loaded into the PyTorch module by name), with the same
batch size and thread count (dlc --threads, torch.set_num_threads, ORT's intra-op threads),
four ways:
  dlc           `dlc train` with every pass of the pipeline
  dlc_unfused   `dlc train --disable-pass fusion` (--unfused-passes: the comma list of passes
                to disable, e.g. when more fusion passes exist)
  torch         PyTorch eager, a fresh copy of the module each round
  ort           ONNX Runtime Training's on-device API on the same ONNX file (ort_training.py: its
                artifacts, Adam as AdamW with weight decay 0); needs the onnxruntime-training-cpu
                wheel (tools/bench/setup_bench_venv.sh), else the variant reports an error
on these models:
  fashion_cnn   models/fashion_cnn.onnx, the first BATCH rows of Fashion-MNIST's training set
                (converted by scripts/fashion_mnist_to_npz.py into OUT if absent)
  mlp, cnn, transformer
                the parity models (tests/parity/data/<model>/model.onnx) on a random batch
The variants alternate: ROUNDS rounds per model, each running every variant once, the order rotated
each round (so slow drift of the machine does not favour one), and each variant's steps/s is the
median over the rounds (every round's value is in the JSON). dlc's steps/s come from its --log
(per-step time of feeding the batch and running the plan, compilation excluded); PyTorch's from
timing zero_grad + forward + loss + backward + step; ORT's from timing Module.__call__ (forward,
loss, backward) + Optimizer.step + lazy_reset_grad. The first WARMUP steps of each run are not
counted. Each variant also reports its first step's loss: the same weights and batch, so they
should agree (a check that the peers train the same computation). Prints a table (steps/s and the
ratios fused/unfused, fused/torch and fused/ort) and writes JSON (stdout, or --json FILE) with the
machine's core count and load averages before and after.
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
import ort_training  # noqa: E402
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
                    log: str, extra: list) -> tuple:
    cmd = [dlc, "train", model, "--data", data, "--batch", str(batch), "--steps", str(warmup + steps),
           "--optimizer", "adam", "--lr", str(LR), "--threads", str(threads), "--log", log, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"dlc train failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
    with open(log) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return 1.0 / statistics.mean(batch / r["samples_per_s"] for r in lines[warmup:]), lines[0]["loss"]


def torch_steps_per_s(module: torch.nn.Module, x: np.ndarray, y: np.ndarray, steps: int, warmup: int) -> tuple:
    module.train()
    opt = torch.optim.Adam(module.parameters(), lr=LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    elapsed, first_loss = 0.0, None
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(module(xt), yt)
        loss.backward()
        opt.step()
        if step >= warmup:
            elapsed += time.perf_counter() - t0
        if first_loss is None:
            first_loss = loss.item()
    return steps / elapsed, first_loss


VARIANTS = ["dlc", "dlc_unfused", "torch", "ort"]
ORT_PREPARED = set()  # the models whose ORT artifacts this run has written


def run_variant(variant: str, args, name: str, case: tuple, data: str, threads: int) -> tuple:
    """(steps/s, first loss) of one run of `variant` on model `name`; raises RuntimeError when dlc
    or ORT fails."""
    model, module, x, y = case
    if variant == "torch":
        return torch_steps_per_s(copy.deepcopy(module), x, y, args.steps, args.warmup)
    if variant == "ort":
        artifact_dir = os.path.join(args.out, f"{name}_ort")
        try:  # ORT's and onnx's own exception types; the variant then reports the error
            if name not in ORT_PREPARED:  # once per run of this script, from the current model file
                ort_training.prepare(model, artifact_dir)
                ORT_PREPARED.add(name)
            return ort_training.steps_per_s(artifact_dir, x, y, args.steps, args.warmup, threads)
        except Exception as e:
            raise RuntimeError(f"onnxruntime-training failed: {(str(e).strip().splitlines() or ['?'])[-1]}") from e
    extra = ["--disable-pass", args.unfused_passes] if variant == "dlc_unfused" else []
    return dlc_steps_per_s(args.dlc, model, data, args.batch, args.steps, args.warmup, threads,
                           os.path.join(args.out, f"{name}_{variant}_log.jsonl"), extra)


def bench_model(args, name: str, threads: int) -> dict:
    """Runs the variants alternately for args.rounds rounds; the median steps/s of each, and ratios."""
    case = make_case(name, args.batch, args.out)
    data = os.path.join(args.out, f"{name}_b{args.batch}.npz")
    np.savez(data, input=case[2], label=case[3])
    result = {"model": name}
    variants = args.variants
    rounds = {v: [] for v in variants}
    for r in range(args.rounds):
        for k in range(len(variants)):
            variant = variants[(r + k) % len(variants)]
            if f"{variant}_error" in result:
                continue
            try:
                steps_per_s, first_loss = run_variant(variant, args, name, case, data, threads)
                rounds[variant].append(steps_per_s)
                result.setdefault(f"{variant}_first_loss", first_loss)
            except RuntimeError as e:
                result[f"{variant}_error"] = str(e)
    for v in variants:
        if rounds[v] and f"{v}_error" not in result:
            result[f"{v}_steps_per_s"] = statistics.median(rounds[v])
            result[f"{v}_rounds"] = rounds[v]
    ratios = {"fused_over_unfused": ("dlc", "dlc_unfused"), "dlc_over_torch": ("dlc", "torch"),
              "unfused_over_torch": ("dlc_unfused", "torch"), "dlc_over_ort": ("dlc", "ort")}
    for key, (a, b) in ratios.items():
        if f"{a}_steps_per_s" in result and f"{b}_steps_per_s" in result:
            result[key] = result[f"{a}_steps_per_s"] / result[f"{b}_steps_per_s"]
    return result


def print_table(report: dict, args, threads: int) -> None:
    print(f"batch {args.batch}, {threads} threads, {args.steps} timed steps after {args.warmup}, median of "
          f"{args.rounds} alternating round(s); unfused: --disable-pass {args.unfused_passes}; load average "
          f"{report['load_average_before'][0]:.2f} before, {report['load_average_after'][0]:.2f} after",
          file=sys.stderr)
    print(f"{'model':12s} {'dlc':>9s} {'dlc unfused':>12s} {'torch':>9s} {'ort':>9s} {'fused/unfused':>14s} "
          f"{'fused/torch':>12s} {'fused/ort':>10s}   (steps/s)", file=sys.stderr)
    for r in report["results"]:
        cell = lambda key, fmt: format(r[key], fmt) if key in r else "–"
        print(f"{r['model']:12s} {cell('dlc_steps_per_s', '.1f'):>9s} {cell('dlc_unfused_steps_per_s', '.1f'):>12s} "
              f"{cell('torch_steps_per_s', '.1f'):>9s} {cell('ort_steps_per_s', '.1f'):>9s} "
              f"{cell('fused_over_unfused', '.2f'):>14s} {cell('dlc_over_torch', '.2f'):>12s} "
              f"{cell('dlc_over_ort', '.2f'):>10s}", file=sys.stderr)
        losses = ", ".join(f"{v} {r[f'{v}_first_loss']:.6f}" for v in args.variants if f"{v}_first_loss" in r)
        print(f"  first loss: {losses}", file=sys.stderr)
        for v in args.variants:
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
                        help="alternating rounds of the variants; each reports the median (default 3)")
    parser.add_argument("--unfused-passes", default="fusion",
                        help="the passes dlc_unfused disables, a comma list (default fusion)")
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"the variants to run, a comma list of {','.join(VARIANTS)} (default all)")
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "train_bench"), help="work folder")
    parser.add_argument("--json", help="write the JSON here instead of stdout")
    args = parser.parse_args()

    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    args.variants = args.variants.split(",")
    if not args.variants or any(v not in VARIANTS for v in args.variants):
        parser.error(f"--variants takes a comma list of {','.join(VARIANTS)}")
    threads = args.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    os.makedirs(args.out, exist_ok=True)
    report = {"cores": os.cpu_count(), "threads": threads, "batch": args.batch, "steps": args.steps,
              "warmup": args.warmup, "rounds": args.rounds, "unfused_passes": args.unfused_passes,
              "torch": torch.__version__,
              "onnxruntime": None if ort_training.IMPORT_ERROR else ort_training.ort.__version__,
              "variants": args.variants, "load_average_before": os.getloadavg(), "results": []}
    for name in args.models.split(","):
        report["results"].append(bench_model(args, name, threads))
    report["load_average_after"] = os.getloadavg()
    print_table(report, args, threads)
    write_report(report, args.json)


if __name__ == "__main__":
    main()
