#!/usr/bin/python3
"""Writes the parity transformer's graph at any size, with random weights, using the `onnx`
package only (no torch), for benchmarks whose models are too large to commit or to export:

    make_transformer_onnx.py OUT.onnx [--vocab 50257] [--d 768] [--heads 12] [--blocks 12]
                             [--seq 1024] [--mlp 4] [--classes 10] [--seed 0] [--causal]

The defaults are GPT-2-small's shape. The graph is, node for node, what torch.onnx.export (opset
17) writes for tests/parity/make_parity_models.py's `Transformer` (tests/cli/model_builders.py
checks this against the committed parity export): token embedding Gather plus the learned
position table `pos`; BLOCKS pre-LayerNorm blocks of multi-head self-attention (q, k, v and proj
Linear layers as Transpose + MatMul + Add; k has no bias; no causal mask) and an MLP of
Linear(d, MLP*d), exact GELU (Erf) and Linear(MLP*d, d), each with its residual Add; a final
LayerNorm, the mean over positions and the class head Gemm. Input `input` [N, SEQ] int64, output
`logits` [N, CLASSES]. Initializers carry the PyTorch module's names (`blocks.3.attn.q.weight`, …)
so that the benchmark loads the same weights into it. Weights: N(0, 0.02) for matrices and
embeddings (GPT-2's init), zero biases, LayerNorm scale 1 and shift 0.

--causal adds GPT's causal mask, as `scores.masked_fill(future, float("-inf"))` exports it: a
Where(future, -inf, scores) after the scaling, `future` a bool Constant [SEQ, SEQ] true above the
diagonal (dlc's form of it; the parity model has no such variant).
"""
import argparse
import math
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def init(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(value, np.float32), name))
        return name

    def normal(self, name: str, shape: tuple) -> str:
        return self.init(name, self.rng.normal(0.0, 0.02, shape))

    def node(self, op: str, inputs: list, scope: str, index: int = 0, **attrs) -> str:
        """Appends `op` named as torch's exporter names it: SCOPE/OP (SCOPE/OP_1 for index 1, …)."""
        name = f"{scope}/{op}" + (f"_{index}" if index else "")
        out = f"{name}_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def constant(self, value, scope: str, index: int = 0) -> str:
        array = np.array(value, np.int64 if isinstance(value, list) else np.float32)
        return self.node("Constant", [], scope, index, value=numpy_helper.from_array(array))

    def linear(self, x: str, module: str, scope: str, cin: int, cout: int, bias: bool = True) -> str:
        w = self.normal(f"{module}.weight", (cout, cin))
        y = self.node("MatMul", [x, self.node("Transpose", [w], scope, perm=[1, 0])], scope)
        if bias:
            y = self.node("Add", [self.init(f"{module}.bias", np.zeros(cout)), y], scope)
        return y

    def layer_norm(self, x: str, module: str, scope: str, d: int) -> str:
        return self.node("LayerNormalization", [x, self.init(f"{module}.weight", np.ones(d)),
                                                self.init(f"{module}.bias", np.zeros(d))], scope, axis=-1,
                         epsilon=1e-5)

    def attention(self, x: str, module: str, scope: str, d: int, heads: int, seq: int, causal: bool) -> str:
        hd = d // heads

        def split(t: str, i: int, perm: list, transpose: int) -> str:
            r = self.node("Reshape", [t, self.constant([-1, seq, heads, hd], scope, i)], scope, i, allowzero=0)
            return self.node("Transpose", [r], scope, transpose, perm=perm)

        q = split(self.linear(x, f"{module}.q", f"{scope}/q", d, d), 0, [0, 2, 1, 3], 0)
        k = self.node("Reshape", [self.linear(x, f"{module}.k", f"{scope}/k", d, d, bias=False),
                                  self.constant([-1, seq, heads, hd], scope, 1)], scope, 1, allowzero=0)
        v = split(self.linear(x, f"{module}.v", f"{scope}/v", d, d), 2, [0, 2, 1, 3], 1)
        k_t = self.node("Transpose", [k], scope, 2, perm=[0, 2, 3, 1])
        scores = self.node("Mul", [self.node("MatMul", [q, k_t], scope), self.constant(1.0 / math.sqrt(hd), scope, 3)],
                           scope)
        if causal:
            future = self.node("Constant", [], scope, 5, value=numpy_helper.from_array(
                np.triu(np.ones((seq, seq), bool), 1)))
            scores = self.node("Where", [future, self.constant(float("-inf"), scope, 6), scores], scope)
        att = self.node("MatMul", [self.node("Softmax", [scores], scope, axis=-1), v], scope, 1)
        merged = self.node("Reshape", [self.node("Transpose", [att], scope, 3, perm=[0, 2, 1, 3]),
                                       self.constant([-1, seq, d], scope, 4)], scope, 3, allowzero=0)
        return self.linear(merged, f"{module}.proj", f"{scope}/proj", d, d)

    def gelu(self, x: str, scope: str) -> str:
        """Exact GELU as torch exports nn.GELU(): x * (erf(x / sqrt 2) + 1) * 0.5."""
        erf = self.node("Erf", [self.node("Div", [x, self.constant(math.sqrt(2.0), scope)], scope)], scope)
        half = self.node("Mul", [x, self.node("Add", [erf, self.constant(1.0, scope, 1)], scope)], scope)
        return self.node("Mul", [half, self.constant(0.5, scope, 2)], scope, 1)

    def block(self, x: str, i: int, d: int, heads: int, seq: int, mlp: int, causal: bool) -> str:
        module, scope = f"blocks.{i}", f"/blocks/blocks.{i}"
        h = self.layer_norm(x, f"{module}.ln1", f"{scope}/ln1", d)
        x = self.node("Add", [x, self.attention(h, f"{module}.attn", f"{scope}/attn", d, heads, seq, causal)], scope)
        h = self.layer_norm(x, f"{module}.ln2", f"{scope}/ln2", d)
        h = self.linear(h, f"{module}.mlp.0", f"{scope}/mlp/mlp.0", d, mlp * d)
        h = self.linear(self.gelu(h, f"{scope}/mlp/mlp.1"), f"{module}.mlp.2", f"{scope}/mlp/mlp.2", mlp * d, d)
        return self.node("Add", [x, h], scope, 1)


def make_transformer(vocab: int = 50257, d: int = 768, heads: int = 12, blocks: int = 12, seq: int = 1024,
                     mlp: int = 4, classes: int = 10, seed: int = 0, causal: bool = False) -> onnx.ModelProto:
    if d % heads:
        raise SystemExit(f"error: make_transformer_onnx: --d {d} is not a multiple of --heads {heads}")
    b = Builder(seed)
    pos = b.normal("pos", (seq, d))
    h = b.node("Add", [b.node("Gather", [b.normal("embed.weight", (vocab, d)), "input"], "/embed"), pos], "")
    for i in range(blocks):
        h = b.block(h, i, d, heads, seq, mlp, causal)
    h = b.node("ReduceMean", [b.layer_norm(h, "ln_f", "/ln_f", d)], "", axes=[1], keepdims=0)
    w, bias = b.normal("head.weight", (classes, d)), b.init("head.bias", np.zeros(classes))
    b.nodes.append(helper.make_node("Gemm", [h, w, bias], ["logits"], name="/head/Gemm", alpha=1.0, beta=1.0,
                                    transB=1))
    graph = helper.make_graph(b.nodes, "transformer", [helper.make_tensor_value_info(
        "input", TensorProto.INT64, ["N", seq])], [helper.make_tensor_value_info(
            "logits", TensorProto.FLOAT, ["N", classes])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="dlc-bench")
    model.ir_version = 8  # what onnx 1.12 writes for opset 17, whichever onnx runs this
    return model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the .onnx file to write")
    for flag, default in [("vocab", 50257), ("d", 768), ("heads", 12), ("blocks", 12), ("seq", 1024), ("mlp", 4),
                          ("classes", 10), ("seed", 0)]:
        parser.add_argument(f"--{flag}", type=int, default=default, help=f"default {default}")
    parser.add_argument("--causal", action="store_true", help="mask each position's attention to later ones")
    a = parser.parse_args()
    model = make_transformer(a.vocab, a.d, a.heads, a.blocks, a.seq, a.mlp, a.classes, a.seed, a.causal)
    onnx.save(model, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
