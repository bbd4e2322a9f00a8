#!/usr/bin/python3
"""Writes a ResNet-18 or ResNet-50 ONNX model with random weights, built with the `onnx` package
only (no torch), for tests and benchmarks that need the network's shape but not trained or
reference values:

    make_resnet_onnx.py OUT.onnx [--depth 18|50] [--image 64] [--classes 1000] [--seed 0]

The graph is what `torch.onnx.export(torchvision.models.resnetDEPTH())` writes in eval mode, opset
17 (tests/parity/make_parity_models.py --resnet18): input `input` [N, 3, IMAGE, IMAGE] with the
symbolic batch axis `N`, output `logits` [N, CLASSES]; the 7x7/2 stem convolution, BatchNorm in
inference form (running statistics as initializers), ReLU, 3x3/2 max pooling, four stages (64,
128, 256, 512 channels; the first block of stages 2-4 strides by 2), the residual Add, global
average pooling, Flatten and the fully connected Gemm (transB). ResNet-18 has two basic blocks
per stage (two 3x3 convolutions); ResNet-50 has 3, 4, 6 and 3 bottleneck blocks (1x1, 3x3 with
the stride, 1x1 to 4x the channels: torchvision's v1.5). A block whose shape changes projects its
shortcut with a 1x1 convolution and BatchNorm. Initializers carry torchvision's names
(`layer2.0.downsample.0.weight`, `fc.bias`, …; tests/cli/model_builders.py checks them against
torchvision's list); convolutions have no bias. Weights are He-normal, BatchNorm scale 1, shift 0,
mean 0, variance 1 (ResNet-18: 11.7M parameters, 47 MB; ResNet-50: 25.6M, 102 MB).
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

STAGES = [(64, 1), (128, 2), (256, 2), (512, 2)]  # (width, stride of the first block)
BLOCKS = {18: [2, 2, 2, 2], 50: [3, 4, 6, 3]}  # blocks per stage


class Builder:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []

    def init(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value.astype(np.float32), name))
        return name

    def node(self, op: str, inputs: list, scope: str, **attrs) -> str:
        out = f"{scope}/{op}_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{scope}/{op}", **attrs))
        return out

    def conv(self, x: str, module: str, scope: str, cin: int, cout: int, k: int, stride: int) -> str:
        std = np.sqrt(2.0 / (cout * k * k))  # He init, fan-out (torchvision's kaiming_normal_)
        w = self.init(f"{module}.weight", self.rng.normal(0.0, std, (cout, cin, k, k)))
        return self.node("Conv", [x, w], scope, dilations=[1, 1], group=1, kernel_shape=[k, k],
                         pads=[k // 2] * 4, strides=[stride, stride])

    def bn(self, x: str, module: str, scope: str, c: int) -> str:
        names = [self.init(f"{module}.{p}", np.full(c, v)) for p, v in
                 [("weight", 1.0), ("bias", 0.0), ("running_mean", 0.0), ("running_var", 1.0)]]
        return self.node("BatchNormalization", [x, *names], scope, epsilon=1e-5, momentum=0.9, training_mode=0)

    def conv_bn(self, x: str, name: str, scope: str, index: int, cin: int, cout: int, k: int, stride: int) -> str:
        """convINDEX and bnINDEX of block `name`."""
        h = self.conv(x, f"{name}.conv{index}", f"{scope}/conv{index}", cin, cout, k, stride)
        return self.bn(h, f"{name}.bn{index}", f"{scope}/bn{index}", cout)

    def block(self, x: str, name: str, cin: int, width: int, stride: int, bottleneck: bool) -> str:
        """A basic block (3x3, 3x3) or a bottleneck (1x1, 3x3 with the stride, 1x1 to 4x width)."""
        scope = "/" + name.split(".")[0] + "/" + name  # /layer1/layer1.0
        layers = [(1, width, 1, 1), (2, width, 3, stride), (3, 4 * width, 1, 1)] if bottleneck else \
            [(1, width, 3, stride), (2, width, 3, 1)]
        h, c = x, cin
        for i, (index, cout, k, s) in enumerate(layers):
            h = self.conv_bn(h, name, scope, index, c, cout, k, s)
            if i + 1 < len(layers):
                h = self.node("Relu", [h], f"{scope}/relu" + (f"_{i}" if i else ""))
            c = cout
        if stride != 1 or cin != c:
            x = self.conv(x, f"{name}.downsample.0", f"{scope}/downsample/downsample.0", cin, c, 1, stride)
            x = self.bn(x, f"{name}.downsample.1", f"{scope}/downsample/downsample.1", c)
        return self.node("Relu", [self.node("Add", [h, x], scope)], f"{scope}/relu_{len(layers) - 1}")

def make_resnet(path: str, depth: int = 18, image: int = 64, classes: int = 1000, seed: int = 0) -> None:
    b = Builder(seed)
    h = b.node("Relu", [b.bn(b.conv("input", "conv1", "/conv1", 3, 64, 7, 2), "bn1", "/bn1", 64)], "/relu")
    h = b.node("MaxPool", [h], "/maxpool", ceil_mode=0, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    cin, bottleneck = 64, depth >= 50
    for stage, ((width, stride), blocks) in enumerate(zip(STAGES, BLOCKS[depth]), start=1):
        for i in range(blocks):
            h = b.block(h, f"layer{stage}.{i}", cin, width, stride if i == 0 else 1, bottleneck)
            cin = 4 * width if bottleneck else width
    h = b.node("Flatten", [b.node("GlobalAveragePool", [h], "/avgpool")], "", axis=1)
    bound = 1.0 / np.sqrt(cin)  # nn.Linear's default init
    w = b.init("fc.weight", b.rng.uniform(-bound, bound, (classes, cin)))
    bias = b.init("fc.bias", b.rng.uniform(-bound, bound, classes))
    b.nodes.append(helper.make_node("Gemm", [h, w, bias], ["logits"], name="/fc/Gemm", alpha=1.0, beta=1.0, transB=1))

    graph = helper.make_graph(b.nodes, f"resnet{depth}", [helper.make_tensor_value_info(
        "input", TensorProto.FLOAT, ["N", 3, image, image])], [helper.make_tensor_value_info(
            "logits", TensorProto.FLOAT, ["N", classes])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="dlc-tests")
    model.ir_version = 8  # what onnx 1.12 writes for opset 17, whichever onnx runs this
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the .onnx file to write")
    parser.add_argument("--depth", type=int, default=18, choices=sorted(BLOCKS), help="18 or 50 (default 18)")
    parser.add_argument("--image", type=int, default=64, help="input height and width (default 64)")
    parser.add_argument("--classes", type=int, default=1000, help="classes of the fc layer (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    args = parser.parse_args()
    make_resnet(args.out, args.depth, args.image, args.classes, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
