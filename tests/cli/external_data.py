#!/usr/bin/env python3
"""Initializers stored as ONNX external data: `dlc run` reads them from the model's folder
(offset and length honoured), and a location outside that folder or past the file's end is an
error naming the initializer.

usage: external_data.py PATH/TO/dlc
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper


def model_with_external_b(folder, location, offset, length):
    b = TensorProto()
    b.name = "b"
    b.data_type = TensorProto.FLOAT
    b.dims.extend([2, 3])
    b.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = b.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph([helper.make_node("Add", ["x", "b"], ["y"], name="add_b")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [b])
    path = os.path.join(folder, f"model_{offset}_{length}.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def run(dlc, model, x_path, out_dir):
    return subprocess.run([dlc, "run", model, "--input", f"x={x_path}", "--output-dir", out_dir],
                          capture_output=True, text=True)


def main():
    dlc = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        b = np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5
        with open(os.path.join(d, "weights.bin"), "wb") as f:
            f.write(b"\0" * 16 + b.tobytes())  # 16 bytes of padding before the tensor
        x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
        x_path = os.path.join(d, "x.npy")
        np.save(x_path, x)

        r = run(dlc, model_with_external_b(d, "weights.bin", 16, 24), x_path, os.path.join(d, "out"))
        y_path = os.path.join(d, "out", "y.npy")
        if r.returncode != 0 or not os.path.exists(y_path) or not np.array_equal(np.load(y_path), x + b):
            print(f"FAIL external data read: rc={r.returncode} {r.stderr.strip()}")
            failures += 1

        for name, (location, offset, length) in {"outside_folder": ("../weights.bin", 16, 24),
                                                 "past_end": ("weights.bin", 32, 24)}.items():
            out = os.path.join(d, "out_" + name)
            r = run(dlc, model_with_external_b(d, location, offset, length), x_path, out)
            lines = r.stderr.strip().splitlines()
            ok = (r.returncode not in (0,) and r.returncode > 0 and len(lines) == 1 and
                  lines[0].startswith("error: ") and "'b'" in lines[0] and not os.path.exists(out))
            if not ok:
                print(f"FAIL {name}: rc={r.returncode} stderr={r.stderr.strip()!r}")
                failures += 1
    print(f"{3 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
