"""ONNX export shared by the benchmark and model scripts: an eval-mode module, BatchNorm kept.

torch.onnx.export in EVAL mode folds BatchNorm into the preceding Conv, and for a module whose
top-level `training` flag is False it also merges initializers that merely hold equal values
(a fresh BatchNorm's running_var and weight are both all ones), which would alias a trainable
weight with a running statistic. Exporting with TrainingMode.PRESERVE while every submodule is in
eval mode and only the top-level flag says training avoids both: BatchNormalization is exported in
inference form, as its own node, with one initializer per tensor.
"""
import torch


def export_onnx(model: torch.nn.Module, example: torch.Tensor, out: str, opset: int) -> None:
    model.eval()
    model.training = True  # top-level flag only: initializers deduplicated by storage, not by value
    try:
        torch.onnx.export(model, example, out, opset_version=opset, input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    finally:
        model.training = False
