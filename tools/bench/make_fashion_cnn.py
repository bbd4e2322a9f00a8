#!/usr/bin/python3
"""Writes models/fashion_cnn.onnx: the small CNN that the Fashion-MNIST training job ships.

    make_fashion_cnn.py [OUT.onnx] [--seed 0]

Architecture (input `input` [N,1,28,28], output `logits` [N,10], dynamic batch axis `N`):
  Conv(1->32, 3x3, pad 1) + BatchNorm + ReLU + MaxPool 2
  Conv(32->64, 3x3, pad 1) + BatchNorm + ReLU + MaxPool 2
  Flatten -> Linear(3136->128) + ReLU -> Linear(128->10)
PyTorch's default random initialization with a fixed seed; no dropout, so a training step is
deterministic. Exported as ONNX opset 17 by onnx_export.export_onnx (inference-form
BatchNormalization as a node of its own, running mean/var as initializers, not folded into Conv).
"""
import argparse
import os

import torch
from torch import nn

from onnx_export import export_onnx


def build_fashion_cnn(seed: int) -> nn.Module:
    torch.manual_seed(seed)

    def block(cin: int, cout: int) -> list:
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]

    return nn.Sequential(*block(1, 32), *block(32, 64), nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
                         nn.Linear(128, 10)).eval()


def main() -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", default=os.path.join(root, "models", "fashion_cnn.onnx"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    model = build_fashion_cnn(args.seed)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    export_onnx(model, torch.zeros(1, 1, 28, 28), args.out, opset=17)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
