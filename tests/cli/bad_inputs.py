#!/usr/bin/env python3
"""Bad-input tests of the dlc command line: `dlc run` and `dlc inspect` on broken models, plans
and inputs must exit non-zero with exactly one stderr line `error: …` that names the culprit,
never die of a signal, and leave no output file behind.

usage: bad_inputs.py PATH/TO/dlc [-v]
The models are built here with the onnx package; nothing is downloaded.
"""
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from cli_harness import FailureChecker, make_model, write

DLC = None
VERBOSE = False


def short_tensor(name, dims, values):
    """A float TensorProto that holds fewer values than its dims need (onnx.helper refuses to make one)."""
    t = onnx.TensorProto()
    t.name = name
    t.data_type = onnx.TensorProto.FLOAT
    t.dims.extend(dims)
    t.float_data.extend(values)
    return t


def save_npy(path, array):
    np.save(path, array)
    return path


def main():
    global DLC, VERBOSE
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    DLC = os.path.abspath(sys.argv[1])
    VERBOSE = "-v" in sys.argv[2:]
    checker = FailureChecker(DLC, VERBOSE)
    check = checker.check

    with tempfile.TemporaryDirectory(prefix="dlc_cli_") as tmp:
        p = lambda name: os.path.join(tmp, name)
        F = TensorProto.FLOAT

        good = make_model(p("good.onnx"),
                          [helper.make_node("Add", ["x", "y"], ["s"], name="add0"),
                           helper.make_node("Relu", ["s"], ["z"], name="relu0")],
                          [("x", F, [2, 3]), ("y", F, [2, 3])], [("z", F, [2, 3])])
        x = save_npy(p("x.npy"), np.ones((2, 3), np.float32))
        y = save_npy(p("y.npy"), np.full((2, 3), -2, np.float32))
        good_inputs = ["--input", f"x={x}", "--input", f"y={y}"]

        # The good model runs: the harness itself is sound.
        out = p("out_good")
        proc = subprocess.run([DLC, "run", good, *good_inputs, "--output-dir", out],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
        if proc.returncode != 0 or not os.path.exists(os.path.join(out, "z.npy")):
            checker.fail("good_model_runs", f"exit {proc.returncode}: {proc.stderr.decode(errors='replace')}")

        model_bytes = open(good, "rb").read()
        rng = random.Random(1234)
        broken_models = {
            "empty": (write(p("empty.onnx"), b""), "empty.onnx"),
            "missing": (p("missing.onnx"), "missing.onnx"),
            "random": (write(p("random.onnx"), bytes(rng.randrange(256) for _ in range(512))), "random.onnx"),
            "truncated_quarter": (write(p("trunc1.onnx"), model_bytes[:len(model_bytes) // 4]), "trunc1.onnx"),
            "truncated_half": (write(p("trunc2.onnx"), model_bytes[:len(model_bytes) // 2]), "trunc2.onnx"),
            "truncated_last_byte": (write(p("trunc3.onnx"), model_bytes[:-1]), "trunc3.onnx"),
            "unsupported_op": (make_model(p("unsupported.onnx"),
                                          [helper.make_node("DlcNoSuchOp", ["x"], ["z"], name="weird0")],
                                          [("x", F, [2, 3])], [("z", F, [2, 3])]), "weird0"),
            "custom_domain": (make_model(p("domain.onnx"),
                                         [helper.make_node("Relu", ["x"], ["z"], name="mine0", domain="com.example")],
                                         [("x", F, [2, 3])], [("z", F, [2, 3])]), "mine0"),
            "inconsistent_shapes": (make_model(p("shapes.onnx"),
                                               [helper.make_node("Add", ["x", "w"], ["z"], name="bad_add")],
                                               [("x", F, [2, 3]), ("w", F, [4, 5])], [("z", F, [2, 3])]),
                                    "bad_add"),
            "undefined_value": (make_model(p("undef.onnx"),
                                           [helper.make_node("Relu", ["nowhere"], ["z"], name="lost0")],
                                           [("x", F, [2, 3])], [("z", F, [2, 3])]), "nowhere"),
            "bad_initializer": (make_model(p("init.onnx"),
                                           [helper.make_node("Add", ["x", "b"], ["z"], name="add_b")],
                                           [("x", F, [2, 3])], [("z", F, [2, 3])],
                                           [short_tensor("b", [2, 3], [1.0, 2.0])]), "'b'"),
            # The IR MatMul's third input (a fused bias) is internal: ONNX MatMul has two.
            "matmul_three_inputs": (make_model(p("mm3.onnx"),
                                               [helper.make_node("MatMul", ["x", "w", "b"], ["z"], name="mm3")],
                                               [("x", F, [2, 3])], [("z", F, [2, 3])],
                                               [numpy_helper.from_array(np.ones((3, 3), np.float32), "w"),
                                                numpy_helper.from_array(np.ones(3, np.float32), "b")]),
                                    "MatMul takes 2 inputs"),
            "bad_opset": (make_model(p("opset.onnx"), [helper.make_node("Relu", ["x"], ["z"])],
                                     [("x", F, [2, 3])], [("z", F, [2, 3])], opset=99), "opset"),
        }
        # Inputs the importer fuzzer found (tests/fuzz/regressions): each must fail cleanly.
        regressions = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "regressions")
        for f in sorted(os.listdir(regressions)):
            check(f"fuzz_regression_{f}", ["inspect", os.path.join(regressions, f)], f)
        x_only = save_npy(p("x_only.npy"), np.ones((2, 3), np.float32))
        w = save_npy(p("w.npy"), np.ones((4, 5), np.float32))
        for name, (model, must_name) in broken_models.items():
            check(f"inspect_{name}", ["inspect", model], must_name)
            inputs = ["--input", f"x={x_only}"] + (["--input", f"w={w}"] if name == "inconsistent_shapes" else [])
            out_dir = p(f"out_{name}")
            check(f"run_{name}", ["run", model, *inputs, "--output-dir", out_dir], must_name, out_dir)

        # Inputs that do not fit the (good) model.
        junk_pb = write(p("junk.pb"), b"\xff" * 40)
        bad_inputs = {
            "wrong_shape": (["--input", f"x={save_npy(p('x33.npy'), np.ones((3, 3), np.float32))}",
                             "--input", f"y={y}"], "'x'"),
            "wrong_dtype": (["--input", f"x={save_npy(p('xi.npy'), np.ones((2, 3), np.int64))}",
                             "--input", f"y={y}"], "'x'"),
            "wrong_rank": (["--input", f"x={save_npy(p('x6.npy'), np.ones((6,), np.float32))}",
                            "--input", f"y={y}"], "'x'"),
            "unknown_input": (good_inputs + ["--input", f"nosuch={x}"], "nosuch"),
            "missing_input": (["--input", f"x={x}"], "'y'"),
            "no_inputs": ([], "'x'"),
            "input_twice": (good_inputs + ["--input", f"x={x}"], "'x'"),
            "input_without_file": (["--input", "x", "--input", f"y={y}"], "'x'"),
            "missing_input_file": (["--input", f"x={p('nofile.npy')}", "--input", f"y={y}"], "nofile.npy"),
            "truncated_npy": (["--input", f"x={write(p('cut.npy'), open(x, 'rb').read()[:-5])}",
                               "--input", f"y={y}"], "cut.npy"),
            "garbage_pb": (["--input", f"x={junk_pb}", "--input", f"y={y}"], "junk.pb"),
        }
        for name, (inputs, must_name) in bad_inputs.items():
            out_dir = p(f"out_{name}")
            check(f"run_{name}", ["run", good, *inputs, "--output-dir", out_dir], must_name, out_dir)

        # Plans: a compiled plan cut short or corrupted; files that are not plans at all.
        plans = {
            "plan_not_a_plan": (write(p("junk.dlcplan"), b"\x00" * 64), "junk.dlcplan"),
            "plan_empty": (write(p("empty.dlcplan"), b""), "empty.dlcplan"),
            "plan_missing": (p("missing.dlcplan"), "missing.dlcplan"),
            "plan_magic_only": (write(p("magic.dlcplan"), b"DLCPLAN\n"), "magic.dlcplan"),
            "plan_magic_garbage": (write(p("garbage.dlcplan"), b"DLCPLAN\n" + b"\xff\xfe" * 50), "garbage.dlcplan"),
        }
        compiled = p("good.dlcplan")
        proc = subprocess.run([DLC, "compile", good, "-o", compiled], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=300)
        if proc.returncode == 0 and os.path.exists(compiled):
            plan_bytes = open(compiled, "rb").read()
            for frac in (4, 2):
                cut = write(p(f"cut{frac}.dlcplan"), plan_bytes[:len(plan_bytes) // frac])
                plans[f"plan_truncated_1_{frac}"] = (cut, f"cut{frac}.dlcplan")
            plans["plan_truncated_last_byte"] = (write(p("cutlast.dlcplan"), plan_bytes[:-1]), "cutlast.dlcplan")
            flipped = bytearray(plan_bytes)
            flipped[8] ^= 0xFF  # the first protobuf tag after the magic
            plans["plan_corrupt_tag"] = (write(p("flip.dlcplan"), bytes(flipped)), "flip.dlcplan")
        elif VERBOSE:
            print("note: `dlc compile` is unavailable; truncated-plan cases skipped")
        for name, (plan, must_name) in plans.items():
            check(f"inspect_{name}", ["inspect", plan], must_name)
            out_dir = p(f"out_{name}")
            check(f"run_{name}", ["run", plan, *good_inputs, "--output-dir", out_dir], must_name, out_dir)

    return checker.summary("bad-input")


if __name__ == "__main__":
    sys.exit(main())
