#!/usr/bin/python3
"""Exports torchvision's ResNet-50 with fixed-seed random weights to ONNX for the forward benchmark.

    export_resnet50.py OUT.onnx [--opset 17] [--seed 0]

Writes OUT.onnx (input `input` [N,3,224,224], output `logits` [N,1000], dynamic batch axis `N`)
and, beside it, OUT.pt: the state dict, so that torch_forward.py runs the very same weights.
BatchNorm running statistics are calibrated on a few random batches (train mode, cumulative
average) so that activations keep a sane scale through the 50 layers; BatchNorm stays a separate
node in the ONNX graph (no Conv+BN folding), the same work PyTorch eager does.
"""
import argparse
import os

import torch
import torchvision

from onnx_export import export_onnx


def build_resnet50_architecture() -> torch.nn.Module:
    """torchvision's ResNet-50, default (random) initialization from the current torch seed."""
    return torchvision.models.resnet50(weights=None)


def build_resnet50(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    model = build_resnet50_architecture()
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = None  # cumulative average over the calibration batches
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(8, 3, 224, 224))
    return model.eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="path of the .onnx file to write")
    parser.add_argument("--opset", type=int, default=17, choices=[13, 17])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    model = build_resnet50(args.seed)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save(model.state_dict(), os.path.splitext(args.out)[0] + ".pt")
    export_onnx(model, torch.randn(1, 3, 224, 224), args.out, args.opset)
    print(f"wrote {args.out} and {os.path.splitext(args.out)[0]}.pt")


if __name__ == "__main__":
    main()
