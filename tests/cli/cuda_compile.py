#!/usr/bin/env python3
"""`dlc compile --device cuda --arch sm_90` on the parity models (mlp, cnn, cnn_bias, transformer,
einsum, upsample, recurrent) for training, with NVRTC compiling the kernels (needs the CUDA Toolkit, not a GPU). By
default: the five models in fp32, mlp in fp16 (dynamic loss scaling's kernels) and cnn in bf16 (16-bit
convolution nets); with --all-precisions or DLC_CUDA_COMPILE_ALL=1 in the environment, every model
in every precision (about 3x the time: 16-bit plans have 2-4x the distinct kernels, NVRTC
compiles each in 0.1-0.9 s). tests/unit/cuda_plan_test.cc binds all twelve without NVRTC:

- the plan is written and loads (its CUDA bindings are checked on load: `dlc inspect PLAN`);
- `dlc inspect --stats` reports generated_kernels, kernel_steps, library_calls, host_steps and
  host_kernel_steps, and every step is bound on the GPU: kernel_steps + library_calls +
  host_steps == ops, no step runs on the host by its CPU kernel;
- identical kernels are stored once: generated_kernels < kernel_steps for the models with
  repeated layers (transformer, ResNet-18), <= for the others (their optimizer updates merge);
- Slice, Pad, Concat and a comparison compile to generated kernels (an inference model);
- training plans with Dropout and with NegativeLogLikelihoodLoss compile (the run counter's i64
  Add and the labels' i64 Equal are integer kernels);
- a step with no CUDA path (an f64 Mul) runs on the host by its CPU kernel, with a note naming its
  node, op and reason (host_kernel_steps 1); with --no-host-fallback it fails cleanly, naming its
  node and op; so do a bad --device and
  --arch, and, without a GPU, `dlc run` / `dlc train` of a CUDA plan (an error naming the missing
  device); with a GPU, 5 training steps of the mlp's CUDA plan give the CPU plan's losses (rel. 1e-3).

Prints the compile time and the CUDA statistics of each plan. tests/cli/cuda_compile_resnet18.py
uses compile_plan() on ResNet-18.

usage: cuda_compile.py PATH/TO/dlc PARITY_DATA_DIR [--all-precisions] [-v]
"""
import json
import os
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from cli_harness import Checks, FailureChecker, make_model

BATCH = {"mlp": 16, "cnn": 8, "cnn_bias": 8, "transformer": 8, "einsum": 8, "upsample": 8, "recurrent": 8}
PRECISIONS = ["fp32", "bf16", "fp16"]
# (model, precision) compiled by default; --all-precisions: every pair.
DEFAULT_CASES = [(m, "fp32") for m in BATCH] + [("mlp", "fp16"), ("cnn", "bf16")]
REPEATED_LAYERS = {"transformer", "resnet18"}
KEYS = ["generated_kernels", "kernel_steps", "library_calls", "host_steps", "host_kernel_steps"]
CUDA = ["--device", "cuda", "--arch", "sm_90"]


def train_on_gpu(checks, tmp, data_dir, cuda_plan):
    """Trains the mlp for 5 steps with its CUDA plan and with the CPU plan of the same compile
    options and compares the logged losses."""
    model, data = os.path.join(data_dir, "model.onnx"), os.path.join(data_dir, "data.npz")
    cpu_plan = os.path.join(tmp, "mlp_cpu.dlcplan")
    if not checks.run("mlp_cpu_compile", ["compile", model, "--train", "--batch", str(BATCH["mlp"]), "--optimizer", "adam", "-o", cpu_plan]):
        return
    losses = {}
    for device, plan in [("cpu", cpu_plan), ("cuda", cuda_plan)]:
        log = os.path.join(tmp, f"mlp_{device}.jsonl")
        if not checks.run(f"train_{device}_plan", ["train", plan, "--data", data, "--steps", "5", "--log", log]):
            return
        losses[device] = [json.loads(line)["loss"] for line in open(log) if line.strip()]
    ok = len(losses["cpu"]) == len(losses["cuda"]) == 5 and all(
        abs(g - c) <= 1e-3 * max(1.0, abs(c)) for g, c in zip(losses["cuda"], losses["cpu"]))
    checks.expect("cuda_losses_match_cpu", ok, f"CUDA {losses['cuda']} vs CPU {losses['cpu']}")


def compile_plan(checks, name, model, args, plan, repeated_layers):
    """Compiles the training plan of `model` (with the dlc arguments `args`) for sm_90 into `plan`
    and checks its statistics; returns whether it compiled."""
    start = time.monotonic()
    proc = checks.run(f"{name}_compile", ["compile", model, "--train", *args, *CUDA, "-o", plan])
    seconds = time.monotonic() - start
    if not proc:
        return False
    proc = checks.run(f"{name}_stats", ["inspect", plan, "--stats"])
    if not proc:
        return True
    j = json.loads(proc.stdout)
    if not checks.expect(f"{name}_keys", all(k in j for k in KEYS), sorted(j)):
        return True
    print(f"{name}: compiled for sm_90 in {seconds:.1f} s: {json.dumps({k: j[k] for k in ['ops'] + KEYS})}")
    checks.expect(f"{name}_all_bound", j["kernel_steps"] + j["library_calls"] + j["host_steps"] == j["ops"], j)
    checks.expect(f"{name}_no_host_kernel_steps", j["host_kernel_steps"] == 0, j)
    dedupe = j["generated_kernels"] < j["kernel_steps"] if repeated_layers else j["generated_kernels"] <= j["kernel_steps"]
    checks.expect(f"{name}_kernels_dedupe", 0 < j["generated_kernels"] and dedupe, j)
    checks.expect(f"{name}_library_calls", j["library_calls"] > 0, j)
    return True


def compile_models(checks, data, tmp, cases):
    plans = {}
    for model, precision in cases:
        name = model if precision == "fp32" else f"{model}_{precision}"
        plan = os.path.join(tmp, f"{name}.dlcplan")
        args = ["--batch", str(BATCH[model]), "--optimizer", "adam", "--precision", precision]
        if compile_plan(checks, name, os.path.join(data, model, "model.onnx"), args, plan, model in REPEATED_LAYERS):
            plans[name] = plan
    return plans


def compile_data_movement(checks, tmp):
    """Slice (step -1), Pad, Concat, Greater and Where, each a generated kernel."""
    ints = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    nodes = [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["s"]),
             helper.make_node("Pad", ["x", "pads"], ["p"], mode="constant"),
             helper.make_node("Concat", ["s", "p"], ["c"], axis=1),
             helper.make_node("Greater", ["c", "zero"], ["g"]),
             helper.make_node("Where", ["g", "c", "zero"], ["y"])]
    inits = [ints("starts", [6]), ints("ends", [1]), ints("axes", [1]), ints("steps", [-2]),
             ints("pads", [0, 1, 0, 2]), numpy_helper.from_array(np.zeros((), np.float32), "zero")]
    model = make_model(os.path.join(tmp, "move.onnx"), nodes, [("x", TensorProto.FLOAT, [4, 8])],
                       [("y", TensorProto.FLOAT, [4, 14])], inits)
    plan = os.path.join(tmp, "move.dlcplan")
    if not checks.run("data_movement_compile", ["compile", model, *CUDA, "-o", plan]):
        return
    proc = checks.run("data_movement_stats", ["inspect", plan, "--stats"])
    if proc:
        j = json.loads(proc.stdout)
        checks.expect("data_movement_kernels", j.get("kernel_steps") == j.get("ops") == 5, j)


def compile_dropout_training(checks, tmp):
    """A training plan with Dropout: its masks, its gradient and the i64 run counter that advances
    after every step (an integer Add) all bind to kernels."""
    w = numpy_helper.from_array(np.full((8, 8), 0.1, np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Dropout", ["h", "ratio", "training"], ["y"])]
    inits = [w, numpy_helper.from_array(np.array(0.25, np.float32), "ratio"),
             numpy_helper.from_array(np.array(True), "training")]
    model = make_model(os.path.join(tmp, "dropout.onnx"), nodes, [("x", TensorProto.FLOAT, [4, 8])],
                       [("y", TensorProto.FLOAT, [4, 8])], inits)
    plan = os.path.join(tmp, "dropout.dlcplan")
    checks.run("dropout_training_compile",
               ["compile", model, "--train", "--loss", "mse", "--optimizer", "adam", *CUDA, "-o", plan])
    # NegativeLogLikelihoodLoss: its gradient compares the i64 labels with the class ids.
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("LogSoftmax", ["h"], ["l"], axis=1),
             helper.make_node("NegativeLogLikelihoodLoss", ["l", "labels"], ["y"])]
    model = make_model(os.path.join(tmp, "nll.onnx"), nodes, [("x", TensorProto.FLOAT, [4, 8])],
                       [("y", TensorProto.FLOAT, [])],
                       [w, numpy_helper.from_array(np.array([0, 3, 7, 1], np.int64), "labels")])
    checks.run("nll_training_compile", ["compile", model, "--train", "--loss", "output", *CUDA, "-o", plan])


def compile_host_fallback(checks, model, plan):
    """A step with no CUDA path (`model`'s f64 Mul) compiles to a host step with a note saying why."""
    proc = checks.run("host_fallback_compile", ["compile", model, *CUDA, "-o", plan])
    if not proc:
        return
    note = "note: step 'my_square' (op Mul) runs on the host by its CPU kernel: expression program: input"
    checks.expect("host_fallback_note", note in proc.stderr.decode(), proc.stderr.decode())
    proc = checks.run("host_fallback_stats", ["inspect", plan, "--stats"])
    if proc:
        j = json.loads(proc.stdout)
        checks.expect("host_fallback_steps", j.get("host_kernel_steps") == 1 and j.get("ops") == 1, j)


def main():
    dlc, data, verbose = sys.argv[1], sys.argv[2], "-v" in sys.argv
    every = "--all-precisions" in sys.argv or os.environ.get("DLC_CUDA_COMPILE_ALL") == "1"
    cases = [(m, p) for p in PRECISIONS for m in BATCH] if every else DEFAULT_CASES
    checks = Checks(dlc, verbose)
    failures = FailureChecker(dlc, verbose)
    with tempfile.TemporaryDirectory() as tmp:
        plans = compile_models(checks, data, tmp, cases)
        compile_data_movement(checks, tmp)
        compile_dropout_training(checks, tmp)

        gather = make_model(os.path.join(tmp, "f64_mul.onnx"),
                            [helper.make_node("Mul", ["x", "x"], ["y"], name="my_square")],
                            [("x", TensorProto.DOUBLE, [4, 8])], [("y", TensorProto.DOUBLE, [4, 8])], [])
        out = os.path.join(tmp, "f64_mul.dlcplan")
        compile_host_fallback(checks, gather, os.path.join(tmp, "f64_mul_host.dlcplan"))
        failures.check("unsupported_op", ["compile", gather, *CUDA, "--no-host-fallback", "-o", out],
                       "step 'my_square' (op Mul) has no CUDA path", must_not_exist=[out])
        failures.check("bad_device", ["compile", gather, "--device", "gpu", "-o", out], "--device 'gpu'",
                       must_not_exist=[out])
        failures.check("bad_arch", ["compile", gather, "--device", "cuda", "--arch", "90", "-o", out],
                       "--arch '90'", must_not_exist=[out])
        if "mlp" in plans:
            if os.path.exists("/dev/nvidia0"):  # a GPU: the CUDA session trains as the CPU one does
                train_on_gpu(checks, tmp, os.path.join(data, "mlp"), plans["mlp"])
            else:
                out_dir = os.path.join(tmp, "run_out")
                failures.check("run_cuda_plan", ["run", plans["mlp"], "--output-dir", out_dir],
                               "no CUDA device is available here", out_dir=out_dir)
                failures.check("train_cuda_plan", ["train", plans["mlp"], "--data", os.path.join(data, "mlp", "data.npz"),
                                                   "--steps", "1"], "no CUDA device is available here")
    return max(checks.summary("cuda compile"), failures.summary("cuda must-fail"))


if __name__ == "__main__":
    sys.exit(main())
