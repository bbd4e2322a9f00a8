#!/usr/bin/env python3
"""`dlc compile --device cuda --arch sm_90 --train` of ResNet-18 (batch 4, SGD with momentum 0.9)
with NVRTC compiling the kernels (needs the CUDA Toolkit, not a GPU): in fp32 by default, in
--precisions (e.g. fp32,bf16,fp16), or in all three with DLC_CUDA_COMPILE_ALL=1 in the environment
(bf16 and fp16 add 2x and 4x fp32's time: about 45 s on 2 busy cores). The
model is torchvision's layout with random weights, written by make_resnet_onnx.py (the onnx
package only, no torch) to WORK_DIR/resnet18.onnx, and made again only when that file is older
than the generator. The checks are cuda_compile.py's (compile_plan): every step bound, kernels
stored once, library calls recorded. Prints each compile's time and statistics.

usage: cuda_compile_resnet18.py PATH/TO/dlc WORK_DIR [--precisions LIST] [-v]
"""
import argparse
import os
import sys
import tempfile
import time

from cli_harness import Checks
from cuda_compile import compile_plan
from make_resnet_onnx import make_resnet

GENERATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_resnet_onnx.py")


def model_path(work):
    """WORK_DIR/resnet18.onnx, written unless a file newer than the generator is there."""
    path = os.path.join(work, "resnet18.onnx")
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(GENERATOR):
        os.makedirs(work, exist_ok=True)
        start = time.monotonic()
        make_resnet(path + ".tmp", 18)
        os.replace(path + ".tmp", path)
        print(f"resnet18: generated {path} in {time.monotonic() - start:.1f} s")
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dlc")
    parser.add_argument("work")
    every = os.environ.get("DLC_CUDA_COMPILE_ALL") == "1"
    parser.add_argument("--precisions", default="fp32,bf16,fp16" if every else "fp32")
    parser.add_argument("-v", action="store_true", dest="verbose")
    args = parser.parse_args()
    checks = Checks(args.dlc, args.verbose)
    start = time.monotonic()
    model = model_path(args.work)
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        for precision in args.precisions.split(","):
            compile_plan(checks, f"resnet18_{precision}", model,
                         ["--batch", "4", "--optimizer", "sgd", "--momentum", "0.9", "--precision", precision],
                         os.path.join(tmp, f"resnet18_{precision}.dlcplan"), repeated_layers=True)
    print(f"resnet18: {time.monotonic() - start:.1f} s in all")
    return checks.summary("resnet18 cuda compile")


if __name__ == "__main__":
    sys.exit(main())
