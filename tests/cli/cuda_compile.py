#!/usr/bin/env python3
"""`dlc compile --device cuda --arch sm_90` on the parity models (mlp, cnn, transformer) in fp32,
for training, with NVRTC compiling the kernels (needs the CUDA Toolkit, not a GPU):

- the plan is written and loads (its CUDA bindings are checked on load: `dlc inspect PLAN`);
- `dlc inspect --stats` reports generated_kernels, kernel_steps, library_calls and host_steps,
  and every step is bound: kernel_steps + library_calls + host_steps == ops;
- identical kernels are stored once: generated_kernels < kernel_steps;
- an op with no CUDA path (Sin) fails cleanly, naming its node and op; so do a bad --device and
  --arch, and `dlc run` / `dlc train` of a CUDA plan (no CUDA runtime yet).

Prints the compile time of each model.

usage: cuda_compile.py PATH/TO/dlc PARITY_DATA_DIR [-v]
"""
import json
import os
import sys
import tempfile
import time

from onnx import TensorProto, helper

from cli_harness import Checks, FailureChecker, make_model

MODELS = {"mlp": 16, "cnn": 8, "transformer": 8}
KEYS = ["generated_kernels", "kernel_steps", "library_calls", "host_steps"]
CUDA = ["--device", "cuda", "--arch", "sm_90"]


def compile_models(checks, data, tmp):
    plans = {}
    for model, batch in MODELS.items():
        plan = os.path.join(tmp, f"{model}.dlcplan")
        start = time.monotonic()
        proc = checks.run(f"{model}_compile", ["compile", os.path.join(data, model, "model.onnx"), "--train",
                                               "--batch", str(batch), "--optimizer", "adam", *CUDA, "-o", plan])
        print(f"{model}: compiled for sm_90 in {time.monotonic() - start:.1f} s")
        if not proc:
            continue
        plans[model] = plan
        proc = checks.run(f"{model}_stats", ["inspect", plan, "--stats"])
        if not proc:
            continue
        j = json.loads(proc.stdout)
        if not checks.expect(f"{model}_keys", all(k in j for k in KEYS), sorted(j)):
            continue
        if checks.verbose:
            print(f"     {model}: {json.dumps({k: j[k] for k in ['ops'] + KEYS})}")
        checks.expect(f"{model}_all_bound", j["kernel_steps"] + j["library_calls"] + j["host_steps"] == j["ops"], j)
        checks.expect(f"{model}_kernels_dedupe", 0 < j["generated_kernels"] < j["kernel_steps"], j)
        checks.expect(f"{model}_library_calls", j["library_calls"] > 0, j)
    return plans


def main():
    dlc, data, verbose = sys.argv[1], sys.argv[2], "-v" in sys.argv
    checks = Checks(dlc, verbose)
    failures = FailureChecker(dlc, verbose)
    with tempfile.TemporaryDirectory() as tmp:
        plans = compile_models(checks, data, tmp)

        sin = make_model(os.path.join(tmp, "sin.onnx"), [helper.make_node("Sin", ["x"], ["y"], name="my_sin")],
                         [("x", TensorProto.FLOAT, [4, 8])], [("y", TensorProto.FLOAT, [4, 8])])
        out = os.path.join(tmp, "sin.dlcplan")
        failures.check("unsupported_op", ["compile", sin, *CUDA, "-o", out], "step 'my_sin' (op Sin) has no CUDA path",
                       must_not_exist=[out])
        failures.check("bad_device", ["compile", sin, "--device", "gpu", "-o", out], "--device 'gpu'",
                       must_not_exist=[out])
        failures.check("bad_arch", ["compile", sin, "--device", "cuda", "--arch", "90", "-o", out], "--arch '90'",
                       must_not_exist=[out])
        if "mlp" in plans:
            out_dir = os.path.join(tmp, "run_out")
            failures.check("run_cuda_plan", ["run", plans["mlp"], "--output-dir", out_dir], "compiled for a CUDA device",
                           out_dir=out_dir)
            failures.check("train_cuda_plan", ["train", plans["mlp"], "--data", os.path.join(data, "mlp", "data.npz"),
                                               "--steps", "1"], "compiled for a CUDA device")
    return max(checks.summary("cuda compile"), failures.summary("cuda must-fail"))


if __name__ == "__main__":
    sys.exit(main())
