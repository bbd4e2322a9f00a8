#!/usr/bin/env python3
"""`dlc inspect --stats` on inference and training compiles of a small model built here:

- every key of the contract (ops, kernels_per_step, operand_bytes_per_step, param_bytes, peak_bytes,
  arena_bytes, flops_per_step, stages) is there, for a model, a training model (--train) and a
  training plan; the inference plan's one MatMul reads x and w and writes y: operand_bytes_per_step
  is their bytes, all under "MatMul" in operand_bytes_by_kernel, whose figures add up to the total
  in every plan;
- a training plan's figures are those of `--train` on the model, and cover the whole step:
  more kernels, and more than twice the forward's GEMM flops (the forward GEMM, the weight
  gradient's GEMM — x is an input, so it gets none — the loss and the update);
- with --accumulate K one optimizer step is K runs of the plan: K times the kernels of one run;
- a model's stats also hold the figures without the schedule pass (peak/arena_bytes_unscheduled:
  those of `--disable-pass schedule`) and without buffer sharing (peak/arena_bytes_unshared), no
  smaller than the plan's own.

usage: inspect_stats.py PATH/TO/dlc [-v]
"""
import json
import os
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from cli_harness import Checks, make_model

KEYS = ["ops", "kernels_per_step", "operand_bytes_per_step", "param_bytes", "peak_bytes", "arena_bytes", "flops_per_step", "stages"]
SAVINGS_KEYS = ["peak_bytes_unscheduled", "arena_bytes_unscheduled", "peak_bytes_unshared", "arena_bytes_unshared"]
BATCH, IN, OUT = 8, 16, 4


def gemm_model(path):
    w = numpy_helper.from_array(np.full((IN, OUT), 0.1, np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")]
    return make_model(path, nodes, [("x", TensorProto.FLOAT, ["N", IN])], [("y", TensorProto.FLOAT, ["N", OUT])],
                      [w])


def main():
    dlc, verbose = sys.argv[1], "-v" in sys.argv
    checks = Checks(dlc, verbose)

    def stats(name, args):
        proc = checks.run(name, ["inspect", *args, "--stats"])
        if not proc:
            return None
        j = json.loads(proc.stdout)
        checks.expect(f"{name}_keys", all(k in j for k in KEYS), sorted(j))
        by_kernel = j.get("operand_bytes_by_kernel", {})
        checks.expect(f"{name}_operand_bytes_by_kernel",
                      by_kernel and sum(by_kernel.values()) == j["operand_bytes_per_step"], j)
        return j

    with tempfile.TemporaryDirectory() as tmp:
        model = gemm_model(os.path.join(tmp, "gemm.onnx"))
        batch = ["--batch", str(BATCH)]
        forward = stats("inference", [model, *batch])
        trained = stats("training_model", [model, *batch, "--train", "--optimizer", "adam"])
        plan = os.path.join(tmp, "train.dlcplan")
        from_plan = None
        if checks.run("compile_plan", ["compile", model, *batch, "--train", "--optimizer", "adam", "-o", plan]):
            from_plan = stats("training_plan", [plan])
            if from_plan and trained:
                same = {k: (from_plan[k], trained[k]) for k in KEYS if k != "ops" and from_plan[k] != trained[k]}
                checks.expect("plan_equals_model", not same, same)
                checks.expect("plan_is_training", from_plan.get("training") is True and
                              from_plan.get("micro_steps") == 1, from_plan)
        if forward and trained:
            gemm = 2 * BATCH * IN * OUT
            checks.expect("inference_flops", forward["flops_per_step"] == gemm, forward)
            checks.expect("inference_operand_bytes",
                          forward["operand_bytes_per_step"] == 4 * (BATCH * IN + IN * OUT + BATCH * OUT), forward)
            checks.expect("inference_operand_bytes_are_the_matmul's",
                          forward["operand_bytes_by_kernel"] == {"MatMul": forward["operand_bytes_per_step"]}, forward)
            checks.expect("training_flops_cover_backward", trained["flops_per_step"] > 2 * gemm, trained)
            checks.expect("training_has_more_kernels",
                          trained["kernels_per_step"] > forward["kernels_per_step"], (trained, forward))
            checks.expect("param_bytes", trained["param_bytes"] == forward["param_bytes"] == IN * OUT * 4,
                          (trained, forward))
            checks.expect("peak_within_arena", 0 < trained["peak_bytes"] <= trained["arena_bytes"], trained)
        for name, j in (("inference", forward), ("training_model", trained)):
            if not j:
                continue
            checks.expect(f"{name}_savings_keys", all(k in j for k in SAVINGS_KEYS), sorted(j))
            checks.expect(f"{name}_savings_not_negative",
                          all(j.get(f"{f}_bytes_{how}", -1) >= j[f"{f}_bytes"]
                              for f in ("peak", "arena") for how in ("unscheduled", "unshared")), j)
        # The unscheduled figures are those of a compile without the schedule pass; a training
        # plan with Adam shares bytes (in-place updates), so the unshared peak is larger.
        unscheduled = stats("training_unscheduled", [model, *batch, "--train", "--optimizer", "adam",
                                                     "--disable-pass", "schedule"])
        if trained and unscheduled:
            checks.expect("unscheduled_is_disable_pass",
                          (unscheduled["peak_bytes"], unscheduled["arena_bytes"]) ==
                          (trained["peak_bytes_unscheduled"], trained["arena_bytes_unscheduled"]),
                          (unscheduled, trained))
            checks.expect("sharing_saves_bytes", trained["peak_bytes_unshared"] > trained["peak_bytes"], trained)
        # --accumulate 2: a plan's "ops" are the steps of one run; an optimizer step is two runs.
        acc_plan = os.path.join(tmp, "acc.dlcplan")
        if checks.run("compile_accumulate", ["compile", model, *batch, "--train", "--optimizer", "adam",
                                             "--accumulate", "2", "-o", acc_plan]):
            acc = stats("accumulate", [acc_plan])
            if acc:
                checks.expect("accumulate_micro_steps", acc.get("micro_steps") == 2, acc)
                checks.expect("accumulate_kernels", acc["kernels_per_step"] == 2 * acc["ops"], acc)
                if from_plan:
                    checks.expect("accumulate_flops", acc["flops_per_step"] >= 2 * from_plan["flops_per_step"],
                                  (acc, from_plan))

    return checks.summary("inspect --stats")


if __name__ == "__main__":
    sys.exit(main())
