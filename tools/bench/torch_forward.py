#!/usr/bin/python3
"""PyTorch eager side of the forward benchmark: the same measurement as dlc_bench_forward.

    torch_forward.py MODEL.pt --batch 8 --threads 2 --iters 10 --warmup 2
        [--input FILE.npy] [--dump-output FILE.npy]

MODEL.pt is the state dict export_resnet50.py writes beside the .onnx. Prints one JSON object
with the keys of dlc_bench_forward. compile_s is the eager equivalent of import+compile:
building the module and loading the weights. arena_bytes and peak_bytes have no eager
equivalent and are null; max_rss_bytes is the process's peak resident memory.
"""
import argparse
import json
import os
import resource
import statistics
import time

import numpy as np
import torch

from export_resnet50 import build_resnet50_architecture


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("weights", help="state dict written by export_resnet50.py (MODEL.pt)")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--input", help="input .npy instead of the random one")
    parser.add_argument("--dump-output", help="write the logits of the last run to this .npy")
    args = parser.parse_args()

    threads = args.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)

    start = time.perf_counter()
    model = build_resnet50_architecture()
    model.load_state_dict(torch.load(args.weights))
    model.eval()
    compile_s = time.perf_counter() - start

    if args.input:
        x = torch.from_numpy(np.load(args.input))
    else:
        x = torch.randn(args.batch, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    if x.shape[0] != args.batch:
        raise SystemExit(f"--input has batch {x.shape[0]}, --batch is {args.batch}")

    times_ms = []
    with torch.no_grad():
        for _ in range(args.warmup):
            y = model(x)
        for _ in range(args.iters):
            t0 = time.perf_counter()
            y = model(x)
            times_ms.append((time.perf_counter() - t0) * 1e3)
    if args.dump_output:
        np.save(args.dump_output, y.numpy())

    # Floating-point weights and running statistics: what the ONNX file holds (not num_batches_tracked).
    param_bytes = sum(t.numel() * t.element_size() for t in model.state_dict().values() if t.is_floating_point())
    print(json.dumps({
        "framework": f"torch {torch.__version__}",
        "compile_s": compile_s,
        "forward_ms_median": statistics.median(times_ms),
        "forward_ms_mean": statistics.fmean(times_ms),
        "forward_ms_all": times_ms,
        "batch": args.batch,
        "threads": threads,
        "iters": args.iters,
        "warmup": args.warmup,
        "param_bytes": param_bytes,
        "arena_bytes": None,
        "peak_bytes": None,
        "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }))


if __name__ == "__main__":
    main()
