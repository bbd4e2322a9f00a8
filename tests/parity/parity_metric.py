"""The parity metric, shared by check_parity.py (dlc against PyTorch) and make_parity_models.py
(which measures how far PyTorch's own float32 results scatter, to find ill-conditioned elements).

For a tensor T with initial value T0, reference R (PyTorch, float32) and candidate C (dlc):

    step = max |R - T0|          how far the reference training moved the tensor
    tol  = RTOL * step + ATOL_ULPS * FLT_EPSILON * max|R| + TINY
    pass iff |C - R| <= tol for every element,

RTOL = 1e-4 being the required parity relative to the step's size, the second term a few
float32 roundings of the stored values, TINY keeping a tensor that did not move comparable.

Ill-conditioned elements are the exception: where float32 runs of PyTorch itself (the reference
and reruns on permuted batches) land further than tol/2 from float64 arithmetic, two float32
implementations cannot be expected to agree to tol. The reference data lists such elements with
that noise; each may differ by up to NOISE_FACTOR times its noise instead. (Adam is the usual
cause: a weight whose first gradient is near rounding noise takes a step of either sign.)
"""
import numpy as np

RTOL = 1e-4
ATOL_ULPS = 4
TINY = 1e-12
LOSS_RTOL = 1e-5
# dlc and PyTorch are two float32 results, each up to about `noise` from exact, and `noise` is
# the furthest of a few samples: a float32 run can land a few times further.
NOISE_FACTOR = 5


def tolerance(initial: np.ndarray, reference: np.ndarray, rtol: float = RTOL) -> tuple:
    """(step, tol) of a tensor (see above); a case may ask for a larger rtol (ResNet-18's Adam)."""
    r = reference.astype(np.float64)
    step = float(np.max(np.abs(r - initial.astype(np.float64)), initial=0.0))
    tol = rtol * step + ATOL_ULPS * float(np.finfo(np.float32).eps) * float(np.max(np.abs(r), initial=0.0)) + TINY
    return step, tol


def ill_conditioned(initial: np.ndarray, reference: np.ndarray, noise: np.ndarray, rtol: float = RTOL) -> dict:
    """The elements whose float32 noise (elementwise, same shape) exceeds tol/2, as
    {"index": flat indices, "noise": their noise}."""
    _, tol = tolerance(initial, reference, rtol)
    flat = noise.reshape(-1)
    index = np.flatnonzero(flat > tol / 2)
    return {"index": index.tolist(), "noise": flat[index].tolist()}


def tensor_error(initial: np.ndarray, reference: np.ndarray, candidate: np.ndarray, ill: dict = None,
                 rtol: float = RTOL) -> dict:
    """step, err = max|C - R|, err/step, tol, ok, and how many ill-conditioned elements got a
    noise allowance; `ill` as ill_conditioned() returns it."""
    step, tol = tolerance(initial, reference, rtol)
    diff = np.abs(candidate.astype(np.float64) - reference.astype(np.float64)).reshape(-1)
    allowed = np.full(diff.shape, tol)
    if ill and ill["index"]:
        index = np.asarray(ill["index"], dtype=np.int64)
        allowed[index] = np.maximum(tol, NOISE_FACTOR * np.asarray(ill["noise"]))
    err = float(diff.max(initial=0.0))
    rel = err / step if step > 0 else (float("inf") if err > 0 else 0.0)
    return {"step": step, "err": err, "rel": rel, "tol": tol, "ok": bool(np.all(diff <= allowed)),
            "noisy": len(ill["index"]) if ill else 0,
            "worst_excess": float(np.max(diff / allowed, initial=0.0))}


def format_tensor_error(name: str, e: dict) -> str:
    line = (f"{'ok  ' if e['ok'] else 'FAIL'} {name:32s} step {e['step']:.3e}  err {e['err']:.3e}  "
            f"err/step {e['rel']:.2e}  tol {e['tol']:.2e}")
    if e["noisy"]:
        line += (f"  ({e['noisy']} ill-conditioned elements allowed {NOISE_FACTOR}x PyTorch's float32 noise; "
                 f"worst element at {e['worst_excess']:.2f} of its allowance)")
    return line


def loss_error(reference: list, candidate: list) -> dict:
    """Largest relative difference of per-step losses; ok iff as many steps and within LOSS_RTOL."""
    rel = max((abs(c - r) / max(abs(r), 1e-12) for r, c in zip(reference, candidate)), default=0.0)
    return {"rel": rel, "ok": len(reference) == len(candidate) and rel <= LOSS_RTOL}
