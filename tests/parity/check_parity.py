#!/usr/bin/python3
"""PyTorch training parity: `dlc train` on each exported model must update the parameters and the
BatchNorm running statistics as PyTorch did (reference data from make_parity_models.py).

    check_parity.py DLC [DATA_DIR ...] [--expected-failures FILE] [--models a,b] [--keep DIR]
                    [--dlc-arg ARG ...]

DATA_DIR holds one folder per model (model.onnx, data.npz, meta.json, one .npz per case); a
missing DATA_DIR is skipped (e.g. build/parity when the ResNet-18 data was not made). Default:
tests/parity/data. Needs numpy and onnx only.

For every case (sgd1: one SGD step; adam3: three Adam steps) dlc trains on the same fixed batch
with the same hyper-parameters and one thread, exports the ONNX model, and every tensor (each
parameter and running statistic) is compared with PyTorch's under parity_metric.py: every
element within 1e-4 (or the case's recorded rtol: ResNet-18's Adam case) of the largest change
PyTorch made to the tensor, plus a few float32 roundings, except the few ill-conditioned elements the reference data lists (where PyTorch's
own float32 runs scatter more than that), which get a multiple of that scatter. The per-step
losses must agree to a relative 1e-5 (or a multiple of their float32 noise, if larger).

Models named in the expected-failures file (default: expected_failures beside this script) may
fail, and must: one that passes is an error until its line is removed, so the list stays honest.
Exit status: 0 when everything passed or failed as expected, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

import parity_metric

HERE = os.path.dirname(os.path.abspath(__file__))


def read_initializers(path: str) -> dict:
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}


def read_expected_failures(path: str) -> dict:
    """model -> reason, from lines `model  # reason` (blank lines and comment lines skipped)."""
    expected = {}
    if not os.path.exists(path):
        return expected
    with open(path) as f:
        for line in f:
            name, _, reason = line.partition("#")
            if name.strip():
                expected[name.strip()] = reason.strip()
    return expected


def dlc_command(dlc: str, folder: str, meta: dict, case: dict, export: str, log: str, extra: list) -> list:
    cmd = [dlc, "train", os.path.join(folder, "model.onnx"), "--data", os.path.join(folder, "data.npz"),
           "--batch", str(meta["batch"]), "--steps", str(case["steps"]), "--optimizer", case["optimizer"],
           "--lr", repr(case["lr"]), "--loss", "cross_entropy", "--label", "label", "--threads", "1",
           "--export", export, "--log", log] + extra
    if case["optimizer"] == "sgd":
        cmd += ["--momentum", "0"]
    else:
        cmd += ["--beta1", repr(case["beta1"]), "--beta2", repr(case["beta2"]), "--eps", repr(case["eps"])]
    return cmd


def error_line(stderr: str) -> str:
    lines = [l for l in stderr.splitlines() if l.strip()]
    errors = [l for l in lines if l.startswith("error:")]
    return (errors or lines or ["(no message)"])[-1]


def compare_tensor(name: str, initial: np.ndarray, torch_value: np.ndarray, dlc_value: np.ndarray,
                   ill: dict, rtol: float) -> tuple:
    """(passed, report line) for one tensor; `ill`: its ill-conditioned elements, if any."""
    if dlc_value.shape != torch_value.shape:
        return False, f"    FAIL {name}: dlc shape {dlc_value.shape}, torch {torch_value.shape}"
    e = parity_metric.tensor_error(initial, torch_value, dlc_value, ill, rtol)
    return e["ok"], "    " + parity_metric.format_tensor_error(name, e)


def check_case(dlc: str, folder: str, meta: dict, case_name: str, work: str, extra: list) -> tuple:
    """(passed, reason, report lines) of one case of one model."""
    case = meta["cases"][case_name]
    export = os.path.join(work, f"{meta['model']}_{case_name}.onnx")
    log = os.path.join(work, f"{meta['model']}_{case_name}.jsonl")
    r = subprocess.run(dlc_command(dlc, folder, meta, case, export, log, extra), capture_output=True, text=True)
    if r.returncode != 0:
        return False, f"dlc train failed: {error_line(r.stderr)}", []
    lines, bad = [], []
    with open(log) as f:
        losses = [json.loads(l)["loss"] for l in f if l.strip()]
    ref_losses = case["losses"]
    noise = case["float32_noise"]
    loss = parity_metric.loss_error(ref_losses, losses)
    loss_tol = max(parity_metric.LOSS_RTOL, parity_metric.NOISE_FACTOR * noise["loss_rel"])
    loss_ok = len(losses) == len(ref_losses) and loss["rel"] <= loss_tol
    lines.append(f"    {'ok  ' if loss_ok else 'FAIL'} losses dlc {['%.7g' % l for l in losses]} "
                 f"torch {['%.7g' % l for l in ref_losses]} (max rel err {loss['rel']:.2e}, tol {loss_tol:.1e})")
    if not loss_ok:
        bad.append("loss")
    rtol = case.get("rtol", parity_metric.RTOL)
    if rtol != parity_metric.RTOL:
        lines.append(f"    note: this case is checked at rtol {rtol:g} (float32 cannot do better; see meta.json)")
    initial = read_initializers(os.path.join(folder, "model.onnx"))
    trained = read_initializers(export)
    reference = np.load(os.path.join(folder, f"{case_name}.npz"))
    for name in meta["parameters"] + meta["running_stats"]:
        if name not in trained:
            lines.append(f"    FAIL {name}: not in dlc's exported model")
            bad.append(name)
            continue
        ok, line = compare_tensor(name, initial[name], reference[name], trained[name],
                                  noise["ill_conditioned"].get(name), rtol)
        lines.append(line)
        if not ok:
            bad.append(name)
    if bad:
        return False, f"{len(bad)} mismatches: {', '.join(bad[:6])}{' …' if len(bad) > 6 else ''}", lines
    return True, "", lines


def model_folders(data_dirs: list, only: set) -> list:
    folders = []
    for d in data_dirs:
        if not os.path.isdir(d):
            print(f"note: {d} does not exist, skipped")
            continue
        for name in sorted(os.listdir(d)):
            folder = os.path.join(d, name)
            if os.path.exists(os.path.join(folder, "meta.json")) and (not only or name in only):
                folders.append(folder)
    return folders


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dlc", help="the dlc binary")
    parser.add_argument("data_dirs", nargs="*", default=[os.path.join(HERE, "data")])
    parser.add_argument("--expected-failures", default=os.path.join(HERE, "expected_failures"))
    parser.add_argument("--models", default="", help="comma-separated subset of the models")
    parser.add_argument("--keep", help="keep dlc's exported models and logs in this folder")
    parser.add_argument("--dlc-arg", action="append", default=[],
                        help="an extra argument of dlc train (repeatable; e.g. --dlc-arg=--attention "
                             "--dlc-arg=fused)")
    args = parser.parse_args()

    expected = read_expected_failures(args.expected_failures)
    folders = model_folders(args.data_dirs, set(filter(None, args.models.split(","))))
    if not folders:
        print("error: no model data found")
        return 1
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or tmp
        os.makedirs(work, exist_ok=True)
        for folder in folders:
            with open(os.path.join(folder, "meta.json")) as f:
                meta = json.load(f)
            model = meta["model"]
            failures = []
            for case_name in meta["cases"]:
                ok, reason, lines = check_case(args.dlc, folder, meta, case_name, work, args.dlc_arg)
                print(f"{model} {case_name}: {'pass' if ok else 'FAIL: ' + reason}")
                for line in lines:
                    print(line)
                if not ok:
                    failures.append(f"{case_name}: {reason}")
            if model in expected:
                status = "XFAIL" if failures else "XPASS"
            else:
                status = "FAIL" if failures else "PASS"
            summary.append((model, status, failures, expected.get(model, "")))

    print("\nsummary:")
    for model, status, failures, why_expected in summary:
        print(f"  {status:5s} {model}")
        for failure in failures:
            print(f"          {failure}")
        if status == "XFAIL":
            print(f"          expected: {why_expected}")
        if status == "XPASS":
            print(f"          passes now: remove '{model}' from {args.expected_failures}")
    return 1 if any(s in ("FAIL", "XPASS") for _, s, _, _ in summary) else 0


if __name__ == "__main__":
    sys.exit(main())
