"""The global RNGs a model must not touch, for the model contract's clause ``global_rng``.

Torch's global CPU RNG (and the run device's CUDA RNG), Python's ``random`` and NumPy's global
RNG: the clause sets them to fresh states, samples, and compares.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = ["GLOBAL_SEEDS", "global_rngs", "same_state", "set_global_rngs"]

# The global RNG seeds of clause global_rng's two calls: distinct, and unlike the seeds a
# model would hard-code.
GLOBAL_SEEDS = (918_273_645, 192_837_465)


def set_global_rngs(seed: int, device: torch.device) -> None:
    """Put every global RNG of :func:`global_rngs` in a fresh state from ``seed``.

    Only the run device's CUDA RNG, the one the checks fork (``torch.manual_seed`` would seed
    every GPU's).
    """
    torch.set_rng_state(torch.Generator().manual_seed(seed).get_state())
    random.seed(seed)
    np.random.seed(seed)
    if device.type == "cuda":
        torch.cuda.set_rng_state(torch.Generator(device).manual_seed(seed).get_state(), device)


def global_rngs(device: torch.device) -> dict[str, Any]:
    """The global RNG states a model must not touch."""
    states = {"torch's global CPU RNG": torch.get_rng_state(),
              "Python's random module": random.getstate(),
              "NumPy's global RNG": np.random.get_state()}
    if device.type == "cuda":
        states["torch's global CUDA RNG"] = torch.cuda.get_rng_state(device)
    return states


def same_state(a: Any, b: Any) -> bool:
    """Equality of RNG states made of tensors, arrays, tuples and scalars."""
    if isinstance(a, Tensor):
        return torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_state(u, v) for u, v in zip(a, b, strict=True))
    return a == b
