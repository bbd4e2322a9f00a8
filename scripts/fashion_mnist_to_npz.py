#!/usr/bin/env python3
"""Converts Debian's dataset-fashion-mnist (gzipped IDX files) into the .npz files `dlc train`
reads: arrays `input` (float32 [N,1,28,28], pixels scaled to [0,1] and normalized with the
training set's mean 0.2860 and std 0.3530) and `label` (int64 [N]).

usage: fashion_mnist_to_npz.py [--src /usr/share/datasets/fashion-mnist] OUT_DIR
writes OUT_DIR/fashion_train.npz and OUT_DIR/fashion_test.npz
"""
import argparse
import gzip
import os
import struct
import sys

import numpy as np

MEAN, STD = 0.2860, 0.3530


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        sys.exit(f"error: {path}: not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4 : 4 + 4 * ndim])
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        sys.exit(f"error: {path}: truncated IDX file")
    return body.reshape(dims)


def convert(src, images, labels, out):
    x = read_idx(os.path.join(src, images)).astype(np.float32) / 255.0
    x = ((x - MEAN) / STD)[:, None, :, :]
    y = read_idx(os.path.join(src, labels)).astype(np.int64)
    tmp = out + ".tmp.npz"
    np.savez(tmp, input=x, label=y)
    os.replace(tmp, out)
    print(f"wrote {out}: input {x.shape}, label {y.shape}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("out_dir")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    convert(a.src, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", os.path.join(a.out_dir, "fashion_train.npz"))
    convert(a.src, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", os.path.join(a.out_dir, "fashion_test.npz"))


if __name__ == "__main__":
    main()
