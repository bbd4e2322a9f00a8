#!/usr/bin/env python3
"""Fused causal attention end to end: a small GPT-style transformer with a causal mask
(tools/bench/make_transformer_onnx.py --causal: Where(future, -inf, scores), as masked_fill
exports it) trained by `dlc train` with --attention fused and unfused on the CPU:

- the fused plan has one Attention and one AttentionGrad step per block and no Softmax or Where
  left (the mask folded into causal = 1); the unfused plan has no Attention step;
- fp32: the two runs log the same losses within 1e-5 (relative), bf16 within 2e-2;
- the mask is in effect: the same model without it logs a different first loss.

usage: causal_attention.py PATH/TO/dlc [-v]
"""
import json
import os
import sys
import tempfile

import numpy as np
import onnx

from cli_harness import Checks

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "bench"))
from make_transformer_onnx import make_transformer  # noqa: E402

BLOCKS, SEQ = 2, 16


def main() -> int:
    checks = Checks(sys.argv[1], verbose="-v" in sys.argv)
    with tempfile.TemporaryDirectory() as tmp:
        p = lambda name: os.path.join(tmp, name)  # noqa: E731
        for causal in (True, False):
            onnx.save(make_transformer(vocab=60, d=32, heads=2, blocks=BLOCKS, seq=SEQ, mlp=2, classes=5, seed=1,
                                       causal=causal), p(f"causal{int(causal)}.onnx"))
        rng = np.random.default_rng(0)
        np.savez(p("data.npz"), input=rng.integers(0, 60, (32, SEQ)).astype(np.int64),
                 label=rng.integers(0, 5, 32).astype(np.int64))
        train = ["--data", p("data.npz"), "--batch", "8", "--optimizer", "adam", "--lr", "1e-3", "--steps", "6",
                 "--threads", "2"]

        def kernels(attention):
            plan = p(f"{attention}.dlcplan")
            if not checks.run(f"compile_{attention}", ["compile", p("causal1.onnx"), "--train", "--batch", "8",
                                                       "--attention", attention, "-o", plan]):
                return {}
            proc = checks.run(f"inspect_{attention}", ["inspect", plan, "--stats"])
            return json.loads(proc.stdout)["operand_bytes_by_kernel"] if proc else {}

        fused, unfused = kernels("fused"), kernels("unfused")
        checks.expect("fused_plan", "Attention" in fused and "AttentionGrad" in fused and
                      not {"Softmax", "SoftmaxGrad", "Where"} & set(fused), sorted(fused))
        checks.expect("unfused_plan", "Attention" not in unfused and "Softmax" in unfused, sorted(unfused))

        def losses(name, model, *extra):
            log = p(f"{name}.jsonl")
            if not checks.run(name, ["train", p(model), *train, "--log", log, *extra]):
                return None
            return [json.loads(line)["loss"] for line in open(log)]

        for precision, tolerance in (("fp32", 1e-5), ("bf16", 2e-2)):
            a = losses(f"fused_{precision}", "causal1.onnx", "--attention", "fused", "--precision", precision)
            b = losses(f"unfused_{precision}", "causal1.onnx", "--attention", "unfused", "--precision", precision)
            if a and b:
                worst = max(abs(x - y) / max(1.0, abs(y)) for x, y in zip(a, b))
                checks.expect(f"same_losses_{precision}", len(a) == len(b) == 6 and worst <= tolerance,
                              f"fused {a}, unfused {b}")
                if precision == "fp32":
                    checks.expect("losses_move", a[0] != a[-1], f"{a}")
                    plain = losses("no_mask", "causal0.onnx", "--attention", "fused")
                    checks.expect("mask_in_effect", plain and plain[0] != a[0], f"masked {a[0]}, unmasked {plain}")
    return checks.summary("causal attention")


if __name__ == "__main__":
    sys.exit(main())
