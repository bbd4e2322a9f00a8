#!/usr/bin/env python3
"""Writes tests/parity/data/conv_same/{model.onnx,data.npz}: a small classifier whose two
convolutions pad asymmetrically (TensorFlow's SAME: one more at the end) where the end padding adds
a result, and a ceil-mode max pooling, so that cuDNN's symmetric padding cannot give them and dlc's
CUDA runtime pads their inputs explicitly (codegen/cuda/window_geometry.h). No PyTorch reference: cuda_training_test trains it
on CUDA against dlc's CPU plan (there is no meta.json, so check_parity.py skips it).

  input [B, 2, 8, 8] -> Conv 4x2x3x3, stride 2, pads (0, 0, 1, 1) -> [B, 4, 4, 4] -> Relu
  -> Conv 6x4x4x4, stride 1, pads (1, 1, 2, 2) -> [B, 6, 4, 4]
  -> MaxPool 3x3, stride 2, ceil_mode (its last window past the end) -> [B, 6, 2, 2]
  -> Flatten -> Gemm 24 -> 10 (no Relu after the pool: a window of negatives must give their max)

Needs the onnx and numpy packages only. Usage: make_conv_same_model.py [OUT_DIR]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "data", "conv_same")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)

    def weight(name, *shape):
        fan_in = int(np.prod(shape[1:]))
        return numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name)

    inits = [weight("conv1.weight", 4, 2, 3, 3), numpy_helper.from_array(np.zeros(4, np.float32), "conv1.bias"),
             weight("conv2.weight", 6, 4, 4, 4), weight("fc.weight", 10, 24),
             numpy_helper.from_array(np.zeros(10, np.float32), "fc.bias")]
    nodes = [
        helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["c1"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[0, 0, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "conv2.weight"], ["c2"], kernel_shape=[4, 4], pads=[1, 1, 2, 2]),
        helper.make_node("MaxPool", ["c2"], ["p2"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        helper.make_node("Flatten", ["p2"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(nodes, "conv_same",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 2, 8, 8])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    samples = 64
    np.savez(os.path.join(out, "data.npz"), input=rng.standard_normal((samples, 2, 8, 8)).astype(np.float32),
             label=rng.integers(0, 10, samples).astype(np.int64))


if __name__ == "__main__":
    main()
