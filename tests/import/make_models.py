#!/usr/bin/env python3
"""Writes the tiny ONNX models of the import golden tests (tests/import/NAME.onnx, each checked
against NAME.check by `dlc inspect --ir NAME.onnx | FileCheck NAME.check`). The models are
committed; rerun this after changing it: python3 tests/import/make_models.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = TensorProto.FLOAT


def value(name, shape, elem=F32):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="dlc tests/import/make_models.py")
    model.ir_version = 7  # readable by ONNX 1.12 (Debian's libonnx)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name + ".onnx"))


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def main():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    c = rng.standard_normal((4,)).astype(np.float32)

    # Gemm with alpha, beta and transB: MatMul {transpose_b} scaled by alpha, plus beta * C.
    save("gemm", [helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="gemm0", alpha=0.5, beta=2.0, transB=1)],
         [value("A", [2, 3])], [value("Y", [2, 4])], [init("B", w), init("C", c)])
    # Plain Gemm: just MatMul + Add.
    save("gemm_plain", [helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="gemm0")],
         [value("A", [2, 4])], [value("Y", [2, 3])], [init("B", w), init("C", c[:3])])

    # Flatten, Squeeze (axes as an input, opset 13) and Unsqueeze (axes as an attribute,
    # opset 11) all become Reshape with an explicit shape.
    save("flatten", [helper.make_node("Flatten", ["x"], ["y"], name="flat", axis=2)],
         [value("x", [2, 3, 4, 5])], [value("y", [6, 20])])
    save("squeeze", [helper.make_node("Squeeze", ["x", "axes"], ["y"], name="sq")],
         [value("x", [1, 3, 1, 2])], [value("y", [3, 2])], [init("axes", np.array([0, 2], np.int64))])
    save("unsqueeze", [helper.make_node("Unsqueeze", ["x"], ["y"], name="unsq", axes=[0, 3])],
         [value("x", [3, 2])], [value("y", [1, 3, 2, 1])], opset=11)

    # x.reshape(x.shape[0], -1) as exporters write it: the shape arithmetic folds away and one
    # Reshape with a constant shape is left.
    save("shape_arith", [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Constant", [], ["zero"], name="zero",
                         value=numpy_helper.from_array(np.array(0, np.int64))),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="unsqueeze"),
        helper.make_node("Concat", ["batch1", "minus_one"], ["new_shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["y"], name="reshape"),
    ], [value("x", [2, 3, 4])], [value("y", [2, 12])],
        [init("axes0", np.array([0], np.int64)), init("minus_one", np.array([-1], np.int64))])

    # Sum of three inputs: two Adds.
    save("sum3", [helper.make_node("Sum", ["a", "b", "c"], ["s"], name="sum")],
         [value("a", [2, 3]), value("b", [2, 3]), value("c", [3])], [value("s", [2, 3])])

    # GlobalAveragePool: ReduceMean over the spatial axes, keeping them.
    save("global_average_pool", [helper.make_node("GlobalAveragePool", ["x"], ["y"], name="gap")],
         [value("x", [1, 2, 3, 3])], [value("y", [1, 2, 1, 1])])


if __name__ == "__main__":
    main()
