#!/usr/bin/python3
"""Writes the reference data of the PyTorch training-parity test (check_parity.py).

    make_parity_models.py [--out tests/parity/data] [--models mlp,cnn,cnn_bias,resnet,transformer,einsum,upsample,recurrent]
    make_parity_models.py --resnet18 [--out build/parity]

For each model, a folder OUT/<model>/ with
  model.onnx   the untrained model: opset 17, input `input`, output `logits`, batch axis `N`;
               BatchNormalization in inference form with its running statistics as initializers,
               every parameter an initializer under its PyTorch name (the initial values)
  data.npz     the fixed batch: `input` and `label` (int64 classes)
  sgd1.npz     parameters and running statistics after 1 SGD step (lr 0.1, no momentum)
  adam3.npz    the same after 3 Adam steps (lr 1e-3, betas 0.9/0.999, eps 1e-8), from the start
  meta.json    batch, hyper-parameters and per-step losses of each case, parameter and
               running-statistic names, the torch version, and each case's float32 noise: the
               ill-conditioned elements (see parity_metric.py) and the losses' noise
Training runs the module in train() mode with mean cross-entropy, one thread, fixed seeds, so
the output is the same on every run of the same torch build. Elements where float32 itself is
too noisy for the metric (parity_metric.py) are listed in meta.json with their noise; a case with
more than MAX_ILL_CONDITIONED of them is refused.

The small models (mlp, cnn, cnn_bias, resnet, transformer, einsum, upsample, recurrent) are committed under tests/parity/data (the default).
torchvision's ResNet-18 (11.7M parameters, ~140 MB of data) is not: --resnet18 writes it to
build/parity/resnet18 (or --out), where `check_parity.py DLC tests/parity/data build/parity` and
the ctest test `parity` pick it up when present.
"""
import argparse
import copy
import json
import math
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))
from onnx_export import export_onnx  # noqa: E402  (BatchNorm kept unfused, one initializer per tensor)

import parity_metric  # noqa: E402  (beside this script)

SGD = {"optimizer": "sgd", "lr": 0.1, "steps": 1}
ADAM = {"optimizer": "adam", "lr": 1e-3, "steps": 3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
CASES = {"sgd1": SGD, "adam3": ADAM}
NOISE_SAMPLES = 3  # reruns of each kind that estimate the float32 rounding noise
# Float32 gradient noise (perturb_gradients): relative to the element, and relative to the
# tensor's largest element where sums cancel (PyTorch and dlc show about 2e-8 there on the
# transformer's near-zero gradients).
GRADIENT_RTOL = 1e-6
GRADIENT_ATOL = 5e-8
MAX_ILL_CONDITIONED = 0.01  # a case with more ill-conditioned elements checks too little


class Mlp(nn.Module):
    """32 -> 64 -> GELU -> LayerNorm -> 10."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(self.norm(self.act(self.fc1(x))))


def make_cnn() -> nn.Module:
    """(conv 3x3 - BatchNorm - ReLU - maxpool 2) x 2 + linear on 1x16x16. The convolutions have no
    bias: BatchNorm cancels it, so its gradient is rounding noise that Adam would amplify to +-lr."""

    def block(i: int, cin: int, cout: int) -> list:
        return [(f"conv{i}", nn.Conv2d(cin, cout, 3, padding=1, bias=False)), (f"bn{i}", nn.BatchNorm2d(cout)),
                (f"relu{i}", nn.ReLU()), (f"pool{i}", nn.MaxPool2d(2))]

    layers = block(1, 1, 8) + block(2, 8, 16) + [("flatten", nn.Flatten()), ("fc", nn.Linear(16 * 4 * 4, 10))]
    return nn.Sequential(OrderedDict(layers))


def make_resnet() -> nn.Module:
    """ResNet in small: stem (conv 3x3 - BatchNorm - ReLU), torchvision's BasicBlock at 8 channels,
    then one at 16 channels with stride 2 and its 1x1 convolution + BatchNorm shortcut, global
    average pool, linear; on 1x12x12. Residual Adds of two batch-norm results (the shortcut's)
    and of a batch norm and a block's input (the identity)."""
    from torchvision.models.resnet import BasicBlock
    shortcut = nn.Sequential(nn.Conv2d(8, 16, 1, stride=2, bias=False), nn.BatchNorm2d(16))
    layers = [("conv1", nn.Conv2d(1, 8, 3, padding=1, bias=False)), ("bn1", nn.BatchNorm2d(8)),
              ("relu", nn.ReLU()), ("layer1", BasicBlock(8, 8)),
              ("layer2", BasicBlock(8, 16, stride=2, downsample=shortcut)),
              ("avgpool", nn.AdaptiveAvgPool2d(1)), ("flatten", nn.Flatten()), ("fc", nn.Linear(16, 10))]
    return nn.Sequential(OrderedDict(layers))


def make_cnn_bias() -> nn.Module:
    """conv 3x3 (bias) - ReLU - average pool 3/2 (padding counted) - conv 3x3 (bias) - ReLU -
    average pool 3/2 (padding not counted) - linear on 2x12x12: the convolution bias gradients
    (sums over batch and positions) and AveragePool's backward both ways, no BatchNorm."""
    layers = [("conv1", nn.Conv2d(2, 6, 3, padding=1)), ("relu1", nn.ReLU()),
              ("pool1", nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=True)),
              ("conv2", nn.Conv2d(6, 8, 3, padding=1)), ("relu2", nn.ReLU()),
              ("pool2", nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)),
              ("flatten", nn.Flatten()), ("fc", nn.Linear(8 * 3 * 3, 10))]
    return nn.Sequential(OrderedDict(layers))


class SelfAttention(nn.Module):
    """Multi-head self-attention from plain Linear/matmul/softmax (no nn.MultiheadAttention, whose
    export is a fused op soup). Reshapes use constant shapes (batch as -1) so no Shape ops export."""

    def __init__(self, d: int, heads: int, seq: int):
        super().__init__()
        self.d, self.heads, self.seq, self.head_dim = d, heads, seq, d // heads
        self.q, self.v, self.proj = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        # No key bias: softmax over keys cancels it (q.b is the same for every key), so its
        # gradient is rounding noise that Adam would turn into +-lr steps of arbitrary sign.
        self.k = nn.Linear(d, d, bias=False)

    def split_heads(self, t):  # [B, T, D] -> [B, H, T, D/H]
        return t.reshape(-1, self.seq, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q, k, v = self.split_heads(self.q(x)), self.split_heads(self.k(x)), self.split_heads(self.v(x))
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim)), dim=-1)
        return self.proj(torch.matmul(att, v).transpose(1, 2).reshape(-1, self.seq, self.d))


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attention(LN(x)), then x + MLP(LN(x)) with GELU; the
    MLP is `mlp` times wider than the block."""

    def __init__(self, d: int, heads: int, seq: int, mlp: int = 2):
        super().__init__()
        self.ln1, self.attn, self.ln2 = nn.LayerNorm(d), SelfAttention(d, heads, seq), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, mlp * d), nn.GELU(), nn.Linear(mlp * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    """Token + position embedding, two blocks, final LayerNorm, mean over positions, class head.
    (tools/bench/make_transformer_onnx.py writes this graph at any size without torch.)"""

    def __init__(self, vocab: int = 50, d: int = 32, heads: int = 2, blocks: int = 2, seq: int = 8,
                 classes: int = 10, mlp: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(seq, d) * 0.02)
        self.blocks = nn.Sequential(*(Block(d, heads, seq, mlp) for _ in range(blocks)))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, tokens):
        return self.head(self.ln_f(self.blocks(self.embed(tokens) + self.pos)).mean(dim=1))


class EinsumAttention(nn.Module):
    """Self-attention and its projections written with torch.einsum, which exports as ONNX Einsum
    (dlc's lower-einsum pass rewrites each into MatMul, Transpose, Reshape and ReduceSum): per-head
    projections 'btd,hde->bhte', scores 'bhqe,bhke->bhqk', the context in the seq-major layout
    'bhqk,bhke->bqhe', and a head that sums over positions inside the contraction 'btd,dc->bc'
    (a letter only one operand has); plus torch.gather (ONNX GatherElements, whose gradient is
    GatherElementsGrad) picking, per feature, the position where |x| is largest (ArgMax).
    Input [B, T, D] Gaussian."""

    def __init__(self, d: int = 16, heads: int = 2, seq: int = 6, classes: int = 10):
        super().__init__()
        e = d // heads
        self.seq, self.d, self.scale = seq, d, 1.0 / math.sqrt(e)
        self.wq, self.wk, self.wv = (nn.Parameter(torch.randn(heads, d, e) / math.sqrt(d)) for _ in range(3))
        self.head = nn.Parameter(torch.randn(d, classes) / math.sqrt(d))
        self.picked_head = nn.Parameter(torch.randn(d, classes) / math.sqrt(d))
        self.bias = nn.Parameter(torch.zeros(classes))

    def forward(self, x):
        q = torch.einsum("btd,hde->bhte", x, self.wq)
        k = torch.einsum("btd,hde->bhte", x, self.wk)
        v = torch.einsum("btd,hde->bhte", x, self.wv)
        att = torch.softmax(torch.einsum("bhqe,bhke->bhqk", q, k) * self.scale, dim=-1)
        y = x + torch.einsum("bhqk,bhke->bqhe", att, v).reshape(-1, self.seq, self.d)
        picked = torch.gather(y, 1, x.abs().argmax(dim=1, keepdim=True))  # [B, 1, D]
        return (torch.einsum("btd,dc->bc", y, self.head) / self.seq +
                torch.einsum("bqd,dc->bc", picked, self.picked_head) + self.bias)


class UpsampleNet(nn.Module):
    """A small encoder-decoder on 2x8x8: conv 3x3 - ReLU (the skip), max pool 2, conv 3x3 - ReLU,
    F.interpolate x2 bilinear (ONNX Resize linear, pytorch_half_pixel), concatenated with the skip,
    conv 3x3 - ReLU, nn.PixelShuffle(2) (DepthToSpace, CRD), F.interpolate x0.5 nearest (Resize
    nearest, downsampling), F.interpolate to 12x12 bicubic (Resize cubic, A = -0.75), linear."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(2, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)
        self.conv3 = nn.Conv2d(16, 8, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)
        self.fc = nn.Linear(2 * 12 * 12, 10)

    def forward(self, x):
        skip = F.relu(self.conv1(x))
        low = F.relu(self.conv2(F.max_pool2d(skip, 2)))
        up = F.interpolate(low, scale_factor=2.0, mode="bilinear", align_corners=False)
        y = self.shuffle(F.relu(self.conv3(torch.cat([up, skip], dim=1))))
        y = F.interpolate(y, scale_factor=0.5, mode="nearest")
        y = F.interpolate(y, size=(12, 12), mode="bicubic", align_corners=False)
        return self.fc(y.flatten(1))


class RecurrentNet(nn.Module):
    """Token embedding, a bidirectional LSTM, a GRU and a Relu RNN (batch first, exported as ONNX
    LSTM, GRU with linear_before_reset and RNN), a linear head on the RNN's last hidden state plus
    the mean of the GRU's outputs."""

    def __init__(self, vocab: int = 30, d: int = 8, hidden: int = 6, classes: int = 10):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.rnn = nn.RNN(hidden, hidden, nonlinearity="relu", batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens):
        y, _ = self.lstm(self.embed(tokens))
        y, _ = self.gru(y)
        _, h = self.rnn(y)
        return self.head(h[-1] + y.mean(dim=1))


def make_resnet18() -> nn.Module:
    import torchvision
    return torchvision.models.resnet18()


@dataclass
class ModelSpec:
    build: Callable[[], nn.Module]
    batch: int
    make_batch: Callable  # (rng, batch) -> (input array, number of classes)
    cases: dict = field(default_factory=lambda: CASES)


def gaussian(*shape):
    return lambda rng, b: rng.standard_normal((b, *shape), dtype=np.float32)


MODELS = {
    "mlp": ModelSpec(Mlp, 16, lambda rng, b: (gaussian(32)(rng, b), 10)),
    "cnn": ModelSpec(make_cnn, 8, lambda rng, b: (gaussian(1, 16, 16)(rng, b), 10)),
    "cnn_bias": ModelSpec(make_cnn_bias, 8, lambda rng, b: (gaussian(2, 12, 12)(rng, b), 10)),
    "resnet": ModelSpec(make_resnet, 8, lambda rng, b: (gaussian(1, 12, 12)(rng, b), 10)),
    "transformer": ModelSpec(Transformer, 8, lambda rng, b: (rng.integers(0, 50, (b, 8), dtype=np.int64), 10)),
    "einsum": ModelSpec(EinsumAttention, 8, lambda rng, b: (gaussian(6, 16)(rng, b), 10)),
    "upsample": ModelSpec(UpsampleNet, 8, lambda rng, b: (gaussian(2, 8, 8)(rng, b), 10)),
    "recurrent": ModelSpec(RecurrentNet, 8, lambda rng, b: (rng.integers(0, 30, (b, 6), dtype=np.int64), 10)),
    # Adam on ResNet-18 at lr 1e-3 is chaotic in float32: PyTorch's float32 and float64 runs end
    # up about one step apart on most weights after three steps, so nothing could be checked.
    # At lr 1e-4 with eps 1e-3 they stay within 1e-3 of the step (the stem convolution, whose
    # gradients sum 4096 positions, is the worst), so that case is checked at rtol 1e-3.
    "resnet18": ModelSpec(make_resnet18, 4, lambda rng, b: (gaussian(3, 64, 64)(rng, b), 1000),
                          cases={"sgd1": SGD, "adam3": dict(ADAM, lr=1e-4, eps=1e-3, rtol=1e-3)}),
}


def initializers(path: str) -> dict:
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}


def check_export(path: str, model: nn.Module) -> list:
    """The names of the exported initializers that are PyTorch tensors; fails unless every
    parameter and BatchNorm statistic is exported under its name with its value, and BatchNorm
    is a BatchNormalization node."""
    inits = initializers(path)
    state = {k: v.detach().numpy() for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    missing = [k for k in state if k not in inits]
    if missing:
        raise SystemExit(f"{path}: tensors not exported as initializers under their names: {missing}")
    for k, v in state.items():
        if not np.array_equal(inits[k], v):
            raise SystemExit(f"{path}: initializer '{k}' differs from the PyTorch tensor")
    extra = [k for k, v in inits.items() if k not in state and v.dtype.kind == "f" and v.size > 1]
    if extra:
        raise SystemExit(f"{path}: float initializers with no PyTorch tensor (dlc would train them): {extra}")
    ops = {n.op_type for n in onnx.load(path).graph.node}
    has_bn = any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())
    if has_bn and "BatchNormalization" not in ops:
        raise SystemExit(f"{path}: BatchNorm was not exported as BatchNormalization (ops: {sorted(ops)})")
    return list(state)


def make_optimizer(params, case: dict):
    if case["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=case["lr"])
    return torch.optim.Adam(params, lr=case["lr"], betas=(case["beta1"], case["beta2"]), eps=case["eps"])


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor, case: dict) -> list:
    """Trains `model` in place for case["steps"] steps on the batch; returns the losses."""
    model.train()
    opt = make_optimizer(model.parameters(), case)
    losses = []
    for _ in range(case["steps"]):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


def perturb_gradients(model: nn.Module, generator: torch.Generator) -> None:
    """Adds to every parameter's gradient g uniform noise of up to
    GRADIENT_RTOL * |g| + GRADIENT_ATOL * max|g| per element; exact zeros (no terms summed, e.g.
    embedding rows of tokens not in the batch) stay zero."""
    def hook(g):
        noise = torch.rand(g.shape, generator=generator, dtype=torch.float64).to(g.dtype) * 2 - 1
        return g + noise * (GRADIENT_RTOL * g.abs() + GRADIENT_ATOL * g.abs().max() * (g != 0))

    for p in model.parameters():
        p.register_hook(hook)


def float32_noise(model: nn.Module, initial: dict, x: torch.Tensor, y: torch.Tensor, case: dict, names: list,
                  reference: dict, losses: list) -> dict:
    """How far a float32 training can land from exact arithmetic, elementwise: the largest
    |result - float64| over the reference, NOISE_SAMPLES float32 reruns on row permutations of
    the batch (the same mathematics summed in other orders) and NOISE_SAMPLES float64 runs whose
    gradients carry noise of the size float32 rounding gives them (perturb_gradients). Returns the
    ill-conditioned elements per tensor (parity_metric.ill_conditioned) and the losses' largest
    relative noise."""
    generator = torch.Generator().manual_seed(1)

    def run(dtype, order, perturb=False):
        m = copy.deepcopy(model).to(dtype)
        m.load_state_dict(initial)
        if perturb:
            perturb_gradients(m, generator)
        xs = x[order].to(dtype) if x.is_floating_point() else x[order]
        run_losses = train(m, xs, y[order], case)
        return run_losses, {k: v.detach().numpy().copy() for k, v in m.state_dict().items() if k in names}

    in_order = torch.arange(len(y))
    exact_losses, exact = run(torch.float64, in_order)
    samples = [(losses, reference)]
    samples += [run(torch.float32, torch.randperm(len(y), generator=generator)) for _ in range(NOISE_SAMPLES)]
    samples += [run(torch.float64, in_order, perturb=True) for _ in range(NOISE_SAMPLES)]
    ill = {}
    for k in names:
        noise = np.max([np.abs(s[k].astype(np.float64) - exact[k]) for _, s in samples], axis=0)
        elements = parity_metric.ill_conditioned(initial[k].numpy(), reference[k], noise,
                                                 case.get("rtol", parity_metric.RTOL))
        if elements["index"]:
            ill[k] = elements
    loss_rel = max(parity_metric.loss_error(exact_losses, l)["rel"] for l, _ in samples)
    return {"loss_rel": loss_rel, "ill_conditioned": ill}


def make_model_data(name: str, out_dir: str, seed: int) -> None:
    spec = MODELS[name]
    batch = spec.batch
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(seed)
    model = spec.build()
    rng = np.random.default_rng(seed)
    x_np, classes = spec.make_batch(rng, batch)
    y_np = rng.integers(0, classes, batch, dtype=np.int64)

    model_path = os.path.join(folder, "model.onnx")
    export_onnx(model, torch.from_numpy(x_np[:1]), model_path, opset=17)
    names = check_export(model_path, model)
    np.savez(os.path.join(folder, "data.npz"), input=x_np, label=y_np)

    initial = {k: v.clone() for k, v in model.state_dict().items()}
    params = {k for k, _ in model.named_parameters()}
    meta = {"model": name, "batch": batch, "seed": seed, "torch": torch.__version__,
            "parameters": sorted(n for n in names if n in params),
            "running_stats": sorted(n for n in names if n not in params), "cases": {}}
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
    for case_name, case in spec.cases.items():
        model.load_state_dict(initial)
        losses = train(model, x, y, case)
        result = {k: v.detach().numpy().copy() for k, v in model.state_dict().items() if k in names}
        np.savez(os.path.join(folder, f"{case_name}.npz"), **result)
        model.load_state_dict(initial)
        noise = float32_noise(model, initial, x, y, case, names, result, losses)
        ill = sum(len(e["index"]) for e in noise["ill_conditioned"].values())
        total = sum(result[k].size for k in names)
        print(f"{name} {case_name}: {ill} of {total} elements ill-conditioned in float32 "
              f"({', '.join(noise['ill_conditioned']) or 'none'})")
        if ill > MAX_ILL_CONDITIONED * total:
            raise SystemExit(f"{name} {case_name}: too ill-conditioned in float32 to check; change the model or case")
        meta["cases"][case_name] = dict(case, losses=losses, float32_noise=noise)
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print(f"{name}: {sum(v.numel() for v in model.parameters())} parameters, {size / 1024:.0f} KiB in {folder}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="output folder (default tests/parity/data, or build/parity with --resnet18)")
    parser.add_argument("--models", default="mlp,cnn,cnn_bias,resnet,transformer,einsum,upsample,recurrent", help="comma-separated subset")
    parser.add_argument("--resnet18", action="store_true", help="make torchvision's ResNet-18 data only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    models = ["resnet18"] if args.resnet18 else args.models.split(",")
    default_out = os.path.join(ROOT, "build", "parity") if args.resnet18 else os.path.join(ROOT, "tests", "parity", "data")
    for name in models:
        if name not in MODELS:
            raise SystemExit(f"unknown model '{name}' ({', '.join(MODELS)})")
        make_model_data(name, args.out or default_out, args.seed)


if __name__ == "__main__":
    main()
