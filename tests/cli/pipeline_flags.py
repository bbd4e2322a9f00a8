#!/usr/bin/env python3
"""The pass-pipeline flags of `dlc compile`, `dlc train` and `dlc opt` on a small model built
here (MatMul + Add, a Mul by a constant 1 that canonicalize folds, Relu):

- --print-ir-after-all and --print-ir-after=PASS print the numbered IR on stderr;
- --disable-pass (repeatable or a comma list) skips a pass;
- --dump-ir DIR writes one numbered file per pass, the training pipeline's passes included;
- --stop-after PASS (or a number) prints the IR on stdout and writes nothing: no plan, no
  checkpoint, no log, no training; the printed IR parses back with `dlc opt`;
- --verify-each runs;
- an unknown pass, a required pass disabled, or a pipeline flag on a compiled plan is one
  `error:` line and a non-zero exit, with nothing written.

usage: pipeline_flags.py PATH/TO/dlc [-v]
"""
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from cli_harness import Checks, FailureChecker, make_model, write

# Every pipeline starts with these; the training pipeline holds the required passes after them.
IMPORT_PASSES = ["expand-gradients", "lower-einsum", "canonicalize", "dce"]
TRAINING_PASSES = ["training-mode", "loss", "autodiff", "optimizer"]


def mlp_model(path):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.5, (4, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.zeros(3, np.float32), "b")]
    one = helper.make_tensor("one_value", TensorProto.FLOAT, [], [1.0])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
             helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
             helper.make_node("Constant", [], ["one"], value=one, name="one"),
             helper.make_node("Mul", ["hb", "one"], ["scaled"], name="times_one"),
             helper.make_node("Relu", ["scaled"], ["y"], name="relu")]
    return make_model(path, nodes, [("x", TensorProto.FLOAT, ["N", 4])], [("y", TensorProto.FLOAT, ["N", 3])],
                      inits)


def headers(stderr):
    """The '// ----- IR after pass N (NAME) -----' lines, as (N, NAME)."""
    out = []
    for line in stderr.splitlines():
        if line.startswith("// ----- IR after pass "):
            number, name = line[len("// ----- IR after pass "):].split(" -----")[0].split(" ", 1)
            out.append((int(number), name.strip("()")))
    return out


def main():
    dlc, verbose = sys.argv[1], "-v" in sys.argv
    checks = Checks(dlc, verbose)
    failing = FailureChecker(dlc, verbose)
    with tempfile.TemporaryDirectory() as tmp:
        p = lambda name: os.path.join(tmp, name)
        model = mlp_model(p("mlp.onnx"))
        rng = np.random.default_rng(1)
        np.savez(p("data.npz"), x=rng.normal(size=(16, 4)).astype(np.float32),
                 label=rng.integers(0, 3, 16).astype(np.int64))
        compile_ = ["compile", model, "--batch", "2"]
        train = ["train", model, "--data", p("data.npz"), "--batch", "4", "--steps", "2"]

        # --print-ir-after-all: every pass, numbered, on stderr; the plan is still written. The
        # training pipeline is one pipeline: the import passes, then the training passes.
        proc = checks.run("print_all", compile_ + ["-o", p("all.dlcplan"), "--print-ir-after-all"])
        if proc:
            got = headers(proc.stderr.decode())
            names = [name for _, name in got]
            checks.expect("print_all_headers", [n for n, _ in got] == list(range(1, len(got) + 1)) and
                          names[:len(IMPORT_PASSES)] == IMPORT_PASSES and not set(TRAINING_PASSES) & set(names), got)
            checks.expect("print_all_writes_plan", os.path.exists(p("all.dlcplan")))
            checks.expect("print_all_stdout_empty", proc.stdout == b"", proc.stdout[:200])
        train_pipeline = []
        proc = checks.run("print_all_train", compile_ + ["--train", "-o", p("t.dlcplan"), "--print-ir-after-all"])
        if proc:
            train_pipeline = [name for _, name in headers(proc.stderr.decode())]
            checks.expect("print_all_train_headers", train_pipeline[:len(IMPORT_PASSES)] == IMPORT_PASSES and
                          [n for n in train_pipeline if n in TRAINING_PASSES] == TRAINING_PASSES, train_pipeline)

        # --print-ir-after=PASS: that pass only; canonicalize has folded the Mul by 1.
        for form in (["--print-ir-after=canonicalize"], ["--print-ir-after", "canonicalize"]):
            proc = checks.run(f"print_after{form[0][-1]}", compile_ + ["-o", p("after.dlcplan"), *form])
            if proc:
                err = proc.stderr.decode()
                checks.expect("print_after_header", headers(err) == [(IMPORT_PASSES.index("canonicalize") + 1, "canonicalize")], headers(err))
                checks.expect("canonicalize_folds_mul_by_one", "= Mul(" not in err and "Relu(" in err, err)

        # --disable-pass, repeated or as a comma list: the Mul stays.
        for name, form in [("disable_one", ["--disable-pass", "canonicalize"]),
                           ("disable_list", ["--disable-pass", "canonicalize,expand-gradients"]),
                           ("disable_repeated", ["--disable-pass", "canonicalize", "--disable-pass=expand-gradients"])]:
            proc = checks.run(name, compile_ + ["-o", p("off.dlcplan"), *form, "--print-ir-after", "dce"])
            if proc:
                checks.expect(f"{name}_keeps_mul", "= Mul(" in proc.stderr.decode(), proc.stderr.decode())

        # --dump-ir: one numbered file per pass of the training pipeline; --verify-each runs too.
        dump = p("dump")
        if checks.run("dump_train", train + ["--dump-ir", dump, "--verify-each"]) and train_pipeline:
            want = [f"{i:02}-{name}.dlir" for i, name in enumerate(train_pipeline, 1)]
            got = sorted(os.listdir(dump)) if os.path.isdir(dump) else []
            checks.expect("dump_train_files", got == want, (got, want))
            if got == want:
                text = open(os.path.join(dump, want[train_pipeline.index("autodiff")])).read()
                checks.expect("dump_autodiff_has_gradients", "w@grad" in text, text[:300])
        if checks.run("verify_each_compile", compile_ + ["--train", "-o", p("v.dlcplan"), "--verify-each"]):
            checks.expect("verify_each_writes_plan", os.path.exists(p("v.dlcplan")))

        # --stop-after: the IR on stdout, nothing written, nothing trained.
        proc = checks.run("stop_compile", compile_ + ["-o", p("stop.dlcplan"), "--stop-after", "canonicalize"])
        if proc:
            out = proc.stdout.decode()
            checks.expect("stop_compile_prints_ir", out.startswith("graph") and "Relu(" in out, out[:200])
            checks.expect("stop_compile_writes_nothing", not os.path.exists(p("stop.dlcplan")))
            write(p("stopped.dlir"), proc.stdout)
            checks.run("stopped_ir_parses", ["opt", p("stopped.dlir"), "--passes", "dce"])
        proc = checks.run("stop_train", train + ["--stop-after", "autodiff", "--save", p("ckpt.npz"),
                                                 "--log", p("log.jsonl"), "--export", p("trained.onnx")])
        if proc:
            out = proc.stdout.decode()
            checks.expect("stop_train_prints_ir", out.startswith("graph") and "w@grad" in out and
                          "Update(" not in out, out[:300])
            checks.expect("stop_train_trains_nothing", "trained" not in out, out[-300:])
            for f in ("ckpt.npz", "log.jsonl", "trained.onnx"):
                checks.expect(f"stop_train_writes_no_{f}", not os.path.exists(p(f)))
        number = str(train_pipeline.index("optimizer") + 1) if train_pipeline else "7"
        proc = checks.run("stop_by_number", compile_ + ["--train", "-o", p("n.dlcplan"), "--stop-after", number])
        if proc:
            checks.expect("stop_by_number_is_optimizer", "Update(" in proc.stdout.decode(), proc.stdout[:300])
            checks.expect("stop_by_number_writes_nothing", not os.path.exists(p("n.dlcplan")))
        write(p("g.dlir"), b'graph @g {\n  input %x : f32[2]\n  %i = Identity(%x) : f32[2] loc("i")\n'
                           b'  %y = Relu(%i) : f32[2] loc("y")\n  return %y\n}\n')
        proc = checks.run("stop_opt", ["opt", p("g.dlir"), "--passes", "canonicalize,dce", "-o", p("g.out.dlir"),
                                       "--stop-after", "canonicalize", "--print-ir-after-all"])
        if proc:
            checks.expect("stop_opt_prints_ir", "Relu(%x)" in proc.stdout.decode(), proc.stdout)
            checks.expect("stop_opt_writes_nothing", not os.path.exists(p("g.out.dlir")))
            checks.expect("stop_opt_ran_one_pass", headers(proc.stderr.decode()) == [(1, "canonicalize")],
                          proc.stderr)

        # Errors: one line naming the pass or flag, a non-zero exit, nothing written.
        out_dir = p("none")
        os.makedirs(out_dir)
        plan = os.path.join(out_dir, "x.dlcplan")
        failing.check("disable_unknown", compile_ + ["-o", plan, "--disable-pass", "fusionn"], "fusionn",
                      out_dir=out_dir)
        failing.check("print_after_unknown", compile_ + ["-o", plan, "--print-ir-after", "nosuch"], "nosuch",
                      out_dir=out_dir)
        failing.check("stop_after_unknown", compile_ + ["-o", plan, "--stop-after", "nosuch"], "nosuch",
                      out_dir=out_dir)
        failing.check("stop_after_out_of_range", compile_ + ["-o", plan, "--stop-after", "99"],
                      "--stop-after 99", out_dir=out_dir)
        failing.check("disable_required", train + ["--disable-pass", "autodiff", "--save",
                                                   os.path.join(out_dir, "c.npz")], "autodiff", out_dir=out_dir)
        failing.check("disable_required_compile", compile_ + ["--train", "-o", plan, "--disable-pass", "loss"],
                      "loss", out_dir=out_dir)
        failing.check("training_pass_in_inference", compile_ + ["-o", plan, "--disable-pass", "optimizer"],
                      "optimizer", out_dir=out_dir)
        failing.check("opt_unknown", ["opt", p("g.dlir"), "--passes", "dce", "--disable-pass", "cse",
                                      "-o", os.path.join(out_dir, "g.dlir")], "cse", out_dir=out_dir)
        failing.check("dump_ir_unwritable", compile_ + ["-o", plan, "--dump-ir", os.path.join(model, "sub")],
                      "--dump-ir", out_dir=out_dir)
        if os.path.exists(p("v.dlcplan")):
            failing.check("pipeline_flag_on_plan", ["train", p("v.dlcplan"), "--data", p("data.npz"),
                                                    "--stop-after", "dce"], "--stop-after", out_dir=out_dir)

    status = checks.summary("pipeline flag") | failing.summary("pipeline flag error")
    return status


if __name__ == "__main__":
    sys.exit(main())
