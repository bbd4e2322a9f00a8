#!/usr/bin/env python3
"""Training features of the dlc command line, end to end on a small Conv + BatchNorm + Gemm
model built here:

- resume is bit-exact: 10 steps straight equal 5 steps, save, resume, 5 more — every array of
  the two checkpoints (parameters, Adam moments, BatchNorm running statistics, row order,
  metadata) byte for byte, with --shuffle and a warmup + cosine schedule, and again with
  RMSprop, gradient accumulation, clipping and a step schedule;
- `dlc compile --train` + `dlc train PLAN` gives the checkpoint `dlc train MODEL` gives, and
  `dlc export PLAN --checkpoint` writes the initializers `--export` writes;
- gradient accumulation: --accumulate 2 at batch 4 ends where batch 8 does (SGD, no BatchNorm);
- the JSONL log's "lr" is the scheduled value;
- mixed precision: an fp16 overflow skips the step and halves the loss scale (log, checkpoint),
  the scale grows after --loss-scale-growth-interval finite steps, a forward pass that overflows
  fp16 (a NaN loss) skips its step and training goes on, bf16 trains a convolution;
- --eval scores with the plan's loss: bce_logits (loss and sign accuracy) and mse (loss only)
  equal numpy's on the outputs `dlc run` gives for the exported model.

usage: train_features.py PATH/TO/dlc [-v]
"""
import json
import math
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from cli_harness import Checks, make_model, run_dlc


def npz_bytes(path):
    with np.load(path) as z:
        return {k: z[k].tobytes() + str(z[k].dtype).encode() + str(z[k].shape).encode() for k in z.files}


def same_checkpoints(checks, name, a, b):
    if not (os.path.exists(a) and os.path.exists(b)):
        checks.expect(name, False, "a checkpoint is missing")
        return
    x, y = npz_bytes(a), npz_bytes(b)
    differ = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
    checks.expect(name, not differ, f"arrays differ: {differ[:8]}")


def conv_bn_model(path, with_bn=True):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.5, (2, 1, 3, 3)).astype(np.float32), "conv.w"),
             numpy_helper.from_array(np.zeros(2, np.float32), "conv.b"),
             numpy_helper.from_array(rng.normal(0, 0.3, (3, 32)).astype(np.float32), "fc.w"),
             numpy_helper.from_array(np.zeros(3, np.float32), "fc.b")]
    nodes = [helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], pads=[1, 1, 1, 1], name="conv")]
    if with_bn:
        inits += [numpy_helper.from_array(np.ones(2, np.float32), "bn.scale"),
                  numpy_helper.from_array(np.zeros(2, np.float32), "bn.bias"),
                  numpy_helper.from_array(np.zeros(2, np.float32), "bn.mean"),
                  numpy_helper.from_array(np.ones(2, np.float32), "bn.var")]
        nodes.append(helper.make_node("BatchNormalization", ["c", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                                      ["n"], name="bn"))
    nodes += [helper.make_node("Relu", ["n" if with_bn else "c"], ["r"], name="relu"),
              helper.make_node("Flatten", ["r"], ["f"], name="flatten"),
              helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], transB=1, name="fc")]
    return make_model(path, nodes, [("x", TensorProto.FLOAT, ["N", 1, 4, 4])],
                      [("y", TensorProto.FLOAT, ["N", 3])], inits)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dlc = os.path.abspath(sys.argv[1])
    checks = Checks(dlc, "-v" in sys.argv[2:])
    dlc_ok = lambda name, args: checks.run(name, args) is not None
    with tempfile.TemporaryDirectory(prefix="dlc_train_") as tmp:
        p = lambda name: os.path.join(tmp, name)
        model = conv_bn_model(p("model.onnx"))
        rng = np.random.default_rng(1)
        x = rng.normal(size=(36, 1, 4, 4)).astype(np.float32)
        np.savez(p("data.npz"), x=x, label=rng.integers(0, 3, 36).astype(np.int64))
        data = ["--data", p("data.npz"), "--threads", "2", "--shuffle", "--seed", "3"]

        # Resume, bit for bit: 36 rows of batch 4 make 9 batches an epoch, so 10 steps cross an epoch
        # (a reshuffle) and the split at step 5 lies inside one.
        setups = {
            "adam_cosine": ["--batch", "4", "--optimizer", "adam", "--lr", "0.01", "--lr-schedule", "cosine",
                            "--warmup-steps", "2", "--min-lr", "0.001"],
            "rmsprop_accumulate_clip_step": ["--batch", "2", "--accumulate", "2", "--optimizer", "rmsprop",
                                             "--centered", "--momentum", "0.5", "--clip-norm", "0.5",
                                             "--lr", "0.01", "--lr-schedule", "step", "--step-size", "3",
                                             "--gamma", "0.5", "--weight-decay", "0.01"],
        }
        for name, options in setups.items():
            straight, half, resumed = p(f"{name}_10.npz"), p(f"{name}_5.npz"), p(f"{name}_5_5.npz")
            ok = dlc_ok(f"{name}_straight", ["train", model, *data, *options, "--steps", "10", "--save", straight])
            ok &= dlc_ok(f"{name}_first_half", ["train", model, *data, *options, "--steps", "5",
                                                "--schedule-steps", "10", "--save", half])
            ok &= dlc_ok(f"{name}_resumed", ["train", model, *data, *options, "--steps", "10", "--resume", half,
                                             "--save", resumed])
            if ok:
                same_checkpoints(checks, f"{name}_resume_is_bit_exact", straight, resumed)

        # A compiled training plan trains like the model, and exports what --export writes.
        compile_options = ["--batch", "4", "--optimizer", "adamw", "--weight-decay", "0.1"]
        loop_options = [*data, "--lr", "0.005", "--steps", "6"]
        plan, from_model, from_plan = p("train.dlcplan"), p("model_ckpt.npz"), p("plan_ckpt.npz")
        exported_by_train, exported_by_export = p("trained_train.onnx"), p("trained_export.onnx")
        ok = dlc_ok("compile_train", ["compile", model, "--train", *compile_options, "-o", plan])
        ok &= dlc_ok("train_model", ["train", model, *compile_options, *loop_options, "--save", from_model,
                                     "--export", exported_by_train])
        ok &= dlc_ok("train_plan", ["train", plan, *loop_options, "--save", from_plan])
        ok &= dlc_ok("export_plan", ["export", plan, "--checkpoint", from_plan, "-o", exported_by_export])
        if ok:
            same_checkpoints(checks, "plan_trains_like_model", from_model, from_plan)
            a = {t.name: numpy_helper.to_array(t) for t in onnx.load(exported_by_train).graph.initializer}
            b = {t.name: numpy_helper.to_array(t) for t in onnx.load(exported_by_export).graph.initializer}
            with np.load(from_plan) as ckpt:
                trained = np.array_equal(b["conv.w"], ckpt["conv.w"]) and np.array_equal(b["bn.mean"], ckpt["bn.mean"])
            checks.expect("export_writes_the_trained_values",
                   a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a) and trained)

        # Accumulation: two micro-batches of 4 per step end where batches of 8 do.
        plain = conv_bn_model(p("plain.onnx"), with_bn=False)
        sgd = ["--optimizer", "sgd", "--momentum", "0.9", "--lr", "0.05", "--data", p("data.npz"), "--threads", "2"]
        ok = dlc_ok("accumulate_2x4", ["train", plain, *sgd, "--batch", "4", "--accumulate", "2", "--steps", "4",
                                       "--save", p("acc.npz")])
        ok &= dlc_ok("batch_8", ["train", plain, *sgd, "--batch", "8", "--steps", "4", "--save", p("b8.npz")])
        if ok:
            with np.load(p("acc.npz")) as a, np.load(p("b8.npz")) as b:
                worst = max(float(np.abs(a[k] - b[k]).max()) for k in ["conv.w", "conv.b", "fc.w", "fc.b"])
            checks.expect("accumulate_equals_big_batch", worst <= 1e-6, f"largest difference {worst}")

        # The log's lr is the schedule's: linear warmup over 2 steps, then cosine to 0 at step 6.
        log = p("log.jsonl")
        if dlc_ok("log_run", ["train", model, *data, "--batch", "4", "--lr", "0.1", "--lr-schedule", "cosine",
                              "--warmup-steps", "2", "--steps", "6", "--log", log]):
            lrs = [json.loads(line)["lr"] for line in open(log)]
            want = [0.0, 0.05] + [0.1 * 0.5 * (1 + math.cos(math.pi * k / 4)) for k in range(4)]
            checks.expect("log_lr_is_scheduled", len(lrs) == 6 and all(abs(a - b) < 1e-9 for a, b in zip(lrs, want)),
                   f"{lrs} != {want}")

        # --eval with the plan's loss, against numpy on the exported model's outputs.
        targets = (rng.random((36, 3)) > 0.5).astype(np.float32)
        np.savez(p("targets.npz"), x=x, label=targets)
        np.save(p("x.npy"), x)
        for kind in ["bce_logits", "mse"]:
            exported, out_dir = p(f"{kind}.onnx"), p(f"{kind}_out")
            proc = run_dlc(dlc, ["train", plain, "--loss", kind, "--data", p("targets.npz"), "--batch", "4",
                                 "--steps", "3", "--lr", "0.05", "--eval", p("targets.npz"), "--export", exported])
            lines = [l for l in proc.stdout.decode().splitlines() if l.startswith("eval:")]
            if proc.returncode != 0 or len(lines) != 1:
                checks.expect(f"eval_{kind}", False, f"exit {proc.returncode}: {proc.stderr.decode(errors='replace')}")
                continue
            if not dlc_ok(f"eval_{kind}_run", ["run", exported, "--input", f"x={p('x.npy')}",
                                               "--output-dir", out_dir]):
                continue
            y = np.load(os.path.join(out_dir, "y.npy")).astype(np.float64)
            if kind == "mse":
                want = f"eval: 36 samples, loss {np.mean((y - targets) ** 2):.4f}"
            else:
                loss = np.mean(np.maximum(y, 0) - y * targets + np.log1p(np.exp(-np.abs(y))))
                accuracy = 100 * np.mean((y > 0) == (targets > 0.5))
                want = f"eval: 36 samples, loss {loss:.4f}, accuracy {accuracy:.2f}%"
            checks.expect(f"eval_{kind}_scores_with_the_loss", lines[0] == want, f"{lines[0]!r} != {want!r}")

        # Mixed precision. fp16 with a loss scale too large for fp16 gradients: every step overflows,
        # is skipped (the weights keep their initial bytes) and halves the scale, which the log
        # and the checkpoint show. From a scale of 1 with a growth interval of 2 it doubles every
        # second step. bf16 trains the Conv + BatchNorm model.
        fp16, saved = ["--precision", "fp16", "--batch", "4", "--lr", "0.01"], p("overflow.npz")
        if dlc_ok("fp16_overflow", ["train", model, *data, *fp16, "--loss-scale", "1e30", "--steps", "3",
                                    "--log", p("fp16.jsonl"), "--save", saved]):
            scales = [json.loads(line)["loss_scale"] for line in open(p("fp16.jsonl"))]
            want = [1e30 / 2, 1e30 / 4, 1e30 / 8]
            checks.expect("fp16_overflow_backs_off", len(scales) == 3 and
                          all(abs(a / b - 1) < 1e-6 for a, b in zip(scales, want)), f"{scales} != {want}")
            initial = {t.name: numpy_helper.to_array(t) for t in onnx.load(model).graph.initializer}
            with np.load(saved) as ckpt:
                unchanged = all(np.array_equal(ckpt[k], initial[k]) for k in ["conv.w", "conv.b", "fc.w", "fc.b"])
                checks.expect("fp16_overflow_skips_the_step", unchanged and
                              abs(float(ckpt["loss_scale"]) / want[-1] - 1) < 1e-6)
        if dlc_ok("fp16_growth", ["train", model, *data, *fp16, "--loss-scale", "1", "--loss-scale-growth-interval",
                                  "2", "--steps", "4", "--log", p("growth.jsonl")]):
            scales = [json.loads(line)["loss_scale"] for line in open(p("growth.jsonl"))]
            checks.expect("fp16_scale_grows", scales == [1, 2, 2, 4], f"{scales}")
        dlc_ok("bf16_conv_bn", ["train", model, *data, "--precision", "bf16", "--batch", "4", "--steps", "3"])

        # fp16: a batch that overflows the forward pass (1e5 is inf in fp16, finite in f32) gives a
        # NaN loss; the step is skipped and the scale halved, and training goes on. fp32 trains it.
        gemm = make_model(p("gemm.onnx"), [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, name="fc")],
                          [("x", TensorProto.FLOAT, ["N", 16])], [("y", TensorProto.FLOAT, ["N", 3])],
                          [numpy_helper.from_array(rng.normal(0, 0.3, (3, 16)).astype(np.float32), "w"),
                           numpy_helper.from_array(np.zeros(3, np.float32), "b")])
        big = x.reshape(36, 16).copy()
        big[4:8] = 1e5
        np.savez(p("big.npz"), x=big, label=rng.integers(0, 3, 36).astype(np.int64))
        big_data = ["--data", p("big.npz"), "--threads", "2", "--batch", "4", "--lr", "0.01", "--steps", "4"]
        proc = checks.run("fp16_nonfinite_loss", ["train", gemm, *big_data, "--precision", "fp16",
                                                  "--log", p("nonfinite.jsonl")])
        if proc:
            log = [json.loads(line) for line in open(p("nonfinite.jsonl"))]
            skipped = [l["skipped"] for l in log]
            checks.expect("fp16_nonfinite_loss_skips", skipped == [False, True, False, False] and
                          log[1]["loss"] is None and all(math.isfinite(l["loss"]) for l in log[2:]) and
                          [l["loss_scale"] for l in log] == [65536, 32768, 32768, 32768], f"{log}")
            checks.expect("fp16_nonfinite_loss_reported", "skipped 1 of them" in proc.stdout.decode(),
                          proc.stdout.decode())
        dlc_ok("fp32_big_inputs", ["train", gemm, *big_data])

    return checks.summary("training feature")

if __name__ == "__main__":
    sys.exit(main())
