#!/usr/bin/python3
"""Side-by-side table of a dlc and a PyTorch forward benchmark, plus the logits cross-check.

    report_forward.py DLC.json TORCH.json --dlc-logits A.npy --torch-logits B.npy [--rtol 1e-3]

Exits 1 when dlc's logits differ from PyTorch's by more than rtol * max(1, max|torch logits|).
"""
import argparse
import json

import numpy as np


def fmt_value(key: str, v) -> str:
    if v is None:
        return "-"
    if key.endswith("_bytes"):
        return f"{v / 2**20:.1f} MiB"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dlc_json")
    parser.add_argument("torch_json")
    parser.add_argument("--dlc-logits", required=True)
    parser.add_argument("--torch-logits", required=True)
    parser.add_argument("--rtol", type=float, default=1e-3)
    args = parser.parse_args()

    with open(args.dlc_json) as f:
        d = json.load(f)
    with open(args.torch_json) as f:
        t = json.load(f)

    keys = ["compile_s", "forward_ms_median", "forward_ms_mean", "batch", "threads", "iters", "param_bytes",
            "arena_bytes", "peak_bytes", "max_rss_bytes"]
    print(f"{'':20} {d['framework']:>16} {t['framework']:>16}")
    for k in keys:
        print(f"{k:20} {fmt_value(k, d.get(k)):>16} {fmt_value(k, t.get(k)):>16}")
    ratio = d["forward_ms_median"] / t["forward_ms_median"]
    print(f"{'latency dlc/torch':20} {ratio:>16.2f}   (median forward)")
    print(f"{'speedup torch/dlc':20} {1 / ratio:>16.2f}x")
    batch = d["batch"]
    print(f"{'images/s':20} {batch * 1e3 / d['forward_ms_median']:>16.1f} {batch * 1e3 / t['forward_ms_median']:>16.1f}")

    a = np.load(args.dlc_logits).astype(np.float64)
    b = np.load(args.torch_logits).astype(np.float64)
    if a.shape != b.shape:
        print(f"logits check: FAIL, shapes differ: dlc {a.shape} vs torch {b.shape}")
        raise SystemExit(1)
    diff = float(np.max(np.abs(a - b)))
    scale = max(1.0, float(np.max(np.abs(b))))
    same_top1 = float(np.mean(a.argmax(axis=-1) == b.argmax(axis=-1)))
    ok = diff <= args.rtol * scale
    print(f"logits check: {'PASS' if ok else 'FAIL'}: max abs diff {diff:.3e} (max |torch logit| {scale:.3f}, "
          f"tolerance {args.rtol * scale:.3e}), top-1 agreement {same_top1:.0%}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
