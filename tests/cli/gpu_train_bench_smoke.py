#!/usr/bin/env python3
"""The GPU benchmark (tools/bench/gpu_train_bench.py) checked where it can be without a GPU:

  - its FLOP count: ResNet-50 at 224x224 is 4,089,184,256 multiply-adds a sample (the figure
    torchvision and fvcore publish, 4.09 G), and the smoke transformer's count equals the
    closed form blocks x (12 T d^2 + 2 T^2 d) + d x classes;
  - a --smoke run in bf16: dlc compiles both models' CUDA training plans (ResNet-50's 53
    convolutions and the transformer) for sm_90, and each dlc run either trains (with a GPU) or
    ends with dlc's no-device error (without one); PyTorch eager reports a speed where torch is
    installed, else that it is missing (ResNet-50's also where torchvision is; torch.compile: a speed
    or that this torch lacks it); the
    report and every run carry the fields docs/benchmarks.md lists for them.

usage: gpu_train_bench_smoke.py PATH/TO/dlc WORK_DIR
"""
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))
import gpu_train_bench as bench  # noqa: E402
from make_resnet_onnx import make_resnet  # noqa: E402

NO_GPU = "dlc train: error: the plan runs on cuda:0, but no CUDA device is available here"
RESNET50_MACS = 4_089_184_256
REPORT_KEYS = {"schema", "gpu", "torch", "smoke", "steps", "warmup", "lr", "peak_tflops", "cuda_graph", "dlc_device",
               "dlc_layout", "dlc_attention", "seconds", "results"}
RESULT_KEYS = {"model", "shape", "training_flops_per_sample", "runs", "ratios"}
RUN_KEYS = {"variant", "precision", "wall_s"}
MEASURED_KEYS = {"samples_per_s", "mfu", "loss_first", "loss_last"}


def torch_installed() -> bool:
    try:
        import torch
        return bool(torch.__version__)
    except ImportError:
        return False


def torchvision_installed() -> bool:
    return importlib.util.find_spec("torchvision") is not None


def main() -> int:
    dlc, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    failures = []

    path = os.path.join(work, "resnet50_224.onnx")
    make_resnet(path, 50, 224, 1000)
    macs = bench.forward_flops_per_sample(path) / 2
    if macs != RESNET50_MACS:
        failures.append(f"ResNet-50 multiply-adds: {macs:.0f}, expected {RESNET50_MACS}")

    report_path = os.path.join(work, "report.json")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench", "gpu_train_bench.py"), "--dlc", dlc,
                        "--smoke", "--precisions", "bf16", "--steps", "1", "--warmup", "1", "--out", work, "--json",
                        report_path], capture_output=True, text=True, timeout=1500)
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
        print(f"FAILED: gpu_train_bench.py exited {r.returncode}")
        return 1
    report = json.load(open(report_path))
    gpu, has_torch = os.path.exists("/dev/nvidia0"), torch_installed()
    if set(report) != REPORT_KEYS:
        failures.append(f"report keys {sorted(report)}, expected {sorted(REPORT_KEYS)}")
    for m in report["results"]:
        if set(m) != RESULT_KEYS:
            failures.append(f"{m['model']}: keys {sorted(m)}, expected {sorted(RESULT_KEYS)}")
        for run in m["runs"]:
            if not RUN_KEYS <= set(run) or ("samples_per_s" in run and not MEASURED_KEYS <= set(run)):
                failures.append(f"{m['model']} {run.get('variant')}: keys {sorted(run)}")
        shape = m["shape"]
        if m["model"] == "gpt2":
            t, d = shape["seq"], shape["d"]
            expected = 3 * 2 * (shape["blocks"] * (12 * t * d * d + 2 * t * t * d) + d * 10)
            if m["training_flops_per_sample"] != expected:
                failures.append(f"gpt2 training FLOPs {m['training_flops_per_sample']}, expected {expected}")
        variants = {run["variant"]: run for run in m["runs"]}
        want = {"dlc", "torch", "torch_compile"} | ({"dlc_unfused_attention"} if m["model"] == "gpt2" else set())
        if set(variants) != want:
            failures.append(f"{m['model']}: variants {sorted(variants)}")
            continue
        if m["model"] == "gpt2":
            fused, unfused = (json.loads(variants[v].get("plan_stats", "{}")) for v in ("dlc", "dlc_unfused_attention"))
            kernels = (fused.get("operand_bytes_by_kernel", {}), unfused.get("operand_bytes_by_kernel", {}))
            if "Attention" not in kernels[0] or "Attention" in kernels[1]:
                failures.append(f"gpt2: Attention steps fused {sorted(kernels[0])}, unfused {sorted(kernels[1])}")
        run = variants["dlc"]
        if "plan_stats" not in run or "compile_s" not in run:
            failures.append(f"{m['model']} dlc: no compiled plan ({run.get('error')})")
        elif gpu and not run.get("samples_per_s", 0) > 0:
            failures.append(f"{m['model']} dlc on the GPU: {run.get('error')}")
        elif not gpu and run.get("error") != NO_GPU:
            failures.append(f"{m['model']} dlc without a GPU: {run.get('error')!r}, expected {NO_GPU!r}")
        eager, compiled = variants["torch"], variants["torch_compile"]
        if not has_torch:
            for run in (eager, compiled):
                if run.get("error") != "torch is not installed":
                    failures.append(f"{m['model']} {run['variant']} without torch: {run.get('error')!r}")
        elif m["model"] == "resnet50" and not torchvision_installed():
            if eager.get("error") != bench.TORCHVISION_MISSING:
                failures.append(f"resnet50 torch without torchvision: {eager.get('error')!r}")
        else:
            if not eager.get("samples_per_s", 0) > 0:
                failures.append(f"{m['model']} torch: no speed ({eager.get('error')})")
            if not (compiled.get("samples_per_s", 0) > 0 or "has no torch.compile" in compiled.get("error", "")):
                failures.append(f"{m['model']} torch_compile: {compiled.get('error')}")
        print(f"{m['model']}: dlc compiled in {variants['dlc']['compile_s']} s; "
              f"dlc: {variants['dlc'].get('error', 'trained')}; torch: "
              f"{variants['torch'].get('error') or format(variants['torch']['samples_per_s'], '.1f') + ' samples/s'}")
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
