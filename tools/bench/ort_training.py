"""ONNX Runtime Training as a benchmark peer (train_bench.py's `ort` variant).

ORT's on-device training API (the `onnxruntime-training-cpu` wheel from PyPI; set it up with
tools/bench/setup_bench_venv.sh) trains the same ONNX file dlc trains:

  prepare(onnx_path, out_dir)  writes ORT's training artifacts: the model with mean
                               cross-entropy on `labels` (artifacts.LossType.CrossEntropyLoss), its
                               gradient graph, and an AdamW optimizer with weight decay 0 and eps
                               1e-8, which is Adam (lr 1e-3, betas 0.9/0.999) as dlc and PyTorch run
                               it. Every float initializer is trained except batch norm's running
                               statistics, as in dlc.
  steps_per_s(...)             a fresh checkpoint state, then warmup + timed steps of
                               forward + loss + backward (Module.__call__), Optimizer.step and
                               Module.lazy_reset_grad on one batch; returns steps/s and the first loss.

The exported models hold batch norm and layer norm in inference form (one output, BN with
training_mode 0). ORT's gradient builder needs their training form, so prepare() sets BN's
training_mode to 1 (batch statistics, as dlc and PyTorch's train() use) and gives both ops the
extra outputs the training form has (BN's running statistics, LN's mean and inverse std).
The eval model ORT writes beside the training model is not loaded (it would turn BN back to
inference form with those outputs still attached, which ORT refuses).
"""
import os
import time

import numpy as np
import onnx

try:
    import onnxruntime as ort
    from onnxruntime.training import api, artifacts, onnxblock
    IMPORT_ERROR = None
except ImportError as e:  # the peer is optional: train_bench.py reports the variant as an error
    IMPORT_ERROR = f"onnxruntime-training is not installed ({e}); bash tools/bench/setup_bench_venv.sh"

LEARNING_RATE = 1e-3
RUNNING_STATISTICS = ("running_mean", "running_var")


def training_form(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy with BatchNormalization in training mode and the training-form outputs ORT's
    gradient builder reads on BatchNormalization and LayerNormalization."""
    model = copy_model(model)
    for node in model.graph.node:
        if node.op_type == "BatchNormalization":
            for attr in node.attribute:
                if attr.name == "training_mode":
                    attr.i = 1
            if not any(a.name == "training_mode" for a in node.attribute):
                node.attribute.append(onnx.helper.make_attribute("training_mode", 1))
        if node.op_type in ("BatchNormalization", "LayerNormalization"):
            while len(node.output) < 3:
                node.output.append(f"{node.output[0]}__training_output{len(node.output)}")
    return model


def copy_model(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def trained_parameters(model: onnx.ModelProto) -> list:
    return [t.name for t in model.graph.initializer
            if t.data_type == onnx.TensorProto.FLOAT and not t.name.endswith(RUNNING_STATISTICS)]


def prepare(onnx_path: str, out_dir: str) -> str:
    """Writes ORT's training artifacts for the model into out_dir; returns out_dir."""
    if IMPORT_ERROR:
        raise RuntimeError(IMPORT_ERROR)
    model = training_form(onnx.load(onnx_path))
    os.makedirs(out_dir, exist_ok=True)
    artifacts.generate_artifacts(model, requires_grad=trained_parameters(model), frozen_params=[],
                                 loss=artifacts.LossType.CrossEntropyLoss,
                                 optimizer=onnxblock.optim.AdamW(eps=1e-8, weight_decay=0.0),
                                 artifact_directory=out_dir)
    return out_dir


def steps_per_s(artifact_dir: str, x: np.ndarray, y: np.ndarray, steps: int, warmup: int, threads: int) -> tuple:
    """(steps/s over the timed steps, the first step's loss) of one run from the initial weights."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    state = api.CheckpointState.load_checkpoint(os.path.join(artifact_dir, "checkpoint"))
    module = api.Module(os.path.join(artifact_dir, "training_model.onnx"), state, None, session_options=options)
    optimizer = api.Optimizer(os.path.join(artifact_dir, "optimizer_model.onnx"), module)
    optimizer.set_learning_rate(LEARNING_RATE)
    module.train()
    elapsed, first_loss = 0.0, None
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        loss = module(x, y)
        optimizer.step()
        module.lazy_reset_grad()
        if step >= warmup:
            elapsed += time.perf_counter() - t0
        if first_loss is None:
            first_loss = float(loss)
    return steps / elapsed, first_loss
