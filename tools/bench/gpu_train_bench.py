#!/usr/bin/env python3
"""GPU training-step benchmark: dlc's CUDA training plans against PyTorch eager and
torch.compile, on the same model, weights, batch and optimizer, in one run.

    gpu_train_bench.py --dlc BUILD/tools/dlc [--models resnet50,gpt2] [--precisions bf16,fp32,fp16]
                       [--compile-precisions bf16] [--steps 20] [--warmup 5] [--deadline SECONDS]
                       [--no-cuda-graph] [--peak-tflops fp32=67,bf16=989,fp16=989] [--profile bf16] [--smoke]
                       [--dlc-layout auto|nchw|nhwc] [--dlc-attention auto|fused|unfused]
                       [--out DIR] [--json FILE]

Models (built with the `onnx` package, no export; tests/cli/model_builders.py checks the builders
against torch's exports):
  resnet50  torchvision's ResNet-50 (tests/cli/make_resnet_onnx.py --depth 50), 224x224, batch 128
  gpt2      the parity transformer at GPT-2-small's shape (tools/bench/make_transformer_onnx.py:
            12 blocks, d 768, 12 heads, MLP 4d, vocabulary 50257, sequence 1024), batch 8. Unlike
            GPT-2 it has no causal mask and classifies the mean over positions (10 classes) instead
            of predicting every next token, so its loss is over 8 samples, not 8192 tokens.
Every variant trains with Adam (lr 1e-3, PyTorch's defaults otherwise) and mean cross-entropy on
one fixed random batch, from the ONNX model's weights (loaded into the PyTorch module by name):
  dlc            `dlc compile --train --device cuda --arch sm_90 --precision P`, then `dlc train`
                 on the plan with --cuda-graph (--no-cuda-graph: eager launches; when capture fails
                 the run is repeated without it and the error is kept) and --cudnn-benchmark (cuDNN's
                 convolution algorithms timed once per shape, as PyTorch's cudnn.benchmark, which
                 the torch variants set). Steps/s from its --log.
                 dlc uploads the batch every step (on its copy stream, overlapped). --dlc-layout
                 is dlc compile's --layout (auto: NHWC convolutions in bf16/fp16, NCHW in fp32) and
                 --dlc-attention its --attention (auto: fused attention in bf16/fp16); when a run
                 with both at auto fails on a GPU, it is run again with nchw and unfused (`layout`,
                 `attention`, and the first error as `auto_error`).
  torch          PyTorch eager on the GPU, the batch resident there, the loss read every step
                 as dlc train reads it (so both wait for the GPU each step); bf16 and fp16 by
                 torch.autocast (fp16 with a GradScaler). fp32 runs with TF32 off (matmul and
                 cuDNN), as dlc's fp32 plans compute.
  torch_compile  the same module through torch.compile (default mode), for --compile-precisions
                 only (each precision is a separate compilation of a minute or more).
  dlc_unfused_attention  gpt2 only, in the --compile-precisions, with --dlc-attention auto: dlc
                 with `--attention unfused`, the A/B of the fused attention (last, so a deadline
                 cuts it first).
For each variant: samples/s over STEPS timed steps after WARMUP untimed ones (torch_compile's first
step compiles), the first step's loss (the variants start from the same weights and batch, so
their first losses should agree), and the model FLOP utilisation:
  MFU = training FLOPs per sample x samples/s / peak FLOP/s of the precision,
where the training FLOPs are 3x the forward pass's matrix products and convolutions (2 FLOPs per
multiply-add; counted from the ONNX graph's inferred shapes, attention products included;
elementwise work is not counted), and the peaks are the H200 SXM's dense figures (--peak-tflops).
Ratios dlc / torch and dlc / torch_compile per precision close the report.

--deadline stops starting new variants after that many seconds (they are listed as skipped), and
stops a dlc command still running 90 s after it (its variant gets the timeout as its error).
--profile P1,P2: after the timed run of each dlc variant in those precisions, 6 more steps with
DLC_PROFILE=steps (every step timed between CUDA events, no graph); the table's first 60 lines
(the slowest steps) go in the run's "profile".
--smoke: tiny shapes (ResNet-50 at 64x64, batch 4; a 2-block transformer of width 64, sequence 16)
and PyTorch on the CPU when there is no GPU, to check the script itself; without a GPU the dlc
runs end with dlc's "no CUDA device" error, which the report keeps. --dlc-device cpu runs dlc's
CPU plans instead, so that a machine without a GPU compares dlc's first losses with PyTorch's. Without torch, the PyTorch
variants are reported as unavailable and the dlc compiles still run.
Writes JSON (stdout, or --json FILE; format in docs/benchmarks.md, "GPU benchmarks") and prints a
table on stderr.
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
sys.path.insert(0, os.path.join(ROOT, "tests", "parity"))
from make_resnet_onnx import make_resnet  # noqa: E402
from make_transformer_onnx import make_transformer  # noqa: E402
from report_json import write_report  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the dlc half still runs
    torch = None

LR = 1e-3
PEAK_TFLOPS = "fp32=67,bf16=989,fp16=989"  # H200 SXM, dense (no sparsity); fp32 without TF32
VARIANTS = ("dlc", "torch", "torch_compile", "dlc_unfused_attention")
TORCHVISION_MISSING = "torchvision is not installed (PyTorch's ResNet-50)"

# Full size and --smoke size of each model.
SHAPES = {
    # Smoke: 64x64 and batch 4 keep 4 values per channel for layer4's BatchNorm; with 32x32 and
    # batch 2 it normalizes pairs, where float rounding decides the result's sign.
    "resnet50": {"full": dict(batch=128, image=224), "smoke": dict(batch=4, image=64)},
    "gpt2": {"full": dict(batch=8, vocab=50257, d=768, heads=12, blocks=12, seq=1024, mlp=4),
             "smoke": dict(batch=2, vocab=100, d=64, heads=2, blocks=2, seq=16, mlp=4)},
}


def transformer_dims(shape: dict) -> dict:
    """The transformer's size arguments (make_transformer and the PyTorch module take the same)."""
    return {k: v for k, v in shape.items() if k != "batch"}


def build_model(name: str, shape: dict, folder: str) -> tuple:
    """Writes FOLDER/NAME.onnx and NAME.npz (a random batch); returns their paths and the batch."""
    path, data = os.path.join(folder, f"{name}.onnx"), os.path.join(folder, f"{name}.npz")
    rng = np.random.default_rng(0)
    b = shape["batch"]
    if name == "resnet50":
        make_resnet(path, 50, shape["image"], 1000)
        x, classes = rng.standard_normal((b, 3, shape["image"], shape["image"]), dtype=np.float32), 1000
    else:
        onnx.save(make_transformer(**transformer_dims(shape), classes=10), path)
        x, classes = rng.integers(0, shape["vocab"], (b, shape["seq"]), dtype=np.int64), 10
    np.savez(data, input=x, label=rng.integers(0, classes, b, dtype=np.int64))
    return path, data


def forward_flops_per_sample(path: str) -> float:
    """2 x the multiply-adds of the MatMul, Gemm and Conv nodes at batch 1 (ONNX shape inference)."""
    model = onnx.load(path)
    for v in list(model.graph.input) + list(model.graph.output):
        for d in v.type.tensor_type.shape.dim:
            if d.dim_param:
                d.dim_value = 1
    g = shape_inference.infer_shapes(model).graph
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(g.value_info) + list(g.input) + list(g.output)}
    shapes.update({t.name: list(t.dims) for t in g.initializer})
    macs = 0
    for n in g.node:
        if n.op_type in ("MatMul", "Gemm"):
            out = shapes[n.output[0]]
            a = shapes[n.input[0]]
            trans_a = any(at.name == "transA" and at.i for at in n.attribute)
            macs += int(np.prod(out)) * (a[-2] if trans_a else a[-1])
        elif n.op_type == "Conv":
            w = shapes[n.input[1]]  # [out channels, in channels / groups, kh, kw]
            macs += int(np.prod(shapes[n.output[0]])) * int(np.prod(w[1:]))
    return 2.0 * macs


# The latest time.monotonic() a dlc command may run to: --deadline + GRACE_S, so that a hung
# dlc train is stopped while the report can still be written (None: no limit).
GRACE_S = 90
stop_at = None
PROFILE_STEPS, PROFILE_ROWS = 6, 60  # --profile: steps of the profiled run, lines of its table kept


def run(cmd: list, timeout: float, env: dict = None) -> subprocess.CompletedProcess:
    if stop_at is not None:
        timeout = max(1.0, min(timeout, stop_at - time.monotonic()))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "?"


def dlc_variant(args, name: str, model: str, data: str, batch: int, precision: str) -> dict:
    """dlc_run with --dlc-layout and --dlc-attention; where the run with both at auto fails on a GPU
    (the channels-last cuDNN calls and the attention kernels are new), the run again with NCHW and
    unfused attention, the first error kept as `auto_error`."""
    result = dlc_run(args, name, model, data, batch, precision, args.dlc_layout, args.dlc_attention)
    error = result.get("error", "")
    if (error and args.dlc_layout == "auto" and args.dlc_attention == "auto" and args.dlc_device == "cuda"
            and "no CUDA device" not in error):
        return {**dlc_run(args, name, model, data, batch, precision, "nchw", "unfused"), "layout": "nchw",
                "attention": "unfused", "auto_error": error}
    return result


def dlc_run(args, name: str, model: str, data: str, batch: int, precision: str, layout: str,
            attention: str) -> dict:
    """Compiles the CUDA training plan and trains it; samples/s from the log's timed steps. A step
    with no CUDA path fails the compile (--no-host-fallback): a figure is of the GPU alone."""
    plan = os.path.join(args.out, f"{name}_{precision}.dlcplan")
    t0 = time.monotonic()
    device = ["--device", "cuda", "--arch", "sm_90", "--no-host-fallback"] if args.dlc_device == "cuda" else []
    r = run([args.dlc, "compile", model, "--train", "--batch", str(batch), "--optimizer", "adam", *device,
             "--precision", precision, "--layout", layout, "--attention", attention, "-o", plan], timeout=1800)
    result = {"compile_s": round(time.monotonic() - t0, 2)}
    if r.returncode != 0:
        return {**result, "error": f"dlc compile: {last_line(r.stderr)}"}
    stats = run([args.dlc, "inspect", plan, "--stats"], timeout=120)
    if stats.returncode == 0:
        result["plan_stats"] = stats.stdout.strip()
    graph_modes = [True, False] if args.cuda_graph and args.dlc_device == "cuda" else [False]
    for cuda_graph in graph_modes:
        log = os.path.join(args.out, f"{name}_{precision}{'_graph' if cuda_graph else ''}_log.jsonl")
        r = run([args.dlc, "train", plan, "--data", data, "--steps", str(args.warmup + args.steps), "--lr", str(LR),
                 "--log", log, *(["--cuda-graph"] if cuda_graph else []), *dlc_train_options(args)], timeout=1800)
        if r.returncode == 0:
            with open(log) as f:
                lines = [json.loads(line) for line in f if line.strip()]
            timed = [line["samples_per_s"] for line in lines[args.warmup:]]
            sps = batch / statistics.mean(batch / s for s in timed)  # total samples / total time
            result.update({"cuda_graph": cuda_graph, "samples_per_s": sps, "loss_first": lines[0]["loss"],
                           "loss_last": lines[-1]["loss"], "memory": last_memory_line(r.stdout + r.stderr)})
            if precision in args.profile:
                result["profile"] = dlc_profile(args, plan, data)
            return result
        result["error" if not cuda_graph or len(graph_modes) == 1 else "cuda_graph_error"] = \
            f"dlc train: {last_line(r.stderr)}"
    return result


def dlc_train_options(args) -> list:
    """dlc train's options of every run: --cudnn-benchmark on CUDA, as PyTorch runs with
    cudnn.benchmark = True."""
    return ["--cudnn-benchmark"] if args.dlc_device == "cuda" else []


def dlc_profile(args, plan: str, data: str) -> str:
    """The plan's GPU time per step (DLC_PROFILE=steps: each step between two CUDA events, eager)
    over PROFILE_STEPS steps, the first's one-time setup included: the first PROFILE_ROWS lines of
    dlc's table (the slowest steps), or its error."""
    try:  # a profile cut off by the deadline must not lose the run's measurement
        r = run([args.dlc, "train", plan, "--data", data, "--steps", str(PROFILE_STEPS), "--lr", str(LR),
                 *dlc_train_options(args)], timeout=600, env={**os.environ, "DLC_PROFILE": "steps"})
    except subprocess.TimeoutExpired as e:
        return f"dlc train (DLC_PROFILE): stopped after {e.timeout:.0f} s"
    table = r.stderr[r.stderr.find("dlc profile:"):] if "dlc profile:" in r.stderr else ""
    if r.returncode != 0 or not table:
        return f"dlc train (DLC_PROFILE): {last_line(r.stderr)}"
    return "\n".join(table.strip().splitlines()[:PROFILE_ROWS])


def last_memory_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("memory:")]
    return lines[-1] if lines else ""


def torch_module(name: str, shape: dict, model_path: str):
    if name == "resnet50":
        import torchvision
        module = torchvision.models.resnet50()
    else:
        import make_parity_models
        module = make_parity_models.Transformer(**transformer_dims(shape), classes=10)
    from torch_weights import load_onnx_weights
    load_onnx_weights(module, model_path)
    return module


def torch_variant(args, name: str, shape: dict, model: str, data: str, precision: str, compiled: bool) -> dict:
    if torch is None:
        return {"error": "torch is not installed"}
    if compiled and not hasattr(torch, "compile"):
        return {"error": f"torch {torch.__version__} has no torch.compile"}
    if name == "resnet50" and importlib.util.find_spec("torchvision") is None:
        return {"error": TORCHVISION_MISSING}
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if precision == "fp16" and device == "cpu":
        return {"error": "fp16 autocast needs a GPU"}
    if device == "cuda":  # this run's own peak, and no cache left over from the previous one
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 as dlc computes it; autocast sets 16-bit
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    module = torch_module(name, shape, model).to(device).train()
    step_module = torch.compile(module) if compiled else module
    opt = torch.optim.Adam(module.parameters(), lr=LR)
    batch = np.load(data)
    x, y = torch.from_numpy(batch["input"]).to(device), torch.from_numpy(batch["label"]).to(device)
    dtype = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]
    scaler = None
    if precision == "fp16":  # torch.amp.GradScaler since torch 2.3; torch.cuda.amp's is deprecated there
        scaler = torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler") else torch.cuda.amp.GradScaler()
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def step() -> float:
        """One training step; returns the loss as a float, so that every step waits for the GPU
        as dlc train's does (it reads the loss each step)."""
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device, dtype=dtype, enabled=dtype is not None):
            loss = F.cross_entropy(step_module(x), y)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return float(loss)

    t0 = time.monotonic()
    loss_first = step()
    first_step_s = time.monotonic() - t0
    for _ in range(args.warmup - 1):
        step()
    sync()
    t0 = time.monotonic()
    for _ in range(args.steps):
        loss = step()
    sync()
    elapsed = time.monotonic() - t0
    return {"device": device, "samples_per_s": args.steps * len(y) / elapsed, "loss_first": loss_first,
            "loss_last": loss, "first_step_s": round(first_step_s, 2),
            "peak_memory_bytes": torch.cuda.max_memory_allocated() if device == "cuda" else None}


def prepare_model(args, name: str, report: dict) -> dict:
    """Builds the model and its batch, counts its FLOPs, and adds its (empty) entry to the report."""
    shape = SHAPES[name]["smoke" if args.smoke else "full"]
    model, data = build_model(name, shape, args.out)
    result = {"model": name, "shape": shape, "training_flops_per_sample": 3.0 * forward_flops_per_sample(model),
              "runs": [], "ratios": {}}
    report["results"].append(result)
    return {"result": result, "shape": shape, "model": model, "data": data}


def run_variant(args, case: dict, variant: str, precision: str, peaks: dict, started: float) -> dict:
    """One run; failures and the deadline are recorded in the result instead of raised."""
    name, shape = case["result"]["model"], case["shape"]
    info = {"variant": variant, "precision": precision}
    if args.deadline is not None and time.monotonic() - started > args.deadline:
        return {**info, "skipped": f"deadline of {args.deadline:.0f} s reached"}
    t0 = time.monotonic()
    try:
        if variant == "dlc":
            info.update(dlc_variant(args, name, case["model"], case["data"], shape["batch"], precision))
        elif variant == "dlc_unfused_attention":
            info.update(dlc_run(args, f"{name}_unfused_attention", case["model"], case["data"], shape["batch"],
                                precision, args.dlc_layout, "unfused"))
        else:
            info.update(torch_variant(args, name, shape, case["model"], case["data"], precision,
                                      variant == "torch_compile"))
    except Exception as e:  # noqa: BLE001  (one failed variant must not end the report)
        info["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
    info["wall_s"] = round(time.monotonic() - t0, 1)
    if "samples_per_s" in info:
        info["mfu"] = case["result"]["training_flops_per_sample"] * info["samples_per_s"] / (peaks[precision] * 1e12)
    return info


def set_ratios(result: dict, precisions: list) -> None:
    """dlc's samples/s over each peer's, for every precision both have measured so far."""
    speed = {(r["variant"], r["precision"]): r["samples_per_s"] for r in result["runs"] if "samples_per_s" in r}
    result["ratios"] = {f"dlc_over_{peer}_{p}": speed[("dlc", p)] / speed[(peer, p)]
                        for p in precisions for peer in ("torch", "torch_compile")
                        if ("dlc", p) in speed and (peer, p) in speed}


def bench(args, peaks: dict, report: dict, started: float) -> None:
    """Every variant of every model, precision by precision (the first precision's comparisons
    come first, before a deadline can cut them), rewriting --json after each run so that a run
    killed at its time limit leaves what it measured. `started`: the deadline's zero."""
    cases = [prepare_model(args, name, report) for name in args.models]
    for precision in args.precisions:
        for case in cases:
            for variant in VARIANTS:
                if variant == "torch_compile" and precision not in args.compile_precisions:
                    continue
                # The A/B of the fused attention: the transformer, in the torch.compile precisions.
                if variant == "dlc_unfused_attention" and (
                        case["result"]["model"] != "gpt2" or precision not in args.compile_precisions
                        or args.dlc_attention != "auto"):
                    continue
                info = run_variant(args, case, variant, precision, peaks, started)
                case["result"]["runs"].append(info)
                set_ratios(case["result"], args.precisions)
                if args.json:
                    write_report(report, args.json)
                outcome = f"{info['samples_per_s']:.1f} samples/s" if "samples_per_s" in info else \
                    info.get("error", info.get("skipped", "?"))
                print(f"{case['result']['model']} {precision} {variant}: {outcome}", file=sys.stderr)


def print_table(report: dict) -> None:
    print(f"{'model':9s} {'precision':9s} {'variant':22s} {'samples/s':>10s} {'MFU':>6s} {'first loss':>11s}",
          file=sys.stderr)
    for m in report["results"]:
        for r in m["runs"]:
            sps = f"{r['samples_per_s']:.1f}" if "samples_per_s" in r else "-"
            mfu = f"{100 * r['mfu']:.1f}%" if "mfu" in r else "-"
            loss = f"{r['loss_first']:.4f}" if r.get("loss_first") is not None else "-"
            note = r.get("error") or r.get("skipped") or ""
            print(f"{m['model']:9s} {r['precision']:9s} {r['variant']:22s} {sps:>10s} {mfu:>6s} {loss:>11s}  {note}",
                  file=sys.stderr)
        for k, v in m["ratios"].items():
            print(f"  {k}: {v:.2f}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dlc", required=True, help="the dlc binary")
    parser.add_argument("--models", default="resnet50,gpt2")
    parser.add_argument("--precisions", default="bf16,fp32,fp16")
    parser.add_argument("--compile-precisions", default="bf16", help="precisions torch.compile runs in (default bf16)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps (default 20)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first (default 5)")
    parser.add_argument("--deadline", type=float, help="start no variant after this many seconds")
    parser.add_argument("--no-cuda-graph", dest="cuda_graph", action="store_false", help="dlc without --cuda-graph")
    parser.add_argument("--peak-tflops", default=PEAK_TFLOPS, help=f"peak TFLOP/s per precision ({PEAK_TFLOPS})")
    parser.add_argument("--profile", default="", help="precisions whose dlc plans are also run with DLC_PROFILE=steps")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes, to check the script")
    parser.add_argument("--dlc-layout", default="auto", choices=["auto", "nchw", "nhwc"],
                        help="dlc compile's --layout (default auto: channels-last convolutions in bf16 and fp16)")
    parser.add_argument("--dlc-attention", default="auto", choices=["auto", "fused", "unfused"],
                        help="dlc compile's --attention (default auto: fused attention in bf16 and fp16)")
    parser.add_argument("--dlc-device", default="cuda", choices=["cuda", "cpu"],
                        help="cpu: dlc's CPU plans instead (with --smoke: the first losses against PyTorch's)")
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "gpu_train_bench"), help="work folder")
    parser.add_argument("--json", help="write the JSON here instead of stdout")
    args = parser.parse_args()
    args.models, args.precisions = args.models.split(","), args.precisions.split(",")
    args.compile_precisions = args.compile_precisions.split(",") if args.compile_precisions else []
    args.profile = args.profile.split(",") if args.profile else []
    unknown = [m for m in args.models if m not in SHAPES] + [p for p in args.precisions if p not in
                                                               ("fp32", "bf16", "fp16")]
    if unknown or args.steps < 1 or args.warmup < 1:
        parser.error(f"unknown models or precisions {unknown}, or --steps/--warmup below 1")
    peaks = {k: float(v) for k, v in (item.split("=") for item in args.peak_tflops.split(","))}
    os.makedirs(args.out, exist_ok=True)

    started = time.monotonic()
    if args.deadline is not None:
        global stop_at
        stop_at = started + args.deadline + GRACE_S
    gpu = torch.cuda.get_device_name() if torch is not None and torch.cuda.is_available() else None
    report = {"schema": "dlc-gpu-bench/1", "gpu": gpu, "torch": torch.__version__ if torch is not None else None,
              "smoke": args.smoke, "steps": args.steps, "warmup": args.warmup, "lr": LR, "peak_tflops": peaks,
              "cuda_graph": args.cuda_graph, "dlc_device": args.dlc_device, "dlc_layout": args.dlc_layout,
              "dlc_attention": args.dlc_attention,
              "results": []}
    bench(args, peaks, report, started)
    report["seconds"] = round(time.monotonic() - started, 1)
    print_table(report)
    write_report(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
