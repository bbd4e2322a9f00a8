#!/usr/bin/env python3
"""Checks the ONNX model builders that need no torch against what torch.onnx.export writes, so
that the benchmarks' large models (built on the GPU machine, too large to commit) are the graphs
they claim to be:

  - tools/bench/make_transformer_onnx.py at the parity transformer's size, node for node against
    the committed export tests/parity/data/transformer/model.onnx (ops, names, inputs, outputs,
    attributes, constant values, initializer names and shapes);
  - tests/cli/make_resnet_onnx.py --depth 18 and 50, the same way against
    tests/cli/data/torchvision_resnet{18,50}.txt: the canonical text of torch's export of
    torchvision's model (torch 1.13, opset 17, tools/bench/onnx_export.py), which
    `model_builders.py --write-references` makes again (needs torch and torchvision).

usage: model_builders.py [--write-references]
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))
from make_resnet_onnx import make_resnet  # noqa: E402
from make_transformer_onnx import make_transformer  # noqa: E402

REFERENCE = os.path.join(HERE, "data", "torchvision_resnet{}.txt")
IMAGE = 32  # the references' input size: no shape in the canonical text depends on it


def canonical(model: onnx.ModelProto) -> list:
    """One line per node (op, name, inputs, outputs, attributes; constants by value), then one per
    initializer (name and shape, sorted), then the graph's inputs and outputs."""
    def attr(a):
        value = onnx.helper.get_attribute_value(a)
        if isinstance(value, onnx.TensorProto):
            value = np.round(numpy_helper.to_array(value).astype(np.float64), 6).tolist()
        elif isinstance(value, float):
            value = round(value, 6)
        return f"{a.name}={value}"

    g = model.graph
    lines = [f"{n.op_type} {n.name} in={','.join(n.input)} out={','.join(n.output)} "
             + " ".join(sorted(attr(a) for a in n.attribute)) for n in g.node]
    lines += sorted(f"init {t.name} {list(t.dims)}" for t in g.initializer)
    for kind, values in [("input", g.input), ("output", g.output)]:
        for v in values:
            dims = [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            lines.append(f"{kind} {v.name} {v.type.tensor_type.elem_type} {dims}")
    return [line.rstrip() for line in lines]


def compare(what: str, got: list, want: list) -> list:
    """Failure messages: the first differing lines, and the count."""
    if got == want:
        return []
    diffs = [(i, a, b) for i, (a, b) in enumerate(zip(got, want)) if a != b]
    out = [f"{what}: {len(diffs)} differing line(s), {len(got)} lines built vs {len(want)} expected"]
    out += [f"  line {i + 1}:\n    built:    {a}\n    expected: {b}" for i, a, b in diffs[:3]]
    return out


def built_resnet(depth: int) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "resnet.onnx")
        make_resnet(path, depth, IMAGE)
        return canonical(onnx.load(path))


def write_references() -> None:
    import torch
    import torchvision
    from onnx_export import export_onnx
    for depth in (18, 50):
        model = getattr(torchvision.models, f"resnet{depth}")()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "resnet.onnx")
            export_onnx(model, torch.randn(1, 3, IMAGE, IMAGE), path, opset=17)
            lines = canonical(onnx.load(path))
        with open(REFERENCE.format(depth), "w") as f:
            f.write(f"# torch {torch.__version__}, torchvision {torchvision.__version__}: resnet{depth}, opset 17, "
                    f"{IMAGE}x{IMAGE} (tests/cli/model_builders.py --write-references)\n")
            f.write("\n".join(lines) + "\n")
        print(f"wrote {REFERENCE.format(depth)} ({len(lines)} lines)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-references", action="store_true", help="export torchvision's models again")
    if parser.parse_args().write_references:
        write_references()
        return 0

    failures = []
    parity = onnx.load(os.path.join(ROOT, "tests", "parity", "data", "transformer", "model.onnx"))
    built = make_transformer(vocab=50, d=32, heads=2, blocks=2, seq=8, mlp=2, classes=10)
    failures += compare("transformer", canonical(built), canonical(parity))
    for depth in (18, 50):
        with open(REFERENCE.format(depth)) as f:
            want = [line.rstrip("\n") for line in f if not line.startswith("#")]
        failures += compare(f"resnet{depth}", built_resnet(depth), want)
    for f in failures:
        print(f, file=sys.stderr)
    print("model_builders: " + ("FAILED" if failures else "transformer, resnet18 and resnet50 match torch's export"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
