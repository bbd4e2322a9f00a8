#!/usr/bin/env python3
"""`dlc compile --device cuda --arch sm_90 --no-host-fallback` of every ONNX backend node case that
dlc compiles for the CPU (libonnx-testdata's node/*/model.onnx, inference plans; NVRTC compiles the
kernels, no GPU needed). Without the host fallback a step with no CUDA path is an error, so this
measures the CUDA backend's own coverage. A case passes when its CUDA plan compiles, or when dlc
refuses it with the clear
"has no CUDA path" error naming the step and op (an op the CUDA backend does not cover yet);
anything else — an NVRTC error in a generated kernel, a crash, another error — fails the test.
Prints the counts and the ops refused most often (the CUDA backend's coverage gaps).

usage: cuda_compile_conformance.py PATH/TO/dlc TESTDATA_DIR [--jobs N]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

REFUSAL = re.compile(r"^error: step '.*' \(op (\w+)\) has no CUDA path: ")


def compile_case(dlc: str, model: str, tmp: str) -> tuple:
    """("cpu-unsupported" | "ok" | "refused" | "failed", detail)."""
    plan = os.path.join(tmp, re.sub(r"\W", "_", model) + ".dlcplan")
    try:
        cpu = subprocess.run([dlc, "compile", model, "-o", plan], capture_output=True, text=True, timeout=300)
        if cpu.returncode != 0:
            return "cpu-unsupported", ""
        r = subprocess.run([dlc, "compile", model, "--device", "cuda", "--arch", "sm_90", "--no-host-fallback",
                            "-o", plan],
                           capture_output=True, text=True, timeout=300)
    finally:
        if os.path.exists(plan):
            os.remove(plan)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    if r.returncode == 0:
        return "ok", ""
    match = REFUSAL.match(lines[0]) if len(lines) == 1 else None
    if match and r.returncode > 0:
        return "refused", match.group(1)
    return "failed", f"exit {r.returncode}: " + " | ".join(lines[:6])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("dlc")
    parser.add_argument("testdata", help="libonnx-testdata's data folder (node/ inside)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    node = os.path.join(args.testdata, "node")
    cases = sorted(c for c in os.listdir(node) if os.path.exists(os.path.join(node, c, "model.onnx")))
    results = {}
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(compile_case, args.dlc, os.path.join(node, c, "model.onnx"), tmp): c for c in cases}
        for f in concurrent.futures.as_completed(futures):
            results[futures[f]] = f.result()
    counts = collections.Counter(kind for kind, _ in results.values())
    refused = collections.Counter(detail for kind, detail in results.values() if kind == "refused")
    print(f"{len(cases)} node cases: {counts['cpu-unsupported']} not compiled for the CPU either; of the rest, "
          f"{counts['ok']} compiled for CUDA, {counts['refused']} refused (no CUDA path), {counts['failed']} failed")
    print("refused most often: " + ", ".join(f"{op} {n}" for op, n in refused.most_common(12)))
    failed = sorted(c for c, (kind, _) in results.items() if kind == "failed")
    for c in failed:
        print(f"FAILED: {c}: {results[c][1]}")
    return 1 if failed or not counts["ok"] else 0


if __name__ == "__main__":
    sys.exit(main())
