#!/usr/bin/env python3
"""onnx_conformance's saved plans, the way the GPU check uses them (scripts/gpu_bundle.sh compiles
here, scripts/gpu_check.sh runs on the GPU machine, which has no test data and no build tools):

- CPU round trip: `--filter F --save-plans DIR` compiles the matching cases and writes each case's
  model, data sets and plans; `--data DIR --precompiled` runs those plans and passes the same cases;
- a corrupt saved plan fails its case with an error naming the plan file;
- CUDA: `--device cuda --save-plans DIR` compiles every selected case for CUDA (NVRTC, no GPU):
  a plan, or the "has no CUDA path" refusal, never another failure; it prints how many were
  refused. Then `--precompiled` runs them where a GPU is, else fails a case with the no-device error.

usage: conformance_plans.py PATH/TO/onnx_conformance TESTDATA_DIR KNOWN_FAILURES_DIR WORK_DIR [--cuda]
"""
import os
import re
import shutil
import subprocess
import sys

SUMMARY = re.compile(r"^conformance \((\w+)[^)]*\): (\d+) of (\d+) selected cases (pass|compiled and saved)", re.M)


def run(args, checks, name, want_rc=0):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=900)
    ok = proc.returncode == want_rc
    checks.append((name, ok, f"exit {proc.returncode} (want {want_rc}): {(proc.stdout + proc.stderr)[-1500:]}"))
    return proc


def summary(proc):
    m = SUMMARY.search(proc.stdout)
    return (int(m.group(2)), int(m.group(3))) if m else None


def main() -> int:
    conformance, data, known, work = sys.argv[1:5]
    cuda = "--cuda" in sys.argv
    shutil.rmtree(work, ignore_errors=True)
    checks = []
    base = [conformance, "--known-failures", known]

    cpu_dir = os.path.join(work, "cpu")
    saved = run(base + ["--data", data, "--filter", "test_softmax", "--save-plans", cpu_dir], checks, "cpu_save")
    counts = summary(saved)
    checks.append(("cpu_saved_some", bool(counts) and counts[0] == counts[1] > 3, saved.stdout[-500:]))
    plans = [os.path.join(r, f) for r, _, fs in os.walk(cpu_dir) for f in fs if f == "plan.dlcplan"]
    checks.append(("cpu_plans_written", len(plans) >= (counts or (0, 0))[0] > 0, f"{len(plans)} plans"))
    ran = run(base + ["--data", cpu_dir, "--precompiled"], checks, "cpu_precompiled")
    checks.append(("cpu_precompiled_pass", summary(ran) == counts and "precompiled plans" in ran.stdout,
                   f"{summary(ran)} vs saved {counts}"))

    if plans:
        with open(plans[0], "r+b") as f:  # a corrupt plan: its case fails, naming the file
            f.seek(12)
            f.write(b"\xff" * 16)
        bad = run(base + ["--data", cpu_dir, "--precompiled"], checks, "corrupt_plan_fails", want_rc=1)
        checks.append(("corrupt_plan_named", plans[0] in bad.stdout, bad.stdout[-800:]))

    if cuda:
        cuda_dir = os.path.join(work, "cuda")
        saved = run(base + ["--data", data, "--device", "cuda", "--save-plans", cuda_dir], checks, "cuda_save")
        counts = summary(saved)
        refused = re.search(r"^(\d+) selected cases refused: a step has no CUDA path", saved.stdout, re.M)
        checks.append(("cuda_saved_most", bool(counts and refused) and counts[1] > 300 and counts[0] >= counts[1] - 10,
                       saved.stdout[-800:]))
        print(SUMMARY.search(saved.stdout).group(0) if SUMMARY.search(saved.stdout) else "no summary line")
        gpu = os.path.exists("/dev/nvidia0")
        ran = run(base + ["--data", cuda_dir, "--precompiled", "--device", "cuda"] + ([] if gpu else ["--filter", "test_relu"]),
                  checks, "cuda_precompiled", want_rc=0 if gpu else 1)
        if not gpu:
            checks.append(("cuda_precompiled_needs_gpu", "no CUDA device is available here" in ran.stdout, ran.stdout[-800:]))

    failed = [c for c in checks if not c[1]]
    for name, _, detail in failed:
        print(f"FAILED {name}: {detail}")
    print(f"conformance plans: {len(checks) - len(failed)} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
