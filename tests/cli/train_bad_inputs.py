#!/usr/bin/env python3
"""Bad-input tests of training: `dlc train`, `dlc compile --train` and `dlc export` on data that
does not fit the model, corrupt or truncated checkpoints and plans, and options that contradict
each other must exit non-zero with exactly one stderr line `error: …` naming the file, array or
option, never die of a signal, write no output (trained model, log, checkpoint), and leave an
existing checkpoint untouched.

usage: train_bad_inputs.py PATH/TO/dlc [-v]
"""
import os
import random
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from cli_harness import FailureChecker, make_model, run_dlc, write


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dlc = os.path.abspath(sys.argv[1])
    checker = FailureChecker(dlc, "-v" in sys.argv[2:])
    with tempfile.TemporaryDirectory(prefix="dlc_train_bad_") as tmp:
        p = lambda name: os.path.join(tmp, name)
        rng = np.random.default_rng(0)
        model = make_model(p("mlp.onnx"),
                           [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, name="fc")],
                           [("x", TensorProto.FLOAT, ["N", 4])], [("y", TensorProto.FLOAT, ["N", 3])],
                           [numpy_helper.from_array(rng.normal(size=(3, 4)).astype(np.float32), "w"),
                            numpy_helper.from_array(np.zeros(3, np.float32), "b")])
        x = rng.normal(size=(16, 4)).astype(np.float32)
        label = rng.integers(0, 3, 16).astype(np.int64)
        good_data = p("data.npz")
        np.savez(good_data, x=x, label=label)
        base = ["--batch", "4", "--threads", "1"]

        # A good checkpoint and a good training plan: the harness itself is sound.
        checkpoint, plan = p("good_ckpt.npz"), p("train.dlcplan")
        for name, args in {"good_train": ["train", model, "--data", good_data, *base, "--steps", "2",
                                          "--save", checkpoint],
                           "good_compile": ["compile", model, "--train", "--batch", "4", "-o", plan]}.items():
            proc = run_dlc(dlc, args)
            if proc.returncode != 0:
                checker.fail(name, f"exit {proc.returncode}: {proc.stderr.decode(errors='replace')}")
        if checker.failures:
            return checker.summary("training bad-input")

        def train_check(name, args, must_name):
            """`dlc train … --save CHECKPOINT`: the existing checkpoint must survive unchanged, and
            neither a trained model nor a log may appear."""
            out = [p(f"{name}.onnx"), p(f"{name}.jsonl")]
            checker.check(name, ["train", *args, "--save", checkpoint, "--export", out[0], "--log", out[1]],
                          must_name, must_not_exist=out, unchanged=[checkpoint])

        # Data that does not fit the model.
        np.savez(p("no_x.npz"), label=label)
        np.savez(p("float_label.npz"), x=x, label=label.astype(np.float32))
        np.savez(p("few_rows.npz"), x=x[:3], label=label[:3])
        np.savez(p("ragged.npz"), x=x, label=label[:10])
        np.savez(p("wide_x.npz"), x=np.ones((16, 5), np.float32), label=label)
        data_cases = {
            "data_missing_input": ("no_x.npz", "'x'"),
            "data_label_wrong_dtype": ("float_label.npz", "'label'"),
            "data_fewer_rows_than_batch": ("few_rows.npz", "few_rows.npz"),
            "data_rows_differ": ("ragged.npz", "ragged.npz"),
            "data_wrong_row_shape": ("wide_x.npz", "'x'"),
            "data_missing_file": ("nothere.npz", "nothere.npz"),
            "data_not_npz": (os.path.basename(write(p("junk.npz"), b"\x00" * 100)), "junk.npz"),
        }
        for name, (data, must_name) in data_cases.items():
            train_check(name, [model, "--data", p(data), *base, "--steps", "2"], must_name)
        train_check("batch_larger_than_data", [model, "--data", good_data, "--batch", "64", "--steps", "1"],
                    "data.npz")

        # Checkpoints to resume from that are broken, or belong to another run.
        ckpt_bytes = open(checkpoint, "rb").read()
        flipped = bytearray(ckpt_bytes)
        for i in range(len(flipped) // 3, len(flipped) // 3 + 64):
            flipped[i] ^= 0x5A
        other = p("adam_ckpt.npz")
        run_dlc(dlc, ["train", model, "--data", good_data, *base, "--steps", "1", "--optimizer", "adam",
                      "--save", other])
        bad_checkpoints = {
            "resume_truncated_half": write(p("cut_half.npz"), ckpt_bytes[:len(ckpt_bytes) // 2]),
            "resume_truncated_last_byte": write(p("cut_last.npz"), ckpt_bytes[:-1]),
            "resume_corrupt_bytes": write(p("flipped.npz"), bytes(flipped)),
            "resume_random_bytes": write(p("random.npz"), random.Random(5).randbytes(2048)),
            "resume_empty": write(p("empty.npz"), b""),
            "resume_missing": p("missing.npz"),
            "resume_not_a_checkpoint": good_data,
            "resume_other_optimizer": other,
        }
        for name, path in bad_checkpoints.items():
            train_check(name, [model, "--data", good_data, *base, "--steps", "4", "--resume", path],
                        os.path.basename(path))
        train_check("resume_other_schedule", [model, "--data", good_data, *base, "--steps", "4", "--lr-schedule",
                                              "cosine", "--resume", checkpoint], "good_ckpt.npz")
        train_check("resume_with_shuffle", [model, "--data", good_data, *base, "--steps", "4", "--shuffle",
                                            "--resume", checkpoint], "--shuffle")
        train_check("resume_past_the_end", [model, "--data", good_data, *base, "--steps", "1", "--resume",
                                            checkpoint], "good_ckpt.npz")

        # Plans that are not (good) training plans.
        plan_bytes = open(plan, "rb").read()
        inference_plan = p("inference.dlcplan")
        run_dlc(dlc, ["compile", model, "--batch", "4", "-o", inference_plan])
        bad_plans = {
            "plan_truncated": write(p("cut.dlcplan"), plan_bytes[:len(plan_bytes) // 2]),
            "plan_garbage_after_magic": write(p("garbage.dlcplan"), b"DLCPLAN\n" + b"\xff\xfe" * 50),
            "plan_not_a_plan": write(p("zeros.dlcplan"), b"\x00" * 64),
            "plan_for_inference": inference_plan,
        }
        for name, path in bad_plans.items():
            train_check(name, [path, "--data", good_data, "--steps", "2"], os.path.basename(path))
        train_check("plan_with_compile_option", [plan, "--data", good_data, "--steps", "2", "--optimizer", "adam"],
                    "--optimizer")
        train_check("plan_with_other_batch", [plan, "--data", good_data, "--batch", "8", "--steps", "2"],
                    "--batch")

        # Options that contradict each other.
        train_check("step_schedule_without_step_size", [model, "--data", good_data, *base, "--lr-schedule", "step"],
                    "--step-size")
        train_check("unknown_schedule", [model, "--data", good_data, *base, "--lr-schedule", "exp"], "exp")
        train_check("unknown_optimizer", [model, "--data", good_data, *base, "--optimizer", "lion"], "lion")
        train_check("negative_clip_norm", [model, "--data", good_data, *base, "--clip-norm", "-1"], "--clip-norm")
        train_check("zero_accumulate", [model, "--data", good_data, *base, "--accumulate", "0"], "--accumulate")
        train_check("unknown_precision", [model, "--data", good_data, *base, "--precision", "fp8"], "--precision")
        train_check("unknown_layout", [model, "--data", good_data, *base, "--layout", "nhcw"], "--layout")
        train_check("zero_loss_scale", [model, "--data", good_data, *base, "--precision", "fp16", "--loss-scale",
                                        "0"], "--loss-scale")
        # The loss-scale options belong to fp16's dynamic loss scaling: with another precision they
        # are an error, wherever a training compile takes them.
        train_check("loss_scale_without_fp16", [model, "--data", good_data, *base, "--loss-scale", "1024"],
                    "--loss-scale")
        train_check("loss_scale_growth_interval_with_bf16",
                    [model, "--data", good_data, *base, "--precision", "bf16", "--loss-scale-growth-interval",
                     "10"], "--loss-scale-growth-interval")
        checker.check("compile_loss_scale_without_fp16",
                      ["compile", model, "--train", "--batch", "4", "--loss-scale", "8", "-o", p("scaled.dlcplan")],
                      "--loss-scale", must_not_exist=[p("scaled.dlcplan")])
        checker.check("inspect_loss_scale_growth_interval_with_fp32",
                      ["inspect", model, "--train", "--batch", "4", "--precision", "fp32",
                       "--loss-scale-growth-interval", "5"], "--loss-scale-growth-interval")
        # A loss that is not finite stops fp32 training; fp16 skips such a step, but not forever.
        nan_data, all_nan_data = p("nan.npz"), p("all_nan.npz")
        np.savez(nan_data, x=np.where(np.arange(16)[:, None] >= 4, np.nan, x).astype(np.float32), label=label)
        np.savez(all_nan_data, x=np.full_like(x, np.nan), label=label)
        checker.check("fp32_nonfinite_loss", ["train", model, "--data", nan_data, *base, "--steps", "3"],
                      "step 2: the loss is")
        checker.check("fp16_nonfinite_loss_in_a_row", ["train", model, "--data", all_nan_data, *base,
                                                        "--precision", "fp16", "--epochs", "8"],
                      "16 steps in a row")
        train_check("accumulate_beyond_the_data", [model, "--data", good_data, *base, "--accumulate", "8"],
                    "data.npz")
        checker.check("save_into_missing_folder", ["train", model, "--data", good_data, *base, "--steps", "1",
                                                   "--save", p("nodir/ckpt.npz")], "nodir",
                      must_not_exist=[p("nodir")])
        checker.check("compile_training_option_without_train",
                      ["compile", model, "--optimizer", "adam", "-o", p("no.dlcplan")], "--train",
                      must_not_exist=[p("no.dlcplan")])

        # Export from a plan with a checkpoint that is broken or belongs to another plan.
        for name, path in [("export_truncated_checkpoint", bad_checkpoints["resume_truncated_half"]),
                           ("export_other_plan_checkpoint", other)]:
            checker.check(name, ["export", plan, "--checkpoint", path, "-o", p("exported.onnx")],
                          os.path.basename(path), must_not_exist=[p("exported.onnx")])
    return checker.summary("training bad-input")


if __name__ == "__main__":
    sys.exit(main())
