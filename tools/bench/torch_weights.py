"""The ONNX model's weights in a PyTorch module: the benchmarks train both from the same values."""
import onnx
import torch
from onnx import numpy_helper


def load_onnx_weights(module: torch.nn.Module, onnx_path: str) -> None:
    """Copies the ONNX initializers into the module's tensors of the same name; raises ValueError
    when one of the module's parameters or buffers (but BatchNorm's step counter) has none."""
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(onnx_path).graph.initializer}
    state = module.state_dict()
    missing = [k for k in state if k not in inits and not k.endswith("num_batches_tracked")]
    if missing:
        raise ValueError(f"{onnx_path}: no initializers for {missing}")
    module.load_state_dict({k: torch.from_numpy(inits[k].copy()) if k in inits else v for k, v in state.items()})
